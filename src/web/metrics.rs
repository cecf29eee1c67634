//! `/metrics` of `serve`: every cluster's `dumbmonit_k8s_` series with a `cluster` label, and the
//! monitor's own. A cluster that cannot be read keeps its last good object series (so that a
//! failed read resolves nothing in Prometheus either) and reports `up` 0.
//!
//! The text is joined from each cluster's series (rendered and compressed once per cycle) and
//! kept while nothing changes: see [`crate::metrics::cache`] for how fresh it is.

use std::sync::Arc;

use bytes::Bytes;

use crate::board::Board;
use crate::metrics::cache::{Exposition, ExpositionKey as Key};
use crate::metrics::exposition::{Family, MetricType, Packed, Sample, merge_gzip, pack, prerender};

/// The current /metrics text.
pub fn current(board: &Arc<Board>) -> Arc<Exposition> {
    let joined = board.clone();
    board.views().exposition().current(key(board), move |key| join(&joined, key))
}

fn key(board: &Board) -> Key {
    let counters = board.counters();
    let queued = board.reader().queued_count().unwrap_or(0);
    Key {
        generation: board.views().generation(),
        sent: counters.sent.values().sum(),
        // Either kind of failure changes the text.
        failed: counters.failed.values().sum::<u64>() + counters.refused.values().sum::<u64>(),
        queued,
    }
}

/// The gzip body as of `key`: every cluster's series, then the notifications'.
fn join(board: &Board, key: Key) -> Bytes {
    let counters = board.counters();
    let names = board.notifier_names();
    let counter = |name: &str, help: &'static str, values: &std::collections::HashMap<String, u64>| Family {
        name: name.into(),
        help,
        kind: MetricType::Counter,
        samples: names
            .iter()
            .map(|n| Sample::new(vec![("notifier", n.clone())], values.get(n).copied().unwrap_or(0) as f64))
            .collect(),
    };
    let own = pack(prerender(&[
        counter("dumbmonit_notifications_sent_total", "Notifications delivered, per notifier.", &counters.sent),
        Family {
            name: "dumbmonit_notifications_failed_total".into(),
            help: "Failed notification deliveries, per notifier: reason=\"error\" (no answer, a 5xx, a 408 or a 429: tried again), reason=\"refused\" (a 4xx retrying cannot fix: dropped).",
            kind: MetricType::Counter,
            samples: names
                .iter()
                .flat_map(|n| {
                    [("error", &counters.failed), ("refused", &counters.refused)].map(|(reason, values)| {
                        let value = values.get(n).copied().unwrap_or(0) as f64;
                        Sample::new(vec![("notifier", n.clone()), ("reason", reason.to_string())], value)
                    })
                })
                .collect(),
        },
        Family {
            name: "dumbmonit_notifications_queued".into(),
            help: "Notifications waiting in the outbox.",
            kind: MetricType::Gauge,
            samples: vec![Sample::new(vec![], key.queued as f64)],
        },
    ]));
    let clusters = board.views().packed_series();
    let mut parts: Vec<&[Packed]> = clusters.iter().map(|c| c.as_slice()).collect();
    parts.push(&own);
    Bytes::from(merge_gzip(&parts))
}
