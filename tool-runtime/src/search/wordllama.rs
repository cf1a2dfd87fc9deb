//! WordLlama: static token embeddings (Llama 2's vocabulary, 256 dimensions) averaged over a
//! text's tokens, as the `wordllama` Python package computes them, read from the files its
//! wheel ships (`weights/l2_supercat_256.safetensors`, `tokenizers/l2_supercat_tokenizer_config.json`).
//! Nothing is downloaded: the host names the files, or the package's directory.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Embedder;

/// Why a model's files could not be loaded: the file, and what was wrong with it.
#[derive(Debug)]
pub struct ModelError {
    file: PathBuf,
    problem: String,
}

impl ModelError {
    fn new(file: &Path, problem: impl fmt::Display) -> ModelError {
        ModelError {
            file: file.to_owned(),
            problem: problem.to_string(),
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.problem)
    }
}

impl std::error::Error for ModelError {}

/// A pair of tokens that merge, and into what: the merge's rank (lower merges first) and the
/// merged token.
#[derive(Clone, Copy)]
struct Merge {
    rank: u32,
    into: u32,
}

/// Llama 2's byte-pair tokenizer as the model's `tokenizer.json` describes it: a space becomes
/// `▁`, one `▁` starts the text, characters outside the vocabulary fall back to their UTF-8
/// bytes (`<0xE2>`), and the lowest-ranked adjacent pair merges until none does.
struct Tokenizer {
    vocab: HashMap<String, u32>,
    merges: HashMap<(u32, u32), Merge>,
    /// Tokens matched in the raw text before anything else (`<s>`, `</s>`, `<unk>`).
    special: Vec<(String, u32)>,
    unknown: u32,
}

impl Tokenizer {
    fn from_json(file: &Path, json: &Value) -> Result<Tokenizer, ModelError> {
        let model = &json["model"];
        if model["type"] != "BPE" {
            return Err(ModelError::new(
                file,
                format!("expected a BPE model, found {}", model["type"]),
            ));
        }
        let vocab: HashMap<String, u32> = model["vocab"]
            .as_object()
            .ok_or_else(|| ModelError::new(file, "no `model.vocab` object"))?
            .iter()
            .map(|(token, id)| {
                id.as_u64()
                    .and_then(|id| u32::try_from(id).ok())
                    .map(|id| (token.clone(), id))
                    .ok_or_else(|| ModelError::new(file, format!("token {token:?} has id {id}")))
            })
            .collect::<Result<_, _>>()?;
        let id = |token: &str| {
            vocab.get(token).copied().ok_or_else(|| {
                ModelError::new(
                    file,
                    format!("a merge names {token:?}, not in the vocabulary"),
                )
            })
        };
        let mut merges = HashMap::new();
        let listed = model["merges"]
            .as_array()
            .ok_or_else(|| ModelError::new(file, "no `model.merges` array"))?;
        for (rank, merge) in listed.iter().enumerate() {
            // Written as "a b" (older files) or ["a", "b"].
            let (a, b) = match merge {
                Value::String(s) => s.split_once(' ').ok_or_else(|| {
                    ModelError::new(file, format!("merge {rank} {s:?} is not two tokens"))
                })?,
                Value::Array(pair) if pair.len() == 2 => {
                    match (pair[0].as_str(), pair[1].as_str()) {
                        (Some(a), Some(b)) => (a, b),
                        _ => return Err(ModelError::new(file, format!("merge {rank}: {merge}"))),
                    }
                }
                _ => return Err(ModelError::new(file, format!("merge {rank}: {merge}"))),
            };
            let into = id(&format!("{a}{b}"))?;
            merges.insert(
                (id(a)?, id(b)?),
                Merge {
                    rank: rank as u32,
                    into,
                },
            );
        }
        // Added tokens split the text before it is tokenized: an empty one would split it
        // forever, and an id must be a row of the table (checked with the weights).
        let mut special = Vec::new();
        for t in json["added_tokens"].as_array().into_iter().flatten() {
            let (Some(content), Some(id)) = (t["content"].as_str(), t["id"].as_u64()) else {
                continue;
            };
            if content.is_empty() {
                return Err(ModelError::new(file, format!("added token {id} is empty")));
            }
            let id = u32::try_from(id).map_err(|_| {
                ModelError::new(file, format!("added token {content:?} has id {id}"))
            })?;
            special.push((content.to_owned(), id));
        }
        let unknown = model["unk_token"]
            .as_str()
            .and_then(|t| vocab.get(t).copied())
            .unwrap_or(0);
        Ok(Tokenizer {
            vocab,
            merges,
            special,
            unknown,
        })
    }

    /// The ids of `text`'s tokens.
    fn encode(&self, text: &str, out: &mut Vec<u32>) {
        let mut rest = text;
        while !rest.is_empty() {
            // The nearest special token splits the text; each part is tokenized on its own.
            let next = self
                .special
                .iter()
                .filter_map(|(s, id)| rest.find(s.as_str()).map(|at| (at, s.len(), *id)))
                .min_by_key(|&(at, len, _)| (at, std::cmp::Reverse(len)));
            match next {
                Some((at, len, id)) => {
                    self.encode_part(&rest[..at], out);
                    out.push(id);
                    rest = &rest[at + len..];
                }
                None => {
                    self.encode_part(rest, out);
                    rest = "";
                }
            }
        }
    }

    fn encode_part(&self, part: &str, out: &mut Vec<u32>) {
        if part.is_empty() {
            return;
        }
        let mut symbols: Vec<u32> = Vec::with_capacity(part.len() + 1);
        let mut buf = [0u8; 4];
        for c in std::iter::once('▁').chain(part.chars().map(|c| if c == ' ' { '▁' } else { c }))
        {
            let s = c.encode_utf8(&mut buf);
            match self.vocab.get(&*s) {
                Some(id) => symbols.push(*id),
                None => {
                    for byte in s.bytes() {
                        let token = format!("<0x{byte:02X}>");
                        symbols.push(self.vocab.get(&token).copied().unwrap_or(self.unknown));
                    }
                }
            }
        }
        // The lowest-ranked pair merges first, the leftmost of equals.
        loop {
            let best = symbols
                .windows(2)
                .enumerate()
                .filter_map(|(at, w)| self.merges.get(&(w[0], w[1])).map(|m| (m.rank, at, m.into)))
                .min();
            let Some((_, at, into)) = best else { break };
            symbols[at] = into;
            symbols.remove(at + 1);
        }
        out.extend_from_slice(&symbols);
    }
}

/// The WordLlama model: a text's embedding is the average of its tokens' rows, normalized.
///
/// ```no_run
/// use tool_runtime::search::{Embedder, WordLlama};
///
/// // The directory `pip install wordllama` made (or the unpacked wheel).
/// let model = WordLlama::from_package("venv/lib/python3.11/site-packages/wordllama").unwrap();
/// let v = model.embed("how many days of leave do I have left");
/// assert_eq!(v.len(), 256);
/// ```
pub struct WordLlama {
    tokenizer: Tokenizer,
    /// `rows × dims` embeddings, row-major.
    table: Vec<f32>,
    dims: usize,
}

impl fmt::Debug for WordLlama {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WordLlama")
            .field("tokens", &(self.table.len() / self.dims.max(1)))
            .field("dims", &self.dims)
            .finish()
    }
}

/// The files of the model, relative to the `wordllama` package's directory.
const WEIGHTS: &str = "weights/l2_supercat_256.safetensors";
const TOKENIZER: &str = "tokenizers/l2_supercat_tokenizer_config.json";

impl WordLlama {
    /// The model in the `wordllama` package's directory (`.../site-packages/wordllama`).
    pub fn from_package(dir: impl AsRef<Path>) -> Result<WordLlama, ModelError> {
        let dir = dir.as_ref();
        WordLlama::from_files(dir.join(WEIGHTS), dir.join(TOKENIZER))
    }

    /// The model from its weights (a safetensors file of one `tokens × dims` matrix, f16 or
    /// f32) and its tokenizer (a Hugging Face `tokenizer.json` of a BPE model).
    pub fn from_files(
        weights: impl AsRef<Path>,
        tokenizer: impl AsRef<Path>,
    ) -> Result<WordLlama, ModelError> {
        let (weights, tokenizer) = (weights.as_ref(), tokenizer.as_ref());
        let text = std::fs::read(tokenizer).map_err(|e| ModelError::new(tokenizer, e))?;
        let json: Value =
            serde_json::from_slice(&text).map_err(|e| ModelError::new(tokenizer, e))?;
        let tokenizer_model = Tokenizer::from_json(tokenizer, &json)?;
        let bytes = std::fs::read(weights).map_err(|e| ModelError::new(weights, e))?;
        let tensors = safetensors::SafeTensors::deserialize(&bytes)
            .map_err(|e| ModelError::new(weights, e))?;
        let names = tensors.names();
        let [name] = names.as_slice() else {
            return Err(ModelError::new(
                weights,
                format!("expected one tensor, found {}", names.len()),
            ));
        };
        let tensor = tensors
            .tensor(name)
            .map_err(|e| ModelError::new(weights, e))?;
        let &[rows, dims] = tensor.shape() else {
            return Err(ModelError::new(
                weights,
                format!("expected a matrix, found shape {:?}", tensor.shape()),
            ));
        };
        let data = tensor.data();
        let table: Vec<f32> = match tensor.dtype() {
            safetensors::Dtype::F16 => data
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            safetensors::Dtype::F32 => data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            other => {
                return Err(ModelError::new(
                    weights,
                    format!("expected f16 or f32 weights, found {other:?}"),
                ));
            }
        };
        // Every id the tokenizer can give is a row: its vocabulary's, its added tokens' and
        // the unknown token's.
        let largest = tokenizer_model
            .vocab
            .values()
            .chain(tokenizer_model.special.iter().map(|(_, id)| id))
            .chain([&tokenizer_model.unknown])
            .max()
            .copied()
            .unwrap_or(0) as usize;
        if largest >= rows {
            return Err(ModelError::new(
                weights,
                format!("{rows} rows, but the tokenizer has token id {largest}"),
            ));
        }
        Ok(WordLlama {
            tokenizer: tokenizer_model,
            table,
            dims,
        })
    }

    /// The token ids of `text`, as the model's tokenizer gives them.
    pub fn tokens(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        self.tokenizer.encode(text, &mut ids);
        ids
    }
}

impl Embedder for WordLlama {
    fn embed(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0f32; self.dims];
        let ids = self.tokens(text);
        for id in &ids {
            let row = &self.table[*id as usize * self.dims..][..self.dims];
            for (s, x) in sum.iter_mut().zip(row) {
                *s += x;
            }
        }
        super::normalize(&mut sum);
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model of `rows` rows of two dimensions (f32) and a tokenizer with `added` as its
    /// added tokens, written to a directory of the test's own; the result of loading it.
    fn load(name: &str, rows: usize, added: Value) -> Result<WordLlama, ModelError> {
        let dir = std::env::temp_dir().join(format!("wordllama-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tokenizer = serde_json::json!({
            "model": {"type": "BPE", "vocab": {"▁": 0, "a": 1, "▁a": 2}, "merges": ["▁ a"]},
            "added_tokens": added,
        });
        std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
        let header = format!(
            r#"{{"table":{{"dtype":"F32","shape":[{rows},2],"data_offsets":[0,{}]}}}}"#,
            rows * 8
        );
        let mut weights = (header.len() as u64).to_le_bytes().to_vec();
        weights.extend(header.as_bytes());
        for i in 0..rows * 2 {
            weights.extend((i as f32 + 1.0).to_le_bytes());
        }
        std::fs::write(dir.join("weights.safetensors"), weights).unwrap();
        let model =
            WordLlama::from_files(dir.join("weights.safetensors"), dir.join("tokenizer.json"));
        std::fs::remove_dir_all(&dir).unwrap();
        model
    }

    #[test]
    fn an_added_token_splits_the_text_and_is_a_row_of_the_table() {
        let model = load("ok", 4, serde_json::json!([{"id": 3, "content": "<s>"}])).unwrap();
        assert_eq!(model.tokens("<s>a"), [3, 2]);
        assert_eq!(model.embed("<s>a").len(), 2);
    }

    /// A tokenizer whose added token has no row in the table is refused when it is loaded
    /// (a query naming that token indexed past the table).
    #[test]
    fn an_added_token_past_the_table_is_refused_when_loaded() {
        let Err(e) = load("past", 3, serde_json::json!([{"id": 7, "content": "<s>"}])) else {
            panic!("loaded")
        };
        assert!(
            e.to_string()
                .contains("3 rows, but the tokenizer has token id 7"),
            "{e}"
        );
    }

    /// An empty added token is refused when it is loaded (it split every text forever).
    #[test]
    fn an_empty_added_token_is_refused_when_loaded() {
        let Err(e) = load("empty", 4, serde_json::json!([{"id": 3, "content": ""}])) else {
            panic!("loaded")
        };
        assert!(e.to_string().contains("added token 3 is empty"), "{e}");
    }
}
