//! The built-in alert rules: what they watch (`builtin`), and the state machine that gives
//! them Prometheus "for" semantics (`engine`).
//!
//! Evaluation is a pure function of the stored state, the cycle's timestamp and what the cycle
//! saw, so durations are tested by feeding cycles with chosen timestamps, never by waiting.

pub mod builtin;
pub mod engine;
pub mod owners;
pub mod prometheus;
pub mod quiet;
pub mod tune;

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::health::admission::WebhookHealth;
use crate::health::batch::{CronJobHealth, JobHealth, RunningJob};
use crate::health::extras::{ApiServiceHealth, HpaHealth};
use crate::health::plane::ComponentHealth;
use crate::health::policy::{PdbHealth, PvHealth, QuotaCommitment, QuotaHealth};
use crate::health::{Capacity, Expiring, Health, NodeHealth, PodHealth, PvcHealth, WorkloadHealth};
use crate::lang::{Arg, Message};

pub use engine::{Acknowledgement, Alert, NoticeGroup, NoticeGroups, RuleState, Transition, TransitionState};

/// An alert's severity, as its `severity` label says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Notice,
    Warning,
    /// What stops every change in a cluster (an admission webhook that refuses everything, a
    /// controller manager that stopped): above the guide's two, exit status 2 in `check`.
    Critical,
}

impl Severity {
    pub const ALL: [Severity; 3] = [Severity::Notice, Severity::Warning, Severity::Critical];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Notice => "notice",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }

    /// The severity a `severity` label names (`notice` for any other value).
    pub fn named(label: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|s| s.as_str() == label)
    }
}

/// One built-in rule: everything about it is this one entry of [`RULES`] (its constant is in
/// `builtin.rs`): what it is called and said with, how long it holds, what it reads and what it
/// sees there, and its expression in `dumbmonit rules`.
#[derive(Debug)]
pub struct Rule {
    pub alertname: &'static str,
    /// The labels of the object its alerts carry (besides `alertname`, `severity` and
    /// `cluster`): what a `[[rule]]`'s matchers may name.
    pub labels: &'static [&'static str],
    /// Its messages in `locales/*/rules.ftl`: `.title`, `.summary`, the annotations of
    /// `dumbmonit rules`.
    pub words: &'static str,
    pub severity: Severity,
    /// How long the condition must hold before the alert fires.
    pub hold: Duration,
    /// After firing this long, the alert escalates to Warning.
    pub escalate_after: Option<Duration>,
    /// The read it looks at, and what it sees in each object of it: in a cycle where that read
    /// failed or was not granted, its alerts neither fire nor resolve. The rule is handed only
    /// that read's objects, so it cannot look at another.
    pub reads: Reads,
    /// Its expression in `dumbmonit rules`.
    pub export: Export,
}

/// Rules are one each: the same rule is the same alertname.
impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        self.alertname == other.alertname
    }
}

impl Eq for Rule {}

/// The observations of one cycle, as a rule adds to them.
pub type Seen = Vec<Observation>;

/// What a rule reads, and its look at each object of that read.
#[derive(Clone, Copy, Debug)]
pub enum Reads {
    /// The nodes, with the API server they report to: not read by a namespaced token.
    Nodes(fn(&NodeHealth, &ApiServer, &mut Seen)),
    /// The pods, with what the rules remember of each.
    Pods(fn(&PodHealth, &PodJudged, &mut Seen)),
    /// Deployments, StatefulSets and DaemonSets.
    Workloads(fn(&WorkloadHealth, &mut Seen)),
    /// PersistentVolumeClaims.
    Claims(fn(&PvcHealth, &mut Seen)),
    /// The certificates of the connection to the API server.
    Certificates(fn(&Expiring, &ApiServer, &mut Seen)),
    /// Aggregated APIServices (optional).
    ApiServices(fn(&ApiServiceHealth, &mut Seen)),
    /// HorizontalPodAutoscalers (optional).
    Hpas(fn(&HpaHealth, &mut Seen)),
    /// Jobs (optional).
    Jobs(fn(&JobHealth, &mut Seen)),
    /// CronJobs (optional).
    CronJobs(fn(&CronJobHealth, &mut Seen)),
    /// PodDisruptionBudgets (optional).
    Pdbs(fn(&PdbHealth, &mut Seen)),
    /// Each resource of each ResourceQuota (optional).
    Quotas(fn(&QuotaHealth, &mut Seen)),
    /// What the quotas promise of CPU and memory against the nodes (optional, with the
    /// quotas; the nodes, not read by a namespaced token).
    QuotaCommitments(fn(&QuotaCommitment, &mut Seen)),
    /// PersistentVolumes (optional).
    Pvs(fn(&PvHealth, &mut Seen)),
    /// Admission webhooks, judged against their Services (optional).
    Webhooks(fn(&WebhookHealth, &mut Seen)),
    /// The control plane's components, by their leader leases (optional).
    ControlPlane(fn(&ComponentHealth, &mut Seen)),
    /// What the pods request against what the nodes give: with the nodes, not read by a
    /// namespaced token.
    Capacity(fn(&Capacity, &mut Seen)),
    /// Jobs still running (optional, with the Jobs).
    RunningJobs(fn(&RunningJob, &mut Seen)),
    /// The cycle itself: evaluated after a failed cycle alone (`RuleState::observe_failure`),
    /// resolved by a successful one.
    Cycle,
}

impl Reads {
    /// What it reads, as the pages and the API name it (the collections of `kinds::every`).
    pub fn name(&self) -> &'static str {
        match self {
            Reads::Nodes(_) => "nodes",
            Reads::Pods(_) => "pods",
            Reads::Workloads(_) => "deployments, statefulsets, daemonsets",
            Reads::Claims(_) => "persistentvolumeclaims",
            Reads::Certificates(_) => "the TLS connection",
            Reads::ApiServices(_) => "apiservices",
            Reads::Hpas(_) => "hpas",
            Reads::Jobs(_) | Reads::RunningJobs(_) => "jobs",
            Reads::CronJobs(_) => "cronjobs",
            Reads::Pdbs(_) => "poddisruptionbudgets",
            Reads::Quotas(_) => "resourcequotas",
            Reads::QuotaCommitments(_) => "resourcequotas, nodes",
            Reads::Pvs(_) => "persistentvolumes",
            Reads::Webhooks(_) => "validating/mutatingwebhookconfigurations, services, endpointslices",
            Reads::ControlPlane(_) => "leases",
            Reads::Capacity(_) => "nodes, pods",
            Reads::Cycle => "the cycle",
        }
    }

    /// The read was made in the cycle of `h`: the rule's alerts may fire and resolve.
    pub fn made(&self, h: &Health) -> bool {
        match self {
            Reads::Nodes(_) | Reads::Capacity(_) => h.nodes_visible(),
            Reads::RunningJobs(_) => h.extras.running_jobs.is_some(),
            Reads::ApiServices(_) => h.extras.apiservices.is_some(),
            Reads::Hpas(_) => h.extras.hpas.is_some(),
            Reads::Jobs(_) => h.extras.jobs.is_some(),
            Reads::CronJobs(_) => h.extras.cronjobs.is_some(),
            Reads::Pdbs(_) => h.extras.pdbs.is_some(),
            Reads::Quotas(_) => h.extras.quotas.is_some(),
            Reads::QuotaCommitments(_) => h.extras.quota_commitments.is_some(),
            Reads::Pvs(_) => h.extras.pvs.is_some(),
            Reads::Webhooks(_) => h.extras.webhooks.is_some() && h.extras.webhooks_judged,
            Reads::ControlPlane(_) => h.extras.control_plane.is_some(),
            Reads::Pods(_) | Reads::Workloads(_) | Reads::Claims(_) | Reads::Certificates(_) | Reads::Cycle => true,
        }
    }
}

/// The API server, as the node and certificate rules compare with it.
pub struct ApiServer<'a> {
    /// Its `gitVersion`.
    pub version: &'a str,
    /// The cycle's time.
    pub time: Timestamp,
}

/// What the rules' memory of a pod says at this cycle.
#[derive(Clone, Debug, PartialEq)]
pub struct PodJudged {
    /// It was seen crash-looping within [`CRASHLOOP_WINDOW`].
    pub crashlooped: bool,
    /// Its restarts within [`RESTART_WINDOW`].
    pub increase: i64,
}

/// A rule as a Prometheus rule over the `dumbmonit_k8s_` metrics (`dumbmonit rules`), at the
/// rule's severity, with its `prom-summary` and `prom-description` messages.
#[derive(Clone, Copy, Debug)]
pub struct Export {
    pub expr: fn() -> String,
    /// The template of `$value` in the summary (`{{ $value | humanizeDuration }}`).
    pub value: &'static str,
    /// Its `for:` when not the rule's hold.
    pub hold: Option<Duration>,
    /// Its Warning twin when the rule's urgency is another expression. A rule that escalates
    /// after a delay has its twin made of it: the same expression, held for the delay too.
    pub warning: Warning,
}

/// An urgency said to Prometheus as a second rule at severity `warning`.
#[derive(Clone, Copy, Debug)]
pub enum Warning {
    None,
    /// This expression (a certificate within 7 days), held as the rule is.
    When(fn() -> String),
    /// A second rule at this severity (not only Warning), held as the rule is: the objects the
    /// first expression leaves out that the built-in rule raises at another severity.
    Also(Severity, fn() -> String),
}

pub(crate) const fn minutes(m: u64) -> Duration {
    Duration::from_secs(m * 60)
}

pub use builtin::{
    AGGREGATED_API_UNAVAILABLE, CERTIFICATE_EXPIRING, CONTAINER_WAITING, CONTROL_PLANE_COMPONENT_DOWN, CPU_OVERCOMMIT,
    CPU_QUOTA_OVERCOMMIT, CRONJOB_MISSED, DAEMONSET_MISSCHEDULED, GENERATION_MISMATCH, HPA_MAXED_OUT,
    HPA_METRICS_UNAVAILABLE, HPA_REPLICAS_MISMATCH, JOB_FAILED, JOB_NOT_COMPLETED, MEMORY_OVERCOMMIT,
    MEMORY_QUOTA_OVERCOMMIT, MONITOR_UNREACHABLE, NODE_FLAPPING, NODE_NOT_READY, NODE_PRESSURE, NODE_TOO_MANY_PODS,
    PDB_NOT_ENOUGH_HEALTHY, POD_CRASH_LOOPING, POD_NOT_READY, POD_PENDING, POD_RESTARTING, POD_STUCK_TERMINATING,
    PV_ERRORS, PVC_PENDING, QUOTA_ALMOST_FULL, QUOTA_EXCEEDED, QUOTA_FULLY_USED, ROLLOUT_STUCK, VERSION_SKEW,
    WEBHOOK_UNAVAILABLE, WORKLOAD_REPLICAS_MISSING,
};

/// Every built-in rule, in the order of `dumbmonit rules` and of docs/alerts.md.
pub const RULES: [&Rule; 36] = [
    &NODE_NOT_READY,
    &NODE_PRESSURE,
    &POD_CRASH_LOOPING,
    &POD_PENDING,
    &POD_NOT_READY,
    &POD_RESTARTING,
    &WORKLOAD_REPLICAS_MISSING,
    &PVC_PENDING,
    &MONITOR_UNREACHABLE,
    &AGGREGATED_API_UNAVAILABLE,
    &HPA_METRICS_UNAVAILABLE,
    &CERTIFICATE_EXPIRING,
    &VERSION_SKEW,
    &ROLLOUT_STUCK,
    &POD_STUCK_TERMINATING,
    &NODE_FLAPPING,
    &JOB_FAILED,
    &CRONJOB_MISSED,
    &CONTROL_PLANE_COMPONENT_DOWN,
    &WEBHOOK_UNAVAILABLE,
    &HPA_MAXED_OUT,
    &HPA_REPLICAS_MISMATCH,
    &PDB_NOT_ENOUGH_HEALTHY,
    &QUOTA_ALMOST_FULL,
    &QUOTA_FULLY_USED,
    &QUOTA_EXCEEDED,
    &PV_ERRORS,
    &CPU_OVERCOMMIT,
    &MEMORY_OVERCOMMIT,
    &CPU_QUOTA_OVERCOMMIT,
    &MEMORY_QUOTA_OVERCOMMIT,
    &NODE_TOO_MANY_PODS,
    &DAEMONSET_MISSCHEDULED,
    &GENERATION_MISMATCH,
    &JOB_NOT_COMPLETED,
    &CONTAINER_WAITING,
];

/// A rule's condition holding for one object at one evaluation.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    pub rule: &'static Rule,
    /// The object's labels (`node`, `condition`, `namespace`, `pod`, `workload`, `kind`, `pvc`).
    pub labels: BTreeMap<String, String>,
    /// The arguments of the rule's one line (`Pod shop/api-7c9696d669-8tpp6 is crash-looping`),
    /// its `.summary` message said in each language.
    pub summary: Vec<(&'static str, Arg)>,
    /// The why: the cluster's words as they are, or ours said in each language.
    pub description: Message,
    /// The condition is past its urgent threshold: the alert is (or becomes) a Warning now,
    /// whatever its rule's severity (a certificate within 7 days of its end).
    pub escalate: bool,
    /// This object's alerts are at this severity rather than the rule's (a webhook that
    /// refuses what it intercepts is critical, one that lets it through a notice).
    pub severity: Option<Severity>,
}

/// How long the crash-loop and restart rules look back.
pub const CRASHLOOP_WINDOW: Duration = minutes(10);
pub const RESTART_WINDOW: Duration = minutes(60);
/// More restarts than this within the window fire `KubernetesPodRestarting`.
pub const RESTART_THRESHOLD: i64 = 5;
/// Failed cycles in a row before `KubernetesMonitorUnreachable` fires.
pub const UNREACHABLE_AFTER: u32 = 2;
/// How long a StatefulSet's or DaemonSet's update may make no progress before it is stuck, and
/// the window over which a node's Ready changes are counted: the derivation's, which remembers.
pub use crate::health::memory::{FLAPPING_WINDOW, ROLLOUT_PATIENCE};
/// More Ready changes than this within [`FLAPPING_WINDOW`] make a node flap.
pub const FLAPPING_CHANGES: u32 = 2;
/// How long past its grace period a pod may stay before `KubernetesPodStuckTerminating`.
pub const TERMINATING_PATIENCE: Duration = minutes(15);

/// The messages of a rule's words (`rule-node-not-ready`: its `.title`, `.summary` and the
/// annotations of `dumbmonit rules`), by its alertname.
pub fn words_of(alertname: &str) -> Option<&'static str> {
    RULES.iter().find(|r| r.alertname == alertname).map(|r| r.words)
}

#[cfg(test)]
mod words {
    /// Every rule has its words, in both languages (the key-parity test holds French to English).
    #[test]
    fn every_rule_has_its_messages_in_both_languages() {
        // Checked against the message files themselves, not through `t`, which falls back to
        // the id of a message it lacks.
        for r in super::RULES {
            for lang in [crate::lang::Lang::En, crate::lang::Lang::Fr] {
                for part in ["title", "summary", "prom-summary", "prom-description"] {
                    let id = format!("{}.{part}", r.words);
                    assert!(lang.has(&id), "{}: no {id} in locales/{}/rules.ftl", r.alertname, lang.code());
                }
            }
        }
        assert!(!crate::lang::Lang::En.has("rule-no-such-rule.title"), "the check can fail");
        assert!(!crate::lang::Lang::Fr.has("rule-node-not-ready.no-such-part"));
    }
}
