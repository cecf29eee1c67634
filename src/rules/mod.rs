//! The built-in alert rules: what they watch (`builtin`), and the state machine that gives
//! them Prometheus "for" semantics (`engine`).
//!
//! Evaluation is a pure function of the stored state, the cycle's timestamp and what the cycle
//! saw, so durations are tested by feeding cycles with chosen timestamps, never by waiting.

pub mod builtin;
pub mod engine;
pub mod prometheus;
pub mod quiet;

use std::collections::BTreeMap;
use std::time::Duration;

use crate::lang::{Arg, Message};
use serde::{Deserialize, Serialize};

pub use engine::{Acknowledgement, Alert, RuleState, Transition, TransitionState};

/// An alert's severity, as its `severity` label says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Notice,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Notice => "notice",
            Severity::Warning => "warning",
        }
    }
}

/// One built-in rule.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    pub alertname: &'static str,
    /// Its messages in `locales/*/rules.ftl`: `.title`, `.summary`, the annotations of
    /// `dumbmonit rules`.
    pub words: &'static str,
    pub severity: Severity,
    /// How long the condition must hold before the alert fires.
    pub hold: Duration,
    /// After firing this long, the alert escalates to Warning.
    pub escalate_after: Option<Duration>,
}

const fn minutes(m: u64) -> Duration {
    Duration::from_secs(m * 60)
}

pub const NODE_NOT_READY: Rule = Rule {
    alertname: "KubernetesNodeNotReady",
    words: "rule-node-not-ready",
    severity: Severity::Warning,
    hold: minutes(5),
    escalate_after: None,
};
pub const NODE_PRESSURE: Rule = Rule {
    alertname: "KubernetesNodePressure",
    words: "rule-node-pressure",
    severity: Severity::Notice,
    hold: minutes(5),
    escalate_after: None,
};
pub const POD_CRASH_LOOPING: Rule = Rule {
    alertname: "KubernetesPodCrashLooping",
    words: "rule-pod-crash-looping",
    severity: Severity::Warning,
    hold: minutes(10),
    escalate_after: None,
};
pub const POD_PENDING: Rule = Rule {
    alertname: "KubernetesPodPending",
    words: "rule-pod-pending",
    severity: Severity::Notice,
    hold: minutes(15),
    escalate_after: None,
};
pub const POD_RESTARTING: Rule = Rule {
    alertname: "KubernetesPodRestarting",
    words: "rule-pod-restarting",
    severity: Severity::Notice,
    hold: minutes(0),
    escalate_after: None,
};
pub const WORKLOAD_REPLICAS_MISSING: Rule = Rule {
    alertname: "KubernetesWorkloadReplicasMissing",
    words: "rule-workload-replicas-missing",
    severity: Severity::Notice,
    hold: minutes(10),
    escalate_after: Some(minutes(60)),
};
pub const PVC_PENDING: Rule = Rule {
    alertname: "KubernetesPVCPending",
    words: "rule-pvc-pending",
    severity: Severity::Notice,
    hold: minutes(15),
    escalate_after: None,
};
pub const MONITOR_UNREACHABLE: Rule = Rule {
    alertname: "KubernetesMonitorUnreachable",
    words: "rule-monitor-unreachable",
    severity: Severity::Warning,
    hold: minutes(0),
    escalate_after: None,
};

pub const AGGREGATED_API_UNAVAILABLE: Rule = Rule {
    alertname: "KubernetesAggregatedAPIUnavailable",
    words: "rule-aggregated-api-unavailable",
    severity: Severity::Warning,
    hold: minutes(5),
    escalate_after: None,
};
pub const HPA_METRICS_UNAVAILABLE: Rule = Rule {
    alertname: "KubernetesHPAMetricsUnavailable",
    words: "rule-hpa-metrics-unavailable",
    severity: Severity::Notice,
    hold: minutes(10),
    escalate_after: None,
};

pub const CERTIFICATE_EXPIRING: Rule = Rule {
    alertname: "KubernetesAPICertificateExpiring",
    words: "rule-certificate-expiring",
    severity: Severity::Notice,
    hold: minutes(0),
    escalate_after: None,
};
pub const VERSION_SKEW: Rule = Rule {
    alertname: "KubernetesVersionSkew",
    words: "rule-version-skew",
    severity: Severity::Notice,
    hold: minutes(60),
    escalate_after: None,
};
pub const ROLLOUT_STUCK: Rule = Rule {
    alertname: "KubernetesRolloutStuck",
    words: "rule-rollout-stuck",
    severity: Severity::Warning,
    hold: minutes(0),
    escalate_after: None,
};
pub const POD_STUCK_TERMINATING: Rule = Rule {
    alertname: "KubernetesPodStuckTerminating",
    words: "rule-pod-stuck-terminating",
    severity: Severity::Notice,
    hold: minutes(0),
    escalate_after: None,
};
pub const NODE_FLAPPING: Rule = Rule {
    alertname: "KubernetesNodeFlapping",
    words: "rule-node-flapping",
    severity: Severity::Warning,
    hold: minutes(0),
    escalate_after: None,
};
pub const JOB_FAILED: Rule = Rule {
    alertname: "KubernetesJobFailed",
    words: "rule-job-failed",
    severity: Severity::Notice,
    hold: minutes(0),
    escalate_after: None,
};
pub const CRONJOB_MISSED: Rule = Rule {
    alertname: "KubernetesCronJobMissed",
    words: "rule-cronjob-missed",
    severity: Severity::Notice,
    hold: minutes(0),
    escalate_after: None,
};

pub const RULES: [&Rule; 17] = [
    &NODE_NOT_READY,
    &NODE_PRESSURE,
    &POD_CRASH_LOOPING,
    &POD_PENDING,
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
