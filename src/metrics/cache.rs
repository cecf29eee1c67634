//! The /metrics text of `serve`, kept while nothing it depends on changes.
//!
//! At the envelope the text is about 10 MB, and 5,000 clusters of 100 pods make some 400 MB, so it
//! is never formatted nor compressed per request: each cluster's series are rendered and
//! compressed once per cycle (fragments of one deflate stream, see [`super::exposition::Packed`]),
//! joined into one gzip body once per change, and kept until something changes. A client that
//! does not take gzip gets that body inflated (once per change, then kept beside it).
//!
//! Joining stays cheap until thousands of clusters (at 5,000 clusters of 100 pods, 32 MB of gzip
//! out of 175,000 fragments: about 0.1 s). So that requests never queue behind it, a text whose
//! join took more than [`SLOW_BUILD`] is served for up to ten times that long after it was made
//! while a newer one is joined in the background: /metrics then lags the clusters' cycles by at
//! most about a second. Below that, every request sees every cycle already taken.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;

/// A join slower than this lets requests take the last text for ten times as long.
pub const SLOW_BUILD: Duration = Duration::from_millis(20);

/// What the text depends on besides the clusters' series: which of their versions (the board's
/// generation), the notification counters and the outbox's length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpositionKey {
    pub generation: u64,
    pub sent: u64,
    pub failed: u64,
    pub queued: u64,
}

/// One /metrics text, kept as long as its key holds.
pub struct Exposition {
    pub key: ExpositionKey,
    gzip: Bytes,
    /// The text, inflated on the first request that does not take gzip.
    plain: OnceLock<Bytes>,
    /// When it was joined, and how long that took.
    pub made: Instant,
    pub took: Duration,
}

impl Exposition {
    pub fn new(key: ExpositionKey, gzip: Bytes, took: Duration) -> Exposition {
        Exposition { key, gzip, plain: OnceLock::new(), made: Instant::now(), took }
    }

    /// The text, inflated once for the clients that do not take gzip (Prometheus does), and
    /// kept as long as this text is current.
    pub fn plain(&self) -> Bytes {
        use std::io::Read;
        self.plain
            .get_or_init(|| {
                let mut text = Vec::with_capacity(self.gzip.len() * 8);
                flate2::read::GzDecoder::new(&self.gzip[..]).read_to_end(&mut text).expect("our own gzip member");
                Bytes::from(text)
            })
            .clone()
    }

    pub fn gzip(&self) -> Bytes {
        self.gzip.clone()
    }
}

/// The last text, and whether a newer one is being joined in the background.
#[derive(Default)]
pub struct ExpositionCache {
    last: Mutex<Option<Arc<Exposition>>>,
    joining: AtomicBool,
}

impl ExpositionCache {
    /// The text for `key`: the kept one when it is current, or (see the module's note) when a
    /// slow join made it recently while `join` runs in the background; else joined now.
    /// `join` gives the gzip body as of a key.
    pub fn current<J>(self: &Arc<Self>, key: ExpositionKey, join: J) -> Arc<Exposition>
    where
        J: Fn(ExpositionKey) -> Bytes + Send + 'static,
    {
        let last = self.last.lock().expect("exposition lock").clone();
        if let Some(e) = last {
            if e.key == key {
                return e;
            }
            if e.took > SLOW_BUILD && e.made.elapsed() < e.took * 10 {
                if !self.joining.swap(true, Ordering::SeqCst) {
                    let cache = self.clone();
                    std::thread::spawn(move || {
                        cache.build(key, &join);
                        cache.joining.store(false, Ordering::SeqCst);
                    });
                }
                return e;
            }
        }
        self.build(key, &join)
    }

    fn build(&self, key: ExpositionKey, join: &dyn Fn(ExpositionKey) -> Bytes) -> Arc<Exposition> {
        let started = Instant::now();
        let gzip = join(key);
        let e = Arc::new(Exposition::new(key, gzip, started.elapsed()));
        *self.last.lock().expect("exposition lock") = Some(e.clone());
        e
    }
}
