//! `/metrics` of `serve`: every cluster's `dumbmonit_k8s_` series with a `cluster` label, and the
//! monitor's own. A cluster that cannot be read keeps its last good object series (so that a
//! failed read resolves nothing in Prometheus either) and reports `up` 0.
//!
//! At the envelope the text is about 10 MB, so it is never formatted per request: each cluster's
//! series are rendered once per cycle by its task, merged here once per change, and kept (with
//! its gzip form, made on the first request that accepts it) until something changes.

use std::io::Write;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::metrics::exposition::{Family, Kind, Sample, merge, prerender};
use crate::serve::Board;

/// What the text depends on besides the clusters' views: the notification counters and the
/// outbox's length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    generation: u64,
    sent: u64,
    failed: u64,
    queued: u64,
}

/// One /metrics text, as long as its key holds.
pub struct Exposition {
    key: Key,
    plain: Bytes,
    gzip: OnceLock<Bytes>,
}

impl Exposition {
    pub fn plain(&self) -> Bytes {
        self.plain.clone()
    }

    pub fn gzip(&self) -> Bytes {
        self.gzip
            .get_or_init(|| {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(&self.plain).expect("writing into memory");
                Bytes::from(e.finish().expect("writing into memory"))
            })
            .clone()
    }
}

/// The current /metrics text.
pub fn current(board: &Board) -> Arc<Exposition> {
    let counters = board.counters.lock().expect("counters lock").clone();
    let queued = board.reader().queued_count().unwrap_or(0);
    let key = Key {
        generation: board.generation(),
        sent: counters.sent.values().sum(),
        failed: counters.failed.values().sum(),
        queued,
    };
    let mut cache = board.exposition.lock().expect("exposition lock");
    if let Some(e) = &*cache
        && e.key == key
    {
        return e.clone();
    }
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
    let own = prerender(&[
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
            samples: vec![Sample::new(vec![], queued as f64)],
        },
    ]);
    let clusters = board.rendered_series();
    let mut parts: Vec<&[crate::metrics::exposition::Rendered]> = clusters.iter().map(|c| c.as_slice()).collect();
    parts.push(&own);
    let e = Arc::new(Exposition { key, plain: Bytes::from(merge(&parts)), gzip: OnceLock::new() });
    *cache = Some(e.clone());
    e
}
