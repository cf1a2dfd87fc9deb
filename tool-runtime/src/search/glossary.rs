//! A glossary: the words of one language rendered in another, added to each tool's indexed text
//! so a request in the other language finds it (`cuti` is read as `leave` too, and "apply for
//! leave" finds a tool described only in Indonesian). Read from a FreeDict dictionary (the
//! files Debian's `dict-freedict-*` packages install) or given as pairs.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Common Indonesian words a glossary leaves as they are: pronouns, particles, conjunctions and
/// prepositions, which every tool shares and no translation helps (`yang`, `untuk`, `saya`...).
pub const INDONESIAN_FUNCTION_WORDS: &[&str] = &[
    "yang",
    "saya",
    "aku",
    "kamu",
    "anda",
    "kami",
    "kita",
    "dia",
    "mereka",
    "untuk",
    "dan",
    "atau",
    "ini",
    "itu",
    "ke",
    "di",
    "dari",
    "dengan",
    "apa",
    "berapa",
    "ada",
    "adalah",
    "akan",
    "sudah",
    "belum",
    "masih",
    "bisa",
    "dapat",
    "juga",
    "saja",
    "lagi",
    "tidak",
    "bukan",
    "jadi",
    "pada",
    "oleh",
    "karena",
    "kalau",
    "jika",
    "bila",
    "saat",
    "semua",
    "setiap",
    "sama",
    "udah",
    "gimana",
    "mana",
    "siapa",
    "kapan",
    "bagaimana",
    "kenapa",
    "nya",
    "punya",
    "dong",
    "sih",
    "ya",
    "deh",
    "kah",
    "pun",
    "para",
    "agar",
    "supaya",
    "tolong",
    "mau",
    "ingin",
];

/// Why a glossary could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum GlossaryError {
    /// A file could not be read (which, and why).
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The dictionary has no entry a glossary reads: a noun, verb, adjective or adverb of one
    /// or two lowercase words, with translations of one or two words (the file).
    Empty {
        /// The dictionary's index.
        path: PathBuf,
    },
    /// A dictionary file is not in the dictd format (which, the line, what is wrong).
    Format {
        /// The file.
        path: PathBuf,
        /// The line (1-based) of the index.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
}

impl fmt::Display for GlossaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GlossaryError::Io { path, error } => {
                write!(
                    f,
                    "the glossary file {} could not be read: {error}",
                    path.display()
                )
            }
            GlossaryError::Empty { path } => write!(
                f,
                "{} has no entry a glossary reads (a noun, verb, adjective or adverb of one or \
                 two lowercase words, with translations of one or two words)",
                path.display()
            ),
            GlossaryError::Format {
                path,
                line,
                message,
            } => write!(
                f,
                "{} is not a dictd dictionary (line {line}): {message}",
                path.display()
            ),
        }
    }
}

impl std::error::Error for GlossaryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GlossaryError::Io { error, .. } => Some(error),
            GlossaryError::Empty { .. } | GlossaryError::Format { .. } => None,
        }
    }
}

/// Words (and two-word phrases) of one language with their rendering in another, for
/// [`Ranking::glossary`](super::Ranking::glossary). Only an indexed tool's text is rendered
/// (the request is read as written): the rendering is added to the words the tool is found by
/// and to the text its meaning is taken from. Words are runs of letters and digits, any
/// script, compared lowercase; a word of one character or of digits only is never rendered.
///
/// ```
/// use tool_runtime::search::Glossary;
///
/// let glossary = Glossary::from_pairs([("cuti", "leave"), ("gaji", "salary")]);
/// assert_eq!(glossary.render("Ambil sisa kuota cuti karyawan"), "leave");
/// ```
#[derive(Clone, Default)]
pub struct Glossary {
    /// Each word's or phrase's rendering (lowercase).
    words: HashMap<String, String>,
    /// The first words of the phrases, to look two words ahead only where one may start.
    phrase_starts: HashSet<String>,
    /// Words left as they are (the other language's own words, common words).
    kept: HashSet<String>,
}

impl fmt::Debug for Glossary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Glossary")
            .field("words", &self.words.len())
            .field("kept", &self.kept.len())
            .finish()
    }
}

/// The words of `text` as a glossary reads them: runs of letters and digits, lowercase.
fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl Glossary {
    /// A glossary of `pairs`: a word or a two-word phrase (any case; read as [`render`]
    /// reads a text, so `Slip-Gaji` is the phrase `slip gaji`), and its rendering. A key of
    /// more than two words never matches.
    ///
    /// [`render`]: Glossary::render
    pub fn from_pairs<W, R>(pairs: impl IntoIterator<Item = (W, R)>) -> Glossary
    where
        W: AsRef<str>,
        R: AsRef<str>,
    {
        Glossary::default().with_pairs(pairs)
    }

    /// This glossary with `pairs` added, each replacing the rendering it had (to correct a
    /// dictionary's: `with_pairs([("cek", "check")])`), as in [`from_pairs`](Self::from_pairs).
    pub fn with_pairs<W, R>(mut self, pairs: impl IntoIterator<Item = (W, R)>) -> Glossary
    where
        W: AsRef<str>,
        R: AsRef<str>,
    {
        for (word, rendering) in pairs {
            let key = words_of(word.as_ref()).join(" ");
            if !key.is_empty() {
                self.kept.remove(&key);
                self.insert(&key, rendering.as_ref().to_lowercase());
            }
        }
        self
    }

    fn insert(&mut self, word: &str, rendering: String) {
        let mut parts = word.split(' ');
        if let (Some(first), Some(_)) = (parts.next(), parts.next()) {
            self.phrase_starts.insert(first.to_owned());
        }
        self.words.insert(word.to_owned(), rendering);
    }

    /// `words` left as they are (e.g. [`INDONESIAN_FUNCTION_WORDS`]): a phrase of two of them
    /// too.
    pub fn keeping(mut self, words: impl IntoIterator<Item = impl AsRef<str>>) -> Glossary {
        self.kept
            .extend(words.into_iter().map(|w| w.as_ref().to_lowercase()));
        self
    }

    /// How many words and phrases it renders.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether it renders none.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The glossary of a FreeDict dictionary from English into another language, read the
    /// other way: that language's words rendered in English. `path` is the dictionary
    /// (`/usr/share/dictd/freedict-eng-ind`, as Debian's `dict-freedict-eng-ind` installs it;
    /// with or without the extension of one of its files): its `.index` and its `.dict.dz`
    /// (or `.dict`). Of each entry, a noun, verb, adjective or adverb of one or two lowercase
    /// words, every translation of one or two words renders as the English headword; where
    /// several headwords translate a word, the one it is the first sense and the first
    /// translation of wins (`cuti` is `leave`). A word an entry translates as itself is left as
    /// it is (`status`).
    pub fn from_freedict_reversed(path: impl AsRef<Path>) -> Result<Glossary, GlossaryError> {
        let given = path.as_ref();
        let name = given.to_string_lossy();
        let path = [".index", ".dict.dz", ".dict"]
            .iter()
            .find_map(|extension| name.strip_suffix(extension))
            .map_or_else(|| given.to_owned(), PathBuf::from);
        let path = path.as_path();
        let index_path = with_extension(path, ".index");
        let index = std::fs::read_to_string(&index_path).map_err(|error| GlossaryError::Io {
            path: index_path.clone(),
            error,
        })?;
        let text = dictionary_text(path)?;
        read_freedict(&index, &index_path, &text)
    }

    /// What `text`'s words render as, in order, separated by spaces (empty when none does).
    pub fn render(&self, text: &str) -> String {
        let words = words_of(text);
        let mut out = String::new();
        let mut push = |s: &str| {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(s);
        };
        let mut i = 0;
        while i < words.len() {
            let word = words[i].as_str();
            if let Some(next) = words
                .get(i + 1)
                .filter(|_| self.phrase_starts.contains(word))
            {
                let both_kept = self.kept.contains(word) && self.kept.contains(next);
                if let Some(rendering) = self.words.get(&format!("{word} {next}"))
                    && !both_kept
                {
                    push(rendering);
                    i += 2;
                    continue;
                }
            }
            let renders = word.chars().nth(1).is_some()
                && !word.chars().all(|c| c.is_numeric())
                && !self.kept.contains(word);
            if let Some(rendering) = self.words.get(word).filter(|_| renders) {
                push(rendering);
            }
            i += 1;
        }
        out
    }
}

fn with_extension(path: &Path, extension: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(extension);
    PathBuf::from(name)
}

/// The dictionary's text: `.dict.dz` (gzip, as dictzip writes it) or `.dict`.
fn dictionary_text(path: &Path) -> Result<Vec<u8>, GlossaryError> {
    let zipped = with_extension(path, ".dict.dz");
    let io = |path: &Path| {
        let path = path.to_owned();
        move |error| GlossaryError::Io { path, error }
    };
    match std::fs::File::open(&zipped) {
        Ok(file) => {
            let mut text = Vec::new();
            flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file))
                .read_to_end(&mut text)
                .map_err(io(&zipped))?;
            Ok(text)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let plain = with_extension(path, ".dict");
            std::fs::read(&plain).map_err(io(&plain))
        }
        Err(e) => Err(io(&zipped)(e)),
    }
}

/// A dictd index number: base 64, `A` to `/`, most significant digit first.
fn base64_number(digits: &str) -> Option<usize> {
    if digits.is_empty() {
        return None;
    }
    digits.bytes().try_fold(0usize, |n, b| {
        let digit = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        n.checked_mul(64)?.checked_add(usize::from(digit))
    })
}

/// One or two words of letters, none uppercase.
fn plain_words(s: &str) -> bool {
    let mut parts = s.split(' ');
    let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_alphabetic() && !c.is_uppercase());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(a), None, _) => word(a),
        (Some(a), Some(b), None) => word(a) && word(b),
        _ => false,
    }
}

/// A translation line's numbered sense (`2. cuti, izin`): its text.
fn numbered(line: &str) -> Option<&str> {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    line[digits..].strip_prefix(". ")
}

/// The translations a sense's line lists (`cuti, izin (formal); perlop 2.`): each one or two
/// plain words, lowercase.
fn translations(line: &str) -> Vec<String> {
    let mut line = line.trim_end();
    // A trailing number that starts the next sense's gloss (`buku, kitab 2.`).
    if let Some(rest) = line.strip_suffix('.') {
        let number = rest.trim_end_matches(|c: char| c.is_ascii_digit());
        if number.len() < rest.len() && number.ends_with(char::is_whitespace) {
            line = number.trim_end();
        }
    }
    let mut without_remarks = String::with_capacity(line.len());
    let mut depth = 0usize;
    for c in line.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => {
                depth -= 1;
                without_remarks.push(' ');
            }
            _ if depth == 0 => without_remarks.push(c),
            _ => {}
        }
    }
    without_remarks
        .split([',', ';'])
        .map(|t| t.trim().to_lowercase())
        .filter(|t| t.chars().nth(1).is_some() && plain_words(t))
        .collect()
}

/// Which English headword renders a word best: the lower wins (the sense it is listed in, its
/// place in that sense's list, the list's length, words in the headword, the headword).
type Rank = (usize, usize, usize, usize, String);

fn read_freedict(index: &str, index_path: &Path, text: &[u8]) -> Result<Glossary, GlossaryError> {
    // Words an entry translates as themselves (`status`): left as they are.
    let mut same: HashSet<String> = HashSet::new();
    let mut best: HashMap<String, Rank> = HashMap::new();
    for (n, line) in index.lines().enumerate() {
        let format = |message: String| GlossaryError::Format {
            path: index_path.to_owned(),
            line: n + 1,
            message,
        };
        let mut fields = line.split('\t');
        // (A fourth field, the headword as first written, is ignored.)
        let (Some(headword), Some(offset), Some(length)) =
            (fields.next(), fields.next(), fields.next())
        else {
            return Err(format(format!(
                "expected `headword<TAB>offset<TAB>length`, found {line:?}"
            )));
        };
        if headword.starts_with("00database") || headword.starts_with("00-database") {
            continue;
        }
        let (Some(offset), Some(length)) = (base64_number(offset), base64_number(length)) else {
            return Err(format(format!(
                "an offset or length that is not a base-64 number: {line:?}"
            )));
        };
        let Some(entry) = offset
            .checked_add(length)
            .and_then(|end| text.get(offset..end))
        else {
            return Err(format(format!(
                "the entry of {headword:?} lies past the dictionary's end ({} bytes)",
                text.len()
            )));
        };
        let entry = String::from_utf8_lossy(entry);
        let headword = headword.trim();
        let mut lines = entry.lines();
        let part_of_speech = lines
            .next()
            .and_then(|first| first.trim_end().strip_suffix('>'))
            .and_then(|first| first.rsplit_once('<'))
            .map(|(_, pos)| pos);
        if !matches!(part_of_speech, Some("n" | "v" | "adj" | "adv")) || !plain_words(headword) {
            continue;
        }
        let body: Vec<&str> = lines.collect();
        let senses: Vec<&str> = match body.first() {
            Some(first) if numbered(first).is_some() => {
                body.iter().filter_map(|l| numbered(l)).collect()
            }
            Some(first) => vec![first],
            None => Vec::new(),
        };
        for (sense, line) in senses.iter().enumerate() {
            let listed = translations(line);
            for (place, word) in listed.iter().enumerate() {
                if word == headword {
                    same.insert(word.clone());
                    continue;
                }
                let rank = (
                    sense,
                    place,
                    listed.len(),
                    headword.matches(' ').count(),
                    headword.to_owned(),
                );
                match best.get_mut(word) {
                    Some(held) if *held <= rank => {}
                    Some(held) => *held = rank,
                    None => {
                        best.insert(word.clone(), rank);
                    }
                }
            }
        }
    }
    if best.is_empty() {
        return Err(GlossaryError::Empty {
            path: index_path.to_owned(),
        });
    }
    let mut glossary = Glossary::default();
    for (word, (.., headword)) in best {
        glossary.insert(&word, headword);
    }
    glossary.kept = same;
    Ok(glossary)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dictionary in the dictd format: the index and the text of `entries` (headword, text).
    fn dictd(entries: &[(&str, &str)]) -> (String, Vec<u8>) {
        const DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let b64 = |mut n: usize| {
            let mut out = Vec::new();
            loop {
                out.push(DIGITS[n % 64]);
                n /= 64;
                if n == 0 {
                    break;
                }
            }
            out.reverse();
            String::from_utf8(out).unwrap()
        };
        let (mut index, mut text) = (String::new(), Vec::new());
        for (headword, entry) in entries {
            index.push_str(&format!(
                "{headword}\t{}\t{}\n",
                b64(text.len()),
                b64(entry.len())
            ));
            text.extend_from_slice(entry.as_bytes());
        }
        (index, text)
    }

    #[test]
    fn a_freedict_dictionary_is_read_the_other_way_first_senses_first() {
        let (index, text) = dictd(&[
            ("00databaseinfo", "about the dictionary\n"),
            (
                "leave",
                "leave /liv/ <n>\n1. cuti\nabsence from work\n2. Berangkat\ndeparture\n3. cuti, izin, perlop\npermission to be absent\n",
            ),
            (
                "book",
                "book /bʊk/ <n>\nbuku, kitab 2.\ncollection of sheets\n",
            ),
            (
                "permission",
                "permission /pɚ/ <n>\nizin (formal), perlop\nauthorisation\n",
            ),
            ("status", "status /s/ <n>\nstatus\nstanding\n"),
            ("Jakarta", "Jakarta <prop>\nJakarta\nthe capital\n"),
            (
                "pay slip",
                "pay slip <n>\nslip gaji\nthe statement of pay\n",
            ),
        ]);
        let glossary = read_freedict(&index, Path::new("test.index"), &text).unwrap();
        assert_eq!(glossary.words["cuti"], "leave");
        assert_eq!(glossary.words["berangkat"], "leave");
        assert_eq!(glossary.words["buku"], "book");
        assert_eq!(glossary.words["kitab"], "book");
        // `izin` is the first translation of `permission`'s only sense, and the second of
        // `leave`'s third.
        assert_eq!(glossary.words["izin"], "permission");
        assert_eq!(glossary.words["slip gaji"], "pay slip");
        assert!(!glossary.words.contains_key("status"), "its own headword");
        assert!(
            !glossary.words.contains_key("jakarta"),
            "a proper noun's entry"
        );
        assert_eq!(
            glossary
                .keeping(INDONESIAN_FUNCTION_WORDS)
                .render("Ajukan cuti untuk saya; cek slip gaji dan status buku 2026"),
            "leave pay slip book"
        );
    }

    #[test]
    fn a_broken_index_is_refused_naming_its_line() {
        let (index, text) = dictd(&[("book", "book <n>\nbuku\n")]);
        let broken = format!("{index}leave\tA!\tB\n");
        let e = read_freedict(&broken, Path::new("x.index"), &text).unwrap_err();
        assert!(
            e.to_string().contains("line 2") && e.to_string().contains("base-64"),
            "{e}"
        );
        let past = format!("{index}leave\tZZ\tB\n");
        let e = read_freedict(&past, Path::new("x.index"), &text).unwrap_err();
        assert!(e.to_string().contains("past the dictionary's end"), "{e}");
        let e = Glossary::from_freedict_reversed("/nonexistent/freedict-eng-xxx").unwrap_err();
        assert!(
            e.to_string()
                .contains("/nonexistent/freedict-eng-xxx.index"),
            "{e}"
        );
    }

    #[test]
    fn any_script_a_hosts_corrections_and_the_dictionarys_edges() {
        let glossary =
            Glossary::from_pairs([("Überstunden", "overtime"), ("Slip-Gaji", "payslip")]);
        assert_eq!(
            glossary.render("Meine überstunden; slip gaji"),
            "overtime payslip"
        );
        let (index, text) = dictd(&[
            ("check", "check <v>\n1. periksa\nto inspect\n"),
            ("cheque", "cheque <n>\ncek\na bank order\n"),
        ]);
        // A fourth field is ignored; an empty number is not a number.
        let four = index.replace('\n', "\tas written\n");
        let glossary = read_freedict(&four, Path::new("x.index"), &text).unwrap();
        assert_eq!(glossary.render("cek periksa"), "cheque check");
        let corrected = glossary.with_pairs([("cek", "check")]);
        assert_eq!(corrected.render("cek periksa"), "check check");
        let empty = format!("{index}leave\t\tB\n");
        let e = read_freedict(&empty, Path::new("x.index"), &text).unwrap_err();
        assert!(e.to_string().contains("line 3"), "{e}");
        // Nothing a glossary reads: refused, not an empty glossary.
        let (index, text) = dictd(&[("Jakarta", "Jakarta <prop>\nJakarta\n")]);
        let e = read_freedict(&index, Path::new("x.index"), &text).unwrap_err();
        assert!(matches!(e, GlossaryError::Empty { .. }), "{e}");
    }

    #[test]
    fn a_dictionary_is_found_by_its_name_or_any_of_its_files() {
        let dir = std::env::temp_dir().join(format!("glossary-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (index, text) = dictd(&[("leave", "leave <n>\ncuti\nabsence\n")]);
        std::fs::write(dir.join("d.index"), index).unwrap();
        std::fs::write(dir.join("d.dict"), text).unwrap();
        for name in ["d", "d.index", "d.dict"] {
            let glossary = Glossary::from_freedict_reversed(dir.join(name)).unwrap();
            assert_eq!(glossary.render("cuti"), "leave", "{name}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn kept_words_and_numbers_are_not_rendered() {
        let glossary =
            Glossary::from_pairs([("di", "in"), ("2", "two"), ("ke kantor", "to office")])
                .keeping(["di", "ke"]);
        assert_eq!(glossary.render("di 2 ke kantor"), "to office");
        let both_kept = Glossary::from_pairs([("di sana", "there")]).keeping(["di", "sana"]);
        assert_eq!(both_kept.render("di sana"), "");
    }
}
