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
