//! What the notifiers are told of a cycle, silences considered: an alert a silence mutes is
//! evaluated and held as usual, but neither its firing nor its resolution is told while the
//! silence lasts; one that fired inside it and still fires when it is no longer muted is told
//! then, as firing; one that fired and resolved inside it is never told.

use jiff::Timestamp;

use super::engine::{RuleState, Transition, TransitionState, key_of};
use crate::silence::Silence;

impl RuleState {
    /// The transitions to tell, of this cycle's `transitions`, with the silences active now.
    /// Marks the alerts whose firing goes untold, and adds the firing of those no longer muted.
    pub fn told(&mut self, now: Timestamp, transitions: &[Transition], silences: &[Silence]) -> Vec<Transition> {
        let muted = |labels: &std::collections::BTreeMap<String, String>| silences.iter().any(|s| s.mutes(labels));
        let mut told = Vec::with_capacity(transitions.len());
        for t in transitions {
            let held = self.alerts.get_mut(&key_of(&t.alert));
            match t.state {
                // Resolved: the alert is gone from the state; `t.alert` is it as it was.
                TransitionState::Resolved if t.alert.untold || muted(&t.alert.labels) => {}
                TransitionState::Firing if muted(&t.alert.labels) => {
                    if let Some(a) = held {
                        a.untold = true;
                    }
                }
                // An escalation of a muted alert is not told; one told already stays told.
                TransitionState::Escalated if muted(&t.alert.labels) => {}
                // The first the notifiers hear of an alert whose firing went untold: its firing.
                TransitionState::Escalated if held.as_ref().is_some_and(|a| a.untold) => {
                    let a = held.expect("just seen");
                    a.untold = false;
                    told.push(Transition {
                        state: TransitionState::Firing,
                        alert: a.clone(),
                        previous_labels: None,
                        ..t.clone()
                    });
                }
                _ => told.push(t.clone()),
            }
        }
        let now_heard: Vec<String> = self
            .alerts
            .iter()
            .filter(|(_, a)| a.untold && a.firing() && !muted(&a.labels))
            .map(|(k, _)| k.clone())
            .collect();
        for key in now_heard {
            let a = self.alerts.get_mut(&key).expect("listed above");
            a.untold = false;
            told.push(Transition {
                time: now,
                state: TransitionState::Firing,
                alert: a.clone(),
                previous_labels: None,
            });
        }
        told
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use jiff::{SignedDuration, Timestamp};

    use crate::health::{Health, NodeHealth};
    use crate::rules::{RuleState, TransitionState};
    use crate::silence::{Matcher, Silence};

    fn t(minute: i64) -> Timestamp {
        Timestamp::from_second(1_790_000_000).unwrap() + SignedDuration::from_mins(minute)
    }

    fn health(minute: i64, ready: &[(&str, bool)]) -> Health {
        let node = |name: &str, ready: bool| NodeHealth {
            name: name.into(),
            ready,
            ready_status: if ready { "True" } else { "False" }.into(),
            pressure: vec![],
            unschedulable: false,
            kubelet_version: "v1".into(),
            why: vec![],
            allocatable_cpu: None,
            allocatable_memory: None,
            requested: Default::default(),
            usage_cpu: None,
            usage_memory: None,
            kubelet_skew: false,
            ready_transitions: 0,
        };
        Health {
            time: t(minute),
            version: "v1".into(),
            counts: Default::default(),
            nodes: ready.iter().map(|(n, r)| node(n, *r)).collect(),
            pods: vec![],
            workloads: vec![],
            pvcs: vec![],
            events_by_reason: vec![],
            extras: Default::default(),
            certificates: Default::default(),
        }
    }

    fn silence(matcher: &str) -> Silence {
        Silence {
            id: "file-1".into(),
            matchers: vec![Matcher::parse(matcher).unwrap()],
            comment: "upgrade".into(),
            created_by: "the configuration file".into(),
            from_file: true,
        }
    }

    /// Runs minutes 0..n: node n1's readiness and the silences at each minute; (minute, node,
    /// state) of what is told.
    fn told(
        n: i64,
        ready: impl Fn(i64) -> Vec<(&'static str, bool)>,
        silenced: impl Fn(i64) -> Vec<Silence>,
    ) -> Vec<(i64, String, TransitionState)> {
        let mut state = RuleState::default();
        let mut out = Vec::new();
        for m in 0..n {
            let transitions = state.observe(t(m), "lab", &health(m, &ready(m)));
            for tr in state.told(t(m), &transitions, &silenced(m)) {
                out.push((m, tr.alert.labels["node"].clone(), tr.state));
            }
        }
        out
    }

    fn labels_of(node: &str) -> BTreeMap<String, String> {
        [("alertname", "KubernetesNodeNotReady"), ("node", node)]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_silenced_alert_is_told_neither_firing_nor_resolved_and_fires_when_the_silence_ends() {
        let n1 = || silence(r#"node="n1""#);
        // n1 not ready from 0 to 20, fires at 5 inside the silence (0-10): told at 10, resolved at 21.
        let got = told(25, |m| vec![("n1", m > 20), ("n2", true)], |m| if m < 10 { vec![n1()] } else { vec![] });
        assert_eq!(got, [(10, "n1".into(), TransitionState::Firing), (21, "n1".into(), TransitionState::Resolved)]);
        // Fired and resolved inside the silence: never told.
        let got = told(25, |m| vec![("n1", !(1..=8).contains(&m))], |_| vec![n1()]);
        assert!(got.is_empty(), "{got:?}");
        // Another node is told as usual.
        let got = told(8, |m| vec![("n1", m > 100), ("n2", m == 0)], |_| vec![n1()]);
        assert_eq!(got, [(6, "n2".into(), TransitionState::Firing)]);
        // Told before the silence, resolved inside it: not told.
        let got = told(25, |m| vec![("n1", m > 12)], |m| if m >= 8 { vec![n1()] } else { vec![] });
        assert_eq!(got, [(5, "n1".into(), TransitionState::Firing)]);
        assert!(silence(r#"node="n1""#).mutes(&labels_of("n1")));
    }

    #[test]
    fn an_untold_alert_that_escalates_is_told_once_as_firing() {
        use crate::collect::WorkloadKind;
        use crate::health::WorkloadHealth;
        // A workload short of a replica from 0: fires at 10, escalates at 70 (an hour later).
        let missing = WorkloadHealth {
            kind: WorkloadKind::Deployment,
            namespace: "shop".into(),
            name: "api".into(),
            desired: 3,
            ready: 2,
            unavailable: 1,
            updated: 3,
            updating: false,
            rollout_stuck: false,
            why: vec![],
        };
        for (silence_ends, told_at) in [(75, 75), (70, 70)] {
            let mut state = RuleState::default();
            let mut got = Vec::new();
            for m in 0..80 {
                let mut h = health(m, &[]);
                h.workloads = vec![missing.clone()];
                let transitions = state.observe(t(m), "lab", &h);
                let silences = if m < silence_ends { vec![silence(r#"namespace="shop""#)] } else { vec![] };
                for tr in state.told(t(m), &transitions, &silences) {
                    got.push((m, tr.state, tr.alert.labels["severity"].clone()));
                }
            }
            assert_eq!(
                got,
                [(told_at, TransitionState::Firing, "warning".to_string())],
                "silence until {silence_ends}"
            );
        }
    }
}
