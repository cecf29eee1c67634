//! What the derivation remembers from one cycle to the next: each node's Ready changes within
//! the flapping window, and how long each StatefulSet's and DaemonSet's update has gone without
//! progress. A single reading (`check`, the pages' Test) starts from an empty memory; `serve`
//! and `replay` keep one per cluster, beside the rules' own state, and hand it to
//! [`super::assess_with`] so that the health they get is final.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::{NodeHealth, WorkloadHealth};
use crate::collect::WorkloadKind;

/// How long a StatefulSet's or DaemonSet's update may make no progress before it is stuck.
pub const ROLLOUT_PATIENCE: Duration = Duration::from_secs(15 * 60);
/// The window over which a node's Ready changes are counted.
pub const FLAPPING_WINDOW: Duration = Duration::from_secs(15 * 60);

/// What one cluster's derivation carries across cycles.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Memory {
    /// By node: its Ready at the last cycle, and when it changed within the flapping window.
    pub readiness: HashMap<String, (bool, Vec<Timestamp>)>,
    /// By (kind, namespace, name) of a StatefulSet or DaemonSet being updated: its updated
    /// replicas, and since when they are that many.
    pub rollouts: HashMap<(String, String, String), (i64, Timestamp)>,
    /// By component: the last renewal seen of its leader lease.
    pub leases: HashMap<String, super::plane::Renewal>,
    /// By (namespace, name) of an HPA: its current replicas at the last cycle.
    pub hpas: HashMap<(String, String), i64>,
}

/// Whether `t` lies in the window (now − window, now]: a sighting exactly one window old is out,
/// so a crash loop last seen at 12:00 no longer counts at 12:10.
pub fn within(now: Timestamp, t: Timestamp, window: Duration) -> bool {
    now.duration_since(t) < SignedDuration::try_from(window).expect("small windows")
}

impl Memory {
    /// Counts each node's Ready changes within the flapping window into `ready_transitions`
    /// (a node shared with the last cycle is changed on a copy, and only when its count
    /// changes); nodes that are gone are forgotten.
    pub(super) fn nodes(&mut self, now: Timestamp, nodes: &mut [Arc<NodeHealth>]) {
        for n in nodes.iter_mut() {
            let (last, changes) = match self.readiness.get_mut(&n.name) {
                Some(seen) => seen,
                None => self.readiness.entry(n.name.clone()).or_insert((n.ready, Vec::new())),
            };
            if *last != n.ready {
                changes.push(now);
                *last = n.ready;
            }
            changes.retain(|t| within(now, *t, FLAPPING_WINDOW));
            let transitions = changes.len() as u32;
            if n.ready_transitions != transitions {
                Arc::make_mut(n).ready_transitions = transitions;
            }
        }
        // A snapshot holds each node once: as many as it has, unless some are gone.
        if self.readiness.len() != nodes.len() {
            let present: std::collections::HashSet<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
            self.readiness.retain(|name, _| present.contains(name.as_str()));
        }
    }

    /// Marks `rollout_stuck` (and says why, first) the StatefulSets and DaemonSets whose update
    /// made no progress for [`ROLLOUT_PATIENCE`]; updates that ended are forgotten.
    pub(super) fn rollouts(&mut self, now: Timestamp, workloads: &mut [Arc<WorkloadHealth>]) {
        let mut rollouts = HashMap::new();
        for w in workloads.iter_mut().filter(|w| w.kind != WorkloadKind::Deployment && w.updating) {
            let key = (w.kind.as_str().to_string(), w.namespace.clone(), w.name.clone());
            let (updated, since) = match self.rollouts.remove(&key) {
                Some((updated, since)) if updated == w.updated => (updated, since),
                _ => (w.updated, now),
            };
            if !within(now, since, ROLLOUT_PATIENCE) {
                // A workload under update is judged afresh each cycle: not shared.
                let w = Arc::make_mut(w);
                w.rollout_stuck = true;
                w.why.insert(
                    0,
                    super::why::ours(
                        "why-no-progress",
                        &[
                            ("minutes", (now.duration_since(since).as_secs() / 60).into()),
                            ("updated", w.updated.into()),
                            ("desired", w.desired.into()),
                        ],
                    ),
                );
            }
            rollouts.insert(key, (updated, since));
        }
        self.rollouts = rollouts;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::{Node, Snapshot, Workload};
    use crate::health::assess_with;

    fn t(minute: i64) -> Timestamp {
        Timestamp::from_second(1_790_000_000).unwrap() + SignedDuration::from_mins(minute)
    }

    fn node(ready: bool) -> Node {
        Node {
            allocatable_pods: None,
            taints: vec![],
            name: "n1".into(),
            ready: Some(if ready { "True" } else { "False" }.into()),
            ready_detail: None,
            conditions: vec![],
            unschedulable: false,
            kubelet_version: "v1".into(),
            allocatable_cpu: None,
            allocatable_memory: None,
        }
    }

    fn statefulset(updated: i64) -> Workload {
        Workload {
            generation_lag: 0,
            misscheduled: 0,
            kind: WorkloadKind::StatefulSet,
            namespace: "shop".into(),
            name: "queue".into(),
            desired: 3,
            ready: 3,
            available: 3,
            updated,
            updating: true,
            deadline_exceeded: None,
        }
    }

    fn at(minute: i64, ready: bool, updated: i64) -> Snapshot {
        Snapshot {
            time: t(minute),
            nodes: vec![node(ready).into()],
            workloads: vec![statefulset(updated).into()],
            ..Default::default()
        }
    }

    #[test]
    fn a_first_reading_counts_no_change_and_no_stuck_update() {
        let mut memory = Memory::default();
        let first = assess_with(at(0, false, 1), t(0), &mut memory);
        assert_eq!(first.nodes[0].ready_transitions, 0, "a node first seen NotReady has not changed yet");
        assert!(!first.workloads[0].rollout_stuck, "an update first seen has not stalled yet");
        assert_eq!(first.counts.rollouts_stuck, 0);
    }

    #[test]
    fn ready_changes_are_counted_within_the_window() {
        let mut memory = Memory::default();
        let mut seen = Vec::new();
        for m in 0..20 {
            let h = assess_with(at(m, !(2..=3).contains(&m), 3), t(m), &mut memory);
            seen.push(h.nodes[0].ready_transitions);
        }
        // Changes at minutes 2 and 4, each counted for fifteen minutes.
        assert_eq!(seen, [0, 0, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 0]);
    }

    #[test]
    fn an_update_without_progress_for_fifteen_minutes_is_stuck_and_counted() {
        let mut memory = Memory::default();
        for m in 0..15 {
            let h = assess_with(at(m, true, 1), t(m), &mut memory);
            assert!(!h.workloads[0].rollout_stuck, "minute {m}");
            assert_eq!(h.counts.rollouts_stuck, 0);
        }
        let h = assess_with(at(15, true, 1), t(15), &mut memory);
        assert!(h.workloads[0].rollout_stuck);
        assert_eq!(h.counts.rollouts_stuck, 1);
        assert_eq!(
            crate::lang::Lang::En.say(&h.workloads[0].why[0]),
            "its update has made no progress for 15 min: 1 of 3 replicas updated"
        );
        assert_eq!(h.summary(), "1 rollout stuck");
        // Progress starts the patience again.
        let h = assess_with(at(16, true, 2), t(16), &mut memory);
        assert!(!h.workloads[0].rollout_stuck);
    }
}
