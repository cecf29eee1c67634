//! What delivery says in the log, one type an event (see `crate::logs`): each with the
//! `notifier` it is about, and the `error` when something failed.

use std::fmt;
use std::time::Duration;

use crate::logs::Emit;

const TARGET: &str = "dumbmonit::notify";

/// The outbox could not be read: nothing is delivered in this pass.
pub struct OutboxUnreadable<'a> {
    pub error: &'a dyn fmt::Display,
}

impl fmt::Display for OutboxUnreadable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot read the notification outbox: {}", self.error)
    }
}

impl Emit for OutboxUnreadable<'_> {
    fn emit(&self) {
        tracing::error!(target: TARGET, error = %self.error, "{self}");
    }
}

/// A queued notification's notifier is no longer in the configuration: it is dropped.
pub struct NotifierGone<'a> {
    pub notifier: &'a str,
}

impl fmt::Display for NotifierGone<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "notifier {:?} is no longer configured: its queued notification is dropped", self.notifier)
    }
}

impl Emit for NotifierGone<'_> {
    fn emit(&self) {
        tracing::warn!(target: TARGET, notifier = self.notifier, "{self}");
    }
}

/// A notification was delivered but the outbox still holds it: it will be sent again.
pub struct NotMarkedSent<'a> {
    pub notifier: &'a str,
    pub error: &'a dyn fmt::Display,
}

impl fmt::Display for NotMarkedSent<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "notification to {} sent, but cannot be marked sent: {}", self.notifier, self.error)
    }
}

impl Emit for NotMarkedSent<'_> {
    fn emit(&self) {
        tracing::warn!(target: TARGET, notifier = self.notifier, error = %self.error, "{self}");
    }
}

/// A notification was not delivered: it is tried again after `retry_in`.
pub struct DeliveryFailed<'a> {
    pub notifier: &'a str,
    /// The endpoint, without its user information.
    pub endpoint: &'a str,
    pub attempt: i64,
    pub error: &'a str,
    pub retry_in: Duration,
}

impl fmt::Display for DeliveryFailed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "notification to {} ({}) failed, attempt {}: {}; next try in {} s",
            self.notifier,
            self.endpoint,
            self.attempt,
            self.error,
            self.retry_in.as_secs()
        )
    }
}

impl Emit for DeliveryFailed<'_> {
    fn emit(&self) {
        tracing::warn!(
            target: TARGET,
            notifier = self.notifier,
            endpoint = self.endpoint,
            attempt = self.attempt,
            error = self.error,
            retry_in_seconds = self.retry_in.as_secs(),
            "{self}"
        );
    }
}

/// A receiver refused a notification in a way retrying cannot fix (a 4xx answer other than 408
/// and 429): it is dropped, and the next one goes.
pub struct DeliveryRefused<'a> {
    pub notifier: &'a str,
    /// The endpoint, without its user information.
    pub endpoint: &'a str,
    /// The status and the start of the receiver's answer.
    pub error: &'a str,
}

impl fmt::Display for DeliveryRefused<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "notification to {} ({}) refused: {}; it is dropped (retrying cannot change the answer)",
            self.notifier, self.endpoint, self.error
        )
    }
}

impl Emit for DeliveryRefused<'_> {
    fn emit(&self) {
        tracing::error!(
            target: TARGET,
            notifier = self.notifier,
            endpoint = self.endpoint,
            error = self.error,
            "{self}"
        );
    }
}

/// The firing alerts could not be re-sent to an Alertmanager (they are, after the next cycle).
pub struct ResendFailed<'a> {
    pub notifier: &'a str,
    pub endpoint: &'a str,
    pub error: &'a str,
}

impl fmt::Display for ResendFailed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "re-sending the firing alerts to {} ({}) failed: {}", self.notifier, self.endpoint, self.error)
    }
}

impl Emit for ResendFailed<'_> {
    fn emit(&self) {
        tracing::warn!(target: TARGET, notifier = self.notifier, endpoint = self.endpoint, error = self.error, "{self}");
    }
}

/// A heartbeat could not be sent (the next one is tried at its time).
pub struct HeartbeatFailed<'a> {
    pub notifier: &'a str,
    pub endpoint: &'a str,
    pub error: &'a str,
}

impl fmt::Display for HeartbeatFailed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the heartbeat to {} ({}) failed: {}", self.notifier, self.endpoint, self.error)
    }
}

impl Emit for HeartbeatFailed<'_> {
    fn emit(&self) {
        tracing::warn!(target: TARGET, notifier = self.notifier, endpoint = self.endpoint, error = self.error, "{self}");
    }
}
