//! Delivery: drains the outbox in order, one notifier's later notifications held back while an
//! earlier one fails (a resolution never overtakes its firing), retries with backoff, then
//! re-sends the firing alerts to Alertmanager. A refusal that retrying cannot fix (a 4xx answer
//! other than 408 and 429) holds nothing up: that notification is dropped, counted and said, and
//! the next one goes.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio::sync::{Notify, watch};

use super::events::{
    DeliveryFailed, DeliveryRefused, HeartbeatFailed, NotMarkedSent, NotifierGone, OutboxUnreadable, ResendFailed,
};
use super::{Client, Notifier};
use crate::logs::Emit;
use crate::rules::Alert;
use crate::state::Store;

/// Notifications sent, failed (to be tried again) and refused (dropped), per notifier.
#[derive(Debug, Default, Clone)]
pub struct Counters {
    pub sent: HashMap<String, u64>,
    pub failed: HashMap<String, u64>,
    pub refused: HashMap<String, u64>,
    /// The notifiers whose receivers refused notifications since the last one they took.
    pub refusals: HashMap<String, Refusal>,
}

/// A receiver refusing notifications for good, since the last one it took: said on the pages.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// When the first of them was refused.
    pub since: Timestamp,
    pub count: u64,
    /// The last answer: its status and the start of its body.
    pub answer: String,
}

impl Counters {
    fn sent(&mut self, notifier: &str) {
        *self.sent.entry(notifier.to_string()).or_default() += 1;
        self.refusals.remove(notifier);
    }

    fn failed(&mut self, notifier: &str) {
        *self.failed.entry(notifier.to_string()).or_default() += 1;
    }

    fn refused(&mut self, notifier: &str, now: Timestamp, answer: &str) {
        *self.refused.entry(notifier.to_string()).or_default() += 1;
        let r = self.refusals.entry(notifier.to_string()).or_insert(Refusal {
            since: now,
            count: 0,
            answer: String::new(),
        });
        r.count += 1;
        r.answer = answer.to_string();
    }
}

/// The configured notifiers, replaced whole when the configuration is reloaded.
pub type NotifierSet = Arc<std::sync::RwLock<Arc<Vec<Notifier>>>>;

pub struct Delivery {
    pub store: Arc<Mutex<Store>>,
    pub notifiers: NotifierSet,
    pub client: Client,
    /// Each cluster's firing alerts, as of its last cycle, for re-sending to Alertmanager.
    pub firing: Arc<Mutex<Firing>>,
    pub counters: Arc<Mutex<Counters>>,
    /// Who claims the notifications it sends: this replica's name with a shared state.
    pub claimer: String,
    /// How long a claim holds (a replica's lease): a notification claimed by a replica that
    /// stopped is sent by another after it.
    pub claim_for: Duration,
}

/// Each cluster's firing alerts as of its last cycle, and the clusters that had a cycle since the
/// last re-send: at each wake of the worker (after an interval's cycle, or a cycle on a change in
/// which an alert fired, escalated or resolved), the firing alerts of the clusters that had a
/// cycle since the last re-send are re-sent, not every cluster's (with thousands of clusters that
/// would be every alert many times a second).
#[derive(Debug, Default)]
pub struct Firing {
    /// Each cluster's firing alerts, and when they end unless sent again.
    alerts: BTreeMap<String, (Vec<Alert>, Timestamp)>,
    cycled: BTreeSet<String>,
}

impl Firing {
    /// A cycle of `cluster` ended with these alerts firing; re-sent now, they hold until `holds`
    /// ([`super::holds_until`] of the cycle's time and the cluster's interval).
    pub fn cycled(&mut self, cluster: &str, alerts: Vec<Alert>, holds: Timestamp) {
        self.alerts.insert(cluster.to_string(), (alerts, holds));
        self.cycled.insert(cluster.to_string());
    }

    /// Forgets the clusters for which `keep` is false.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.alerts.retain(|name, _| keep(name));
        self.cycled.retain(|name| keep(name));
    }

    /// The firing alerts of the clusters that had a cycle since the last call, each with when
    /// it ends unless sent again.
    fn take_cycled(&mut self) -> Vec<(&Alert, Timestamp)> {
        let cycled = std::mem::take(&mut self.cycled);
        cycled
            .iter()
            .filter_map(|c| self.alerts.get(c))
            .flat_map(|(alerts, holds)| alerts.iter().map(|a| (a, *holds)))
            .collect()
    }
}

/// 2, 4, 8 … 256 seconds.
pub fn backoff(attempts: i64) -> Duration {
    Duration::from_secs(1u64 << attempts.clamp(1, 8))
}

impl Delivery {
    /// Delivers what is due, each notifier's notifications strictly in order: while its oldest
    /// waits for a retry, the ones after it wait too. Returns true when the outbox is empty.
    pub async fn pass(&self, resend: bool) -> bool {
        let now = Timestamp::now();
        let notifiers = self.notifiers.read().expect("notifiers lock").clone();
        let claim = |now: Timestamp| now + SignedDuration::try_from(self.claim_for).expect("a lease fits");
        let queued = match self.store.lock().expect("store lock").claim(&self.claimer, 500, claim(now)) {
            Ok(q) => q,
            Err(e) => {
                OutboxUnreadable { error: &e }.emit();
                return false;
            }
        };
        let mut held: HashSet<String> = HashSet::new();
        for q in queued {
            if held.contains(&q.notifier) {
                continue;
            }
            if q.next_attempt > now {
                held.insert(q.notifier);
                continue;
            }
            let Some(n) = notifiers.iter().find(|n| n.name == q.notifier) else {
                NotifierGone { notifier: &q.notifier }.emit();
                let _ = self.store.lock().expect("store lock").delivered(q.id);
                continue;
            };
            // Its claim renewed just before it is sent: a claim that ran out (a pass slower than
            // a lease) may be another replica's now, which sends it.
            match self.store.lock().expect("store lock").reclaim(&self.claimer, q.id, claim(Timestamp::now())) {
                Ok(true) => {}
                Ok(false) | Err(_) => {
                    held.insert(q.notifier);
                    continue;
                }
            }
            match self.client.post(n, &q.body).await {
                Ok(()) => {
                    self.counters.lock().expect("counters lock").sent(&n.name);
                    if let Err(e) = self.store.lock().expect("store lock").delivered(q.id) {
                        NotMarkedSent { notifier: &n.name, error: &e }.emit();
                    }
                }
                Err(e) if e.is_permanent() => {
                    let e = e.to_string();
                    self.counters.lock().expect("counters lock").refused(&n.name, now, &e);
                    DeliveryRefused { notifier: &n.name, endpoint: &n.shown, error: &e }.emit();
                    if let Err(e) = self.store.lock().expect("store lock").delivered(q.id) {
                        NotMarkedSent { notifier: &n.name, error: &e }.emit();
                    }
                }
                Err(e) => {
                    held.insert(n.name.clone());
                    self.counters.lock().expect("counters lock").failed(&n.name);
                    // The receiver's Retry-After (a 429, a 503) when it asks for longer.
                    let wait = backoff(q.attempts + 1).max(e.retry_after().unwrap_or_default());
                    let next = now + SignedDuration::try_from(wait).expect("at most an hour");
                    let e = e.to_string();
                    DeliveryFailed {
                        notifier: &n.name,
                        endpoint: &n.shown,
                        attempt: q.attempts + 1,
                        error: &e,
                        retry_in: wait,
                    }
                    .emit();
                    let _ = self.store.lock().expect("store lock").retry_later(q.id, next, &e);
                }
            }
        }
        if resend {
            let bodies: Vec<(&Notifier, String)> = {
                let mut firing = self.firing.lock().expect("firing lock");
                let alerts = firing.take_cycled();
                notifiers
                    .iter()
                    .filter(|n| !held.contains(&n.name))
                    .filter_map(|n| n.resend(alerts.iter().copied()).map(|body| (n, body)))
                    .collect()
            };
            for (n, body) in bodies {
                if let Err(e) = self.client.post(n, &body).await {
                    let mut counters = self.counters.lock().expect("counters lock");
                    if e.is_permanent() {
                        counters.refused(&n.name, now, &e.to_string());
                    } else {
                        counters.failed(&n.name);
                    }
                    drop(counters);
                    ResendFailed { notifier: &n.name, endpoint: &n.shown, error: &e.to_string() }.emit();
                }
            }
        }
        let mut store = self.store.lock().expect("store lock");
        let _ = store.unclaim(&self.claimer);
        store.queued_count().map(|n| n == 0).unwrap_or(false)
    }

    /// Sends the heartbeat of each notifier that has one and whose last one is `every` old (on
    /// the wall clock: it says the process is alive, whatever the cycles' clock). A heartbeat
    /// that fails is logged and not retried: the next one is.
    pub async fn heartbeats(&self, last: &mut HashMap<String, std::time::Instant>) {
        let notifiers = self.notifiers.read().expect("notifiers lock").clone();
        for n in notifiers.iter() {
            let Some(every) = n.heartbeat else { continue };
            if last.get(&n.name).is_some_and(|t| t.elapsed() < every) {
                continue;
            }
            last.insert(n.name.clone(), std::time::Instant::now());
            let Some(body) = n.heartbeat_body(Timestamp::now(), every) else { continue };
            match self.client.post_heartbeat(n, &body).await {
                Ok(()) => *self.counters.lock().expect("counters lock").sent.entry(n.name.clone()).or_default() += 1,
                Err(e) => {
                    self.counters.lock().expect("counters lock").failed(&n.name);
                    HeartbeatFailed { notifier: &n.name, endpoint: &n.shown, error: &e.to_string() }.emit();
                }
            }
        }
    }

    /// Runs until `stop`, then makes one last attempt to flush the outbox.
    pub async fn run(self, wake: Arc<Notify>, mut stop: watch::Receiver<bool>) {
        // The heartbeats on their own: a slow endpoint never holds back a notification.
        let beats = Delivery {
            store: self.store.clone(),
            notifiers: self.notifiers.clone(),
            client: self.client.clone(),
            firing: self.firing.clone(),
            counters: self.counters.clone(),
            claimer: self.claimer.clone(),
            claim_for: self.claim_for,
        };
        let mut beats_stop = stop.clone();
        let beating = tokio::spawn(async move {
            let mut beaten = HashMap::new();
            loop {
                beats.heartbeats(&mut beaten).await;
                tokio::select! {
                    _ = beats_stop.changed() => return,
                    _ = tokio::time::sleep(Duration::from_millis(250)) => {}
                }
            }
        });
        let mut resend = false;
        loop {
            self.pass(resend).await;
            tokio::select! {
                _ = wake.notified() => resend = true,
                _ = tokio::time::sleep(Duration::from_secs(1)) => resend = false,
                _ = stop.changed() => break,
            }
        }
        let _ = tokio::time::timeout(Duration::from_secs(10), self.pass(false)).await;
        beating.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::backoff;
    use std::time::Duration;

    #[test]
    fn backoff_doubles_up_to_256_seconds() {
        assert_eq!(backoff(1), Duration::from_secs(2));
        assert_eq!(backoff(2), Duration::from_secs(4));
        assert_eq!(backoff(8), Duration::from_secs(256));
        assert_eq!(backoff(20), Duration::from_secs(256));
    }
}
