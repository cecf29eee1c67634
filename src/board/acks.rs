//! Acknowledgements: an admin says a firing alert is known and someone is on it. The board
//! shows it at once, tells the receivers once (webhooks a notification, Alertmanager the alert
//! again with its `acknowledged_by` annotation), and hands it to the cluster's next cycle, whose
//! rules then hold it with the alert: no escalation, no re-telling, gone when the alert resolves.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};

use super::Quieting;
use crate::notify::payload::fingerprint;
use crate::rules::{Acknowledgement, Alert, Transition, TransitionState};
use crate::state::{AuditEntry, SharedAck, StateError};

/// Acknowledgements made since the cycles of their clusters last took them: by the alert's
/// fingerprint, with the `active_at` of the alert they are for (a new firing is a new problem).
pub(super) type Pending = HashMap<String, (Timestamp, Acknowledgement)>;

/// How long an acknowledgement waits for its cluster's next cycle before it is dropped (its
/// alert resolved, or the cluster went away, in the meantime).
const WAITS: SignedDuration = SignedDuration::from_hours(24);

/// Why an alert was not acknowledged.
#[derive(Debug, thiserror::Error)]
pub enum AckError {
    #[error("no alert with the fingerprint {fingerprint:?}")]
    NoAlert { fingerprint: String },
    #[error("the alert {fingerprint:?} is pending, not firing: only a firing alert is acknowledged")]
    NotFiring { fingerprint: String },
    #[error("{0}")]
    NotKept(#[from] StateError),
    #[error("field `comment`: {len} bytes; it has at most {most}")]
    CommentTooLong { len: usize, most: usize },
}

impl Quieting {
    /// Acknowledges the firing alert with this fingerprint, for `who`, with a comment; gives its
    /// cluster's name and the acknowledgement.
    pub fn acknowledge(&self, print: &str, who: &str, comment: &str) -> Result<(String, Acknowledgement), AckError> {
        let now = self.now();
        if comment.len() > crate::silence::MAX_COMMENT {
            return Err(AckError::CommentTooLong { len: comment.len(), most: crate::silence::MAX_COMMENT });
        }
        // An alert of a cluster another replica reads is found in what that replica saved.
        let shared = self.store.lock().expect("store lock").engine() == crate::state::db::Engine::Postgres;
        let found = self.views.alert_and_period(print).or_else(|| shared.then(|| self.saved_alert(print)).flatten());
        let Some((cluster, alert, period)) = found else {
            return Err(AckError::NoAlert { fingerprint: print.to_string() });
        };
        if !alert.firing() {
            return Err(AckError::NotFiring { fingerprint: print.to_string() });
        }
        // Acknowledged already: said once is enough.
        if let Some(ack) = &alert.acknowledged {
            return Ok((cluster, ack.clone()));
        }
        let ack = Acknowledgement { by: who.to_string(), at: now, comment: comment.to_string() };
        let told = Alert { acknowledged: Some(ack.clone()), ..alert.clone() };
        // The receivers hear of it only if they heard of the alert, and may hear of it now.
        let quiet = self.quiet();
        let notifications = if alert.untold || quiet.mutes(now, &alert.labels) {
            Vec::new()
        } else {
            let t = Transition { time: now, state: TransitionState::Acknowledged, alert: told, previous_labels: None };
            self.notification_bodies(&[t], period)
        };
        let entry = AuditEntry {
            time: now.as_second(),
            who: who.to_string(),
            action: format!("alert {} {print} acknowledged: {comment}", alert.alertname),
            cluster: cluster.clone(),
        };
        {
            let mut store = self.store.lock().expect("store lock");
            store.queue_with(&notifications, &entry)?;
            // For the replica that reads the cluster, whichever it is (this one too).
            if shared {
                let kept = SharedAck {
                    fingerprint: print.to_string(),
                    active_at: alert.active_at.to_string(),
                    cluster: cluster.clone(),
                    ack: serde_json::to_string(&ack).expect("an acknowledgement serializes"),
                };
                store.share_acknowledgement(&kept, now.as_second())?;
            }
        }
        {
            let mut pending = self.acks.lock().expect("acks lock");
            pending.retain(|_, (_, a)| now.duration_since(a.at) < WAITS);
            pending.insert(print.to_string(), (alert.active_at, ack.clone()));
        }
        // Shown at once; the next cycle holds it with the alert.
        self.views.acknowledged(&cluster, print, &ack);
        Ok((cluster, ack))
    }

    /// A firing alert another replica saved, by its fingerprint: its cluster, the alert, and the
    /// default interval as its period (this replica does not know the cluster's own).
    fn saved_alert(&self, print: &str) -> Option<(String, Alert, std::time::Duration)> {
        let saved = self.store.lock().expect("store lock").saved_alerts().ok()?;
        saved
            .into_iter()
            .find(|(_, a)| fingerprint(&a.labels) == print)
            .map(|(cluster, a)| (cluster, a, std::time::Duration::from_secs(60)))
    }

    /// With a shared state: takes the acknowledgements made on any replica (within the day they
    /// wait) into those waiting for their cycles; a cycle of the replica that owns the alert's
    /// cluster then holds it. Taken again at each renewal: holding one twice changes nothing.
    pub fn take_shared_acknowledgements(&self) {
        let since = self.now().as_second() - WAITS.as_secs();
        let Ok(shared) = self.store.lock().expect("store lock").shared_acknowledgements(since) else { return };
        let mut pending = self.acks.lock().expect("acks lock");
        for a in shared {
            let (Ok(active_at), Ok(ack)) =
                (a.active_at.parse::<Timestamp>(), serde_json::from_str::<Acknowledgement>(&a.ack))
            else {
                continue;
            };
            pending.entry(a.fingerprint).or_insert((active_at, ack));
        }
    }

    /// Takes the acknowledgements made since the last cycle for these alerts, given with their
    /// keys in the rules' state (each matched by its alert's fingerprint and firing): the
    /// cycle that holds the alerts hands them over, by key.
    pub fn take_acknowledgements<'a>(
        &self,
        alerts: impl Iterator<Item = (&'a String, &'a Alert)>,
    ) -> Vec<(String, crate::rules::Acknowledgement)> {
        let mut pending = self.acks.lock().expect("acks lock");
        if pending.is_empty() {
            return Vec::new();
        }
        let mut taken = Vec::new();
        for (key, a) in alerts {
            let print = fingerprint(&a.labels);
            if let Some((active_at, _)) = pending.get(&print)
                && *active_at == a.active_at
                && let Some((_, ack)) = pending.remove(&print)
            {
                taken.push((key.clone(), ack));
            }
        }
        taken
    }
}
