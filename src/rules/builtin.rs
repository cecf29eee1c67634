//! The built-in rules, one entry each: what each is called, how long it holds, the read it
//! looks at and what it sees in each of its objects, and its expression in `dumbmonit rules`.
//! [`RuleState::observe`] hands each rule the objects of its read, and lets its alerts fire or
//! resolve only in a cycle that made that read.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use jiff::Timestamp;

use super::engine::{Held, Looked, PodMemory, PodRef, RuleState, Transition};
use super::tune::Tuning;

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
use super::{
    ApiServer, CRASHLOOP_WINDOW, Export, FLAPPING_CHANGES, Observation, PodJudged, RESTART_THRESHOLD, RESTART_WINDOW,
    RULES, Reads, Rule, Seen, Severity, TERMINATING_PATIENCE, UNREACHABLE_AFTER, Warning, minutes,
};
use crate::health::extras::HpaHealth;
use crate::health::memory::within;
use crate::health::policy::{Fullness, QuotaCommitment, QuotaHealth};
use crate::health::{CERTIFICATE_URGENT, Health, NodeHealth, PodHealth, WorkloadHealth};
use crate::lang::{Arg, Message};

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn pod_labels(p: &PodHealth) -> BTreeMap<String, String> {
    labels(&[("namespace", &p.namespace), ("pod", &p.name), ("workload", &p.workload)])
}

fn workload_labels(w: &WorkloadHealth) -> BTreeMap<String, String> {
    labels(&[("kind", w.kind.as_str()), ("namespace", &w.namespace), ("workload", &w.name)])
}

/// The arguments of an alert's summary, said by its rule's message in each language.
fn args(args: &[(&'static str, Arg)]) -> Vec<(&'static str, Arg)> {
    args.to_vec()
}

fn pod_args(p: &PodHealth) -> Vec<(&'static str, Arg)> {
    vec![("namespace", (&p.namespace).into()), ("pod", (&p.name).into())]
}

fn workload_args(w: &WorkloadHealth) -> Vec<(&'static str, Arg)> {
    vec![("kind", w.kind.as_str().into()), ("namespace", (&w.namespace).into()), ("workload", (&w.name).into())]
}

/// Why the pod is in trouble (the cluster's words and ours), then its restarts.
fn pod_description(p: &PodHealth) -> Message {
    Message::new(
        "pod-description",
        &[
            ("has_why", if p.why.is_empty() { "no" } else { "yes" }.into()),
            ("why", Message::list(&p.why, "; ").into()),
            ("restarts", p.restarts.into()),
        ],
    )
}

/// An observation that does not escalate of itself.
fn seen(
    rule: &'static Rule,
    labels: BTreeMap<String, String>,
    summary: Vec<(&'static str, Arg)>,
    description: Message,
) -> Observation {
    Observation { rule, labels, summary, description, escalate: false, severity: None }
}

/// The node's Ready changes: more than [`FLAPPING_CHANGES`] in the window.
fn flapping(n: &NodeHealth) -> bool {
    n.ready_transitions > FLAPPING_CHANGES
}

/// The most common export: the rule's hold and severity, `$value` as it is, no escalation.
const fn export(expr: fn() -> String) -> Export {
    Export { expr, value: "{{ $value }}", hold: None, warning: Warning::None }
}

/// The crash loop as Prometheus sees it: the pod was crash-looping within the window.
fn crash_window() -> String {
    format!("max_over_time(dumbmonit_k8s_pod_crashlooping[{}])", super::prometheus::window(CRASHLOOP_WINDOW))
}

/// The seconds left to each certificate of the connection, labelled `certificate`, below
/// `days`.
fn certificates_within(days: u64) -> String {
    let left = |metric: &str, which: &str| {
        format!(
            "label_replace(dumbmonit_k8s_{metric}_certificate_expiry_timestamp_seconds - time(), \"certificate\", \"{which}\", \"\", \"\")"
        )
    };
    let limit = days * 86_400;
    format!("{} < {limit} or {} < {limit}", left("apiserver", "serving"), left("client", "client"))
}

pub const NODE_NOT_READY: Rule = Rule {
    alertname: "KubernetesNodeNotReady",
    labels: &["node"],
    words: "rule-node-not-ready",
    severity: Severity::Warning,
    hold: minutes(5),
    escalate_after: None,
    // While the node flaps, that one alert tells it: not a not-ready alert each time.
    reads: Reads::Nodes(|n, _, seen_| {
        if !n.ready && !flapping(n) {
            seen_.push(seen(
                &NODE_NOT_READY,
                labels(&[("node", &n.name)]),
                args(&[("node", (&n.name).into())]),
                Message::list(&n.why, "; "),
            ));
        }
    }),
    export: export(|| {
        format!(
            "dumbmonit_k8s_node_ready == 0 unless on(cluster, node) dumbmonit_k8s_node_ready_transitions > {FLAPPING_CHANGES}"
        )
    }),
};

pub const NODE_PRESSURE: Rule = Rule {
    alertname: "KubernetesNodePressure",
    labels: &["node", "condition"],
    words: "rule-node-pressure",
    severity: Severity::Notice,
    hold: minutes(5),
    escalate_after: None,
    reads: Reads::Nodes(|n, _, seen_| {
        for (condition, on) in &n.pressure {
            if *on && condition != "network" {
                seen_.push(seen(
                    &NODE_PRESSURE,
                    labels(&[("node", &n.name), ("condition", condition)]),
                    args(&[("node", (&n.name).into()), ("condition", condition.into())]),
                    Message::list(&n.why, "; "),
                ));
            }
        }
    }),
    export: export(|| "dumbmonit_k8s_node_pressure{condition=~\"memory|disk|pid\"} == 1".into()),
};

pub const POD_CRASH_LOOPING: Rule = Rule {
    alertname: "KubernetesPodCrashLooping",
    labels: &["namespace", "pod", "workload"],
    words: "rule-pod-crash-looping",
    severity: Severity::Warning,
    hold: minutes(10),
    escalate_after: None,
    reads: Reads::Pods(|p, judged, seen_| {
        if judged.crashlooped {
            let description = if p.crashlooping { pod_description(p) } else { Message::verbatim(String::new()) };
            seen_.push(seen(&POD_CRASH_LOOPING, pod_labels(p), args(&pod_args(p)), description));
        }
    }),
    export: export(|| format!("{} == 1", crash_window())),
};

pub const POD_PENDING: Rule = Rule {
    alertname: "KubernetesPodPending",
    labels: &["namespace", "pod", "workload"],
    words: "rule-pod-pending",
    severity: Severity::Notice,
    hold: minutes(15),
    escalate_after: None,
    reads: Reads::Pods(|p, _, seen_| {
        if p.pending {
            seen_.push(seen(&POD_PENDING, pod_labels(p), args(&pod_args(p)), pod_description(p)));
        }
    }),
    export: export(|| "dumbmonit_k8s_pod_pending == 1".into()),
};

pub const POD_NOT_READY: Rule = Rule {
    alertname: "KubernetesPodNotReady",
    labels: &["namespace", "pod", "workload"],
    words: "rule-pod-not-ready",
    severity: Severity::Notice,
    hold: minutes(15),
    escalate_after: None,
    reads: Reads::Pods(|p, _, seen_| {
        if p.not_ready_alone() {
            seen_.push(seen(&POD_NOT_READY, pod_labels(p), args(&pod_args(p)), pod_description(p)));
        }
    }),
    // Bare pods only: the series do not say which kind of controller a pod has.
    export: export(|| {
        "dumbmonit_k8s_pod_ready{workload=\"\"} == 0 unless on(cluster, namespace, pod) \
         (dumbmonit_k8s_pod_crashlooping == 1 or dumbmonit_k8s_pod_pending == 1)"
            .into()
    }),
};

pub const POD_RESTARTING: Rule = Rule {
    alertname: "KubernetesPodRestarting",
    labels: &["namespace", "pod", "workload"],
    words: "rule-pod-restarting",
    severity: Severity::Notice,
    hold: minutes(0),
    escalate_after: None,
    reads: Reads::Pods(|p, judged, seen_| {
        if judged.increase > RESTART_THRESHOLD && !judged.crashlooped {
            seen_.push(seen(
                &POD_RESTARTING,
                pod_labels(p),
                args(&[pod_args(p).as_slice(), &[("restarts", judged.increase.into())]].concat()),
                pod_description(p),
            ));
        }
    }),
    export: Export {
        expr: || {
            format!(
                "increase(dumbmonit_k8s_pod_restarts[{}]) > {RESTART_THRESHOLD} unless on(namespace, pod) {} == 1",
                super::prometheus::duration(RESTART_WINDOW),
                crash_window()
            )
        },
        value: "{{ $value | printf \"%.0f\" }}",
        hold: None,
        warning: Warning::None,
    },
};

pub const WORKLOAD_REPLICAS_MISSING: Rule = Rule {
    alertname: "KubernetesWorkloadReplicasMissing",
    labels: &["kind", "namespace", "workload"],
    words: "rule-workload-replicas-missing",
    severity: Severity::Notice,
    hold: minutes(10),
    escalate_after: Some(minutes(60)),
    // A stuck rollout is told once, by its own alert, not also as missing replicas.
    reads: Reads::Workloads(|w, seen_| {
        if w.unavailable > 0 && !w.rollout_stuck {
            seen_.push(seen(
                &WORKLOAD_REPLICAS_MISSING,
                workload_labels(w),
                args(
                    &[workload_args(w).as_slice(), &[("missing", w.unavailable.into()), ("desired", w.desired.into())]]
                        .concat(),
                ),
                Message::list(&w.why, "; "),
            ));
        }
    }),
    // Its escalation after an hour of firing is exported as the same expression held an hour
    // longer, at Warning.
    export: export(|| {
        "dumbmonit_k8s_workload_unavailable > 0 unless on(cluster, kind, namespace, workload) dumbmonit_k8s_workload_rollout_stuck == 1".into()
    }),
};

pub const PVC_PENDING: Rule = Rule {
    alertname: "KubernetesPVCPending",
    labels: &["namespace", "pvc"],
    words: "rule-pvc-pending",
    severity: Severity::Notice,
    hold: minutes(15),
    escalate_after: None,
    reads: Reads::Claims(|c, seen_| {
        if c.stuck {
            seen_.push(seen(
                &PVC_PENDING,
                labels(&[("namespace", &c.namespace), ("pvc", &c.name)]),
                args(&[("namespace", (&c.namespace).into()), ("pvc", (&c.name).into())]),
                Message::list(&c.why, "; "),
            ));
        }
    }),
    export: export(|| "dumbmonit_k8s_pvc_pending == 1".into()),
};

pub const MONITOR_UNREACHABLE: Rule = Rule {
    alertname: "KubernetesMonitorUnreachable",
    labels: &[],
    words: "rule-monitor-unreachable",
    severity: Severity::Warning,
    hold: minutes(0),
    escalate_after: None,
    reads: Reads::Cycle,
    // Two failed cycles in a row: at a one-minute interval, failing now and a minute ago.
    export: Export {
        expr: || "dumbmonit_k8s_up == 0".into(),
        value: "{{ $value }}",
        hold: Some(minutes(1)),
        warning: Warning::None,
    },
};

pub const AGGREGATED_API_UNAVAILABLE: Rule = Rule {
    alertname: "KubernetesAggregatedAPIUnavailable",
    labels: &["apiservice", "service"],
    words: "rule-aggregated-api-unavailable",
    severity: Severity::Warning,
    hold: minutes(5),
    escalate_after: None,
    reads: Reads::ApiServices(|a, seen_| {
        if !a.available {
            seen_.push(seen(
                &AGGREGATED_API_UNAVAILABLE,
                labels(&[("apiservice", &a.name), ("service", &a.service)]),
                args(&[("apiservice", (&a.name).into())]),
                Message::verbatim(format!("{} (service {})", a.why(), a.service)),
            ));
        }
    }),
    // The condition's message is on the cluster page and in the built-in alert; a metric has
    // no room for it.
    export: export(|| "dumbmonit_k8s_apiservice_available == 0".into()),
};

pub const HPA_METRICS_UNAVAILABLE: Rule = Rule {
    alertname: "KubernetesHPAMetricsUnavailable",
    labels: &["namespace", "hpa"],
    words: "rule-hpa-metrics-unavailable",
    severity: Severity::Notice,
    hold: minutes(10),
    escalate_after: None,
    reads: Reads::Hpas(|x, seen_| {
        if !x.scaling_active {
            seen_.push(seen(
                &HPA_METRICS_UNAVAILABLE,
                labels(&[("namespace", &x.namespace), ("hpa", &x.name)]),
                args(&[
                    ("namespace", (&x.namespace).into()),
                    ("hpa", (&x.name).into()),
                    ("reason", (&x.reason).into()),
                ]),
                Message::verbatim(x.message.clone()),
            ));
        }
    }),
    export: export(|| "dumbmonit_k8s_hpa_scaling_active == 0".into()),
};

pub const CERTIFICATE_EXPIRING: Rule = Rule {
    alertname: "KubernetesAPICertificateExpiring",
    labels: &["certificate"],
    words: "rule-certificate-expiring",
    severity: Severity::Notice,
    hold: minutes(0),
    escalate_after: None,
    reads: Reads::Certificates(|e, server, seen_| {
        let k3s = server.version.contains("+k3s");
        let fix = match (e.certificate, k3s) {
            ("serving", true) => "serving-k3s",
            ("serving", false) => "serving",
            (_, true) => "client-k3s",
            (_, false) => "client",
        };
        let left = e.not_after.duration_since(server.time);
        seen_.push(Observation {
            rule: &CERTIFICATE_EXPIRING,
            labels: labels(&[("certificate", e.certificate)]),
            summary: args(&[
                ("certificate", e.certificate.into()),
                ("date", Arg::Moment(e.not_after.as_second())),
                ("when", crate::health::days_when(e.days).into()),
                ("days", e.days.abs().into()),
            ]),
            description: Message::new(
                &format!("{}.description", CERTIFICATE_EXPIRING.words),
                &[("until", e.not_after.to_string().into()), ("fix", fix.into())],
            ),
            escalate: left < CERTIFICATE_URGENT,
            severity: None,
        });
    }),
    // The escalation: within 7 days, the same alert at Warning.
    export: Export {
        expr: || certificates_within(30),
        value: "{{ $value | humanizeDuration }}",
        hold: None,
        warning: Warning::When(|| certificates_within(7)),
    },
};

pub const VERSION_SKEW: Rule = Rule {
    alertname: "KubernetesVersionSkew",
    labels: &["node"],
    words: "rule-version-skew",
    severity: Severity::Notice,
    hold: minutes(60),
    escalate_after: None,
    reads: Reads::Nodes(|n, server, seen_| {
        if n.kubelet_skew {
            seen_.push(seen(
                &VERSION_SKEW,
                labels(&[("node", &n.name)]),
                args(&[
                    ("kubelet", (&n.kubelet_version).into()),
                    ("node", (&n.name).into()),
                    ("version", server.version.into()),
                ]),
                Message::new(&format!("{}.description", VERSION_SKEW.words), &[]),
            ));
        }
    }),
    export: export(|| "dumbmonit_k8s_node_kubelet_skew == 1".into()),
};

pub const ROLLOUT_STUCK: Rule = Rule {
    alertname: "KubernetesRolloutStuck",
    labels: &["kind", "namespace", "workload"],
    words: "rule-rollout-stuck",
    severity: Severity::Warning,
    hold: minutes(0),
    escalate_after: None,
    reads: Reads::Workloads(|w, seen_| {
        if w.rollout_stuck {
            seen_.push(seen(&ROLLOUT_STUCK, workload_labels(w), args(&workload_args(w)), Message::list(&w.why, "; ")));
        }
    }),
    export: export(|| "dumbmonit_k8s_workload_rollout_stuck == 1".into()),
};

pub const POD_STUCK_TERMINATING: Rule = Rule {
    alertname: "KubernetesPodStuckTerminating",
    labels: &["namespace", "pod", "workload"],
    words: "rule-pod-stuck-terminating",
    severity: Severity::Notice,
    hold: minutes(0),
    escalate_after: None,
    reads: Reads::Pods(|p, _, seen_| {
        let patience = TERMINATING_PATIENCE.as_secs() as i64;
        if let Some(seconds) = p.terminating.filter(|s| *s >= patience) {
            seen_.push(seen(
                &POD_STUCK_TERMINATING,
                pod_labels(p),
                args(&[pod_args(p).as_slice(), &[("minutes", (seconds / 60).into())]].concat()),
                Message::list(&p.why, "; "),
            ));
        }
    }),
    export: Export {
        expr: || format!("dumbmonit_k8s_pod_terminating_seconds >= {}", TERMINATING_PATIENCE.as_secs()),
        value: "{{ $value | humanizeDuration }}",
        hold: None,
        warning: Warning::None,
    },
};

pub const NODE_FLAPPING: Rule = Rule {
    alertname: "KubernetesNodeFlapping",
    labels: &["node"],
    words: "rule-node-flapping",
    severity: Severity::Warning,
    hold: minutes(0),
    escalate_after: None,
    reads: Reads::Nodes(|n, _, seen_| {
        if flapping(n) {
            seen_.push(seen(
                &NODE_FLAPPING,
                labels(&[("node", &n.name)]),
                args(&[("node", (&n.name).into()), ("changes", n.ready_transitions.into())]),
                Message::list(&n.why, "; "),
            ));
        }
    }),
    export: export(|| format!("dumbmonit_k8s_node_ready_transitions > {FLAPPING_CHANGES}")),
};

pub const JOB_FAILED: Rule = Rule {
    alertname: "KubernetesJobFailed",
    labels: &["namespace", "job", "owner"],
    words: "rule-job-failed",
    severity: Severity::Notice,
    hold: minutes(0),
    escalate_after: None,
    reads: Reads::Jobs(|j, seen_| {
        if !j.superseded {
            seen_.push(seen(
                &JOB_FAILED,
                labels(&[("namespace", &j.namespace), ("job", &j.name), ("owner", &j.owner)]),
                args(&[
                    ("namespace", (&j.namespace).into()),
                    ("job", (&j.name).into()),
                    ("of", if j.owner.is_empty() { "none" } else { "cronjob" }.into()),
                    ("owner", (&j.owner).into()),
                ]),
                Message::verbatim(j.why.clone()),
            ));
        }
    }),
    export: export(|| "dumbmonit_k8s_job_failed == 1".into()),
};

pub const CRONJOB_MISSED: Rule = Rule {
    alertname: "KubernetesCronJobMissed",
    labels: &["namespace", "cronjob"],
    words: "rule-cronjob-missed",
    severity: Severity::Notice,
    hold: minutes(0),
    escalate_after: None,
    reads: Reads::CronJobs(|c, seen_| {
        if c.missed {
            seen_.push(seen(
                &CRONJOB_MISSED,
                labels(&[("namespace", &c.namespace), ("cronjob", &c.name)]),
                args(&[("namespace", (&c.namespace).into()), ("cronjob", (&c.name).into())]),
                Message::list(&c.why, "; "),
            ));
        }
    }),
    export: export(|| {
        "dumbmonit_k8s_cronjob_last_schedule_age_seconds > 2 * dumbmonit_k8s_cronjob_schedule_interval_seconds".into()
    }),
};

pub const CONTROL_PLANE_COMPONENT_DOWN: Rule = Rule {
    alertname: "KubernetesControlPlaneComponentDown",
    labels: &["component"],
    words: "rule-control-plane-component-down",
    severity: Severity::Critical,
    hold: minutes(5),
    escalate_after: None,
    reads: Reads::ControlPlane(|c, seen_| {
        if c.down {
            seen_.push(seen(
                &CONTROL_PLANE_COMPONENT_DOWN,
                labels(&[("component", c.component)]),
                args(&[("component", c.component.into()), ("seconds", c.age_seconds.into())]),
                Message::new(
                    &format!("{}.description", CONTROL_PLANE_COMPONENT_DOWN.words),
                    &[("component", c.component.into()), ("holder", (&c.holder).into())],
                ),
            ));
        }
    }),
    // The built-in rule's threshold is three times each lease's duration, at least a minute:
    // the components' leases last 15 s, so a minute.
    export: Export {
        expr: || "dumbmonit_k8s_control_plane_lease_age_seconds > 60".into(),
        value: "{{ $value | humanizeDuration }}",
        hold: None,
        warning: Warning::None,
    },
};

pub const WEBHOOK_UNAVAILABLE: Rule = Rule {
    alertname: "KubernetesWebhookUnavailable",
    labels: &["kind", "configuration", "webhook", "failure_policy"],
    words: "rule-webhook-unavailable",
    // A webhook that fails closed; one that fails open (`Ignore`) is a notice.
    severity: Severity::Critical,
    hold: minutes(5),
    escalate_after: None,
    reads: Reads::Webhooks(|w, seen_| {
        if w.unavailable() {
            let labels = labels(&[
                ("kind", w.kind),
                ("configuration", &w.configuration),
                ("webhook", &w.webhook),
                ("failure_policy", &w.failure_policy),
            ]);
            let mut o = seen(&WEBHOOK_UNAVAILABLE, labels, w.args(), w.description());
            o.severity = Some(if w.fails_closed() { Severity::Critical } else { Severity::Notice });
            seen_.push(o);
        }
    }),
    export: Export {
        expr: || "dumbmonit_k8s_webhook_backend_ready{failure_policy!=\"Ignore\"} == 0".into(),
        value: "{{ $value }}",
        hold: None,
        warning: Warning::Also(Severity::Notice, || {
            "dumbmonit_k8s_webhook_backend_ready{failure_policy=\"Ignore\"} == 0".into()
        }),
    },
};

fn hpa_labels(x: &HpaHealth) -> BTreeMap<String, String> {
    labels(&[("namespace", &x.namespace), ("hpa", &x.name)])
}

fn hpa_args(x: &HpaHealth) -> Vec<(&'static str, Arg)> {
    vec![
        ("namespace", (&x.namespace).into()),
        ("hpa", (&x.name).into()),
        ("current", x.current_replicas.into()),
        ("desired", x.desired_replicas.into()),
        ("min", x.min_replicas.into()),
        ("max", x.max_replicas.into()),
    ]
}

/// `dumbmonit_k8s_hpa_replicas` of one kind, without its `kind` label (the alert's labels are
/// the built-in rule's: `namespace`, `hpa`).
fn hpa_replicas(kind: &str) -> String {
    format!("max without(kind) (dumbmonit_k8s_hpa_replicas{{kind=\"{kind}\"}})")
}

pub const HPA_MAXED_OUT: Rule = Rule {
    alertname: "KubernetesHPAMaxedOut",
    labels: &["namespace", "hpa"],
    words: "rule-hpa-maxed-out",
    severity: Severity::Notice,
    hold: minutes(15),
    escalate_after: None,
    reads: Reads::Hpas(|x, seen_| {
        if x.maxed_out {
            seen_.push(seen(&HPA_MAXED_OUT, hpa_labels(x), hpa_args(x), Message::verbatim(x.message.clone())));
        }
    }),
    export: export(|| {
        format!(
            "{current} == {max} and {max} != {min}",
            current = hpa_replicas("current"),
            max = hpa_replicas("max"),
            min = hpa_replicas("min")
        )
    }),
};

pub const HPA_REPLICAS_MISMATCH: Rule = Rule {
    alertname: "KubernetesHPAReplicasMismatch",
    labels: &["namespace", "hpa"],
    words: "rule-hpa-replicas-mismatch",
    severity: Severity::Notice,
    hold: minutes(15),
    escalate_after: None,
    // A count that changed since the last cycle starts the hold again: it fires when the count
    // stayed the same for the whole hold, as the mixin's `changes(…[15m]) == 0`.
    reads: Reads::Hpas(|x, seen_| {
        if x.mismatch {
            seen_.push(seen(&HPA_REPLICAS_MISMATCH, hpa_labels(x), hpa_args(x), Message::verbatim(x.message.clone())));
        }
    }),
    export: export(|| {
        format!(
            "{desired} != {current} and {current} > {min} and {current} < {max} \
             and ignoring(kind) changes(dumbmonit_k8s_hpa_replicas{{kind=\"current\"}}[{window}]) == 0",
            desired = hpa_replicas("desired"),
            current = hpa_replicas("current"),
            min = hpa_replicas("min"),
            max = hpa_replicas("max"),
            window = super::prometheus::duration(minutes(15)),
        )
    }),
};

pub const PDB_NOT_ENOUGH_HEALTHY: Rule = Rule {
    alertname: "KubernetesPDBNotEnoughHealthy",
    labels: &["namespace", "pdb"],
    words: "rule-pdb-not-enough-healthy",
    severity: Severity::Warning,
    hold: minutes(15),
    escalate_after: None,
    reads: Reads::Pdbs(|p, seen_| {
        if p.short {
            seen_.push(seen(
                &PDB_NOT_ENOUGH_HEALTHY,
                labels(&[("namespace", &p.namespace), ("pdb", &p.name)]),
                args(&[
                    ("namespace", (&p.namespace).into()),
                    ("pdb", (&p.name).into()),
                    ("current", p.current_healthy.into()),
                    ("desired", p.desired_healthy.into()),
                ]),
                Message::new(
                    &format!("{}.description", PDB_NOT_ENOUGH_HEALTHY.words),
                    &[("expected", p.expected_pods.into()), ("allowed", p.disruptions_allowed.into())],
                ),
            ));
        }
    }),
    export: export(|| {
        "max without(kind) (dumbmonit_k8s_pdb_healthy{kind=\"current\"}) \
         < max without(kind) (dumbmonit_k8s_pdb_healthy{kind=\"desired\"})"
            .into()
    }),
};

/// A quota's resource at `level`: its observation for `rule`.
fn quota_seen(rule: &'static Rule, level: Fullness, q: &QuotaHealth, seen_: &mut Seen) {
    if q.fullness == Some(level) {
        seen_.push(seen(
            rule,
            labels(&[("namespace", &q.namespace), ("resourcequota", &q.quota), ("resource", &q.resource)]),
            args(&[
                ("namespace", (&q.namespace).into()),
                ("resourcequota", (&q.quota).into()),
                ("resource", (&q.resource).into()),
                ("percent", (q.percent().round() as i64).into()),
            ]),
            Message::new(
                "quota-description",
                &[
                    ("used", crate::lang::quantity(&q.resource, q.used).into()),
                    ("hard", crate::lang::quantity(&q.resource, q.hard).into()),
                ],
            ),
        ));
    }
}

/// Used over hard, for the quotas' resources with a limit above 0.
const QUOTA_SHARE: &str = "max without(type) (dumbmonit_k8s_resourcequota{type=\"used\"}) \
                           / max without(type) (dumbmonit_k8s_resourcequota{type=\"hard\"} > 0)";

const fn quota_export(expr: fn() -> String) -> Export {
    Export { expr, value: "{{ $value | humanizePercentage }}", hold: None, warning: Warning::None }
}

pub const QUOTA_ALMOST_FULL: Rule = Rule {
    alertname: "KubernetesQuotaAlmostFull",
    labels: &["namespace", "resourcequota", "resource"],
    words: "rule-quota-almost-full",
    severity: Severity::Notice,
    hold: minutes(15),
    escalate_after: None,
    reads: Reads::Quotas(|q, seen_| quota_seen(&QUOTA_ALMOST_FULL, Fullness::AlmostFull, q, seen_)),
    export: quota_export(|| format!("{QUOTA_SHARE} >= 0.9 < 1")),
};

pub const QUOTA_FULLY_USED: Rule = Rule {
    alertname: "KubernetesQuotaFullyUsed",
    labels: &["namespace", "resourcequota", "resource"],
    words: "rule-quota-fully-used",
    severity: Severity::Notice,
    hold: minutes(15),
    escalate_after: None,
    reads: Reads::Quotas(|q, seen_| quota_seen(&QUOTA_FULLY_USED, Fullness::Full, q, seen_)),
    export: quota_export(|| format!("{QUOTA_SHARE} == 1")),
};

pub const QUOTA_EXCEEDED: Rule = Rule {
    alertname: "KubernetesQuotaExceeded",
    labels: &["namespace", "resourcequota", "resource"],
    words: "rule-quota-exceeded",
    severity: Severity::Warning,
    hold: minutes(15),
    escalate_after: None,
    reads: Reads::Quotas(|q, seen_| quota_seen(&QUOTA_EXCEEDED, Fullness::Exceeded, q, seen_)),
    export: quota_export(|| format!("{QUOTA_SHARE} > 1")),
};

pub const PV_ERRORS: Rule = Rule {
    alertname: "KubernetesPersistentVolumeErrors",
    labels: &["pv", "phase"],
    words: "rule-pv-errors",
    severity: Severity::Warning,
    hold: minutes(5),
    escalate_after: None,
    reads: Reads::Pvs(|v, seen_| {
        if v.in_error {
            let v = &v.volume;
            seen_.push(seen(
                &PV_ERRORS,
                labels(&[("pv", &v.name), ("phase", &v.phase)]),
                args(&[("pv", (&v.name).into()), ("phase", (&v.phase).into())]),
                Message::verbatim(v.why.clone()),
            ));
        }
    }),
    export: export(|| "dumbmonit_k8s_pv_phase{phase=~\"Failed|Pending\"} == 1".into()),
};

/// The overcommit rules' observation of `resource`, when it is overcommitted.
fn overcommit(rule: &'static Rule, resource: &str, c: &crate::health::Capacity, seen_: &mut Seen) {
    for o in c.overcommitted().into_iter().filter(|o| o.resource == resource) {
        debug_assert_eq!(o.words, rule.words);
        let description = Message::new("overcommit-description", &o.args);
        seen_.push(seen(rule, labels(&[("resource", resource)]), o.args, description));
    }
}

/// The overcommit expression for one resource: requests past allocatable less the largest
/// node, or with a single node past its allocatable (by the nodes' own series: every node, where
/// the built-in rule counts the Ready, schedulable ones).
fn overcommit_expr(resource: &str, node_series: &str) -> String {
    let requests = format!("sum by (cluster) (dumbmonit_k8s_cluster_requests{{resource=\"{resource}\"}})");
    let total = format!("sum by (cluster) (dumbmonit_k8s_cluster_allocatable{{resource=\"{resource}\"}})");
    let largest = format!("max by (cluster) (dumbmonit_k8s_{node_series})");
    let nodes = format!("count by (cluster) (dumbmonit_k8s_{node_series})");
    format!(
        "label_replace({requests} > ({total} - {largest}) and on(cluster) {nodes} > 1 \
         or {requests} > {total} and on(cluster) {nodes} == 1, \"resource\", \"{resource}\", \"\", \"\")"
    )
}

const fn overcommit_export(expr: fn() -> String) -> Export {
    Export { expr, value: "{{ $value | humanize }}", hold: None, warning: Warning::None }
}

pub const CPU_OVERCOMMIT: Rule = Rule {
    alertname: "KubernetesCPUOvercommit",
    labels: &["resource"],
    words: "rule-cpu-overcommit",
    severity: Severity::Notice,
    hold: minutes(10),
    escalate_after: None,
    reads: Reads::Capacity(|c, seen_| overcommit(&CPU_OVERCOMMIT, "cpu", c, seen_)),
    export: overcommit_export(|| overcommit_expr("cpu", "node_cpu_allocatable_cores")),
};

pub const MEMORY_OVERCOMMIT: Rule = Rule {
    alertname: "KubernetesMemoryOvercommit",
    labels: &["resource"],
    words: "rule-memory-overcommit",
    severity: Severity::Notice,
    hold: minutes(10),
    escalate_after: None,
    reads: Reads::Capacity(|c, seen_| overcommit(&MEMORY_OVERCOMMIT, "memory", c, seen_)),
    export: overcommit_export(|| overcommit_expr("memory", "node_memory_allocatable_bytes")),
};

/// The quota overcommit rules' observation of `resource`, when the quotas promise past
/// [`QUOTA_OVERCOMMIT`](crate::health::policy::QUOTA_OVERCOMMIT) times what the nodes give.
fn quota_overcommit(rule: &'static Rule, resource: &str, q: &QuotaCommitment, seen_: &mut Seen) {
    if q.resource == resource && q.overcommitted {
        debug_assert_eq!(q.words(), rule.words);
        let description = Message::new("quota-overcommit-description", &[]);
        seen_.push(seen(rule, labels(&[("resource", resource)]), q.args(), description));
    }
}

/// The quota overcommit expression for one resource: each quota's smaller hard limit of the
/// two names, summed, over what the nodes give.
fn quota_overcommit_expr(resource: &str) -> String {
    let hard = format!(
        "sum by (cluster) (min without(resource) (dumbmonit_k8s_resourcequota{{type=\"hard\",resource=~\"{resource}|requests.{resource}\"}}))"
    );
    let total = format!("sum by (cluster) (dumbmonit_k8s_cluster_allocatable{{resource=\"{resource}\"}})");
    format!(
        "label_replace({hard} / on(cluster) {total} > {}, \"resource\", \"{resource}\", \"\", \"\")",
        crate::health::policy::QUOTA_OVERCOMMIT
    )
}

pub const CPU_QUOTA_OVERCOMMIT: Rule = Rule {
    alertname: "KubernetesCPUQuotaOvercommit",
    labels: &["resource"],
    words: "rule-cpu-quota-overcommit",
    severity: Severity::Notice,
    hold: minutes(5),
    escalate_after: None,
    reads: Reads::QuotaCommitments(|q, seen_| quota_overcommit(&CPU_QUOTA_OVERCOMMIT, "cpu", q, seen_)),
    export: Export {
        expr: || quota_overcommit_expr("cpu"),
        value: "{{ $value | humanizePercentage }}",
        hold: None,
        warning: Warning::None,
    },
};

pub const MEMORY_QUOTA_OVERCOMMIT: Rule = Rule {
    alertname: "KubernetesMemoryQuotaOvercommit",
    labels: &["resource"],
    words: "rule-memory-quota-overcommit",
    severity: Severity::Notice,
    hold: minutes(5),
    escalate_after: None,
    reads: Reads::QuotaCommitments(|q, seen_| quota_overcommit(&MEMORY_QUOTA_OVERCOMMIT, "memory", q, seen_)),
    export: Export {
        expr: || quota_overcommit_expr("memory"),
        value: "{{ $value | humanizePercentage }}",
        hold: None,
        warning: Warning::None,
    },
};

pub const NODE_TOO_MANY_PODS: Rule = Rule {
    alertname: "KubernetesNodeTooManyPods",
    labels: &["node"],
    words: "rule-node-too-many-pods",
    severity: Severity::Notice,
    hold: minutes(15),
    escalate_after: None,
    reads: Reads::Nodes(|n, _, seen_| {
        if n.too_many_pods() {
            seen_.push(seen(
                &NODE_TOO_MANY_PODS,
                labels(&[("node", &n.name)]),
                args(&[
                    ("node", (&n.name).into()),
                    ("pods", (n.pods as i64).into()),
                    ("capacity", n.pods_capacity.unwrap_or(0).into()),
                ]),
                Message::verbatim(String::new()),
            ));
        }
    }),
    export: Export {
        expr: || {
            format!(
                "dumbmonit_k8s_node_pods / on(cluster, node) (dumbmonit_k8s_node_pods_capacity > 0) >= {}",
                crate::health::NODE_PODS_FULL
            )
        },
        value: "{{ $value | humanizePercentage }}",
        hold: None,
        warning: Warning::None,
    },
};

pub const DAEMONSET_MISSCHEDULED: Rule = Rule {
    alertname: "KubernetesDaemonSetMisscheduled",
    labels: &["kind", "namespace", "workload"],
    words: "rule-daemonset-misscheduled",
    severity: Severity::Notice,
    hold: minutes(15),
    escalate_after: None,
    reads: Reads::Workloads(|w, seen_| {
        if w.kind == crate::collect::WorkloadKind::DaemonSet && w.misscheduled > 0 {
            seen_.push(seen(
                &DAEMONSET_MISSCHEDULED,
                workload_labels(w),
                args(&[workload_args(w).as_slice(), &[("count", w.misscheduled.into())]].concat()),
                Message::new(&format!("{}.description", DAEMONSET_MISSCHEDULED.words), &[]),
            ));
        }
    }),
    export: export(|| "dumbmonit_k8s_workload_misscheduled{kind=\"DaemonSet\"} > 0".into()),
};

pub const GENERATION_MISMATCH: Rule = Rule {
    alertname: "KubernetesGenerationMismatch",
    labels: &["kind", "namespace", "workload"],
    words: "rule-generation-mismatch",
    severity: Severity::Warning,
    hold: minutes(15),
    escalate_after: None,
    reads: Reads::Workloads(|w, seen_| {
        if w.generation_lag > 0 {
            seen_.push(seen(
                &GENERATION_MISMATCH,
                workload_labels(w),
                args(&workload_args(w)),
                Message::new(
                    &format!("{}.description", GENERATION_MISMATCH.words),
                    &[("stopped", if w.controller_stopped { "yes" } else { "no" }.into())],
                ),
            ));
        }
    }),
    export: export(|| "dumbmonit_k8s_workload_generation_lag > 0".into()),
};

pub const JOB_NOT_COMPLETED: Rule = Rule {
    alertname: "KubernetesJobNotCompleted",
    labels: &["namespace", "job", "owner"],
    words: "rule-job-not-completed",
    severity: Severity::Notice,
    hold: minutes(0),
    escalate_after: None,
    reads: Reads::RunningJobs(|j, seen_| {
        if j.too_long() {
            seen_.push(seen(
                &JOB_NOT_COMPLETED,
                labels(&[("namespace", &j.namespace), ("job", &j.name), ("owner", &j.owner)]),
                args(&[
                    ("namespace", (&j.namespace).into()),
                    ("job", (&j.name).into()),
                    ("hours", (j.seconds / 3600).into()),
                ]),
                Message::verbatim(String::new()),
            ));
        }
    }),
    export: Export {
        expr: || format!("dumbmonit_k8s_job_active_seconds > {}", crate::health::batch::JOB_TOO_LONG.as_secs()),
        value: "{{ $value | humanizeDuration }}",
        hold: None,
        warning: Warning::None,
    },
};

/// How long a container may wait in a pod that is not Pending.
const WAITING_PATIENCE: std::time::Duration = minutes(60);

pub const CONTAINER_WAITING: Rule = Rule {
    alertname: "KubernetesContainerWaiting",
    labels: &["namespace", "pod", "workload"],
    words: "rule-container-waiting",
    severity: Severity::Notice,
    hold: WAITING_PATIENCE,
    escalate_after: None,
    // A Pending pod's waiting containers are told by KubernetesPodPending.
    reads: Reads::Pods(|p, _, seen_| {
        if !p.blocked.is_empty() && !p.pending {
            seen_.push(seen(
                &CONTAINER_WAITING,
                pod_labels(p),
                args(&[pod_args(p).as_slice(), &[("reason", p.blocked.join(", ").into())]].concat()),
                pod_description(p),
            ));
        }
    }),
    export: export(|| {
        "dumbmonit_k8s_pod_blocked == 1 unless on(cluster, namespace, pod) dumbmonit_k8s_pod_pending == 1".into()
    }),
};

impl RuleState {
    /// Evaluates every rule after a successful cycle, on its final health: what only earlier
    /// cycles tell (Ready changes, updates without progress) is already in it, derived with
    /// [`RuleState::memory`] by `health::assess_with`. Each rule looks at the objects of its
    /// read; a rule whose read this cycle did not make neither fires nor resolves.
    pub fn observe(&mut self, now: Timestamp, cluster: &str, h: &Health) -> Vec<Transition> {
        self.observe_tuned(now, cluster, h, &super::tune::AS_BUILT)
    }

    /// [`RuleState::observe`], the rules as the file's `[[rule]]` entries tune them.
    pub fn observe_tuned(&mut self, now: Timestamp, cluster: &str, h: &Health, tuning: &Tuning) -> Vec<Transition> {
        self.observe_kept(now, cluster, h, tuning, None)
    }

    /// [`RuleState::observe_tuned`], passing over the pods `quiet` holds: those the last cycle
    /// found nothing to say of or remember, whose judgement is the very one it looked at (see
    /// [`QuietPods`]).
    pub fn observe_kept(
        &mut self,
        now: Timestamp,
        cluster: &str,
        h: &Health,
        tuning: &Tuning,
        mut quiet: Option<&mut QuietPods>,
    ) -> Vec<Transition> {
        let mut obs = Vec::new();
        let server = ApiServer { version: &h.version, time: h.time };
        for rule in RULES {
            match rule.reads {
                Reads::Nodes(look) if h.nodes_visible() => h.nodes.iter().for_each(|n| look(n, &server, &mut obs)),
                Reads::Workloads(look) => h.workloads.iter().for_each(|w| look(w, &mut obs)),
                Reads::Claims(look) => h.pvcs.iter().for_each(|c| look(c, &mut obs)),
                Reads::Certificates(look) => h.expiring().iter().for_each(|e| look(e, &server, &mut obs)),
                Reads::ApiServices(look) => h.extras.apiservices.iter().flatten().for_each(|a| look(a, &mut obs)),
                Reads::Hpas(look) => h.extras.hpas.iter().flatten().for_each(|x| look(x, &mut obs)),
                Reads::Jobs(look) => h.extras.jobs.iter().flatten().for_each(|j| look(j, &mut obs)),
                Reads::CronJobs(look) => h.extras.cronjobs.iter().flatten().for_each(|c| look(c, &mut obs)),
                Reads::Pdbs(look) => h.extras.pdbs.iter().flatten().for_each(|p| look(p, &mut obs)),
                Reads::Quotas(look) => h.extras.quotas.iter().flatten().for_each(|q| look(q, &mut obs)),
                Reads::Pvs(look) => h.extras.pvs.iter().flatten().for_each(|v| look(v, &mut obs)),
                Reads::QuotaCommitments(look) => {
                    h.extras.quota_commitments.iter().flatten().for_each(|q| look(q, &mut obs))
                }
                Reads::Webhooks(look) => h.extras.webhooks.iter().flatten().for_each(|w| look(w, &mut obs)),
                Reads::ControlPlane(look) => h.extras.control_plane.iter().flatten().for_each(|c| look(c, &mut obs)),
                Reads::Capacity(look) if h.nodes_visible() => look(&h.capacity, &mut obs),
                Reads::RunningJobs(look) => h.extras.running_jobs.iter().flatten().for_each(|j| look(j, &mut obs)),
                // The pods are looked at together below, each once with its memory.
                Reads::Nodes(_) | Reads::Capacity(_) | Reads::Pods(_) | Reads::Cycle => {}
            }
        }
        self.observe_pods(now, h, &mut obs, quiet.as_deref_mut(), tuning);
        self.failures = 0;
        // A namespace not read this cycle resolves none of its alerts.
        let unread: &[String] = h.extras.namespaced.as_ref().map_or(&[], |n| &n.unread);
        let mut made = Vec::new();
        let looked = Looked {
            observations: obs,
            held: quiet.as_deref().map(QuietPods::held).unwrap_or_default(),
            made: quiet.is_some().then_some(&mut made),
        };
        let transitions = self.evaluate_looked(
            now,
            cluster,
            looked,
            tuning,
            |alert| !alert.labels.get("namespace").is_some_and(|ns| unread.contains(ns)),
            |rule| rule.reads.made(h),
        );
        if let Some(q) = quiet {
            q.settle(made);
        }
        transitions
    }

    /// The pod rules: each pod's memory updated where it is (one lookup, no key made again for
    /// a pod seen before: at 150,000 pods, rebuilding the table each cycle cost 300,000
    /// allocations), then every pod rule handed the pod and what its memory says.
    fn observe_pods(
        &mut self,
        now: Timestamp,
        h: &Health,
        obs: &mut Seen,
        mut quiet: Option<&mut QuietPods>,
        tuning: &Tuning,
    ) {
        let looks: Vec<_> = RULES
            .iter()
            .filter_map(|r| match r.reads {
                Reads::Pods(look) => Some(look),
                _ => None,
            })
            .collect();
        // The last cycle's quiet pods, walked beside this cycle's in the same order.
        let mut last = quiet.as_deref_mut().map(|q| {
            q.passed = 0;
            q.next = Vec::with_capacity(q.last.len());
            std::mem::take(&mut q.last).into_iter().peekable()
        });
        // The last cycle's pods with something to say, walked the same way: their observations
        // hold while the rules are tuned as they were and every alert's words are this process's.
        let mut said = quiet.as_deref_mut().map(|q| {
            q.steady = 0;
            q.unlooked = 0;
            let last = std::mem::take(&mut q.said);
            q.said_next = Vec::with_capacity(last.len());
            let holds = q.tuning == *tuning && self.worded.0;
            if q.tuning != *tuning {
                q.tuning = tuning.clone();
            }
            if holds { last } else { Vec::new() }.into_iter().peekable()
        });
        // A pod passed over keeps its memory as it was: not changed.
        self.pods_changed.start();
        let last_look = self.pods_looked.or(self.last_cycle);
        self.pods_looked = Some(now);
        for p in &h.pods {
            if let (Some(q), Some(last)) = (quiet.as_deref_mut(), last.as_mut()) {
                // Those before it are gone, or not quiet now.
                while last.peek().is_some_and(|held| !Arc::ptr_eq(held, p) && order(held) < order(p)) {
                    last.next();
                }
                if let Some(held) = last.next_if(|held| Arc::ptr_eq(held, p)) {
                    q.next.push(held);
                    q.passed += 1;
                    continue;
                }
            }
            // Judged as it was, and its memory as the last look left it and still saying the
            // same now (no rise nor crash loop leaving its window): the full look would change
            // nothing of its memory, so it is not looked up (at 150,000 simulated pods, half of
            // the rules' look at the pods with something to say was finding their memories).
            if let (Some(q), Some(said)) = (quiet.as_deref_mut(), said.as_mut()) {
                while said.peek().is_some_and(|s| !Arc::ptr_eq(&s.pod, p) && order(&s.pod) < order(p)) {
                    said.next();
                }
                if let Some(s) = said.next_if(|s| {
                    Arc::ptr_eq(&s.pod, p)
                        && s.memory.as_ref().is_some_and(|m| still(m, now, &s.judged))
                        && s.held.iter().all(|held| self.alerts.contains_key(&held.key))
                }) {
                    q.said_next.push(s);
                    q.steady += 1;
                    q.unlooked += 1;
                    continue;
                }
            }
            let (judged, memory) = match self.pods.get_mut(&PodRef(&p.namespace, &p.name)) {
                Some(memory) => {
                    let before = memory.clone();
                    *memory = remember(std::mem::take(memory), now, last_look, p);
                    let judged = judge_memory(memory, now);
                    if *memory != before {
                        self.pods_changed.keys.push((p.namespace.to_string(), p.name.to_string()));
                    }
                    (judged, quiet.is_some().then(|| memory.clone()))
                }
                None => {
                    let mut memory = PodMemory {
                        restarts: p.restarts,
                        increases: Vec::new(),
                        crashloop_seen: p.crashlooping.then_some(now),
                        crashlooping: p.crashlooping,
                    };
                    let judged = judge_memory(&mut memory, now);
                    let kept = quiet.is_some().then(|| memory.clone());
                    self.pods.insert((p.namespace.to_string(), p.name.to_string()), memory);
                    self.pods_changed.keys.push((p.namespace.to_string(), p.name.to_string()));
                    (judged, kept)
                }
            };
            // Judged as it was, its memory saying what it said: its observations would be
            // those the last cycle made, and its alerts are evaluated again from what they made.
            if let (Some(q), Some(said)) = (quiet.as_deref_mut(), said.as_mut())
                && let Some(mut s) = said.next_if(|s| Arc::ptr_eq(&s.pod, p))
                && s.judged == judged
                && s.held.iter().all(|held| self.alerts.contains_key(&held.key))
            {
                s.memory = memory;
                q.said_next.push(s);
                q.steady += 1;
                continue;
            }
            let before = obs.len();
            for look in &looks {
                look(p, &judged, obs);
            }
            let Some(q) = quiet.as_deref_mut() else { continue };
            // Nothing said, nothing to remember but the count it has: the same next cycle,
            // while its judgement is the same (the window of a past crash loop only ever closes).
            if obs.len() == before && judged.increase == 0 && !judged.crashlooped && !p.crashlooping {
                q.next.push(p.clone());
            } else {
                q.said_next.push(Said {
                    pod: p.clone(),
                    judged,
                    held: Vec::new(),
                    observed: Some(before..obs.len()),
                    memory,
                });
            }
        }
        let gone = quiet.as_deref_mut().and_then(|q| {
            q.last = std::mem::take(&mut q.next);
            q.looked_for_gone = false;
            q.gone.take()
        });
        // Pods that are gone are forgotten, and their alerts resolve. Every pod of the cycle has
        // a memory now and a cycle's pods are distinct (its snapshot keeps one of each name), so
        // the table holds as many as the cycle has pods unless some are gone.
        if let Some(gone) = gone.filter(|_| self.pods.len() != h.pods.len()) {
            for (namespace, name) in gone {
                if self.pods.remove(&PodRef(&namespace, &name)).is_some() {
                    self.pods_changed.keys.push((namespace, name));
                }
            }
        }
        if self.pods.len() != h.pods.len() {
            if let Some(q) = quiet {
                q.looked_for_gone = true;
            }
            let present: HashSet<(&str, &str)> = h.pods.iter().map(|p| (&*p.namespace, &*p.name)).collect();
            let changed = &mut self.pods_changed.keys;
            self.pods.retain(|(namespace, name), _| {
                let kept = present.contains(&(namespace.as_str(), name.as_str()));
                if !kept {
                    changed.push((namespace.clone(), name.clone()));
                }
                kept
            });
        }
    }

    /// Evaluates the unreachable rule alone after a failed cycle: nothing else fires or resolves.
    pub fn observe_failure(&mut self, now: Timestamp, cluster: &str, message: &str) -> Vec<Transition> {
        self.observe_failure_tuned(now, cluster, message, &super::tune::AS_BUILT)
    }

    /// [`RuleState::observe_failure`], the rules as the file's `[[rule]]` entries tune them.
    pub fn observe_failure_tuned(
        &mut self,
        now: Timestamp,
        cluster: &str,
        message: &str,
        tuning: &Tuning,
    ) -> Vec<Transition> {
        self.failures += 1;
        let obs = if self.failures >= UNREACHABLE_AFTER {
            vec![seen(
                &MONITOR_UNREACHABLE,
                BTreeMap::new(),
                args(&[("cluster", cluster.into())]),
                Message::verbatim(message.to_string()),
            )]
        } else {
            Vec::new()
        };
        self.evaluate_where(now, cluster, obs, tuning, |_| true, |r| matches!(r.reads, Reads::Cycle))
    }
}

/// The pods of a followed cluster the rules had nothing to say of and nothing more to remember
/// at its last cycle: their judgements, held (so that each address stays theirs), in the
/// cycle's order (problems first, then by namespace and name). A pod whose judgement is the very
/// same one the next cycle (see [`crate::health::judged`]) gives the rules what it gave them,
/// and is passed over: its memory is not looked up, and no rule looks at it. Finding it is a
/// walk beside the cycle's pods, comparing addresses (names only where they differ).
///
/// The other pods, those the last cycle had something to say of or remember, are kept too
/// ([`Said`]): one whose judgement is the very same, whose memory says the same at this cycle
/// and whose alerts are all there would be observed the same, so its alerts are evaluated
/// again from what its observations made (their keys and timers: only the clock moves them),
/// while the rules are tuned as they were and every alert's words were said by this process.
#[derive(Default)]
pub struct QuietPods {
    last: Vec<Arc<PodHealth>>,
    next: Vec<Arc<PodHealth>>,
    /// The pods passed over by the last cycle.
    pub passed: usize,
    said: Vec<Said>,
    said_next: Vec<Said>,
    /// The rules as tuned when `said` was evaluated.
    tuning: Tuning,
    /// The pods whose alerts the last cycle evaluated again from what they made.
    pub steady: usize,
    /// Of those, the pods whose memory the last cycle did not look up.
    pub unlooked: usize,
    /// The last cycle's pods this one has not, by namespace and name, when the cycle's source
    /// knows them (a followed cluster's kept judgements, [`crate::health::judged::Judged`]):
    /// their memories are let go by name. Taken by the cycle; without it, or should the pods
    /// remembered still outnumber the cycle's, every memory is checked against the cycle's pods.
    pub gone: Option<Vec<(String, String)>>,
    /// Whether the last cycle checked every memory against its pods to find those gone.
    pub looked_for_gone: bool,
}

/// A pod the rules had something to say of or remember: its judgement, what its memory said,
/// and what its observations made.
struct Said {
    pod: Arc<PodHealth>,
    judged: PodJudged,
    held: Vec<Held>,
    /// Observed at this cycle: where its observations are among the cycle's, until evaluated.
    observed: Option<std::ops::Range<usize>>,
    /// Its memory as the last look left it (the one the rules hold).
    memory: Option<PodMemory>,
}

impl QuietPods {
    /// The alerts of the pods observed as they were, for the evaluation.
    fn held(&self) -> Vec<&Held> {
        self.said_next.iter().filter(|s| s.observed.is_none()).flat_map(|s| &s.held).collect()
    }

    /// Takes what the evaluation made of the pods observed at this cycle: the next cycle's.
    fn settle(&mut self, mut made: Vec<Option<Held>>) {
        for s in &mut self.said_next {
            if let Some(observed) = s.observed.take() {
                s.held = made[observed].iter_mut().filter_map(Option::take).collect();
            }
        }
        self.said = std::mem::take(&mut self.said_next);
    }
}

/// What a pod's memory says at `now`: its crash loop seen within its window, and its rises
/// within theirs.
fn says(memory: &PodMemory, now: Timestamp) -> PodJudged {
    PodJudged {
        crashlooped: memory.crashlooping || memory.crashloop_seen.is_some_and(|t| within(now, t, CRASHLOOP_WINDOW)),
        increase: memory.increases.iter().filter(|(t, _)| within(now, *t, RESTART_WINDOW)).map(|(_, n)| n).sum(),
    }
}

/// [`says`], the rises out of their window let go.
fn judge_memory(memory: &mut PodMemory, now: Timestamp) -> PodJudged {
    memory.increases.retain(|(t, _)| within(now, *t, RESTART_WINDOW));
    says(memory, now)
}

/// Whether a look at `now` of the pod this memory was left by would leave it as it is and
/// judge it as `judged`: every rise still in its window, and the memory saying the same. (The
/// look remembers the same pod as it was: the same restarts, the same crash loop.)
fn still(memory: &PodMemory, now: Timestamp, judged: &PodJudged) -> bool {
    memory.increases.iter().all(|(t, _)| within(now, *t, RESTART_WINDOW)) && says(memory, now) == *judged
}

/// Where a pod is in a cycle's order: problems first, then by namespace and name.
fn order(p: &PodHealth) -> (bool, &str, &str) {
    (!p.has_problem(), &*p.namespace, &*p.name)
}

/// A pod seen again: counts its restarts (a decrease is a reset) and its crash loop: when it
/// begins, and when it ends (last seen at the look before this one, `last_look`).
fn remember(mut m: PodMemory, now: Timestamp, last_look: Option<Timestamp>, p: &PodHealth) -> PodMemory {
    let increase = if p.restarts >= m.restarts { p.restarts - m.restarts } else { p.restarts };
    if increase > 0 {
        m.increases.push((now, increase));
    }
    m.restarts = p.restarts;
    match (m.crashlooping, p.crashlooping) {
        (false, true) => m.crashloop_seen = Some(now),
        (true, false) => m.crashloop_seen = last_look.or(m.crashloop_seen),
        _ => {}
    }
    m.crashlooping = p.crashlooping;
    m
}
