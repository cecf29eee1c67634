//! The pods' judgements a followed cluster keeps from one cycle to the next, so that a cycle
//! taken on a change judges the pods that changed, not every pod.
//!
//! A cycle taken from a watch's stores holds each pod as the record the store keeps (shared,
//! not copied): a pod whose record is the very one of the cycle before (the same allocation,
//! which the store replaces on any change) is unchanged. Its judgement is taken again when it
//! needed nothing but the pod itself: no problem (a problem's why reads the events, and its
//! ages the clock) and no deletion under way (a pod being deleted becomes stuck by the clock,
//! and its why names its node). Any other pod is judged afresh, as in a full derivation, and
//! [`super::assess_with`] without a `Judged` is that full derivation: the two give the same
//! health, which the tests and `RUST_LOG=dumbmonit::serve=debug` compare.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

use rustc_hash::FxHasher;

use super::PodHealth;
use crate::collect::Pod;

/// A pod's record by its address, with the judgement made of it.
type ByRecord = HashMap<usize, (Arc<Pod>, Arc<PodHealth>), BuildHasherDefault<FxHasher>>;

/// What the last cycle judged of each pod from the pod alone.
#[derive(Default)]
pub struct Judged {
    kept: ByRecord,
    /// What the cycle being derived judged so: the next cycle's `kept`.
    next: ByRecord,
    /// Pods judged afresh and taken again in the last cycle, for the debug log and the
    /// benchmarks.
    pub last: Judgements,
}

/// How a cycle's pods were judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Judgements {
    pub afresh: usize,
    pub again: usize,
}

impl Judged {
    /// Starts a cycle of `pods` pods; `afresh`: every pod judged again (a full derivation,
    /// whose judgements the next cycle may take again).
    pub(super) fn start(&mut self, pods: usize, afresh: bool) {
        if afresh {
            self.kept = ByRecord::default();
        }
        self.next = HashMap::with_capacity_and_hasher(pods, Default::default());
        self.last = Judgements::default();
    }

    /// The judgement of `pod`: the one kept when it is the record judged last cycle and
    /// needed nothing else; otherwise `judge`'s, kept for the next cycle when it needs nothing
    /// else either.
    pub(super) fn judge(&mut self, pod: Arc<Pod>, judge: impl FnOnce(Pod) -> PodHealth) -> Arc<PodHealth> {
        let address = Arc::as_ptr(&pod) as usize;
        if let Some((record, health)) = self.kept.remove(&address) {
            self.last.again += 1;
            let health = health.clone();
            self.next.insert(address, (record, health.clone()));
            return health;
        }
        self.last.afresh += 1;
        let alone = pod.deletion().is_none();
        let health = Arc::new(judge(Pod::clone(&pod)));
        if alone && !health.has_problem() {
            self.next.insert(address, (pod, health.clone()));
        }
        health
    }

    /// Ends the cycle: what it judged from the pods alone is what the next one may take again
    /// (the pods gone since are forgotten with the rest of `kept`).
    pub(super) fn finish(&mut self) {
        self.kept = std::mem::take(&mut self.next);
    }
}

/// Where a health derived with kept judgements differs from the full derivation of the same
/// cycle: the first pod that differs (`pod shop/api-1`), or the first other part; None when
/// they are the same.
pub fn difference(full: &super::Health, judged: &super::Health) -> Option<String> {
    for (f, j) in full.pods.iter().zip(&judged.pods) {
        if f != j {
            return Some(format!("pod {}/{} (full: {f:?}; kept: {j:?})", f.namespace, f.name));
        }
    }
    if full.pods.len() != judged.pods.len() {
        return Some(format!("the pods ({} in full, {} kept)", full.pods.len(), judged.pods.len()));
    }
    let parts: [(&str, String, String); 7] = [
        ("the counts", format!("{:?}", full.counts), format!("{:?}", judged.counts)),
        ("the nodes", format!("{:?}", full.nodes), format!("{:?}", judged.nodes)),
        ("the workloads", format!("{:?}", full.workloads), format!("{:?}", judged.workloads)),
        ("the claims", format!("{:?}", full.pvcs), format!("{:?}", judged.pvcs)),
        ("the capacity", format!("{:?}", full.capacity), format!("{:?}", judged.capacity)),
        ("the optional kinds", format!("{:?}", full.extras), format!("{:?}", judged.extras)),
        ("the events", format!("{:?}", full.events_by_reason), format!("{:?}", judged.events_by_reason)),
    ];
    parts.into_iter().find(|(_, f, j)| f != j).map(|(part, _, _)| part.to_string())
}

#[cfg(test)]
mod tests {
    /// What a pod costs a followed cluster, besides its strings: its record, shared by the store
    /// and the cycles, and a healthy pod's kept judgement (docs/performance.md says these).
    #[test]
    fn a_pod_and_its_judgement_stay_small() {
        let record = std::mem::size_of::<crate::collect::Pod>();
        let judged = std::mem::size_of::<super::PodHealth>();
        eprintln!("pod record {record} bytes, judgement {judged} bytes");
        assert!(record <= 200, "a pod's record grew to {record} bytes");
        assert!(judged <= 200, "a pod's judgement grew to {judged} bytes");
    }
}
