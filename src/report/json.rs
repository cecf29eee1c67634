//! The JSON document of `check --output json`. Its shape is documented in the README and
//! stable: fields are only ever added.

use serde::Serialize;

use crate::collect::Cycle;
use crate::health::{Counts, Health, NodeHealth, PodHealth, PvcHealth, WorkloadHealth};

#[derive(Serialize)]
struct Document<'a> {
    cluster: ClusterInfo<'a>,
    time: String,
    /// `ok`, `notice`, `critical` or `unreachable`.
    status: &'static str,
    exit_code: u8,
    summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    counts: Option<&'a Counts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nodes: Option<&'a [std::sync::Arc<NodeHealth>]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pods: Option<Vec<Pod<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    workloads: Option<Vec<&'a WorkloadHealth>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    claims: Option<Vec<&'a PvcHealth>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warning_events_by_reason: Option<Vec<Reason<'a>>>,
    /// What the pods request against what the Ready, schedulable nodes give (absent where the
    /// nodes are not visible).
    #[serde(skip_serializing_if = "Option::is_none")]
    capacity: Option<&'a crate::health::Capacity>,
    /// The optional reads: aggregated APIServices, the Metrics API, HPAs, Jobs and CronJobs, what
    /// is not granted.
    #[serde(skip_serializing_if = "Option::is_none")]
    optional: Option<&'a crate::health::extras::ExtrasHealth>,
    /// When the connection's certificates end, and those ending within 30 days.
    #[serde(skip_serializing_if = "Option::is_none")]
    certificates: Option<Certificates<'a>>,
    collections: Vec<CollectionInfo>,
    error: Option<ErrorInfo>,
}

#[derive(Serialize)]
struct Certificates<'a> {
    #[serde(flatten)]
    not_after: &'a crate::collect::Certificates,
    expiring: Vec<crate::health::Expiring>,
}

#[derive(Serialize)]
struct ClusterInfo<'a> {
    address: &'a str,
    version: Option<&'a str>,
}

/// A pod that needs attention.
#[derive(Serialize)]
struct Pod<'a> {
    #[serde(flatten)]
    pod: &'a PodHealth,
    problems: Vec<String>,
}

#[derive(Serialize)]
struct Reason<'a> {
    reason: &'a str,
    count: u64,
}

#[derive(Serialize)]
struct CollectionInfo {
    collection: &'static str,
    duration_seconds: f64,
    ok: bool,
}

#[derive(Serialize)]
struct ErrorInfo {
    collection: &'static str,
    message: String,
}

/// The document for a cycle; `message` is the (redacted) error text of a failed one.
pub fn render(address: &str, cycle: &Cycle, health: Option<&Health>, message: Option<&str>) -> String {
    // The eight core reads, as always: the optional reads' stats are for the metrics.
    let collections = cycle
        .stats
        .iter()
        .filter(|s| !s.collection.optional())
        .map(|s| CollectionInfo {
            collection: s.collection.name(),
            duration_seconds: s.duration.as_secs_f64(),
            ok: s.ok,
        })
        .collect();
    let doc = match (health, &cycle.result) {
        (Some(h), _) => {
            let severity = h.severity();
            Document {
                cluster: ClusterInfo { address, version: Some(&h.version) },
                time: h.time.to_string(),
                status: match severity {
                    crate::health::Grade::Ok => "ok",
                    crate::health::Grade::Notice => "notice",
                    crate::health::Grade::Critical => "critical",
                },
                exit_code: severity as u8,
                summary: h.summary(),
                counts: Some(&h.counts),
                nodes: Some(&h.nodes),
                pods: Some(h.problem_pods().iter().map(|p| Pod { pod: p, problems: p.problems() }).collect()),
                workloads: Some(
                    h.workloads
                        .iter()
                        .map(|w| &**w)
                        .filter(|w| w.unavailable > 0 || w.rollout_stuck || w.misscheduled > 0 || w.generation_lag > 0)
                        .collect(),
                ),
                claims: Some(h.pvcs.iter().map(|c| &**c).filter(|c| c.stuck).collect()),
                warning_events_by_reason: Some(
                    h.events_by_reason.iter().map(|(r, n)| Reason { reason: r, count: *n }).collect(),
                ),
                capacity: h.nodes_visible().then_some(&h.capacity),
                optional: Some(&h.extras),
                certificates: Some(Certificates { not_after: &h.certificates, expiring: h.expiring() }),
                collections,
                error: None,
            }
        }
        (None, result) => {
            let collection = result.as_ref().err().map(|e| e.collection.name()).unwrap_or("");
            let message = message.unwrap_or("the cluster could not be read").to_string();
            Document {
                cluster: ClusterInfo { address, version: None },
                time: cycle.time.to_string(),
                status: "unreachable",
                exit_code: 3,
                summary: message.clone(),
                counts: None,
                nodes: None,
                pods: None,
                workloads: None,
                claims: None,
                warning_events_by_reason: None,
                capacity: None,
                optional: None,
                certificates: None,
                collections,
                error: Some(ErrorInfo { collection, message }),
            }
        }
    };
    let mut s = serde_json::to_string_pretty(&doc).expect("the document serializes");
    s.push('\n');
    s
}
