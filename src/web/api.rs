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
    let (quiet, now) = (board.quieting().quiet(), board.now());
    doc["alerts"] = Value::Array(c.alerts.iter().map(|a| alert(&c.name, a, &quiet, now)).collect());
    let mut text = doc.to_string();
    // The health's fields, made once a cycle, join the object's others: `text` is an object
    // with members (the summary's), and the health's names are not among them.
    if let Some(h) = &c.health {
        let fields = c.health_json.get_or_make(h, |h| health_fields(h, &c.object_json).into());
        text.pop();
        text.push(',');
        text.push_str(&fields);
        text.push('}');
    }
    Some(text)
}

/// A cluster's health as the API gives it: the members of a JSON object, without its braces,
/// in the order of their names (as a `serde_json` object writes them). Each node's and each pod's
/// JSON is the one `lines` kept while its judgement is the same.
fn health_fields(h: &crate::health::Health, lines: &crate::board::ObjectJson) -> String {
    let (nodes, pods) = lines.lines(&h.nodes, h.problem_pods(), |n| json!(n).to_string(), |p| pod_json(p).to_string());
    let members = [
        ("counts", json!(h.counts).to_string()),
        ("nodes_detail", format!("[{}]", nodes.join(","))),
        ("pods_needing_attention", format!("[{}]", pods.join(","))),
        ("stuck_claims", json!(h.pvcs.iter().filter(|p| p.stuck).collect::<Vec<_>>()).to_string()),
        (
            "warning_events_by_reason",
            Value::Array(h.events_by_reason.iter().map(|(r, n)| json!({"reason": r, "count": n})).collect())
                .to_string(),
        ),
        (
            "workloads_missing_replicas",
            json!(h.workloads.iter().filter(|w| w.unavailable > 0).collect::<Vec<_>>()).to_string(),
        ),
    ];
    let mut out = String::new();
    for (name, value) in members {
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(&Value::from(name).to_string());
        out.push(':');
        out.push_str(&value);
    }
    out
}

/// A pod with a problem as the API gives it: its health, and its problems in words.
fn pod_json(p: &crate::health::PodHealth) -> Value {
    let mut v = json!(p);
    v["problems"] = json!(p.problems());
    v
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::board::{Arranged, Publication};
    use crate::health::{Health, PodHealth};

    fn board() -> Board {
        let board = Board::in_memory("api", None);
        let lab =
            Arranged { name: "lab".into(), address: "https://k3s.lan:6443".into(), agent: false, from_pages: false };
        board.views().arrange(&[lab]);
        board
    }

    /// The health's members as one `serde_json` object writes them, every object written
    /// afresh (as the API wrote them before it kept each object's JSON).
    fn whole(h: &Health) -> String {
        let fields = json!({
            "counts": h.counts,
            "nodes_detail": h.nodes,
            "pods_needing_attention": h.problem_pods().iter().map(|p| pod_json(p)).collect::<Vec<_>>(),
            "workloads_missing_replicas": h.workloads.iter().filter(|w| w.unavailable > 0).collect::<Vec<_>>(),
            "stuck_claims": h.pvcs.iter().filter(|p| p.stuck).collect::<Vec<_>>(),
            "warning_events_by_reason": h
                .events_by_reason
                .iter()
                .map(|(r, n)| json!({"reason": r, "count": n}))
                .collect::<Vec<_>>(),
        })
        .to_string();
        fields[1..fields.len() - 1].to_string()
    }

    /// A cycle's nodes and pods with a problem: each object's JSON is written when its
    /// judgement is new, and taken again while it is the very same; the members are those one
    /// object written afresh has, in the same order.
    #[test]
    fn a_nodes_and_a_pods_json_is_written_again_only_when_its_judgement_changed() {
        let crashing = |name: &str| Arc::new(PodHealth { crashlooping: true, ..PodHealth::running(name) });
        let mut h = Health::empty(jiff::Timestamp::now(), "v1.31.0");
        h.nodes = ["n1", "n2", "n3"].map(|n| Arc::new(crate::health::NodeHealth::named(n, true))).to_vec();
        h.pods = vec![crashing("api-1"), crashing("api-2"), crashing("api-3"), Arc::new(PodHealth::running("web-1"))];
        h.events_by_reason = vec![("BackOff".into(), 3)];
        let lines = crate::board::ObjectJson::default();
        assert_eq!(health_fields(&h, &lines), whole(&h));
        assert_eq!(lines.written(), 6, "three nodes and the three pods with a problem");

        // The next cycle: the same judgements but one pod's and one node's, judged again.
        h.pods[1] = Arc::new(PodHealth { restarts: 9, ..(*h.pods[1]).clone() });
        h.nodes[2] = Arc::new(crate::health::NodeHealth::named("n3", false));
        let fields = health_fields(&h, &lines);
        assert_eq!(fields, whole(&h));
        assert_eq!(lines.written(), 2, "the pod and the node judged again");
        assert!(fields.contains("\"restarts\":9"), "{fields}");

        // The same health again: nothing written; a pod gone: its line not kept.
        assert_eq!(health_fields(&h, &lines), whole(&h));
        assert_eq!(lines.written(), 0);
        let gone = h.pods.remove(0);
        assert_eq!(health_fields(&h, &lines), whole(&h));
        assert_eq!(lines.written(), 0);
        h.pods.insert(0, gone);
        assert_eq!(health_fields(&h, &lines), whole(&h));
        assert_eq!(lines.written(), 1, "the pod come back written again");
    }

    /// A good cycle's health whose one pod, `crashing`, crash-loops.
    fn crash_loop(crashing: &str) -> Arc<Health> {
        let pod = PodHealth { crashlooping: true, ..PodHealth::running(crashing) };
        Arc::new(Health {
            counts: crate::health::Counts { pods: 1, pods_crashlooping: 1, ..Default::default() },
            pods: vec![Arc::new(pod)],
            ..Health::empty(jiff::Timestamp::now(), "v1.31.0")
        })
    }

    fn publish(board: &Board, health: Option<Arc<Health>>) {
        let error = health.is_none().then(|| "refused".to_string());
        let p = Publication {
            time: jiff::Timestamp::now(),
            duration: Duration::ZERO,
            stats: Vec::new(),
            alerts: Arc::default(),
            health,
            error,
            objects: None,
            own: Arc::default(),
            agent: None,
        };
        board.views().publish("lab", p);
    }

    fn document(board: &Board) -> Value {
        serde_json::from_str(&cluster(board, "lab").expect("lab")).expect("a JSON object")
    }

    fn crashing(doc: &Value) -> Vec<&str> {
        doc["pods_needing_attention"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect()
    }

    /// The health's members are made once a cycle: the same text while the health is the same,
    /// the new health's as soon as it is published, and the last good one's after a failed
    /// cycle, beside the summary's members.
    #[test]
    fn a_clusters_document_says_its_last_good_health_once_made_per_cycle() {
        let board = board();
        let doc = document(&board);
        assert_eq!((doc["name"].as_str(), doc["status"].as_str()), (Some("lab"), Some("waiting")));
        assert!(doc.get("counts").is_none(), "no health yet: {doc}");

        publish(&board, Some(crash_loop("api-1")));
        let first = cluster(&board, "lab").unwrap();
        let doc = document(&board);
        assert_eq!(crashing(&doc), ["api-1"]);
        assert_eq!(doc["pods_needing_attention"][0]["problems"][0], "crash-looping");
        assert_eq!((doc["counts"]["pods"].as_u64(), doc["status"].as_str()), (Some(1), Some("critical")));
        for member in ["nodes_detail", "workloads_missing_replicas", "stuck_claims", "warning_events_by_reason"] {
            assert!(doc[member].is_array(), "{member}: {doc}");
        }
        assert!(doc["alerts"].is_array());
        let made = board.views().cluster("lab").unwrap().health_json;
        let kept = |made: &crate::board::HealthMemo, h: &Arc<Health>| made.get_or_make(h, |_| "made again".into());
        let health = board.views().cluster("lab").unwrap().health.unwrap();
        assert_ne!(&*kept(&made, &health), "made again", "made at the first request, kept for the next");
        assert_eq!(cluster(&board, "lab").unwrap(), first);
        // Its status and sentence: the problems counted at the first request, kept.
        let problems = board.views().cluster("lab").unwrap().problems;
        let counted = problems.get_or_make(&health, |_| crate::health::Problems::default());
        assert_eq!(counted, health.problems(), "counted at the first request");
        assert_ne!(counted, crate::health::Problems::default(), "a pod crash-looping");
        assert_eq!(doc["summary"].as_str(), Some(health.summary().as_str()));

        // A new cycle, its health equal or not: made from it.
        let again = crash_loop("api-1");
        assert_eq!(&*kept(&made, &again), "made again", "another cycle's health, however equal");
        publish(&board, Some(crash_loop("api-2")));
        assert_eq!(crashing(&document(&board)), ["api-2"]);

        // A failed cycle: its error, and the last good health.
        publish(&board, None);
        let doc = document(&board);
        assert_eq!((doc["status"].as_str(), doc["error"].as_str()), (Some("unreachable"), Some("refused")));
        assert_eq!(crashing(&doc), ["api-2"]);
    }
}
