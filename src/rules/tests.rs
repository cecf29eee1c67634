//! Rule timing, cycle by cycle, with chosen timestamps.

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};

use crate::collect::WorkloadKind;
use crate::health::extras::{ApiServiceHealth, HpaHealth};
use crate::health::{Health, NodeHealth, PodHealth, PvcHealth, WorkloadHealth};
use crate::rules::{RuleState, Severity, Transition, TransitionState};

fn t(minute: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000).unwrap() + SignedDuration::from_mins(minute)
}

fn health(minute: i64) -> Health {
    Health::empty(t(minute), "v1")
}

fn pod(name: &str, restarts: i64) -> PodHealth {
    PodHealth { restarts, ..PodHealth::running(name) }
}

fn node(name: &str, ready: bool) -> NodeHealth {
    NodeHealth::named(name, ready)
}

fn workload(unavailable: i64) -> WorkloadHealth {
    WorkloadHealth {
        controller_stopped: false,
        generation_lag: 0,
        misscheduled: 0,
        kind: WorkloadKind::Deployment,
        namespace: "shop".into(),
        name: "api".into(),
        desired: 3,
        ready: 3 - unavailable,
        unavailable,
        updated: 3,
        updating: false,
        rollout_stuck: false,
        why: vec![],
    }
}

/// Runs one health per minute from minute 0; returns (minute, alertname, state) of each transition.
fn timeline(minutes: i64, at: impl Fn(i64) -> Option<Health>) -> Vec<(i64, String, TransitionState)> {
    let mut state = RuleState::default();
    let mut out = Vec::new();
    for m in 0..minutes {
        let transitions: Vec<Transition> = match at(m) {
            Some(h) => state.observe(t(m), "lab", &h),
            None => state.observe_failure(
                t(m),
                "lab",
                "No answer from https://k3s.lan:6443 while reading version within 10 s",
            ),
        };
        for tr in transitions {
            out.push((m, tr.alert.alertname.clone(), tr.state));
        }
        // An alert's identity is its rule's object labels: what `key_of` makes of it held.
        for (key, alert) in &state.alerts {
            assert_eq!(&crate::rules::engine::key_of(alert), key, "{}: its rule's `labels`", alert.alertname);
        }
    }
    out
}

fn fired(name: &str, m: i64) -> (i64, String, TransitionState) {
    (m, name.to_string(), TransitionState::Firing)
}
fn resolved(name: &str, m: i64) -> (i64, String, TransitionState) {
    (m, name.to_string(), TransitionState::Resolved)
}

#[test]
fn a_node_not_ready_fires_after_five_minutes_not_one_earlier() {
    let got = timeline(12, |m| {
        let mut h = health(m);
        h.nodes = vec![node("n1", !(1..=8).contains(&m)).into()];
        Some(h)
    });
    assert_eq!(got, [fired("KubernetesNodeNotReady", 6), resolved("KubernetesNodeNotReady", 9)]);
}

#[test]
fn nodes_not_visible_with_namespaced_access_neither_fire_nor_resolve_a_node_rule() {
    // Minutes 0-7: nodes read, n1 not ready (fires at 5). From 8: the token sees no node; the
    // alert stays as it is, pods' rules go on. From 12: nodes visible again, n1 ready: resolved.
    let got = timeline(14, |m| {
        let mut h = health(m);
        if (8..12).contains(&m) {
            h.extras.namespaced = Some(crate::collect::optional::Namespaced {
                asked: 1,
                read: vec!["shop".into()],
                nodes_hidden: true,
                ..Default::default()
            });
        } else {
            h.nodes = vec![node("n1", m >= 12).into()];
        }
        Some(h)
    });
    assert_eq!(got, [fired("KubernetesNodeNotReady", 5), resolved("KubernetesNodeNotReady", 12)]);
}

#[test]
fn a_namespace_not_read_resolves_none_of_its_alerts() {
    // shop's workload misses a replica from 0 (fires at 10); minutes 15-19 shop is not read
    // (its Role removed, say): nothing resolves; from 20 it is read again, healthy: resolved.
    let got = timeline(22, |m| {
        let mut h = health(m);
        if (15..20).contains(&m) {
            h.extras.namespaced = Some(crate::collect::optional::Namespaced {
                asked: 1,
                unread: vec!["shop".into()],
                ..Default::default()
            });
        } else if m < 15 {
            h.workloads = vec![workload(1).into()];
        }
        Some(h)
    });
    assert_eq!(
        got,
        [fired("KubernetesWorkloadReplicasMissing", 10), resolved("KubernetesWorkloadReplicasMissing", 20)]
    );
}

#[test]
fn pressure_fires_per_node_and_condition() {
    let mut state = RuleState::default();
    for m in 0..=5 {
        let mut h = health(m);
        let mut n = node("n1", true);
        n.pressure = vec![("memory".into(), true), ("disk".into(), true), ("network".into(), true)];
        h.nodes = vec![n.into()];
        let tr = state.observe(t(m), "lab", &h);
        if m < 5 {
            assert!(tr.is_empty(), "minute {m}");
        } else {
            let conditions: Vec<&str> = tr.iter().map(|t| t.alert.labels["condition"].as_str()).collect();
            assert_eq!(conditions, ["disk", "memory"], "network is not pressure");
            assert_eq!(tr[0].alert.labels["severity"], "notice");
            assert_eq!(tr[0].alert.summary, "Node n1 is under disk pressure");
        }
    }
}

#[test]
fn a_nine_minute_rolling_update_stays_silent() {
    let got = timeline(30, |m| {
        let mut h = health(m);
        h.workloads = vec![workload(if m < 9 { 1 } else { 0 }).into()];
        Some(h)
    });
    assert_eq!(got, []);
    // Ten minutes missing fire.
    let got = timeline(30, |m| {
        let mut h = health(m);
        h.workloads = vec![workload(if m < 11 { 1 } else { 0 }).into()];
        Some(h)
    });
    assert_eq!(
        got,
        [fired("KubernetesWorkloadReplicasMissing", 10), resolved("KubernetesWorkloadReplicasMissing", 11)]
    );
}

#[test]
fn a_flapping_crash_loop_fires_after_ten_minutes_and_resolves_ten_after_the_last() {
    // CrashLoopBackOff on even minutes, Running in between, until minute 20; then healthy.
    let got = timeline(40, |m| {
        let mut h = health(m);
        let mut p = pod("api-1", 3);
        p.crashlooping = m <= 20 && m % 2 == 0;
        h.pods = [p].into_iter().map(Arc::new).collect();
        Some(h)
    });
    assert_eq!(got, [fired("KubernetesPodCrashLooping", 10), resolved("KubernetesPodCrashLooping", 30)]);
    // With the restarts a real crash loop makes, the restart rule takes over once the crash
    // loop is ten minutes old: the pod did restart more than 5 times within the hour.
    let got = timeline(40, |m| {
        let mut h = health(m);
        let mut p = pod("api-1", m.min(20));
        p.crashlooping = m <= 20 && m % 2 == 0;
        h.pods = [p].into_iter().map(Arc::new).collect();
        Some(h)
    });
    assert_eq!(
        got,
        [
            fired("KubernetesPodCrashLooping", 10),
            fired("KubernetesPodRestarting", 30),
            resolved("KubernetesPodCrashLooping", 30)
        ]
    );
}

/// A crash loop is remembered when it begins and when it ends, not at every cycle (each change
/// is a row written to the state); its ten minutes still run from the last cycle that saw it,
/// not from a failed cycle after it, nor from the first cycle after a restart.
#[test]
fn a_crash_loop_is_remembered_when_it_begins_and_ends_and_its_window_runs_from_the_last_look() {
    // Crash-looping from minute 0 to 5 (restarts unchanged), a failed cycle at 6, healthy after.
    let at = |m: i64| {
        (m != 6).then(|| {
            let mut h = health(m);
            let mut p = pod("api-1", 3);
            p.crashlooping = m <= 5;
            h.pods = [p].into_iter().map(Arc::new).collect();
            h
        })
    };
    assert_eq!(
        timeline(20, at),
        [fired("KubernetesPodCrashLooping", 10), resolved("KubernetesPodCrashLooping", 15)],
        "ten minutes after minute 5, the last cycle that saw it"
    );
    let key = ("shop".to_string(), "api-1".to_string());
    let mut state = RuleState::default();
    let mut changed = Vec::new();
    for m in 0..9 {
        match at(m) {
            Some(h) => {
                state.observe(t(m), "lab", &h);
                if state.pods_changed.keys.contains(&key) {
                    changed.push(m);
                }
            }
            None => {
                state.observe_failure(t(m), "lab", "refused");
            }
        }
    }
    assert_eq!(changed, [0, 7], "first seen (crash-looping), then the loop's end");
    let memory = &state.pods[&key];
    assert_eq!((memory.crashloop_seen, memory.crashlooping), (Some(t(5)), false));

    // A state read from its store, its pod crash-looping at the last cycle (minute 5): the first
    // cycle after the restart that no longer sees the loop dates its end from that cycle.
    let mut state = RuleState { last_cycle: Some(t(5)), ..Default::default() };
    let memory = crate::rules::engine::PodMemory {
        restarts: 3,
        increases: Vec::new(),
        crashloop_seen: Some(t(0)),
        crashlooping: true,
    };
    state.pods.insert(key.clone(), memory);
    for m in 9..17 {
        state.observe(t(m), "lab", &at(m).unwrap());
        let crashlooped = state.alerts.keys().any(|k| k.starts_with("KubernetesPodCrashLooping"));
        assert_eq!(crashlooped, m < 15, "minute {m}: pending until ten minutes after minute 5");
        assert_eq!(state.pods_changed.keys.contains(&key), m == 9, "minute {m}: the loop's end alone");
    }
    assert_eq!(state.pods[&key].crashloop_seen, Some(t(5)));
}

#[test]
fn restarts_count_across_a_reset_and_yield_to_the_crash_loop_rule() {
    // 0 → 3 → reset to 1 → 3: increases 3 + 1 + 2 = 6 > 5 at minute 3.
    let counts = [0, 3, 1, 3, 3, 3];
    let mut state = RuleState::default();
    let mut fired_at = None;
    for (m, &r) in counts.iter().enumerate() {
        let mut h = health(m as i64);
        h.pods = [pod("api-1", r)].into_iter().map(Arc::new).collect();
        for tr in state.observe(t(m as i64), "lab", &h) {
            assert_eq!(tr.alert.alertname, "KubernetesPodRestarting");
            assert_eq!(tr.alert.summary, "Pod shop/api-1 restarted 6 times in the last hour");
            fired_at = Some(m);
        }
    }
    assert_eq!(fired_at, Some(3), "no duration: fires at the first evaluation");
    // Five restarts are not more than five.
    let got = timeline(5, |m| {
        let mut h = health(m);
        h.pods = [pod("api-1", m.min(1) * 5)].into_iter().map(Arc::new).collect();
        Some(h)
    });
    assert_eq!(got, []);
    // Restarts that come with a crash loop belong to the crash-loop rule.
    let got = timeline(5, |m| {
        let mut h = health(m);
        let mut p = pod("api-1", m * 4);
        p.crashlooping = m == 1;
        h.pods = [p].into_iter().map(Arc::new).collect();
        Some(h)
    });
    assert_eq!(got, []);
    // An hour later, old restarts no longer count: resolves when the window slides past them.
    let got = timeline(70, |m| {
        let mut h = health(m);
        h.pods = [pod("api-1", if m == 0 { 0 } else { 6 })].into_iter().map(Arc::new).collect();
        Some(h)
    });
    assert_eq!(got, [fired("KubernetesPodRestarting", 1), resolved("KubernetesPodRestarting", 61)]);
}

#[test]
fn a_pod_that_stays_is_remembered_and_one_that_is_gone_is_forgotten() {
    let mut state = RuleState::default();
    let mut cycle = |m: i64, pods: Vec<PodHealth>| {
        let mut h = health(m);
        h.pods = pods.into_iter().map(Arc::new).collect();
        let told = state.observe(t(m), "lab", &h);
        let mut remembered: Vec<String> = state.pods.keys().map(|(_, name)| name.clone()).collect();
        remembered.sort();
        (told.into_iter().map(|tr| (tr.alert.summary, tr.state)).collect::<Vec<_>>(), remembered)
    };
    cycle(0, vec![pod("api-1", 0), pod("web-1", 0)]);
    let restarted = |name: &str, n: i64| format!("Pod shop/{name} restarted {n} times in the last hour");
    assert_eq!(
        cycle(1, vec![pod("api-1", 6), pod("web-1", 1)]),
        (vec![(restarted("api-1", 6), TransitionState::Firing)], vec!["api-1".into(), "web-1".into()])
    );
    assert_eq!(
        cycle(2, vec![pod("web-1", 1)]),
        (vec![(restarted("api-1", 6), TransitionState::Resolved)], vec!["web-1".into()]),
        "api-1 gone: resolved and forgotten"
    );
    // web-1's restarts add up across cycles (1, then 5); api-1 is back under its name, a new pod
    // whose 4 restarts count from its first sighting, not with the 6 of the one that was gone.
    assert_eq!(cycle(3, vec![pod("api-1", 0), pod("web-1", 6)]).0, [(restarted("web-1", 6), TransitionState::Firing)]);
    assert_eq!(cycle(4, vec![pod("api-1", 4), pod("web-1", 6)]).0, []);
}

#[test]
fn missing_replicas_escalate_after_an_hour_of_firing() {
    let mut state = RuleState::default();
    let mut seen = Vec::new();
    for m in 0..=75 {
        let mut h = health(m);
        h.workloads = vec![workload(1).into()];
        for tr in state.observe(t(m), "lab", &h) {
            seen.push((m, tr.state, tr.alert.severity, tr.previous_labels.map(|l| l["severity"].clone())));
        }
    }
    assert_eq!(
        seen,
        [
            (10, TransitionState::Firing, Severity::Notice, None),
            (70, TransitionState::Escalated, Severity::Warning, Some("notice".to_string())),
        ]
    );
}

#[test]
fn pending_pods_and_claims_fire_after_fifteen_minutes() {
    let got = timeline(17, |m| {
        let mut h = health(m);
        let mut p = pod("api-1", 0);
        p.pending = true;
        h.pods = [p].into_iter().map(Arc::new).collect();
        h.pvcs = vec![Arc::new(PvcHealth {
            namespace: "shop".into(),
            name: "data".into(),
            phase: "Pending".into(),
            bound: false,
            stuck: true,
            why: vec!["ProvisioningFailed: no class".into()],
        })];
        Some(h)
    });
    assert_eq!(got, [fired("KubernetesPVCPending", 15), fired("KubernetesPodPending", 15)]);
}

#[test]
fn a_failed_cycle_resolves_nothing_and_two_make_the_monitor_unreachable() {
    let got = timeline(20, |m| {
        if (8..=10).contains(&m) {
            return None;
        }
        let mut h = health(m);
        h.nodes = vec![node("n1", false).into()];
        Some(h)
    });
    assert_eq!(
        got,
        [
            fired("KubernetesNodeNotReady", 5),
            fired("KubernetesMonitorUnreachable", 9),
            resolved("KubernetesMonitorUnreachable", 11),
        ],
        "the node alert neither resolves nor re-fires across the outage"
    );
    // A single failed cycle is not an outage.
    let got = timeline(10, |m| if m == 4 { None } else { Some(health(m)) });
    assert_eq!(got, []);
}

#[test]
fn the_unreachable_alert_carries_the_last_error_and_the_cluster() {
    let mut state = RuleState::default();
    state.observe_failure(t(0), "lab", "first error");
    let tr = state.observe_failure(t(1), "lab", "The API server refused the token (401)");
    assert_eq!(tr.len(), 1);
    let a = &tr[0].alert;
    assert_eq!(a.description, "The API server refused the token (401)");
    assert_eq!(a.labels["cluster"], "lab");
    assert_eq!(a.labels["severity"], "warning");
    assert_eq!(a.summary, "Cluster lab cannot be read");
}

#[test]
fn objects_that_disappear_resolve_their_alerts() {
    let got = timeline(15, |m| {
        let mut h = health(m);
        if m < 12 {
            let mut p = pod("api-1", 0);
            p.crashlooping = true;
            h.pods = [p].into_iter().map(Arc::new).collect();
        }
        Some(h)
    });
    assert_eq!(got, [fired("KubernetesPodCrashLooping", 10), resolved("KubernetesPodCrashLooping", 12)]);
}

#[test]
fn alerts_carry_object_labels_and_the_why() {
    let mut state = RuleState::default();
    let mut tr = Vec::new();
    for m in 0..=10 {
        let mut h = health(m);
        let mut p = pod("api-7c9696d669-8tpp6", 14);
        p.crashlooping = true;
        p.why = vec!["app: last exit code 137 (OOMKilled): SIGKILL: out of memory".into()];
        h.pods = [p].into_iter().map(Arc::new).collect();
        tr = state.observe(t(m), "lab", &h);
    }
    let a = &tr[0].alert;
    assert_eq!(a.summary, "Pod shop/api-7c9696d669-8tpp6 is crash-looping");
    assert_eq!(a.description, "app: last exit code 137 (OOMKilled): SIGKILL: out of memory; restarts: 14");
    let keys: Vec<&str> = a.labels.keys().map(String::as_str).collect();
    assert_eq!(keys, ["alertname", "cluster", "namespace", "pod", "severity", "workload"]);
    assert_eq!(a.active_at, t(0));
    assert_eq!(a.fired_at, Some(t(10)));
}

/// An alert seen again as it was is the very alert the state held (shared, not copied), so that
/// the store and the pages, which hold it too, know it unchanged without comparing it; one the
/// clock or its object changes is a copy, and what held the old one still holds it as it was.
#[test]
fn an_alert_seen_again_unchanged_is_the_same_alert() {
    let crashing = |m: i64, restarts: i64| {
        let mut h = health(m);
        let mut p = pod("api-1", restarts);
        p.crashlooping = true;
        p.why = vec!["app: OOMKilled".into()];
        h.pods = [p].into_iter().map(Arc::new).collect();
        h
    };
    let alert = |s: &RuleState| s.alerts.values().next().expect("the crash loop's alert").clone();
    let mut state = RuleState::default();
    state.observe(t(0), "lab", &crashing(0, 3));
    let pending = alert(&state);
    assert!(!pending.firing());
    state.observe(t(1), "lab", &crashing(1, 3));
    assert!(Arc::ptr_eq(&pending, &alert(&state)), "seen again, pending, the same words: the same alert");
    // Held long enough, it fires: a copy, the one held before left pending.
    let mut m = 2;
    while !alert(&state).firing() {
        state.observe(t(m), "lab", &crashing(m, 3));
        m += 1;
        assert!(m < 60, "the crash loop fires within the hour");
    }
    let firing = alert(&state);
    assert!(!Arc::ptr_eq(&pending, &firing) && !pending.firing());
    state.observe(t(m), "lab", &crashing(m, 3));
    assert!(Arc::ptr_eq(&firing, &alert(&state)), "firing, seen again as it was");
    // Its object's words change: a copy with the new words.
    state.observe(t(m + 1), "lab", &crashing(m + 1, 4));
    let reworded = alert(&state);
    assert!(!Arc::ptr_eq(&firing, &reworded));
    assert!(reworded.description.contains("restarts: 4") && firing.description.contains("restarts: 3"));
}

/// An alert's words are said again when its object's words change, and when the state comes
/// from its store (this version may word them otherwise); not while they stay the same.
#[test]
fn an_alerts_words_are_said_again_when_they_change_and_once_after_a_load() {
    let crashing = |m: i64, restarts: i64, why: &str| {
        let mut h = health(m);
        let mut p = pod("api-1", restarts);
        p.crashlooping = true;
        p.why = vec![why.into()];
        h.pods = [p].into_iter().map(Arc::new).collect();
        h
    };
    let words = |s: &RuleState| {
        let a = s.alerts.values().next().expect("the crash loop's alert");
        (a.summary.clone(), a.description.clone())
    };
    let mut state = RuleState::default();
    state.observe(t(0), "lab", &crashing(0, 3, "app: OOMKilled"));
    assert_eq!(words(&state).1, "app: OOMKilled; restarts: 3");
    // Words held but not said by this process (a store written by another version).
    state
        .alerts
        .values_mut()
        .for_each(|a| std::sync::Arc::make_mut(a).description = "worded by another version".into());
    state.worded = crate::rules::engine::Worded(false);
    state.observe(t(1), "lab", &crashing(1, 3, "app: OOMKilled"));
    assert_eq!(words(&state).1, "app: OOMKilled; restarts: 3", "said again after a load");
    // The same words are not said again (the text is left as this process said it)...
    state.alerts.values_mut().for_each(|a| {
        let a = std::sync::Arc::make_mut(a);
        a.summary = "as said".into();
        a.description = "as said".into();
    });
    state.observe(t(2), "lab", &crashing(2, 3, "app: OOMKilled"));
    assert_eq!(words(&state), ("as said".into(), "as said".into()), "the same words are not said again");
    // ...other words are, whichever part changed.
    state.observe(t(3), "lab", &crashing(3, 4, "app: OOMKilled"));
    assert_eq!(words(&state).1, "app: OOMKilled; restarts: 4");
    state.alerts.values_mut().for_each(|a| std::sync::Arc::make_mut(a).description = "as said".into());
    state.observe(t(4), "lab", &crashing(4, 4, "app: Error"));
    assert_eq!(words(&state).1, "app: Error; restarts: 4");
    assert_eq!(words(&state).0, "as said", "the summary's words did not change");
}

fn metrics_apiservice(available: bool) -> ApiServiceHealth {
    ApiServiceHealth {
        name: "v1beta1.metrics.k8s.io".into(),
        service: "kube-system/metrics-server".into(),
        available,
        reason: if available { "Passed" } else { "FailedDiscoveryCheck" }.into(),
        message: if available { "all checks passed" } else { "failing or missing response from https://10.96.0.12:4443/apis/metrics.k8s.io/v1beta1: context deadline exceeded" }.into(),
    }
}

#[test]
fn an_unavailable_aggregated_api_fires_after_five_minutes_and_an_unread_list_resolves_nothing() {
    // Down from minute 1 to 11; the APIServices cannot be read at minutes 8 and 9 (403, say).
    let got = timeline(16, |m| {
        let mut h = health(m);
        h.extras.apiservices = (!(8..=9).contains(&m)).then(|| vec![metrics_apiservice(!(1..=11).contains(&m))]);
        Some(h)
    });
    assert_eq!(
        got,
        [fired("KubernetesAggregatedAPIUnavailable", 6), resolved("KubernetesAggregatedAPIUnavailable", 12)]
    );
    let mut state = RuleState::default();
    let mut h = health(0);
    h.extras.apiservices = Some(vec![metrics_apiservice(false)]);
    state.observe(t(0), "lab", &h);
    let fired = state.observe(t(5), "lab", &h);
    let a = &fired[0].alert;
    assert_eq!(a.labels["apiservice"], "v1beta1.metrics.k8s.io");
    assert_eq!(a.labels["service"], "kube-system/metrics-server");
    assert_eq!(a.severity, Severity::Warning);
    assert_eq!(
        a.description,
        "FailedDiscoveryCheck: failing or missing response from https://10.96.0.12:4443/apis/metrics.k8s.io/v1beta1: \
         context deadline exceeded (service kube-system/metrics-server)"
    );
}

#[test]
fn an_hpa_that_cannot_scale_fires_after_ten_minutes() {
    let hpa = |active: bool| HpaHealth {
        namespace: "shop".into(),
        name: "web".into(),
        scaling_active: active,
        reason: if active { "ValidMetricFound" } else { "FailedGetResourceMetric" }.into(),
        message: "unable to fetch metrics from resource metrics API".into(),
        at_max: false,
        min_replicas: 1,
        current_replicas: 2,
        desired_replicas: 2,
        max_replicas: 10,
        maxed_out: false,
        mismatch: false,
    };
    let got = timeline(25, |m| {
        let mut h = health(m);
        h.extras.hpas = Some(vec![hpa(!(2..=20).contains(&m))]);
        Some(h)
    });
    assert_eq!(got, [fired("KubernetesHPAMetricsUnavailable", 12), resolved("KubernetesHPAMetricsUnavailable", 21)]);
}

fn hpa(maxed_out: bool, mismatch: bool) -> HpaHealth {
    HpaHealth {
        namespace: "shop".into(),
        name: "web".into(),
        scaling_active: true,
        reason: "ValidMetricFound".into(),
        message: String::new(),
        at_max: maxed_out,
        min_replicas: 2,
        current_replicas: if maxed_out { 10 } else { 4 },
        desired_replicas: if mismatch { 6 } else { 4 },
        max_replicas: 10,
        maxed_out,
        mismatch,
    }
}

#[test]
fn an_hpa_at_its_ceiling_and_one_that_cannot_reach_its_count_fire_after_fifteen_minutes() {
    let got = timeline(40, |m| {
        let mut h = health(m);
        let mut web = hpa((1..=20).contains(&m), false);
        // The count changed at minute 5: the hold starts again at 6.
        let mut api = hpa(false, (1..=30).contains(&m) && m != 5);
        api.name = "api".into();
        web.name = "web".into();
        h.extras.hpas = Some(vec![web, api]);
        Some(h)
    });
    assert_eq!(
        got,
        [
            fired("KubernetesHPAMaxedOut", 16),
            fired("KubernetesHPAReplicasMismatch", 21),
            resolved("KubernetesHPAMaxedOut", 21),
            resolved("KubernetesHPAReplicasMismatch", 31),
        ]
    );
}

#[test]
fn a_stopped_control_plane_component_fires_critical_after_five_minutes() {
    use crate::health::plane::ComponentHealth;
    let mut state = RuleState::default();
    let mut got = Vec::new();
    for m in 0..15 {
        let mut h = health(m);
        h.extras.control_plane = Some(vec![ComponentHealth {
            component: "kube-scheduler",
            holder: "cp-1_7d1f".into(),
            age_seconds: if (2..=12).contains(&m) { 60 * m } else { 2 },
            stale_after: 60,
            down: (2..=12).contains(&m),
        }]);
        got.extend(state.observe(t(m), "lab", &h).into_iter().map(|tr| (m, tr.state, tr.alert)));
    }
    assert_eq!(
        got.iter().map(|(m, s, _)| (*m, *s)).collect::<Vec<_>>(),
        [(7, TransitionState::Firing), (13, TransitionState::Resolved)]
    );
    let alert = &got[0].2;
    assert_eq!((alert.severity, alert.labels["severity"].as_str()), (Severity::Critical, "critical"));
    assert_eq!(alert.labels["component"], "kube-scheduler");
    assert_eq!(alert.summary, "kube-scheduler has not renewed its leader lease for 420 s");
    assert!(alert.description.starts_with("No new pod is scheduled"), "{}", alert.description);
    assert!(alert.description.ends_with("Its last leader was cp-1_7d1f."), "{}", alert.description);
}

#[test]
fn a_quota_fills_then_is_full_one_alert_at_a_time() {
    use crate::health::policy::{Fullness, QuotaHealth};
    let got = timeline(40, |m| {
        let mut h = health(m);
        let (used, fullness) = match m {
            0..20 => (9.0, Some(Fullness::AlmostFull)),
            _ => (10.0, Some(Fullness::Full)),
        };
        h.extras.quotas = Some(vec![QuotaHealth {
            namespace: "shop".into(),
            quota: "team".into(),
            resource: "pods".into(),
            hard: 10.0,
            used,
            fullness,
        }]);
        Some(h)
    });
    assert_eq!(
        got,
        [
            fired("KubernetesQuotaAlmostFull", 15),
            resolved("KubernetesQuotaAlmostFull", 20),
            fired("KubernetesQuotaFullyUsed", 35),
        ]
    );
}

#[test]
fn a_budget_short_of_pods_and_a_failed_volume_fire_after_their_holds() {
    use crate::health::policy::{PdbHealth, PvHealth};
    let got = timeline(20, |m| {
        let mut h = health(m);
        h.extras.pdbs = Some(vec![PdbHealth {
            namespace: "shop".into(),
            name: "db".into(),
            current_healthy: 1,
            desired_healthy: 2,
            disruptions_allowed: 0,
            expected_pods: 3,
            short: m < 18,
        }]);
        let volume = crate::collect::kinds::pv::Pv {
            name: "pvc-3f1".into(),
            phase: if m < 8 { "Failed" } else { "Bound" }.into(),
            claim: "shop/data-db-0".into(),
            why: "host path /srv/db does not exist".into(),
        };
        h.extras.pvs = Some(vec![PvHealth { volume: std::sync::Arc::new(volume), in_error: m < 8 }]);
        Some(h)
    });
    assert_eq!(
        got,
        [
            fired("KubernetesPersistentVolumeErrors", 5),
            resolved("KubernetesPersistentVolumeErrors", 8),
            fired("KubernetesPDBNotEnoughHealthy", 15),
            resolved("KubernetesPDBNotEnoughHealthy", 18),
        ]
    );
}

/// A webhook of `policy` whose backend is `ready` (None: not judged).
fn webhook(name: &str, policy: &str, ready: Option<bool>) -> crate::health::admission::WebhookHealth {
    use crate::collect::backends::Reach;
    crate::health::admission::WebhookHealth {
        kind: "validating",
        configuration: "policy".into(),
        webhook: name.into(),
        failure_policy: policy.into(),
        service: Some("policy/policy-webhook:443".into()),
        ready,
        reach: ready.map(|r| if r { Reach::Ready } else { Reach::NoEndpoint }),
        operations: vec!["CREATE".into(), "UPDATE".into()],
        resources: vec!["pods".into()],
        namespaces: String::new(),
    }
}

#[test]
fn an_unreachable_webhook_is_critical_when_it_refuses_and_a_notice_when_it_lets_through() {
    let mut severities = Vec::new();
    let mut state = RuleState::default();
    let mut got = Vec::new();
    for m in 0..12 {
        let mut h = health(m);
        // Both unreachable from minute 1 to 8; a URL webhook is never judged; a ready one is
        // the healthy twin.
        let down = (1..=8).contains(&m);
        h.extras.webhooks = Some(vec![
            webhook("refuse.example.com", "Fail", Some(!down)),
            webhook("skip.example.com", "Ignore", Some(!down)),
            webhook("far.example.com", "Fail", None),
            webhook("up.example.com", "Fail", Some(true)),
        ]);
        h.extras.webhooks_judged = true;
        for tr in state.observe(t(m), "lab", &h) {
            if tr.state == TransitionState::Firing {
                severities.push((tr.alert.labels["webhook"].clone(), tr.alert.severity));
                assert!(tr.alert.description.contains("in every namespace"), "{}", tr.alert.description);
            }
            got.push((m, tr.alert.labels["webhook"].clone(), tr.state));
        }
    }
    assert_eq!(
        got,
        [
            (6, "refuse.example.com".to_string(), TransitionState::Firing),
            (6, "skip.example.com".to_string(), TransitionState::Firing),
            (9, "refuse.example.com".to_string(), TransitionState::Resolved),
            (9, "skip.example.com".to_string(), TransitionState::Resolved),
        ]
    );
    assert_eq!(
        severities,
        [("refuse.example.com".to_string(), Severity::Critical), ("skip.example.com".to_string(), Severity::Notice)]
    );
}

#[test]
fn quotas_promising_past_one_and_a_half_times_the_nodes_fire_after_five_minutes() {
    use crate::health::policy::{QuotaHealth, commitments};
    let quota = |resource: &str, hard: f64| QuotaHealth {
        namespace: "team-a".into(),
        quota: "compute".into(),
        resource: resource.into(),
        hard,
        used: 0.0,
        fullness: None,
    };
    let got = timeline(12, |m| {
        let mut h = health(m);
        // 13 cores promised against 8 from minute 1 to 8 (162%), 12 after (150%: not past);
        // the memory quota, its twin, promises a quarter of the nodes' memory.
        let cpu = if (1..=8).contains(&m) { 13.0 } else { 12.0 };
        // `cpu` and `requests.cpu` in one quota: its smaller counts.
        let quotas = [quota("requests.cpu", cpu), quota("cpu", 40.0), quota("requests.memory", 4.0)];
        h.extras.quota_commitments = Some(commitments(&quotas, 8000, 16));
        Some(h)
    });
    assert_eq!(got, [fired("KubernetesCPUQuotaOvercommit", 6), resolved("KubernetesCPUQuotaOvercommit", 9)]);
    let said = commitments(&[quota("requests.cpu", 13.0)], 8000, 0);
    assert_eq!(said[0].percent().round(), 163.0);
    assert_eq!(
        crate::lang::Lang::En.tr("rule-cpu-quota-overcommit.summary", &said[0].args()),
        "The namespaces' quotas promise 13 CPU, 163% of the 8 the nodes give"
    );
}

#[test]
fn a_bare_pod_not_ready_fires_after_fifteen_minutes_and_a_workloads_pod_is_left_to_its_workload() {
    use crate::collect::pods::{Owner, Phase};
    let got = timeline(25, |m| {
        let mut h = health(m);
        let down = (1..=17).contains(&m);
        let mut bare = pod("debug-shell", 0);
        (bare.workload, bare.owner, bare.ready, bare.not_ready) = ("".into(), Owner::None, !down, down);
        // Of an operator's controller, its node lost: phase Unknown.
        let mut operated = pod("pg-0", 0);
        (operated.workload, operated.owner) = ("pg".into(), Owner::Other);
        if down {
            (operated.phase, operated.ready) = (Phase::Unknown, false);
        }
        // The twins: a Deployment's pod not ready (its workload says it), a Job's, and a bare
        // pod crash-looping (its own rule says it).
        let mut deployed = pod("api-1", 0);
        (deployed.ready, deployed.not_ready) = (false, true);
        let mut job = pod("backup-x1", 0);
        (job.owner, job.ready, job.not_ready) = (Owner::Job, false, true);
        let mut crashing = pod("scratch", 0);
        (crashing.workload, crashing.owner, crashing.ready, crashing.not_ready) = ("".into(), Owner::None, false, true);
        crashing.crashlooping = true;
        h.pods = [bare, operated, deployed, job, crashing].into_iter().map(Arc::new).collect();
        Some(h)
    });
    let not_ready: Vec<_> = got.iter().filter(|(_, name, _)| name == "KubernetesPodNotReady").collect();
    assert_eq!(
        not_ready,
        [
            &fired("KubernetesPodNotReady", 16),
            &fired("KubernetesPodNotReady", 16),
            &resolved("KubernetesPodNotReady", 18),
            &resolved("KubernetesPodNotReady", 18)
        ]
    );
}

#[test]
fn core_capacity_and_controller_signals_fire_after_their_holds() {
    use crate::health::batch::RunningJob;
    let got = timeline(75, |m| {
        let mut h = health(m);
        // CPU requests past what two nodes of 4 cores hold without one, from minute 1 to 30.
        h.capacity = crate::health::Capacity {
            cpu_requests: if (1..=30).contains(&m) { 5000 } else { 3000 },
            memory_requests: 1,
            cpu_allocatable: 8000,
            memory_allocatable: 8,
            cpu_largest: 4000,
            memory_largest: 4,
            nodes: 2,
        };
        let mut full = node("n1", true);
        (full.pods, full.pods_capacity) = (if m < 40 { 105 } else { 50 }, Some(110));
        h.nodes = vec![full.into()];
        let mut ds = workload(0);
        (ds.kind, ds.name, ds.misscheduled) = (WorkloadKind::DaemonSet, "agent".into(), 1);
        let mut lagging = workload(0);
        lagging.generation_lag = i64::from(m < 20);
        h.workloads = vec![ds.into(), lagging.into()];
        let seconds = 12 * 3600 + if m >= 60 { 1 } else { -1 };
        h.extras.running_jobs =
            Some(vec![RunningJob { namespace: "shop".into(), name: "backfill".into(), owner: String::new(), seconds }]);
        let mut waiting = pod("api-1", 0);
        waiting.blocked = vec!["ImagePullBackOff".into()];
        let mut pending = pod("api-2", 0);
        (pending.blocked, pending.pending) = (vec!["ImagePullBackOff".into()], true);
        h.pods = [waiting, pending].into_iter().map(Arc::new).collect();
        Some(h)
    });
    assert_eq!(
        got,
        [
            fired("KubernetesCPUOvercommit", 11),
            fired("KubernetesDaemonSetMisscheduled", 15),
            fired("KubernetesGenerationMismatch", 15),
            fired("KubernetesNodeTooManyPods", 15),
            fired("KubernetesPodPending", 15),
            resolved("KubernetesGenerationMismatch", 20),
            resolved("KubernetesCPUOvercommit", 31),
            resolved("KubernetesNodeTooManyPods", 40),
            fired("KubernetesContainerWaiting", 60),
            fired("KubernetesJobNotCompleted", 60),
        ]
    );
}

#[test]
fn a_single_node_cluster_is_overcommitted_past_its_allocatable_and_a_larger_one_past_all_but_its_largest() {
    let c = |requests: i64, allocatable: i64, largest: i64, nodes: u64| crate::health::Capacity {
        cpu_requests: requests,
        cpu_allocatable: allocatable,
        cpu_largest: largest,
        nodes,
        ..Default::default()
    };
    assert!(!c(3900, 4000, 4000, 1).cpu_overcommitted());
    assert!(c(4100, 4000, 4000, 1).cpu_overcommitted());
    assert!(!c(4000, 12000, 8000, 2).cpu_overcommitted());
    assert!(c(4001, 12000, 8000, 2).cpu_overcommitted());
    assert!(!c(1, 0, 0, 0).cpu_overcommitted(), "no node counted: nothing to say");
}

fn tuned(entries: &[&str]) -> crate::rules::tune::Tuning {
    let text: String = entries.iter().map(|e| format!("[[rule]]\n{e}\n")).collect();
    #[derive(serde::Deserialize)]
    struct File {
        rule: Vec<crate::config::RuleConfig>,
    }
    let file: File = toml::from_str(&text).unwrap();
    crate::rules::tune::Tuning::check(&file.rule, None).unwrap()
}

#[test]
fn the_files_rules_retune_holds_severities_and_labels_and_turn_rules_off() {
    let mut state = RuleState::default();
    let pending_pods = |m: i64| {
        let mut h = health(m);
        let mut prod = pod("web-1", 0);
        (prod.namespace, prod.pending) = ("prod-eu".into(), true);
        let mut dev = pod("web-2", 0);
        (dev.namespace, dev.pending) = ("dev".into(), true);
        h.pods = [prod, dev].into_iter().map(Arc::new).collect();
        h
    };
    let as_built = crate::rules::tune::Tuning::default();
    let retuned = tuned(&[
        r#"name = "KubernetesPodPending"
for = "3m"
severity = "warning"
labels = { team = "shop" }
matchers = ['namespace=~"prod-.*"']"#,
        r#"name = "KubernetesPodPending"
enabled = false"#,
    ]);
    let at = |state: &mut RuleState, m: i64, tuning: &crate::rules::tune::Tuning| {
        state.observe_tuned(t(m), "lab", &pending_pods(m), tuning)
    };
    assert!(at(&mut state, 0, &as_built).is_empty(), "both pend, for 15 minutes as built");
    assert!(at(&mut state, 4, &as_built).is_empty());
    // From minute 5, the file's: prod's hold is 3 minutes, which its alert has held past: it fires
    // at once, with its start kept; dev's rule is off, and its alert is gone.
    let fired = at(&mut state, 5, &retuned);
    assert_eq!(fired.len(), 1, "{fired:?}");
    let a = &fired[0].alert;
    assert_eq!((fired[0].state, a.labels["namespace"].as_str()), (TransitionState::Firing, "prod-eu"));
    assert_eq!(
        (a.severity, a.labels["severity"].as_str(), a.labels["team"].as_str()),
        (Severity::Warning, "warning", "shop")
    );
    assert_eq!(a.active_at, t(0), "a pending alert keeps its start");
    assert_eq!(state.alerts.len(), 1, "the rule turned off holds no alert of dev");
    // Back as built: dev pends afresh, prod's firing alert stays as it was told.
    assert!(at(&mut state, 6, &as_built).is_empty());
    assert_eq!(state.alerts.len(), 2);
    let prod = state.alerts.values().find(|a| a.labels["namespace"] == "prod-eu").unwrap();
    assert_eq!(prod.labels.get("team").map(String::as_str), Some("shop"), "a firing alert keeps its labels");
    assert_eq!(
        crate::rules::engine::key_of(prod),
        "KubernetesPodPending{namespace=\"prod-eu\",pod=\"web-1\",workload=\"api\"}"
    );
}

fn silence(matcher: &str) -> crate::silence::Silence {
    crate::silence::Silence {
        id: "file-1".into(),
        matchers: vec![crate::silence::Matcher::parse(matcher).unwrap()],
        starts_at: None,
        ends_at: None,
        updated_at: None,
        comment: "upgrade".into(),
        created_by: "the configuration file".into(),
        from_file: true,
    }
}

/// Minutes 0..n, each with its health and the silences then; (minute, object, state) of what
/// the notifiers are told (rules/quiet.rs).
fn told(
    n: i64,
    at: impl Fn(i64) -> Health,
    silenced: impl Fn(i64) -> Vec<crate::silence::Silence>,
) -> Vec<(i64, String, TransitionState)> {
    let mut state = RuleState::default();
    let mut out = Vec::new();
    for m in 0..n {
        let transitions = state.observe(t(m), "lab", &at(m));
        let quiet = crate::silence::Quiet { silences: silenced(m), windows: Vec::new() };
        for tr in state.told(t(m), &transitions, &quiet) {
            let object = tr.alert.labels.get("node").or(tr.alert.labels.get("workload")).cloned().unwrap_or_default();
            out.push((m, object, tr.state));
        }
    }
    out
}

fn nodes(m: i64, ready: &[(&str, bool)]) -> Health {
    let mut h = health(m);
    h.nodes = ready.iter().map(|(n, r)| node(n, *r).into()).collect();
    h
}

#[test]
fn a_silenced_alert_is_told_neither_firing_nor_resolved_and_fires_when_the_silence_ends() {
    let n1 = || silence(r#"node="n1""#);
    // n1 not ready from 0 to 20, fires at 5 inside the silence (0-10): told at 10, resolved at 21.
    let got = told(25, |m| nodes(m, &[("n1", m > 20), ("n2", true)]), |m| if m < 10 { vec![n1()] } else { vec![] });
    assert_eq!(got, [(10, "n1".into(), TransitionState::Firing), (21, "n1".into(), TransitionState::Resolved)]);
    // Fired and resolved inside the silence: never told.
    let got = told(25, |m| nodes(m, &[("n1", !(1..=8).contains(&m))]), |_| vec![n1()]);
    assert!(got.is_empty(), "{got:?}");
    // Another node is told as usual.
    let got = told(8, |m| nodes(m, &[("n1", m > 100), ("n2", m == 0)]), |_| vec![n1()]);
    assert_eq!(got, [(6, "n2".into(), TransitionState::Firing)]);
    // Told before the silence, resolved inside it: not told.
    let got = told(25, |m| nodes(m, &[("n1", m > 12)]), |m| if m >= 8 { vec![n1()] } else { vec![] });
    assert_eq!(got, [(5, "n1".into(), TransitionState::Firing)]);
}

#[test]
fn an_untold_alert_that_escalates_is_told_once_as_firing() {
    // A workload short of a replica from 0: fires at 10, escalates at 70 (an hour later).
    for (silence_ends, told_at) in [(75, 75), (70, 70)] {
        let mut state = RuleState::default();
        let mut got = Vec::new();
        for m in 0..80 {
            let mut h = health(m);
            h.workloads = vec![workload(1).into()];
            let transitions = state.observe(t(m), "lab", &h);
            let silences = if m < silence_ends { vec![silence(r#"namespace="shop""#)] } else { vec![] };
            let quiet = crate::silence::Quiet { silences, windows: Vec::new() };
            for tr in state.told(t(m), &transitions, &quiet) {
                got.push((m, tr.state, tr.alert.labels["severity"].clone()));
            }
        }
        assert_eq!(got, [(told_at, TransitionState::Firing, "warning".to_string())], "silence until {silence_ends}");
    }
}

/// A window of cluster `lab` from minute `from` to minute `to`.
fn window(from: i64, to: i64) -> crate::silence::Quiet {
    let spec = crate::silence::maintenance::Spec {
        cluster: "lab".into(),
        start: Some(t(from).to_string()),
        end: Some(t(to).to_string()),
        ..Default::default()
    };
    let w = crate::silence::Window::from_spec(
        "w".into(),
        &spec,
        crate::silence::maintenance::API,
        "ops".into(),
        false,
        None,
    )
    .unwrap();
    crate::silence::Quiet { silences: Vec::new(), windows: vec![w] }
}

#[test]
fn a_maintenance_window_tells_nothing_of_what_starts_and_ends_inside_it_and_the_rest_at_its_end() {
    let run = |ready: &dyn Fn(i64) -> bool, failed: &dyn Fn(i64) -> bool| {
        let mut state = RuleState::default();
        let quiet = window(2, 30);
        let mut out = Vec::new();
        for m in 0..40 {
            let transitions = if failed(m) {
                state.observe_failure(t(m), "lab", "The API server could not be reached")
            } else {
                state.observe(t(m), "lab", &nodes(m, &[("n1", ready(m))]))
            };
            for tr in state.told(t(m), &transitions, &quiet) {
                out.push((m, tr.alert.alertname.clone(), tr.state));
            }
        }
        out
    };
    // n1 NotReady from 3 to 20, inside the window (2-30): nothing at all.
    assert_eq!(run(&|m| !(3..=20).contains(&m), &|_| false), []);
    // n1 NotReady from 3 on: told as firing when the window ends.
    assert_eq!(run(&|m| m < 3, &|_| false), [(30, "KubernetesNodeNotReady".into(), TransitionState::Firing)]);
    // The API server away during the upgrade (5-9): the monitor-unreachable alert is quiet too.
    assert_eq!(run(&|_| true, &|m| (5..=9).contains(&m)), []);
    // Away past the window's end: told then.
    assert_eq!(run(&|_| true, &|m| m >= 25), [(30, "KubernetesMonitorUnreachable".into(), TransitionState::Firing)]);
}

#[test]
fn an_escalation_inside_a_window_is_told_when_it_ends_and_the_old_labels_are_kept_meanwhile() {
    // A workload short of a replica from 0: fires at 10 (told), escalates at 70 inside the window
    // (30-90): not told, and the notifiers keep the notice labels until the window ends.
    let mut state = RuleState::default();
    let quiet = window(30, 90);
    let mut got = Vec::new();
    for m in 0..100 {
        let mut h = health(m);
        h.workloads = vec![workload(1).into()];
        let transitions = state.observe(t(m), "lab", &h);
        for tr in state.told(t(m), &transitions, &quiet) {
            let previous = tr.previous_labels.as_ref().map(|l| l["severity"].clone());
            got.push((m, tr.state, tr.alert.labels["severity"].clone(), previous));
        }
        if m == 80 {
            let a = state.alerts.values().next().unwrap();
            assert_eq!(a.as_told().labels["severity"], "notice", "re-sent as the notifiers know it");
            assert!(!state.owes_a_firing(t(m), &quiet), "still inside the window");
        }
    }
    assert_eq!(
        got,
        [
            (10, TransitionState::Firing, "notice".to_string(), None),
            (90, TransitionState::Escalated, "warning".to_string(), Some("notice".to_string())),
        ]
    );
    assert!(state.alerts.values().all(|a| a.told_labels.is_none()));
}

/// An argument of every name a rule's summary may say.
fn every_argument() -> Vec<(&'static str, crate::lang::Arg)> {
    // The labels a message may name (those of `dumbmonit rules`), then its other arguments.
    let mut args: Vec<(&'static str, crate::lang::Arg)> = crate::rules::prometheus::labels()
        .into_iter()
        .chain(["kubelet", "version", "reason", "policy"])
        .map(|name| (name, "x".into()))
        .collect();
    for name in
        ["changes", "restarts", "missing", "desired", "minutes", "days", "seconds", "current", "min", "max", "percent"]
            .into_iter()
            .chain(["pods", "capacity", "count", "hours", "nodes"])
    {
        args.push((name, 1i64.into()));
    }
    args.extend([
        ("of", "none".into()),
        ("when", "future".into()),
        ("date", crate::lang::Arg::Moment(0)),
        ("requests", "1".into()),
        ("allocatable", "1".into()),
        ("room", "1".into()),
        ("hard", "1".into()),
    ]);
    args
}

/// Every rule's alert, fired: one observation of each, held past the longest hold.
fn every_rule_firing() -> RuleState {
    let mut state = RuleState::default();
    let each = || {
        crate::rules::RULES
            .iter()
            .map(|r| crate::rules::Observation {
                rule: r,
                labels: [("namespace".to_string(), "shop".to_string())].into(),
                summary: every_argument(),
                description: crate::lang::Message::verbatim(String::new()),
                escalate: false,
                severity: None,
            })
            .collect()
    };
    let mut fired = state.evaluate(t(0), "lab", each(), |_| false);
    fired.extend(state.evaluate(t(120), "lab", each(), |_| false));
    assert_eq!(fired.len(), crate::rules::RULES.len(), "every rule fired once");
    state
}

/// The alertnames a successful cycle resolves from [`every_rule_firing`].
fn resolved_by(h: &Health) -> Vec<String> {
    let mut state = every_rule_firing();
    let mut names: Vec<String> = state
        .observe(t(121), "lab", h)
        .into_iter()
        .filter(|tr| tr.state == TransitionState::Resolved)
        .map(|tr| tr.alert.alertname)
        .collect();
    names.sort();
    names
}

#[test]
fn a_rule_whose_read_was_not_made_neither_fires_nor_resolves() {
    // Every read made, and nothing wrong: every alert resolves.
    let mut all = health(121);
    all.extras.apiservices = Some(vec![]);
    all.extras.hpas = Some(vec![]);
    all.extras.jobs = Some(vec![]);
    all.extras.cronjobs = Some(vec![]);
    all.extras.pdbs = Some(vec![]);
    all.extras.quotas = Some(vec![]);
    all.extras.pvs = Some(vec![]);
    all.extras.control_plane = Some(vec![]);
    all.extras.webhooks = Some(vec![]);
    all.extras.webhooks_judged = true;
    all.extras.quota_commitments = Some(vec![]);
    all.extras.running_jobs = Some(vec![]);
    let every: Vec<String> = {
        let mut v: Vec<String> = crate::rules::RULES.iter().map(|r| r.alertname.to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(resolved_by(&all), every);

    // No optional read made, and the nodes not visible (a namespaced token refused them): only
    // the rules on the pods, workloads, claims, the connection's certificates and the cycle
    // itself resolve. Written out, so that a rule given the wrong read fails here.
    let mut core = health(121);
    core.extras.namespaced = Some(crate::collect::optional::Namespaced { nodes_hidden: true, ..Default::default() });
    assert_eq!(
        resolved_by(&core),
        [
            "KubernetesAPICertificateExpiring",
            "KubernetesContainerWaiting",
            "KubernetesDaemonSetMisscheduled",
            "KubernetesGenerationMismatch",
            "KubernetesMonitorUnreachable",
            "KubernetesPVCPending",
            "KubernetesPodCrashLooping",
            "KubernetesPodNotReady",
            "KubernetesPodPending",
            "KubernetesPodRestarting",
            "KubernetesPodStuckTerminating",
            "KubernetesRolloutStuck",
            "KubernetesWorkloadReplicasMissing",
        ]
    );

    // Each optional read alone missing keeps exactly its rule's alerts.
    for (missing, kept) in [
        ("apiservices", &["KubernetesAggregatedAPIUnavailable"][..]),
        ("hpas", &["KubernetesHPAMaxedOut", "KubernetesHPAMetricsUnavailable", "KubernetesHPAReplicasMismatch"]),
        ("jobs", &["KubernetesJobFailed", "KubernetesJobNotCompleted"]),
        ("cronjobs", &["KubernetesCronJobMissed"]),
        ("poddisruptionbudgets", &["KubernetesPDBNotEnoughHealthy"]),
        (
            "resourcequotas",
            &[
                "KubernetesCPUQuotaOvercommit",
                "KubernetesMemoryQuotaOvercommit",
                "KubernetesQuotaAlmostFull",
                "KubernetesQuotaExceeded",
                "KubernetesQuotaFullyUsed",
            ],
        ),
        ("persistentvolumes", &["KubernetesPersistentVolumeErrors"]),
        ("leases", &["KubernetesControlPlaneComponentDown"]),
        ("webhooks", &["KubernetesWebhookUnavailable"]),
        ("the webhooks' backends", &["KubernetesWebhookUnavailable"]),
    ] {
        let mut h = all.clone();
        match missing {
            "apiservices" => h.extras.apiservices = None,
            "hpas" => h.extras.hpas = None,
            "jobs" => (h.extras.jobs, h.extras.running_jobs) = (None, None),
            "cronjobs" => h.extras.cronjobs = None,
            "poddisruptionbudgets" => h.extras.pdbs = None,
            "resourcequotas" => (h.extras.quotas, h.extras.quota_commitments) = (None, None),
            "persistentvolumes" => h.extras.pvs = None,
            "webhooks" => h.extras.webhooks = None,
            "the webhooks' backends" => h.extras.webhooks_judged = false,
            _ => h.extras.control_plane = None,
        }
        let expected: Vec<String> = every.iter().filter(|n| !kept.contains(&n.as_str())).cloned().collect();
        assert_eq!(resolved_by(&h), expected, "without the {missing}");
    }
}

#[test]
fn docs_list_every_rule_with_its_severity_and_hold() {
    let alerts = include_str!("../../docs/alerts.md");
    let rows: Vec<&str> = alerts.lines().filter(|l| l.starts_with("| `Kubernetes")).collect();
    assert_eq!(rows.len(), crate::rules::RULES.len(), "one row per rule in docs/alerts.md");
    for (rule, row) in crate::rules::RULES.iter().zip(&rows) {
        let head = format!("| `{}` | {}", rule.alertname, rule.severity.as_str());
        assert!(row.starts_with(&head), "docs/alerts.md, in the table's order: {head}…, found {row}");
        let hold = rule.hold.as_secs() / 60;
        let said = match hold {
            0 => None,
            60 => Some("for 1 hour".to_string()),
            m => Some(format!("for {m} minutes")),
        };
        if let Some(said) = said {
            assert!(row.contains(&said), "{}: docs/alerts.md should say {said:?}", rule.alertname);
        }
    }
}

#[test]
fn every_rule_has_its_runbook_in_both_languages() {
    let (en, fr) = (include_str!("../../docs/alerts.md"), include_str!("../../docs/alertes.md"));
    for rule in crate::rules::RULES {
        let heading = format!("\n### {}\n", rule.alertname);
        assert!(en.contains(&heading), "docs/alerts.md has no runbook for {}", rule.alertname);
        assert!(fr.contains(&heading), "docs/alertes.md has no runbook for {}", rule.alertname);
    }
    assert!(!en.contains("\n### KubernetesNoSuchRule\n"), "the check can fail");
}

#[test]
fn a_silence_may_name_every_label_a_rules_alerts_carry() {
    for rule in crate::rules::RULES {
        for label in rule.labels.iter().chain(&crate::rules::tune::OWN_LABELS) {
            assert!(crate::silence::LABELS.contains(label), "{}: `{label}` is not in silence::LABELS", rule.alertname);
        }
    }
}

/// A pod judged as it was, its memory saying the same, has its alerts evaluated again from what
/// its observations made (only the clock moves them), while the rules are tuned the same: a
/// retuned rule has every pod observed afresh.
#[test]
fn a_pod_observed_as_it_was_is_evaluated_afresh_once_the_rules_are_retuned() {
    let mut state = RuleState::default();
    let mut quiet = super::QuietPods::default();
    let mut crashing = pod("api-1", 3);
    crashing.crashlooping = true;
    // The very same judgement at each cycle.
    let crashing = Arc::new(crashing);
    let at = |m: i64| Health { pods: vec![crashing.clone()], ..health(m) };
    let looked = |state: &mut RuleState, quiet: &mut super::QuietPods, m: i64, tuning| {
        let transitions = state.observe_kept(t(m), "lab", &at(m), tuning, Some(quiet));
        transitions.iter().map(|tr| (m, tr.alert.alertname.clone(), tr.state)).collect::<Vec<_>>()
    };
    let as_built = crate::rules::tune::Tuning::default();
    for m in 0..3 {
        assert_eq!(looked(&mut state, &mut quiet, m, &as_built), []);
        assert_eq!(quiet.steady, usize::from(m > 0), "minute {m}");
    }
    // Alerts worded elsewhere (a state read from its store, another replica's): said again.
    state.alerts.values_mut().for_each(|a| std::sync::Arc::make_mut(a).summary = "worded by another version".into());
    state.worded = crate::rules::engine::Worded(false);
    assert_eq!(looked(&mut state, &mut quiet, 3, &as_built), []);
    assert_eq!(quiet.steady, 0, "observed afresh");
    assert!(state.alerts.values().all(|a| a.summary == "Pod shop/api-1 is crash-looping"), "{:?}", state.alerts);
    // Held two minutes rather than ten: it fires at once.
    let two = tuned(&["name = \"KubernetesPodCrashLooping\"\nfor = \"2m\""]);
    assert_eq!(looked(&mut state, &mut quiet, 4, &two), [fired("KubernetesPodCrashLooping", 4)]);
    assert_eq!(quiet.steady, 0, "observed afresh");
    assert_eq!(looked(&mut state, &mut quiet, 5, &two), []);
    assert_eq!(quiet.steady, 1);
    // Turned off: it resolves.
    let off = tuned(&["name = \"KubernetesPodCrashLooping\"\nenabled = false"]);
    assert_eq!(looked(&mut state, &mut quiet, 6, &off), [resolved("KubernetesPodCrashLooping", 6)]);
    assert_eq!(looked(&mut state, &mut quiet, 7, &off), []);
    assert!(state.alerts.is_empty());
}
