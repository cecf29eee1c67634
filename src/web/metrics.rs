//! `/metrics` of `serve`: every cluster's `dumbmonit_k8s_` series with a `cluster` label, and the
//! monitor's own. A cluster that cannot be read keeps its last good object series (so that a
//! failed read resolves nothing in Prometheus either) and reports `up` 0.
//!
//! At the envelope the text is about 10 MB, and 5,000 clusters of 100 pods make some 400 MB, so it
//! is never formatted nor compressed per request: each cluster's series are rendered and
//! compressed once per cycle by its task (fragments of one deflate stream, see
//! [`crate::metrics::exposition::Packed`]), joined here into one gzip body once per change, and
//! kept until something changes. A client that does not take gzip gets that body inflated (once
//! per change, then kept beside it).
//!
//! Joining stays cheap until thousands of clusters (at 5,000 clusters of 100 pods, 32 MB of gzip
//! out of 175,000 fragments: about 0.1 s). So that requests never queue behind it, a text whose
//! join took more than [`SLOW_BUILD`] is served for up to ten times that long after it was made
//! while a newer one is joined in the background: /metrics then lags the clusters' cycles by at
//! most about a second. Below that, every request sees every cycle already taken.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::board::{Board, Exposition, ExpositionKey as Key};
use crate::metrics::exposition::{Family, Kind, Packed, Sample, merge_gzip, pack, prerender};

/// A join slower than this lets requests take the last text for ten times as long.
pub const SLOW_BUILD: Duration = Duration::from_millis(20);

/// A join running in the background.
static JOINING: AtomicBool = AtomicBool::new(false);

/// The current /metrics text (see the module's note on freshness).
pub fn current(board: &Arc<Board>) -> Arc<Exposition> {
    let key = key(board);
    let last = board.exposition.lock().expect("exposition lock").clone();
    if let Some(e) = last {
        if e.key == key {
            return e;
        }
        if e.took > SLOW_BUILD && e.made.elapsed() < e.took * 10 {
            if !JOINING.swap(true, Ordering::SeqCst) {
                let board = board.clone();
                std::thread::spawn(move || {
                    build(&board, key);
                    JOINING.store(false, Ordering::SeqCst);
                });
            }
            return e;
        }
    }
    build(board, key)
}

fn key(board: &Board) -> Key {
    let counters = board.counters.lock().expect("counters lock").clone();
    let queued = board.reader().queued_count().unwrap_or(0);
    Key {
        generation: board.generation(),
        sent: counters.sent.values().sum(),
        failed: counters.failed.values().sum(),
        queued,
    }
}

/// Joins the text as of `key` and keeps it.
fn build(board: &Board, key: Key) -> Arc<Exposition> {
    let started = Instant::now();
    let counters = board.counters.lock().expect("counters lock").clone();
    let names = board.notifier_names();
    let counter = |name: &str, help: &'static str, values: &std::collections::HashMap<String, u64>| Family {
        name: name.into(),
        help,
        kind: Kind::Counter,
        samples: names
            .iter()
            .map(|n| Sample::new(vec![("notifier", n.clone())], values.get(n).copied().unwrap_or(0) as f64))
            .collect(),
    };
    let own = pack(prerender(&[
        counter("dumbmonit_notifications_sent_total", "Notifications delivered, per notifier.", &counters.sent),
        counter(
            "dumbmonit_notifications_failed_total",
            "Failed notification deliveries (each is retried), per notifier.",
            &counters.failed,
        ),
        Family {
            name: "dumbmonit_notifications_queued".into(),
            help: "Notifications waiting in the outbox.",
            kind: Kind::Gauge,
            samples: vec![Sample::new(vec![], key.queued as f64)],
        },
    ]));
    let clusters = board.packed_series();
    let mut parts: Vec<&[Packed]> = clusters.iter().map(|c| c.as_slice()).collect();
    parts.push(&own);
    let gzip = Bytes::from(merge_gzip(&parts));
    let e = Arc::new(Exposition::new(key, gzip, started.elapsed()));
    *board.exposition.lock().expect("exposition lock") = Some(e.clone());
    e
}
