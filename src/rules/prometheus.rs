//! `dumbmonit rules`: the built-in rules as a Prometheus rule file over the `dumbmonit_k8s_`
//! metrics, for users whose Prometheus scrapes DumbMonit and whose Alertmanager routes alerts.

use super::{
    AGGREGATED_API_UNAVAILABLE, CERTIFICATE_EXPIRING, CRASHLOOP_WINDOW, CRONJOB_MISSED, FLAPPING_CHANGES,
    HPA_METRICS_UNAVAILABLE, JOB_FAILED, MONITOR_UNREACHABLE, NODE_FLAPPING, NODE_NOT_READY, NODE_PRESSURE,
    POD_CRASH_LOOPING, POD_PENDING, POD_RESTARTING, POD_STUCK_TERMINATING, PVC_PENDING, RESTART_THRESHOLD,
    RESTART_WINDOW, ROLLOUT_STUCK, Rule, TERMINATING_PATIENCE, VERSION_SKEW, WORKLOAD_REPLICAS_MISSING,
};

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
    summary: &'static str,
    description: &'static str,
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
            summary: "Node {{ $labels.node }} is not ready",
            description: "The Ready condition of node {{ $labels.node }} is False, Unknown or missing.",
        },
        Export {
            rule: &NODE_PRESSURE,
            expr: "dumbmonit_k8s_node_pressure{condition=~\"memory|disk|pid\"} == 1".into(),
            hold: NODE_PRESSURE.hold,
            severity: "notice",
            summary: "Node {{ $labels.node }} is under {{ $labels.condition }} pressure",
            description: "Node {{ $labels.node }} reports {{ $labels.condition }} pressure.",
        },
        Export {
            rule: &POD_CRASH_LOOPING,
            expr: format!("{crash} == 1"),
            hold: POD_CRASH_LOOPING.hold,
            severity: "warning",
            summary: "Pod {{ $labels.namespace }}/{{ $labels.pod }} is crash-looping",
            description: "Pod {{ $labels.namespace }}/{{ $labels.pod }} was seen in CrashLoopBackOff within the last 10 minutes, for 10 minutes.",
        },
        Export {
            rule: &POD_PENDING,
            expr: "dumbmonit_k8s_pod_pending == 1".into(),
            hold: POD_PENDING.hold,
            severity: "notice",
            summary: "Pod {{ $labels.namespace }}/{{ $labels.pod }} is pending",
            description: "Pod {{ $labels.namespace }}/{{ $labels.pod }} has been Pending for 15 minutes.",
        },
        Export {
            rule: &POD_RESTARTING,
            expr: format!(
                "increase(dumbmonit_k8s_pod_restarts[{}]) > {RESTART_THRESHOLD} unless on(namespace, pod) {crash} == 1",
                duration(RESTART_WINDOW)
            ),
            hold: POD_RESTARTING.hold,
            severity: "notice",
            summary: "Pod {{ $labels.namespace }}/{{ $labels.pod }} restarted {{ $value | printf \"%.0f\" }} times in the last hour",
            description: "The containers of pod {{ $labels.namespace }}/{{ $labels.pod }} restarted more than 5 times within the last hour, without crash-looping.",
        },
        Export {
            rule: &WORKLOAD_REPLICAS_MISSING,
            expr: unavailable.into(),
            hold: WORKLOAD_REPLICAS_MISSING.hold,
            severity: "notice",
            summary: "{{ $labels.kind }} {{ $labels.namespace }}/{{ $labels.workload }} has {{ $value }} unavailable replica(s)",
            description: "{{ $labels.kind }} {{ $labels.namespace }}/{{ $labels.workload }} has had unavailable replicas for 10 minutes.",
        },
        // The escalation: the same alert at Warning once it has fired for an hour.
        Export {
            rule: &WORKLOAD_REPLICAS_MISSING,
            expr: unavailable.into(),
            hold: WORKLOAD_REPLICAS_MISSING.hold + WORKLOAD_REPLICAS_MISSING.escalate_after.expect("it escalates"),
            severity: "warning",
            summary: "{{ $labels.kind }} {{ $labels.namespace }}/{{ $labels.workload }} has {{ $value }} unavailable replica(s)",
            description: "{{ $labels.kind }} {{ $labels.namespace }}/{{ $labels.workload }} has had unavailable replicas for more than an hour.",
        },
        Export {
            rule: &PVC_PENDING,
            expr: "dumbmonit_k8s_pvc_pending == 1".into(),
            hold: PVC_PENDING.hold,
            severity: "notice",
            summary: "Claim {{ $labels.namespace }}/{{ $labels.pvc }} is stuck in Pending",
            description: "Claim {{ $labels.namespace }}/{{ $labels.pvc }} is Pending while a pod uses it or a Warning event names it, for 15 minutes.",
        },
        // Two failed cycles in a row: at a one-minute interval, failing now and a minute ago.
        Export {
            rule: &MONITOR_UNREACHABLE,
            expr: "dumbmonit_k8s_up == 0".into(),
            hold: std::time::Duration::from_secs(60),
            severity: "warning",
            summary: "Cluster {{ $labels.cluster }} cannot be read",
            description: "DumbMonit could not read the API server in two consecutive cycles.",
        },
        // The condition's message is on the cluster page and in the built-in alert; a metric has
        // no room for it.
        Export {
            rule: &AGGREGATED_API_UNAVAILABLE,
            expr: "dumbmonit_k8s_apiservice_available == 0".into(),
            hold: AGGREGATED_API_UNAVAILABLE.hold,
            severity: "warning",
            summary: "APIService {{ $labels.apiservice }} is not available",
            description: "The aggregated API {{ $labels.apiservice }} has not been Available for 5 minutes: the API server cannot reach service {{ $labels.service }}. See its condition with kubectl get apiservice {{ $labels.apiservice }} -o yaml.",
        },
        Export {
            rule: &HPA_METRICS_UNAVAILABLE,
            expr: "dumbmonit_k8s_hpa_scaling_active == 0".into(),
            hold: HPA_METRICS_UNAVAILABLE.hold,
            severity: "notice",
            summary: "HPA {{ $labels.namespace }}/{{ $labels.hpa }} cannot scale",
            description: "HPA {{ $labels.namespace }}/{{ $labels.hpa }} has not been able to compute a replica count for 10 minutes (its ScalingActive condition is False).",
        },
        Export {
            rule: &CERTIFICATE_EXPIRING,
            expr: certificates_within(30),
            hold: CERTIFICATE_EXPIRING.hold,
            severity: "notice",
            summary: "The {{ $labels.certificate }} certificate of cluster {{ $labels.cluster }} expires in {{ $value | humanizeDuration }}",
            description: "Renew it before it ends (k3s renews the certificates that expire within 90 days when it restarts).",
        },
        // The escalation: within 7 days, the same alert at Warning.
        Export {
            rule: &CERTIFICATE_EXPIRING,
            expr: certificates_within(7),
            hold: CERTIFICATE_EXPIRING.hold,
            severity: "warning",
            summary: "The {{ $labels.certificate }} certificate of cluster {{ $labels.cluster }} expires in {{ $value | humanizeDuration }}",
            description: "Renew it before it ends (k3s renews the certificates that expire within 90 days when it restarts).",
        },
        Export {
            rule: &VERSION_SKEW,
            expr: "dumbmonit_k8s_node_kubelet_skew == 1".into(),
            hold: VERSION_SKEW.hold,
            severity: "notice",
            summary: "The kubelet of node {{ $labels.node }} is outside the supported version skew",
            description: "A kubelet may be up to three minor versions older than the API server, never newer.",
        },
        Export {
            rule: &ROLLOUT_STUCK,
            expr: "dumbmonit_k8s_workload_rollout_stuck == 1".into(),
            hold: ROLLOUT_STUCK.hold,
            severity: "warning",
            summary: "The rollout of {{ $labels.kind }} {{ $labels.namespace }}/{{ $labels.workload }} is stuck",
            description: "A Deployment past its progress deadline, or a StatefulSet or DaemonSet update without progress for 15 minutes.",
        },
        Export {
            rule: &POD_STUCK_TERMINATING,
            expr: format!("dumbmonit_k8s_pod_terminating_seconds >= {}", TERMINATING_PATIENCE.as_secs()),
            hold: POD_STUCK_TERMINATING.hold,
            severity: "notice",
            summary: "Pod {{ $labels.namespace }}/{{ $labels.pod }} has been terminating for {{ $value | humanizeDuration }} past its grace period",
            description: "A finalizer, or a node that is not ready, keeps pod {{ $labels.namespace }}/{{ $labels.pod }} from going.",
        },
        Export {
            rule: &NODE_FLAPPING,
            expr: format!("dumbmonit_k8s_node_ready_transitions > {FLAPPING_CHANGES}"),
            hold: NODE_FLAPPING.hold,
            severity: "warning",
            summary: "Node {{ $labels.node }} is flapping: its Ready condition changed {{ $value }} times in 15 minutes",
            description: "The Ready condition of node {{ $labels.node }} keeps changing.",
        },
        Export {
            rule: &JOB_FAILED,
            expr: "dumbmonit_k8s_job_failed == 1".into(),
            hold: JOB_FAILED.hold,
            severity: "notice",
            summary: "Job {{ $labels.namespace }}/{{ $labels.job }} failed",
            description: "Job {{ $labels.namespace }}/{{ $labels.job }} (CronJob {{ $labels.owner }}) has its Failed condition True.",
        },
        Export {
            rule: &CRONJOB_MISSED,
            expr:
                "dumbmonit_k8s_cronjob_last_schedule_age_seconds > 2 * dumbmonit_k8s_cronjob_schedule_interval_seconds"
                    .into(),
            hold: CRONJOB_MISSED.hold,
            severity: "notice",
            summary: "CronJob {{ $labels.namespace }}/{{ $labels.cronjob }} missed its runs",
            description: "CronJob {{ $labels.namespace }}/{{ $labels.cronjob }} last ran more than twice its schedule's period ago.",
        },
    ]
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The rule file.
pub fn rule_file() -> String {
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
            quote(e.summary),
            quote(e.description)
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
        let file = rule_file();
        for r in super::super::RULES {
            assert!(file.contains(&format!("- alert: {}\n", r.alertname)), "{}", r.alertname);
        }
    }
}
