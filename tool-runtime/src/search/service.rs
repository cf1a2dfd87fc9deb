//! Models behind a network call: the [`EmbeddingService`] a host plugs in, how an index asks
//! it (in batches, once for the tools, with a timeout and a pause after a failure), and an
//! [`EmbeddingCache`] that indexes share.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::future::BoxFuture;

/// Why an [`EmbeddingService`] gave no vectors (its client's error, boxed).
pub type EmbedError = Box<dyn std::error::Error + Send + Sync>;

/// A model that embeds texts behind a network call: a provider's embeddings API (through
/// `tool-runtime-rig`'s `Embeddings`, any provider rig speaks to), a local embedding server,
/// a host's own client. Unlike an [`Embedder`](super::Embedder) it is asked asynchronously,
/// many texts at a time, and may fail.
///
/// - Who asks: [`ToolIndex::search_async`](super::ToolIndex::search_async), and the search
///   tool of a set deferred with this ranking (not sent to Anthropic's API, which gets the
///   deferred tools with its own search tool instead: there the service is never asked).
///   [`ToolIndex::search`](super::ToolIndex::search) does not.
/// - What it is asked: the tools' texts (name, description and what a glossary renders them
///   as, as written) by the first search, or before it by
///   [`ToolSet::prepare_search`](crate::ToolSet::prepare_search) /
///   [`ToolIndex::prepare`](super::ToolIndex::prepare), in calls of at most 64 texts, eight at
///   a time, the other searches waiting for them; then each search's query, as the model wrote
///   it, in a call of its own. The queries go to whoever runs the service.
/// - When it fails (an error, no answer within the [timeout](super::Ranking::service_timeout), a
///   vector missing, empty, of another length or with a number that is not finite), that
///   search ranks by the words alone and says so in a `WARN` event of the target
///   `tool_runtime::search`. After the tools could not be embedded (or their vectors and the
///   query's stayed of two lengths), searches leave the service alone for as long as the
///   timeout before asking again.
/// - The tools' vectors are kept by the index. An index built per request embeds them again,
///   unless the indexes share an [`EmbeddingCache`] in front of the service. When the
///   service's vectors change length (another model behind it), the index embeds its tools
///   again, once. Another model of the same length cannot be told from the first: a host that
///   changes the model builds its indexes (and caches) again.
///
/// ```
/// use std::sync::Arc;
/// use tool_runtime::BoxFuture;
/// use tool_runtime::search::{EmbedError, EmbeddingService, Ranking, ToolIndex};
/// use tool_runtime::{ToolSet, tool};
///
/// /// A stand-in for a service: `gaji` and `wage` mean the same here.
/// struct Service;
///
/// impl EmbeddingService for Service {
///     fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
///         let pay = |t: &String| if t.contains("gaji") || t.contains("wage") { 1.0 } else { 0.0 };
///         Box::pin(async move { Ok(texts.iter().map(|t| vec![pay(t), 1.0 - pay(t)]).collect()) })
///     }
/// }
///
/// #[tool(description = "Tampilkan slip gaji karyawan.")]
/// fn daftar_gaji() -> u32 { 1 }
///
/// #[tool(description = "Return the weather forecast for a city.")]
/// fn cuaca(#[arg(description = "The city's name")] kota: String) -> String { kota }
///
/// let set = ToolSet::new([daftar_gaji::tool(), cuaca::tool()]).unwrap();
/// let index = ToolIndex::ranked_by(&set, Ranking::lexical().service(Arc::new(Service)));
/// let found = pollster::block_on(index.search_async("my wage statements", 1));
/// assert_eq!(found[0].tool, "daftar_gaji");
/// ```
pub trait EmbeddingService: Send + Sync {
    /// The vectors of `texts`, one per text, in their order, all of one length.
    fn embed<'a>(&'a self, texts: &'a [String])
    -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>>;
}

impl<T: EmbeddingService + ?Sized> EmbeddingService for Arc<T> {
    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        (**self).embed(texts)
    }
}

/// How many texts one request to an [`EmbeddingService`] carries at most (Cohere takes 96 a
/// request, Gemini 100), and how many such requests run at once when the tools are embedded.
pub(super) const SERVICE_BATCH: usize = 64;
const SERVICE_REQUESTS: usize = 8;

/// How long one call of an [`EmbeddingService`] may take unless the ranking says.
pub(super) const SERVICE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// An index's embedding service, the text of each tool it embeds, and their vectors once a
/// search has had them.
pub(super) struct Service {
    client: Arc<dyn EmbeddingService>,
    /// How long one request may take, and how long searches leave the service alone after the
    /// tools could not be embedded.
    timeout: Duration,
    texts: Vec<String>,
    /// The tools' vectors (normalized), once a search has had them; forgotten when the
    /// service's vectors change length.
    vectors: Mutex<Option<Arc<[Vec<f32>]>>>,
    /// One search embeds the tools at a time; the others wait for its vectors.
    embedding: futures_util::lock::Mutex<()>,
    /// When the tools last could not be embedded.
    failed: Mutex<Option<Instant>>,
}

/// The tools' vectors, and whether the call that returned them asked the service for them.
type ToolVectors = (Arc<[Vec<f32>]>, bool);

impl Service {
    /// `client` embedding `texts` (one per tool), each call within `timeout`.
    pub(super) fn new(
        client: Arc<dyn EmbeddingService>,
        timeout: Duration,
        texts: Vec<String>,
    ) -> Service {
        Service {
            client,
            timeout,
            texts,
            vectors: Mutex::new(None),
            embedding: futures_util::lock::Mutex::new(()),
            failed: Mutex::new(None),
        }
    }

    /// Has the service embed the tools now, whatever the pause; `Ok` at once if they are.
    pub(super) async fn prepare(&self) -> Result<(), EmbedError> {
        self.tools_now(true).await.map(drop)
    }

    /// The query's vector and the tools' (normalized, of one length). When the query's is of
    /// another length than the tools' kept ones, the service has changed its model: the tools
    /// are embedded again, once; still of another length, an error, and the pause.
    pub(super) async fn meanings(
        &self,
        query: &str,
    ) -> Result<(Vec<f32>, Arc<[Vec<f32>]>), EmbedError> {
        let (mut tools, fresh) = self.tools_now(false).await?;
        let query = self.embedded(&[query.to_owned()]).await?.remove(0);
        let length = |tools: &[Vec<f32>]| tools.first().map_or(0, Vec::len);
        let retried = query.len() != length(&tools) && !fresh;
        if retried {
            let kept = length(&tools);
            self.forget(&tools);
            tools = self.tools_now(false).await?.0;
            if query.len() == length(&tools) {
                tracing::info!(
                    target: "tool_runtime::search",
                    from = kept,
                    to = query.len(),
                    "the embedding service's vectors changed length: the tools were embedded again"
                );
            }
        }
        if query.len() != length(&tools) {
            self.forget(&tools);
            self.failed_now();
            return Err(format!(
                "the embedding service gave the query a vector of {} numbers, the tools {}{}",
                query.len(),
                length(&tools),
                if retried { " (embedded again)" } else { "" }
            )
            .into());
        }
        Ok((query, tools))
    }

    /// The tools' vectors: kept, or embedded now by this call (the others wait for it), or an
    /// error; after a failure, an error at once until the pause is over, unless `asked` by
    /// the host.
    async fn tools_now(&self, asked: bool) -> Result<ToolVectors, EmbedError> {
        if let Some(vectors) = self.kept() {
            return Ok((vectors, false));
        }
        let _embedding = self.embedding.lock().await;
        if let Some(vectors) = self.kept() {
            return Ok((vectors, false));
        }
        let paused = self
            .failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|at| at.elapsed() < self.timeout);
        if paused && !asked {
            return Err(Paused.into());
        }
        match self.embed_tools().await {
            Ok(vectors) => {
                *self.failed.lock().unwrap_or_else(PoisonError::into_inner) = None;
                let vectors: Arc<[Vec<f32>]> = vectors.into();
                *self.vectors.lock().unwrap_or_else(PoisonError::into_inner) =
                    Some(vectors.clone());
                Ok((vectors, true))
            }
            Err(error) => {
                self.failed_now();
                Err(error)
            }
        }
    }

    fn kept(&self) -> Option<Arc<[Vec<f32>]>> {
        self.vectors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Drops `tools` if they are still the ones kept (another search may have embedded the
    /// tools again since).
    fn forget(&self, tools: &Arc<[Vec<f32>]>) {
        let mut kept = self.vectors.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.as_ref().is_some_and(|k| Arc::ptr_eq(k, tools)) {
            *kept = None;
        }
    }

    fn failed_now(&self) {
        *self.failed.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
    }

    /// Every tool's vector, asked in requests of [`SERVICE_BATCH`] texts,
    /// [`SERVICE_REQUESTS`] at a time; asked once more when the requests' vectors are of two
    /// lengths (the model changed while they ran, or a cache answered some from the old one).
    async fn embed_tools(&self) -> Result<Vec<Vec<f32>>, EmbedError> {
        match self.embed_tools_once().await {
            Err(Mixed::Lengths(_)) => self.embed_tools_once().await.map_err(EmbedError::from),
            answer => answer.map_err(EmbedError::from),
        }
    }

    async fn embed_tools_once(&self) -> Result<Vec<Vec<f32>>, Mixed> {
        use futures_util::{StreamExt as _, TryStreamExt as _};
        // Boxed here, each with its batch: a closure mapping the stream would not be `Send`
        // for every lifetime the search tool's future needs.
        let requests: Vec<BoxFuture<'_, Result<Vec<Vec<f32>>, EmbedError>>> = self
            .texts
            .chunks(SERVICE_BATCH)
            .map(|batch| Box::pin(self.embedded(batch)) as BoxFuture<'_, _>)
            .collect();
        let batches: Vec<Vec<Vec<f32>>> = futures_util::stream::iter(requests)
            .buffered(SERVICE_REQUESTS)
            .try_collect()
            .await
            .map_err(Mixed::Failed)?;
        let vectors: Vec<Vec<f32>> = batches.into_iter().flatten().collect();
        if let Some(first) = vectors.first()
            && let Some(other) = vectors.iter().find(|v| v.len() != first.len())
        {
            return Err(Mixed::Lengths(format!(
                "the embedding service gave vectors of {} and of {} numbers",
                first.len(),
                other.len()
            )));
        }
        Ok(vectors)
    }

    /// The service's vectors of `texts`, normalized: one per text, each of finite numbers,
    /// within the timeout; else an error saying what came back.
    async fn embedded(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        use futures_util::future::{Either, select};
        let deadline = futures_timer::Delay::new(self.timeout);
        let mut vectors = match select(self.client.embed(texts), deadline).await {
            Either::Left((answer, _)) => answer?,
            Either::Right(_) => {
                return Err(format!(
                    "the embedding service did not answer within {:?}",
                    self.timeout
                )
                .into());
            }
        };
        if vectors.len() != texts.len() {
            return Err(wrong_count(vectors.len(), texts.len()));
        }
        if let Some(bad) = vectors.iter().position(|v| !usable(v)) {
            return Err(format!(
                "the embedding service gave {:?} an empty vector or one with a number that is \
                 not finite",
                texts[bad]
            )
            .into());
        }
        vectors.iter_mut().for_each(|v| super::normalize(v));
        Ok(vectors)
    }
}

/// Why the tools' vectors could not be had.
enum Mixed {
    /// A request failed.
    Failed(EmbedError),
    /// The requests' vectors are of two lengths.
    Lengths(String),
}

impl From<Mixed> for EmbedError {
    fn from(why: Mixed) -> EmbedError {
        match why {
            Mixed::Failed(error) => error,
            Mixed::Lengths(message) => message.into(),
        }
    }
}

/// Whether a vector can be ranked with: not empty, every number finite.
fn usable(vector: &[f32]) -> bool {
    !vector.is_empty() && vector.iter().all(|x| x.is_finite())
}

fn wrong_count(vectors: usize, texts: usize) -> EmbedError {
    format!("the embedding service gave {vectors} vectors for {texts} texts").into()
}

/// Searches leave the service alone for a while after the tools could not be embedded.
#[derive(Debug)]
pub(super) struct Paused;

impl std::fmt::Display for Paused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the embedding service failed a moment ago: not asked again yet")
    }
}

impl std::error::Error for Paused {}

/// An [`EmbeddingService`] in front of another that keeps the vectors of the texts it was
/// asked for and asks its service only for the others: indexes built per request (per
/// caller, per conversation) over one catalog share it, and its tools are embedded once.
///
/// - It keeps the vectors of at most `capacity` texts: enough for every tool text of the
///   catalogs it serves and the queries in between, or the tools are embedded again. Past
///   that, it forgets down to three quarters, those used longest ago first.
/// - When its service's vectors change length (another model behind it), it forgets every
///   vector it kept and asks again for the whole call, so one answer never mixes two models.
///   Another model of the same length cannot be told from the first: [`clear`](Self::clear)
///   it when the model changes.
/// - Vectors that cannot be ranked with (empty, or with a number that is not finite) are
///   passed on, never kept; a service's error is passed on.
/// - Two indexes asking at once for a text it does not hold both ask the service.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use tool_runtime::BoxFuture;
/// use tool_runtime::search::{EmbedError, EmbeddingCache, EmbeddingService, Ranking, ToolIndex};
/// use tool_runtime::{ToolSet, tool};
///
/// /// A stand-in for a service that counts the texts it embeds.
/// #[derive(Default)]
/// struct Service(AtomicUsize);
///
/// impl EmbeddingService for Service {
///     fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
///         self.0.fetch_add(texts.len(), Ordering::SeqCst);
///         let pay = |t: &String| if t.contains("gaji") || t.contains("wage") { 1.0 } else { 0.0 };
///         Box::pin(async move { Ok(texts.iter().map(|t| vec![pay(t), 1.0 - pay(t)]).collect()) })
///     }
/// }
///
/// #[tool(description = "Tampilkan slip gaji karyawan.")]
/// fn daftar_gaji() -> u32 { 1 }
///
/// #[tool(description = "Return the weather forecast for a city.")]
/// fn cuaca(#[arg(description = "The city's name")] kota: String) -> String { kota }
///
/// let service = Arc::new(Service::default());
/// let cache = Arc::new(EmbeddingCache::new(service.clone(), 10_000));
/// let set = ToolSet::new([daftar_gaji::tool(), cuaca::tool()]).unwrap();
/// for _request in 0..3 {
///     let index = ToolIndex::ranked_by(&set, Ranking::lexical().service(cache.clone()));
///     let found = pollster::block_on(index.search_async("my wage statements", 1));
///     assert_eq!(found[0].tool, "daftar_gaji");
/// }
/// // The two tools and the query, once.
/// assert_eq!(service.0.load(Ordering::SeqCst), 3);
/// ```
pub struct EmbeddingCache<S> {
    service: S,
    capacity: usize,
    kept: Mutex<Kept>,
}

/// What an [`EmbeddingCache`] holds: each text's vector and when it was last used.
#[derive(Default)]
struct Kept {
    vectors: HashMap<String, (Vec<f32>, u64)>,
    /// The vectors' length (all of one).
    length: Option<usize>,
    /// Counts uses: the later, the higher.
    clock: u64,
}

impl Kept {
    /// The vector kept for `text`, marked used.
    fn get(&mut self, text: &str) -> Option<Vec<f32>> {
        self.clock += 1;
        let clock = self.clock;
        self.vectors.get_mut(text).map(|(vector, used)| {
            *used = clock;
            vector.clone()
        })
    }

    /// Keeps the usable of `vectors` (of `texts`), at most `capacity` texts' in all; vectors
    /// of another length than those kept replace them all.
    fn keep(&mut self, texts: &[&String], vectors: &[Vec<f32>], capacity: usize) {
        for (text, vector) in texts.iter().zip(vectors).filter(|(_, v)| usable(v)) {
            if self.length.is_some_and(|length| length != vector.len()) {
                self.vectors.clear();
            }
            self.length = Some(vector.len());
            self.clock += 1;
            self.vectors
                .insert((*text).clone(), (vector.clone(), self.clock));
        }
        if self.vectors.len() > capacity {
            // Down to three quarters at once, so the sort is paid once every many texts; the
            // text used last is never forgotten while one may be kept.
            let mut uses: Vec<u64> = self.vectors.values().map(|(_, used)| *used).collect();
            uses.sort_unstable();
            let forget = self.vectors.len() - (capacity - capacity / 4);
            let last_forgotten = uses[forget - 1];
            self.vectors.retain(|_, (_, used)| *used > last_forgotten);
        }
    }
}

impl<S: EmbeddingService> EmbeddingCache<S> {
    /// `service`, with the vectors of at most `capacity` texts kept.
    pub fn new(service: S, capacity: usize) -> EmbeddingCache<S> {
        EmbeddingCache {
            service,
            capacity,
            kept: Mutex::new(Kept::default()),
        }
    }

    /// How many texts' vectors it holds.
    pub fn len(&self) -> usize {
        self.lock().vectors.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many texts' vectors it keeps at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Forgets every vector it holds: for a model changed behind the service, when the new
    /// one's vectors are of the old one's length.
    pub fn clear(&self) {
        let mut kept = self.lock();
        kept.vectors.clear();
        kept.length = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn answer(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut answer: Vec<Option<Vec<f32>>> = {
            let mut kept = self.lock();
            texts.iter().map(|t| kept.get(t)).collect()
        };
        // In the caller's order, each once.
        let mut asked_for = std::collections::HashSet::new();
        let missing: Vec<&String> = texts
            .iter()
            .zip(&answer)
            .filter(|(text, kept)| kept.is_none() && asked_for.insert(*text))
            .map(|(text, _)| text)
            .collect();
        if missing.is_empty() {
            return Ok(answer.into_iter().flatten().collect());
        }
        let asked: Vec<String> = missing.iter().map(|t| (*t).clone()).collect();
        let fresh = self.service.embed(&asked).await?;
        if fresh.len() != asked.len() {
            return Err(wrong_count(fresh.len(), asked.len()));
        }
        let length = fresh.iter().find(|v| usable(v)).map(Vec::len);
        let kept_length = answer.iter().flatten().map(Vec::len).next();
        if let (Some(length), Some(kept_length)) = (length, kept_length)
            && length != kept_length
        {
            // Another model: what was answered from the cache is of the old one.
            let fresh = self.service.embed(texts).await?;
            if fresh.len() != texts.len() {
                return Err(wrong_count(fresh.len(), texts.len()));
            }
            let texts: Vec<&String> = texts.iter().collect();
            self.lock().keep(&texts, &fresh, self.capacity);
            return Ok(fresh);
        }
        let by_text: HashMap<&String, &Vec<f32>> = missing.iter().copied().zip(&fresh).collect();
        for (text, slot) in texts.iter().zip(&mut answer) {
            if slot.is_none() {
                *slot = by_text.get(text).map(|v| (*v).clone());
            }
        }
        self.lock().keep(&missing, &fresh, self.capacity);
        Ok(answer.into_iter().flatten().collect())
    }
}

impl<S: EmbeddingService> EmbeddingService for EmbeddingCache<S> {
    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(self.answer(texts))
    }
}

impl<S> std::fmt::Debug for EmbeddingCache<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("EmbeddingCache")
            .field("capacity", &self.capacity)
            .field("kept", &kept.vectors.len())
            .field("length", &kept.length)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

    use super::*;

    /// A service that writes down the texts it is asked for: each text's vector is its length
    /// and a one, then `padding` zeros (another model); `nan` gets a number that is not one.
    #[derive(Default)]
    struct Log {
        asked: Mutex<Vec<String>>,
        padding: AtomicUsize,
        down: AtomicBool,
    }

    impl Log {
        fn asked(&self) -> Vec<String> {
            std::mem::take(&mut *self.asked.lock().unwrap())
        }
    }

    impl EmbeddingService for Log {
        fn embed<'a>(
            &'a self,
            texts: &'a [String],
        ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
            self.asked.lock().unwrap().extend(texts.iter().cloned());
            let padding = self.padding.load(SeqCst);
            let down = self.down.load(SeqCst);
            Box::pin(async move {
                if down {
                    return Err("503 Service Unavailable".into());
                }
                Ok(texts
                    .iter()
                    .map(|t| {
                        let first = if t == "nan" { f32::NAN } else { t.len() as f32 };
                        let mut v = vec![first, 1.0];
                        v.resize(2 + padding, 0.0);
                        v
                    })
                    .collect())
            })
        }
    }

    fn texts(of: &[&str]) -> Vec<String> {
        of.iter().map(|t| t.to_string()).collect()
    }

    fn embed(cache: &EmbeddingCache<Arc<Log>>, of: &[&str]) -> Vec<Vec<f32>> {
        pollster::block_on(cache.embed(&texts(of))).unwrap()
    }

    #[test]
    fn a_cache_asks_only_for_the_texts_it_does_not_hold_and_answers_in_order() {
        let log = Arc::new(Log::default());
        let cache = EmbeddingCache::new(log.clone(), 100);
        let direct = pollster::block_on(log.embed(&texts(&["b", "ccc", "aa", "ccc"]))).unwrap();
        log.asked();
        assert_eq!(embed(&cache, &["aa", "b"]).len(), 2);
        assert_eq!(log.asked(), ["aa", "b"]);
        assert_eq!(embed(&cache, &["b", "ccc", "aa", "ccc"]), direct);
        assert_eq!(log.asked(), ["ccc"], "once, though asked twice");
        assert_eq!(cache.len(), 3);
    }

    #[test]
    fn a_full_cache_forgets_the_texts_used_longest_ago() {
        let log = Arc::new(Log::default());
        let cache = EmbeddingCache::new(log.clone(), 4);
        embed(&cache, &["t1", "t2", "t3", "t4"]);
        embed(&cache, &["t1"]);
        embed(&cache, &["t5"]);
        // Five past four: down to three, t2 and t3 (used longest ago) forgotten.
        assert_eq!(cache.len(), 3);
        log.asked();
        embed(&cache, &["t1", "t4", "t5"]);
        assert!(log.asked().is_empty());
        embed(&cache, &["t2"]);
        assert_eq!(log.asked(), ["t2"]);
    }

    #[test]
    fn a_cache_of_one_keeps_the_text_used_last_and_of_none_keeps_nothing() {
        let log = Arc::new(Log::default());
        let one = EmbeddingCache::new(log.clone(), 1);
        embed(&one, &["a"]);
        embed(&one, &["b"]);
        assert_eq!(one.len(), 1);
        log.asked();
        embed(&one, &["b"]);
        assert!(log.asked().is_empty());
        let none = EmbeddingCache::new(log.clone(), 0);
        assert_eq!(embed(&none, &["aa", "b"]), [vec![2.0, 1.0], vec![1.0, 1.0]]);
        assert!(none.is_empty());
        // Cleared: asked again.
        one.clear();
        embed(&one, &["b"]);
        assert_eq!(log.asked(), ["aa", "b", "b"]);
    }

    #[test]
    fn a_cache_whose_service_changes_model_never_mixes_two_in_one_answer() {
        let log = Arc::new(Log::default());
        let cache = EmbeddingCache::new(log.clone(), 100);
        embed(&cache, &["a", "b"]);
        log.asked();
        log.padding.store(3, SeqCst);
        let answer = embed(&cache, &["a", "c"]);
        assert!(answer.iter().all(|v| v.len() == 5), "{answer:?}");
        assert_eq!(log.asked(), ["c", "a", "c"], "then all again");
        // What the old model embedded is forgotten.
        embed(&cache, &["b"]);
        assert_eq!(log.asked(), ["b"]);
        assert_eq!(cache.len(), 3);
    }

    #[test]
    fn a_cache_passes_on_errors_and_vectors_it_cannot_keep() {
        let log = Arc::new(Log::default());
        let cache = EmbeddingCache::new(log.clone(), 100);
        let answer = embed(&cache, &["nan", "a"]);
        assert!(answer[0][0].is_nan());
        assert!(cache.len() == 1 && log.asked().len() == 2);
        embed(&cache, &["nan"]);
        assert_eq!(log.asked(), ["nan"], "not kept");
        log.down.store(true, SeqCst);
        let error = pollster::block_on(cache.embed(&texts(&["a", "b"]))).unwrap_err();
        assert_eq!(error.to_string(), "503 Service Unavailable");
        // What it holds needs no service.
        assert_eq!(embed(&cache, &["a"]), [vec![1.0, 1.0]]);
    }
}
