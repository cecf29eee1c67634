//! Ownership from namespaces: a cluster's `namespace_labels` copied from each alert's namespace
//! onto the alert (`team="payments"`), so that a notifier's matchers reach the team that owns
//! it. An alert takes them until it fires (its labels are then what the notifiers were told,
//! and stay); a label the alert already has (its object's, or one a `[[rule]]` adds) keeps
//! its value.

use std::collections::BTreeMap;

use super::engine::{Alert, RuleState, Transition, TransitionState, key_of};

/// Each namespace's labels to copy, by namespace.
pub type Owners = BTreeMap<String, BTreeMap<String, String>>;

impl RuleState {
    /// Gives the alerts not told yet (pending, or firing from this cycle's `transitions`) their
    /// namespace's `owners` labels.
    pub fn label_owners(&mut self, transitions: &mut [Transition], owners: &Owners) {
        if owners.is_empty() {
            return;
        }
        // The labels an alert lacks: none once given (an alert is changed only when it lacks one).
        let lacks = |a: &Alert| {
            a.labels
                .get("namespace")
                .and_then(|ns| owners.get(ns))
                .is_some_and(|theirs| theirs.keys().any(|k| !a.labels.contains_key(k)))
        };
        let give = |a: &mut Alert| {
            if let Some(theirs) = a.labels.get("namespace").and_then(|ns| owners.get(ns)) {
                for (k, v) in theirs {
                    a.labels.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        };
        for a in self.alerts.values_mut().filter(|a| !a.firing() && lacks(a)) {
            give(std::sync::Arc::make_mut(a));
        }
        for t in transitions.iter_mut().filter(|t| t.state == TransitionState::Firing) {
            give(&mut t.alert);
            if let Some(a) = self.alerts.get_mut(&key_of(&t.alert)).filter(|a| lacks(a)) {
                give(std::sync::Arc::make_mut(a));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Severity;

    fn crash_loop_alert(namespace: &str, pod: &str, fired: bool) -> Alert {
        let at: jiff::Timestamp = "2026-12-04T10:00:00Z".parse().unwrap();
        let labels = [
            ("alertname", "KubernetesPodCrashLooping"),
            ("severity", "warning"),
            ("cluster", "lab"),
            ("namespace", namespace),
            ("pod", pod),
        ];
        Alert {
            alertname: "KubernetesPodCrashLooping".into(),
            severity: Severity::Warning,
            labels: labels.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            summary: String::new(),
            description: String::new(),
            active_at: at,
            fired_at: fired.then_some(at),
            escalated_at: None,
            untold: false,
            acknowledged: None,
            told_labels: None,
            said: None,
            said_description: None,
        }
    }

    #[test]
    fn an_alert_takes_its_namespaces_owner_until_it_is_told_and_keeps_its_own_labels() {
        let owners: Owners = BTreeMap::from([(
            "shop".to_string(),
            BTreeMap::from([("team".to_string(), "payments".to_string()), ("pod".to_string(), "not-it".to_string())]),
        )]);
        let mut state = RuleState::default();
        let firing = crash_loop_alert("shop", "api-1", true);
        let told_before = crash_loop_alert("shop", "api-2", true);
        let pending = crash_loop_alert("shop", "api-3", false);
        let elsewhere = crash_loop_alert("dev", "api-4", false);
        for a in [&firing, &told_before, &pending, &elsewhere] {
            state.alerts.insert(key_of(a), std::sync::Arc::new(a.clone()));
        }
        let mut transitions = vec![Transition {
            time: firing.active_at,
            state: TransitionState::Firing,
            alert: firing,
            previous_labels: None,
        }];
        state.label_owners(&mut transitions, &owners);
        assert_eq!(transitions[0].alert.labels.get("team").map(String::as_str), Some("payments"));
        assert_eq!(transitions[0].alert.labels["pod"], "api-1", "the object's label keeps its value");
        let team =
            |pod: &str| state.alerts.values().find(|a| a.labels["pod"] == pod).unwrap().labels.get("team").cloned();
        assert_eq!(team("api-1").as_deref(), Some("payments"));
        assert_eq!(team("api-2"), None, "told before: its labels stay");
        assert_eq!(team("api-3").as_deref(), Some("payments"));
        assert_eq!(team("api-4"), None);
    }
}
