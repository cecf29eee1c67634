//! `dumbmonit rules`: the built-in rules as a Prometheus rule file over the `dumbmonit_k8s_`
//! metrics, for users whose Prometheus scrapes DumbMonit and whose Alertmanager routes alerts.

use super::{
    AGGREGATED_API_UNAVAILABLE, CERTIFICATE_EXPIRING, CRASHLOOP_WINDOW, CRONJOB_MISSED, FLAPPING_CHANGES,
    HPA_METRICS_UNAVAILABLE, JOB_FAILED, MONITOR_UNREACHABLE, NODE_FLAPPING, NODE_NOT_READY, NODE_PRESSURE,
    POD_CRASH_LOOPING, POD_PENDING, POD_RESTARTING, POD_STUCK_TERMINATING, PVC_PENDING, RESTART_THRESHOLD,
    RESTART_WINDOW, ROLLOUT_STUCK, Rule, TERMINATING_PATIENCE, VERSION_SKEW, WORKLOAD_REPLICAS_MISSING,
};

use crate::lang::{Arg, Lang};

/// A Prometheus duration: `5m`, `1h`, `70m`.
fn duration(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s.is_multiple_of(3600) && s > 0 {
        format!("{}h", s / 3600)
    } else if s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}

/// A look-back window that leaves out a sample exactly one window old, on Prometheus 2.x
/// (whose range selectors include their start) as on 3.x (whose do not): one second less.
fn window(d: std::time::Duration) -> String {
    let s = d.as_secs() - 1;
    format!("{}m{}s", s / 60, s % 60)
}

struct Export {
    rule: &'static Rule,
    expr: String,
    hold: std::time::Duration,
    severity: &'static str,
    /// The template of `$value` in the summary (`{{ $value | humanizeDuration }}`).
    value: &'static str,
    /// The attribute of the rule's messages that is its description: `prom-description`, or
    /// `prom-description-escalated` for the escalation; the summary is `prom-summary`. Their
    /// arguments are Prometheus' templates.
    description: &'static str,
}

/// Every label a rule's message may name, as a Prometheus template of it.
const LABELS: &[&str] = &[
    "node",
    "condition",
    "namespace",
    "pod",
    "kind",
    "workload",
    "pvc",
    "cluster",
    "apiservice",
    "service",
    "hpa",
    "certificate",
    "job",
    "owner",
    "cronjob",
];

/// A rule's annotation in `lang`: its message, each argument the template of its label.
fn annotation(lang: Lang, e: &Export, attribute: &str) -> String {
    let templates: Vec<(&str, String)> = LABELS.iter().map(|l| (*l, format!("{{{{ $labels.{l} }}}}"))).collect();
    let mut args: Vec<(&str, Arg)> = templates.iter().map(|(l, t)| (*l, Arg::from(t))).collect();
    args.push(("value", e.value.into()));
    lang.tr(&format!("{}.{attribute}", e.rule.words), &args)
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

fn exports() -> Vec<Export> {
    let crash = format!("max_over_time(dumbmonit_k8s_pod_crashlooping[{}])", window(CRASHLOOP_WINDOW));
    let unavailable = "dumbmonit_k8s_workload_unavailable > 0 unless on(cluster, kind, namespace, workload) dumbmonit_k8s_workload_rollout_stuck == 1";
    vec![
        Export {
            rule: &NODE_NOT_READY,
            expr: format!(
                "dumbmonit_k8s_node_ready == 0 unless on(cluster, node) dumbmonit_k8s_node_ready_transitions > {FLAPPING_CHANGES}"
            ),
            hold: NODE_NOT_READY.hold,
            severity: "warning",
            value: "{{ $value }}",
            description: "prom-description",
        },
        Export {
            rule: &NODE_PRESSURE,
            expr: "dumbmonit_k8s_node_pressure{condition=~\"memory|disk|pid\"} == 1".into(),
            hold: NODE_PRESSURE.hold,
            severity: "notice",
            value: "{{ $value }}",
            description: "prom-description",
        },
        Export {
            rule: &POD_CRASH_LOOPING,
            expr: format!("{crash} == 1"),
            hold: POD_CRASH_LOOPING.hold,
            severity: "warning",
            value: "{{ $value }}",
            description: "prom-description",
        },
        Export {
            rule: &POD_PENDING,
            expr: "dumbmonit_k8s_pod_pending == 1".into(),
            hold: POD_PENDING.hold,
            severity: "notice",
            value: "{{ $value }}",
            description: "prom-description",
        },
        Export {
            rule: &POD_RESTARTING,
            expr: format!(
                "increase(dumbmonit_k8s_pod_restarts[{}]) > {RESTART_THRESHOLD} unless on(namespace, pod) {crash} == 1",
                duration(RESTART_WINDOW)
            ),
            hold: POD_RESTARTING.hold,
            severity: "notice",
            value: "{{ $value | printf \"%.0f\" }}",
            description: "prom-description",
        },
        Export {
            rule: &WORKLOAD_REPLICAS_MISSING,
            expr: unavailable.into(),
            hold: WORKLOAD_REPLICAS_MISSING.hold,
            severity: "notice",
            value: "{{ $value }}",
            description: "prom-description",
        },
        // The escalation: the same alert at Warning once it has fired for an hour.
        Export {
            rule: &WORKLOAD_REPLICAS_MISSING,
            expr: unavailable.into(),
            hold: WORKLOAD_REPLICAS_MISSING.hold + WORKLOAD_REPLICAS_MISSING.escalate_after.expect("it escalates"),
            severity: "warning",
            value: "{{ $value }}",
            description: "prom-description-escalated",
        },
        Export {
            rule: &PVC_PENDING,
            expr: "dumbmonit_k8s_pvc_pending == 1".into(),
            hold: PVC_PENDING.hold,
            severity: "notice",
            value: "{{ $value }}",
            description: "prom-description",
        },
        // Two failed cycles in a row: at a one-minute interval, failing now and a minute ago.
        Export {
            rule: &MONITOR_UNREACHABLE,
            expr: "dumbmonit_k8s_up == 0".into(),
            hold: std::time::Duration::from_secs(60),
            severity: "warning",
            value: "{{ $value }}",
            description: "prom-description",
        },
        // The condition's message is on the cluster page and in the built-in alert; a metric has
        // no room for it.
        Export {
            rule: &AGGREGATED_API_UNAVAILABLE,
            expr: "dumbmonit_k8s_apiservice_available == 0".into(),
            hold: AGGREGATED_API_UNAVAILABLE.hold,
            severity: "warning",
            value: "{{ $value }}",
            description: "prom-description",
        },
        Export {
            rule: &HPA_METRICS_UNAVAILABLE,
            expr: "dumbmonit_k8s_hpa_scaling_active == 0".into(),
            hold: HPA_METRICS_UNAVAILABLE.hold,
            severity: "notice",
            value: "{{ $value }}",
            description: "prom-description",
        },
        Export {
            rule: &CERTIFICATE_EXPIRING,
            expr: certificates_within(30),
            hold: CERTIFICATE_EXPIRING.hold,
            severity: "notice",
            value: "{{ $value | humanizeDuration }}",
            description: "prom-description",
        },
        // The escalation: within 7 days, the same alert at Warning.
        Export {
            rule: &CERTIFICATE_EXPIRING,
            expr: certificates_within(7),
            hold: CERTIFICATE_EXPIRING.hold,
            severity: "warning",
            value: "{{ $value | humanizeDuration }}",
            description: "prom-description",
        },
        Export {
            rule: &VERSION_SKEW,
            expr: "dumbmonit_k8s_node_kubelet_skew == 1".into(),
            hold: VERSION_SKEW.hold,
            severity: "notice",
            value: "{{ $value }}",
            description: "prom-description",
        },
        Export {
            rule: &ROLLOUT_STUCK,
            expr: "dumbmonit_k8s_workload_rollout_stuck == 1".into(),
            hold: ROLLOUT_STUCK.hold,
            severity: "warning",
            value: "{{ $value }}",
            description: "prom-description",
        },
        Export {
            rule: &POD_STUCK_TERMINATING,
            expr: format!("dumbmonit_k8s_pod_terminating_seconds >= {}", TERMINATING_PATIENCE.as_secs()),
            hold: POD_STUCK_TERMINATING.hold,
            severity: "notice",
            value: "{{ $value | humanizeDuration }}",
            description: "prom-description",
        },
        Export {
            rule: &NODE_FLAPPING,
            expr: format!("dumbmonit_k8s_node_ready_transitions > {FLAPPING_CHANGES}"),
            hold: NODE_FLAPPING.hold,
            severity: "warning",
            value: "{{ $value }}",
            description: "prom-description",
        },
        Export {
            rule: &JOB_FAILED,
            expr: "dumbmonit_k8s_job_failed == 1".into(),
            hold: JOB_FAILED.hold,
            severity: "notice",
            value: "{{ $value }}",
            description: "prom-description",
        },
        Export {
            rule: &CRONJOB_MISSED,
            expr:
                "dumbmonit_k8s_cronjob_last_schedule_age_seconds > 2 * dumbmonit_k8s_cronjob_schedule_interval_seconds"
                    .into(),
            hold: CRONJOB_MISSED.hold,
            severity: "notice",
            value: "{{ $value }}",
            description: "prom-description",
        },
    ]
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The rule file, its annotations in `lang` (the rest is the same in every language).
pub fn rule_file(lang: Lang) -> String {
    let mut out = String::from(
        "# The built-in rules of DumbMonit over its dumbmonit_k8s_ metrics (`dumbmonit rules`).\n\
         # Check: promtool check rules FILE. Differences from the built-in evaluation:\n\
         # - per-pod series cover at most 500 pods, those with problems first;\n\
         # - increase() extrapolates at the window's edges, the built-in rule counts the increases seen;\n\
         # - the escalation is a second rule at severity warning (inhibit the notice one in Alertmanager);\n\
         # - KubernetesJobFailed is not resolved by a newer successful run of the CronJob (the built-in rule is);\n\
         # - KubernetesCronJobMissed needs a lastScheduleTime (the built-in rule counts from creation otherwise).\n\
         groups:\n  - name: dumbmonit\n    rules:\n",
    );
    for e in exports() {
        out.push_str(&format!("      - alert: {}\n        expr: {}\n", e.rule.alertname, quote(&e.expr)));
        if !e.hold.is_zero() {
            out.push_str(&format!("        for: {}\n", duration(e.hold)));
        }
        out.push_str(&format!(
            "        labels:\n          severity: {}\n        annotations:\n          summary: {}\n          description: {}\n",
            e.severity,
            quote(&annotation(lang, &e, "prom-summary")),
            quote(&annotation(lang, &e, e.description))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_windows() {
        assert_eq!(duration(std::time::Duration::from_secs(300)), "5m");
        assert_eq!(duration(std::time::Duration::from_secs(3600)), "1h");
        assert_eq!(duration(std::time::Duration::from_secs(4200)), "70m");
        assert_eq!(window(CRASHLOOP_WINDOW), "9m59s");
    }

    #[test]
    fn every_rule_is_exported() {
        let file = rule_file(Lang::En);
        for r in super::super::RULES {
            assert!(file.contains(&format!("- alert: {}\n", r.alertname)), "{}", r.alertname);
        }
    }
}
