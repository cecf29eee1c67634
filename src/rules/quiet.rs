//! What the notifiers are told of a cycle, silences and maintenance windows considered: an alert
//! they mute is evaluated and held as usual, but neither its firing nor its resolution is told
//! while they last; one that fired inside it and still fires when it is no longer muted is told
//! then, as firing; one that fired and resolved inside it is never told.

use jiff::Timestamp;

use super::engine::{RuleState, Transition, TransitionState, key_of};
use crate::silence::Quiet;

impl RuleState {
    /// The transitions to tell, of this cycle's `transitions`, with what is quiet at `now`.
    /// Marks the alerts whose firing goes untold, and adds the firing of those no longer muted.
    pub fn told(&mut self, now: Timestamp, transitions: &[Transition], quiet: &Quiet) -> Vec<Transition> {
        let muted = |labels: &std::collections::BTreeMap<String, String>| quiet.mutes(now, labels);
        let mut told = Vec::with_capacity(transitions.len());
        for t in transitions {
            let held = self.alerts.get_mut(&key_of(&t.alert));
            match t.state {
                // Resolved: the alert is gone from the state; `t.alert` is it as it was.
                TransitionState::Resolved if t.alert.untold || muted(&t.alert.labels) => {}
                // Its escalation went untold: the notifiers know it by its old labels.
                TransitionState::Resolved if t.alert.told_labels.is_some() => {
                    told.push(Transition { alert: t.alert.as_told(), ..t.clone() });
                }
                // An acknowledgement of an alert the notifiers never heard of is not told either.
                TransitionState::Acknowledged if t.alert.untold || muted(&t.alert.labels) => {}
                TransitionState::Firing if muted(&t.alert.labels) => {
                    if let Some(a) = held {
                        std::sync::Arc::make_mut(a).untold = true;
                    }
                }
                // An escalation of a muted alert is not told; the notifiers keep its old labels
                // (Alertmanager is re-sent those) until it is.
                TransitionState::Escalated if muted(&t.alert.labels) => {
                    if let Some(a) = held
                        && !a.untold
                        && a.told_labels.is_none()
                    {
                        std::sync::Arc::make_mut(a).told_labels = t.previous_labels.clone();
                    }
                }
                // The first the notifiers hear of an alert whose firing went untold: its firing.
                TransitionState::Escalated if held.as_ref().is_some_and(|a| a.untold) => {
                    let a = std::sync::Arc::make_mut(held.expect("just seen"));
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
            .filter(|(_, a)| (a.untold || a.told_labels.is_some()) && a.firing() && !muted(&a.labels))
            .map(|(k, _)| k.clone())
            .collect();
        for key in now_heard {
            let a = std::sync::Arc::make_mut(self.alerts.get_mut(&key).expect("listed above"));
            let (state, previous_labels) = if a.untold {
                (TransitionState::Firing, None)
            } else {
                (TransitionState::Escalated, a.told_labels.clone())
            };
            a.untold = false;
            a.told_labels = None;
            told.push(Transition { time: now, state, alert: a.clone(), previous_labels });
        }
        told
    }
}

impl RuleState {
    /// Whether an alert whose firing went untold is no longer muted at `now`: the next cycle
    /// tells it (taken at once when the silence or window ends early).
    pub fn owes_a_firing(&self, now: Timestamp, quiet: &Quiet) -> bool {
        self.alerts
            .values()
            .any(|a| (a.untold || a.told_labels.is_some()) && a.firing() && !quiet.mutes(now, &a.labels))
    }
}
