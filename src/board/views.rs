//! The views of the clusters: what the pages, the API and /metrics show of each, one write per
//! cycle, and the doors the agents' reports come in by.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use jiff::Timestamp;

use super::{AgentView, Arranged, ClusterView, Door, Knock, Publication};
use crate::metrics::cache::ExpositionCache;
use crate::metrics::exposition::Packed;
use crate::notify::payload::fingerprint;
use crate::rules::{Acknowledgement, Alert};

/// Every cluster's view, in the configuration's order, and the agents' doors.
#[derive(Default)]
pub struct Views {
    clusters: RwLock<Vec<ClusterView>>,
    /// Changes whenever a view does (or what is quiet), so that what is derived from all views
    /// can be cached.
    generation: AtomicU64,
    /// The last /metrics text, kept while nothing it depends on changes.
    exposition: Arc<ExpositionCache>,
    /// Where each agent's reports go, by cluster.
    agents: RwLock<HashMap<String, Door>>,
}

impl Views {
    /// Every cluster's view, now.
    pub fn clusters(&self) -> Vec<ClusterView> {
        self.clusters.read().expect("board lock").clone()
    }

    /// The view of the cluster named so.
    pub fn cluster(&self, name: &str) -> Option<ClusterView> {
        self.clusters.read().expect("board lock").iter().find(|c| c.name == name).cloned()
    }

    fn update(&self, name: &str, f: impl FnOnce(&mut ClusterView)) {
        let mut clusters = self.clusters.write().expect("board lock");
        if let Some(v) = clusters.iter_mut().find(|c| c.name == name) {
            f(v);
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// A cluster's alerts and last cycle as saved, shown until its first cycle here.
    pub fn restored(&self, name: &str, alerts: super::Alerts, last_cycle: Option<Timestamp>, period: Duration) {
        self.update(name, |v| {
            v.alerts = alerts;
            v.last_cycle = v.last_cycle.or(last_cycle);
            v.period = period;
        });
    }

    /// Shows a cycle: one write.
    pub fn publish(&self, name: &str, p: Publication) {
        self.update(name, |v| {
            v.last_cycle = Some(p.time);
            v.up = p.error.is_none();
            v.cycle_duration = p.duration;
            v.stats = p.stats;
            v.alerts = still_acknowledged(&v.alerts, p.alerts);
            v.own = p.own;
            if let Some(objects) = p.objects {
                v.objects = objects;
            }
            if let Some((address, agent)) = p.agent {
                v.address = address;
                v.agent = Some(agent);
            }
            match p.health {
                Some(h) => {
                    v.health = Some(h);
                    v.last_good = Some(p.time);
                    v.error = None;
                }
                None => v.error = p.error,
            }
        });
    }

    /// Changes whenever a cluster's view does.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Each cluster's series, in order: its objects', then its own.
    pub fn packed_series(&self) -> Vec<Arc<Vec<Packed>>> {
        self.clusters.read().expect("board lock").iter().flat_map(|c| [c.objects.clone(), c.own.clone()]).collect()
    }

    /// Keeps the views of `order` (new ones empty), in that order.
    pub fn arrange(&self, order: &[Arranged]) {
        let mut clusters = self.clusters.write().expect("board lock");
        let mut old: HashMap<String, ClusterView> = clusters.drain(..).map(|c| (c.name.clone(), c)).collect();
        *clusters = order
            .iter()
            .map(|Arranged { name, address, agent, from_pages }| {
                let mut v = old.remove(name).unwrap_or_else(|| ClusterView::new(name, address));
                v.from_pages = *from_pages;
                match (agent, &v.agent) {
                    (false, _) => {
                        v.address = address.clone();
                        v.agent = None;
                    }
                    (true, None) => {
                        v.address = address.clone();
                        v.agent = Some(AgentView::default());
                    }
                    // The address the agent reported stays.
                    (true, Some(_)) => {}
                }
                v
            })
            .collect();
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Closes the doors of the clusters `keep` does not name.
    pub fn keep_doors(&self, keep: impl Fn(&str) -> bool) {
        self.agents.write().expect("agents lock").retain(|name, _| keep(name));
    }

    /// Opens (or re-keys) the door of an agent's cluster.
    pub fn open_door(&self, cluster: &str, door: Door) {
        self.agents.write().expect("agents lock").insert(cluster.to_string(), door);
    }

    /// The /metrics text kept.
    pub fn exposition(&self) -> &Arc<ExpositionCache> {
        &self.exposition
    }

    /// Finds the agent's cluster: by name when the agent gives one, else by token. Every token
    /// is compared, in constant time, whatever matches.
    pub fn knock(&self, cluster: Option<&str>, token: &str) -> Knock {
        let doors = self.agents.read().expect("agents lock");
        if token.is_empty() {
            return Knock::WrongToken;
        }
        // Every door is tried, the named one or not: a wrong token learns nothing of which
        // clusters are read through an agent (401 for any name), a valid one of another
        // cluster is told that the name is not one (404).
        let (mut named, mut any) = (None, false);
        for (name, door) in doors.iter() {
            // A door whose token file could not be read has no token, and opens to none.
            let same = !door.token.is_empty() && crate::auth::constant_time_eq(door.token.as_bytes(), token.as_bytes());
            any |= same;
            if same && cluster.is_none_or(|c| c == name) {
                named = Some(door);
            }
        }
        match (named, cluster) {
            (Some(d), _) => Knock::Open { settings: d.settings.clone(), inbox: d.inbox.clone() },
            (None, Some(name)) if any && !doors.contains_key(name) => Knock::NotConfigured(name.to_string()),
            (None, _) => Knock::WrongToken,
        }
    }

    /// Counts a change of what the views show (what is quiet, say), for the caches.
    pub(super) fn bump(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The time of the latest cycle of any cluster.
    pub(super) fn latest_cycle(&self) -> Option<Timestamp> {
        self.clusters.read().expect("board lock").iter().filter_map(|c| c.last_cycle).max()
    }

    /// The active alert with this fingerprint, and its cluster's name.
    pub fn alert_by_fingerprint(&self, print: &str) -> Option<(String, Alert)> {
        self.alert_and_period(print).map(|(cluster, alert, _)| (cluster, alert))
    }

    /// The alert with this fingerprint, its cluster, and how far apart the cluster's cycles are.
    pub(super) fn alert_and_period(&self, print: &str) -> Option<(String, Alert, Duration)> {
        let views = self.clusters.read().expect("board lock");
        views.iter().find_map(|c| {
            c.alerts
                .iter()
                .find(|a| fingerprint(&a.labels) == print)
                .map(|a| (c.name.clone(), Alert::clone(a), c.period))
        })
    }

    /// Shows the acknowledgement at once on the alert of `cluster` with this fingerprint.
    pub(super) fn acknowledged(&self, cluster: &str, print: &str, ack: &Acknowledgement) {
        {
            let mut views = self.clusters.write().expect("board lock");
            if let Some(c) = views.iter_mut().find(|c| c.name == cluster) {
                let alerts = c
                    .alerts
                    .iter()
                    .map(|a| {
                        let mut a = a.clone();
                        if fingerprint(&a.labels) == print {
                            Arc::make_mut(&mut a).acknowledged = Some(ack.clone());
                        }
                        a
                    })
                    .collect();
                c.alerts = Arc::new(alerts);
            }
        }
        self.bump();
    }
}

/// A cycle's alerts, with the acknowledgements the view shows kept on the alerts they were made
/// for (same labels, same firing). A cycle takes the acknowledgements made before it began; one
/// made while it ran is taken by the next, and until then the view, not the cycle, holds it.
fn still_acknowledged(shown: &[Arc<Alert>], cycled: super::Alerts) -> super::Alerts {
    let acks: HashMap<String, (Timestamp, &Acknowledgement)> = shown
        .iter()
        .filter_map(|a| a.acknowledged.as_ref().map(|ack| (fingerprint(&a.labels), (a.active_at, ack))))
        .collect();
    if acks.is_empty() || cycled.iter().all(|a| a.acknowledged.is_some()) {
        return cycled;
    }
    let mut alerts = Arc::unwrap_or_clone(cycled);
    for a in alerts.iter_mut().filter(|a| a.acknowledged.is_none()) {
        if let Some((active_at, ack)) = acks.get(&fingerprint(&a.labels))
            && *active_at == a.active_at
        {
            Arc::make_mut(a).acknowledged = Some((*ack).clone());
        }
    }
    Arc::new(alerts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Severity;

    fn alert(pod: &str, active_at: Timestamp, ack: Option<&str>) -> Alert {
        Alert {
            alertname: "KubernetesPodCrashLooping".into(),
            severity: Severity::Warning,
            labels: [("alertname", "KubernetesPodCrashLooping"), ("pod", pod)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            summary: String::new(),
            description: String::new(),
            active_at,
            fired_at: Some(active_at),
            escalated_at: None,
            untold: false,
            acknowledged: ack.map(|by| Acknowledgement { by: by.into(), at: active_at, comment: "on it".into() }),
            told_labels: None,
            said: None,
            said_description: None,
        }
    }

    #[test]
    fn an_acknowledgement_made_while_a_cycle_ran_stays_shown_on_its_firing_only() {
        let (t0, t1) = (Timestamp::from_second(1_000).unwrap(), Timestamp::from_second(2_000).unwrap());
        let shown = [alert("a", t0, Some("admin")), alert("b", t0, Some("ops")), alert("c", t0, None)].map(Arc::new);
        // The cycle began before the acknowledgements: it has none. Pod b fired anew since.
        let cycled =
            Arc::new([alert("a", t0, None), alert("b", t1, None), alert("c", t0, None)].map(Arc::new).to_vec());
        let kept = still_acknowledged(&shown, cycled);
        let by: Vec<_> = kept.iter().map(|a| a.acknowledged.as_ref().map(|k| k.by.as_str())).collect();
        assert_eq!(by, [Some("admin"), None, None]);
        // What the cycle holds wins over what is shown.
        let cycled = Arc::new(vec![Arc::new(alert("a", t0, Some("rules")))]);
        assert_eq!(still_acknowledged(&shown, cycled)[0].acknowledged.as_ref().unwrap().by, "rules");
    }
}
