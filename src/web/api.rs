//! The JSON API: `/api/v1/clusters`, `/api/v1/clusters/{name}`, `/api/v1/alerts`. The same data
//! as the pages; documented in the README; fields are only ever added.

use serde_json::{Value, json};

use crate::board::{Board, ClusterView};
use crate::rules::Alert;
use crate::silence::Quiet;

fn time(t: Option<jiff::Timestamp>) -> Value {
    t.map(|t| json!(t.to_string())).unwrap_or(Value::Null)
}

fn summary(c: &ClusterView) -> Value {
    // Namespaced access: the node counts are null (not visible, not zero).
    let nodes_seen = c.health.as_ref().filter(|h| h.nodes_visible());
    let namespaced = c.health.as_ref().and_then(|h| h.extras.namespaced.as_ref());
    json!({
        "name": c.name,
        "address": c.address,
        "status": c.status(),
        "summary": c.sentence(),
        "error": c.error,
        "last_cycle": time(c.last_cycle),
        "last_good_cycle": time(c.last_good),
        "version": c.health.as_ref().map(|h| h.version.clone()),
        "nodes": nodes_seen.map(|h| h.counts.nodes),
        "nodes_ready": nodes_seen.map(|h| h.counts.nodes_ready),
        "pods": c.health.as_ref().map(|h| h.counts.pods),
        "namespaces": namespaced.map(|n| &n.read),
        "namespace_problems": namespaced.map(|n| &n.problems),
        "firing_alerts": c.firing(),
        "added_on_pages": c.from_pages,
        "agent": c.agent.as_ref().map(|a| json!({
            "last_report": time(a.last_report),
            "clock_skew_seconds": a.skew.as_secs(),
            "notes": a.notes(),
        })),
    })
}

/// An alert as the API gives it, with what keeps it quiet at `now`.
pub fn alert(cluster: &str, a: &Alert, quiet: &Quiet, now: jiff::Timestamp) -> Value {
    json!({
        "cluster": cluster,
        "alertname": a.alertname,
        "severity": a.severity,
        "state": if a.firing() { "firing" } else { "pending" },
        "labels": a.labels,
        "summary": a.summary,
        "description": a.description,
        "active_at": a.active_at.to_string(),
        "fired_at": time(a.fired_at),
        "escalated_at": time(a.escalated_at),
        "fingerprint": crate::notify::payload::fingerprint(&a.labels),
        "silenced_by": quiet.silencing(now, &a.labels).iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        "in_maintenance": quiet.maintenance(now, cluster).is_some(),
        "acknowledged": a.acknowledged,
    })
}

pub fn clusters(board: &Board) -> String {
    Value::Array(board.views().clusters().iter().map(summary).collect()).to_string()
}

pub fn cluster(board: &Board, name: &str) -> Option<String> {
    let c = board.views().cluster(name)?;
    let mut doc = summary(&c);
    if let Some(h) = &c.health {
        doc["counts"] = json!(h.counts);
        doc["nodes_detail"] = json!(h.nodes);
        doc["pods_needing_attention"] = Value::Array(
            h.problem_pods()
                .iter()
                .map(|p| {
                    let mut v = json!(p);
                    v["problems"] = json!(p.problems());
                    v
                })
                .collect(),
        );
        doc["workloads_missing_replicas"] = json!(h.workloads.iter().filter(|w| w.unavailable > 0).collect::<Vec<_>>());
        doc["stuck_claims"] = json!(h.pvcs.iter().filter(|p| p.stuck).collect::<Vec<_>>());
        doc["warning_events_by_reason"] =
            Value::Array(h.events_by_reason.iter().map(|(r, n)| json!({"reason": r, "count": n})).collect());
    }
    let (quiet, now) = (board.quieting().quiet(), board.now());
    doc["alerts"] = Value::Array(c.alerts.iter().map(|a| alert(&c.name, a, &quiet, now)).collect());
    Some(doc.to_string())
}

pub fn alerts(board: &Board) -> String {
    let (quiet, now) = (board.quieting().quiet(), board.now());
    let list: Vec<Value> = board
        .views()
        .clusters()
        .iter()
        .flat_map(|c| c.alerts.iter().map(|a| alert(&c.name, a, &quiet, now)).collect::<Vec<_>>())
        .collect();
    Value::Array(list).to_string()
}

pub fn error(message: &str) -> String {
    json!({"error": message}).to_string()
}

/// The monitor's own health: what a soak run watches, and whether the state is being saved.
pub fn monitor(board: &Board) -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let open_fds = std::fs::read_dir("/proc/self/fd").map(|d| d.count() as u64).ok();
    let quantiles = |list: &std::collections::VecDeque<f64>| match crate::board::Timings::quantiles(list) {
        Some((p50, p99, max, samples)) => json!({"p50": p50, "p99": p99, "max": max, "samples": samples}),
        None => Value::Null,
    };
    let (lag, commit) = board.timings(|t| (quantiles(&t.start_lag), quantiles(&t.commit)));
    json!({
        "uptime_seconds": board.uptime().as_secs(),
        "cycle_start_lag_seconds": lag,
        "commit_seconds": commit,
        "resident_memory_bytes": field("VmRSS:").map(|kb| kb * 1024),
        "peak_resident_memory_bytes": field("VmHWM:").map(|kb| kb * 1024),
        "threads": field("Threads:"),
        "open_fds": open_fds,
        "tasks": tokio::runtime::Handle::try_current().ok().map(|h| h.metrics().num_alive_tasks()),
        "state_saved": board.persistence_problem().is_none(),
        "state_problem": board.persistence_problem(),
        "notifications_refused": board.refusals(),
    })
    .to_string()
}
