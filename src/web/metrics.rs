//! `/metrics` of `serve`: every cluster's `dumbmonit_k8s_` series with a `cluster` label, and the
//! monitor's own. A cluster that cannot be read keeps its last good object series (so that a
//! failed read resolves nothing in Prometheus either) and reports `up` 0.

use crate::metrics::exposition::{Family, Kind, Sample, encode};
use crate::metrics::{cluster_families, monitor_families};
use crate::serve::Board;

/// Adds families into `merged`, one family per name, samples in order.
fn merge(merged: &mut Vec<Family>, families: Vec<Family>) {
    for f in families {
        match merged.iter_mut().find(|m| m.name == f.name) {
            Some(m) => m.samples.extend(f.samples),
            None => merged.push(f),
        }
    }
}

pub fn render(board: &Board) -> String {
    let mut merged = Vec::new();
    for c in board.clusters() {
        let mut families = c.health.as_deref().map(cluster_families).unwrap_or_default();
        if c.last_cycle.is_some() {
            families.extend(monitor_families(c.up, c.cycle_duration, &c.stats));
        }
        for f in &mut families {
            for s in &mut f.samples {
                s.labels.insert(0, ("cluster", c.name.clone()));
            }
        }
        merge(&mut merged, families);
    }
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
    merged.push(counter(
        "dumbmonit_notifications_sent_total",
        "Notifications delivered, per notifier.",
        &counters.sent,
    ));
    merged.push(counter(
        "dumbmonit_notifications_failed_total",
        "Failed notification deliveries (each is retried), per notifier.",
        &counters.failed,
    ));
    merged.push(Family {
        name: "dumbmonit_notifications_queued".into(),
        help: "Notifications waiting in the outbox.",
        kind: Kind::Gauge,
        samples: vec![Sample::new(vec![], board.store.lock().expect("store lock").queued_count().unwrap_or(0) as f64)],
    });
    encode(&merged)
}
