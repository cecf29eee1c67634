//! The pods' judgements a followed cluster keeps from one cycle to the next, so that a cycle
//! taken on a change judges the pods that changed, not every pod.
//!
//! A cycle taken from a watch's stores holds each pod as the record the store keeps (shared,
//! not copied): a pod whose record is the very one of the cycle before (the same allocation,
//! which the store replaces on any change) is unchanged. Its judgement is taken again when it
//! needed nothing but the pod and the newest event about it, and that event is the very one it
//! was judged with (or there was none and is none): a pod with no deletion under way (a pod
//! being deleted becomes stuck by the clock, and its why names its node). A healthy pod's
//! judgement reads no event; a problem's why says the newest event about the pod (and a pending
//! pod's says how it is scheduled only when there is none), and nothing else but the pod. Any
//! other pod is judged afresh, as in a full derivation, and [`super::assess_with`] without a
//! `Judged` is that full derivation: the two give the same health, which the tests and
//! `RUST_LOG=dumbmonit::serve=debug` compare.
//!
//! The last cycle's pods are kept in the order a cycle has them (namespace, then name), so that
//! finding a pod's prior is a walk beside them, not a lookup: an unchanged pod costs a compared
//! address (and, with a problem, a looked-up event). The same walk finds the pods that came,
//! went or changed, by which what the pods ask of each node ([`super::demand`]) is changed. Pods
//! in another order would still be judged and added up right (a record is taken again only
//! when its address is met, and every record passed over is taken away from the demand as every
//! new one is added), only at more cost.
//!
//! The other kinds a cycle judges object by object keep their judgements the same way, by one
//! mechanism ([`Objects`]): an object whose record is the last cycle's (the same allocation, or
//! an equal record), whose other reads are the same, and whose judgement reads nothing else,
//! takes its judgement again. A node reads what its pods ask of it, the newest event about it
//! and the server's version; a claim not Pending, and a workload with every replica available
//! and no update under way, read nothing but themselves (the others are judged afresh: their
//! why names their pods and events). What a cycle sets on a judgement after (a node's Ready
//! changes and usage, a workload's stopped controller) is set on a copy, only where it differs,
//! and the judgement as the cycle left it is the one the next takes again.

use std::sync::Arc;

use super::demand::Demand;
use super::{EventIndex, NodeHealth, PodHealth, PvcHealth, WorkloadHealth};
use crate::collect::quantity::Resources;
use crate::collect::{Event, GivenBack, Node, Pod, Pvc, Snapshot, Workload};

/// A pod of the last cycle: its record, and the judgement made of it when the next cycle may
/// take it again.
pub(super) type Entry = (Arc<Pod>, Option<Kept>);

/// A judgement the next cycle may take again, with what it was made from besides the pod.
#[derive(Clone)]
pub(super) struct Kept {
    health: Arc<PodHealth>,
    /// What the cycle reads of the judgement at each cycle, kept beside it so that a pod taken
    /// again costs no read of its judgement's memory (at 150,000 pods, a cache miss a pod).
    looks: Looks,
    /// The newest event about the pod when it was judged (a problem's judgement reads it).
    event: Option<ByAddress<Event>>,
}

/// What a cycle reads of every pod's judgement: whether it has a problem (which part of the
/// pods it goes to), and whether it runs (the count of running pods).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Looks {
    pub problem: bool,
    pub running: bool,
}

impl Looks {
    pub(super) fn of(h: &PodHealth) -> Looks {
        Looks { problem: h.has_problem(), running: h.phase == crate::collect::pods::Phase::Running }
    }
}

/// What the last cycle judged of each pod from the pod and its newest event, and what its pods
/// ask of each node.
#[derive(Default)]
pub struct Judged {
    /// The last cycle's pods, in their canonical order (namespace, name).
    pods: Vec<Entry>,
    /// What the cycle being derived judged: the next cycle's `pods`.
    next: Vec<Entry>,
    /// What the last cycle's pods ask of each node: changed by the pods that came, went or
    /// changed.
    pub(super) demand: Demand,
    /// The last cycle's pods that name a claim, by namespace and name: changed as the demand
    /// is, so that who uses each claim is found without reading every pod.
    claimants: std::collections::BTreeMap<(String, String), Arc<Pod>>,
    /// The room of the last cycle's priors, empty ([`Judged::give_back_priors`]).
    spare_priors: Vec<Prior>,
    /// Pods judged afresh and taken again in the last cycle, for the debug log and the
    /// benchmarks.
    pub last: Judgements,
    /// Whether the cycle being derived judges everything afresh.
    afresh: bool,
    /// The last cycle's nodes, each with what its pods ask of it and the newest event about
    /// it, and the server's version they were judged with.
    pub nodes: Objects<Arc<Node>, NodeReads, NodeHealth>,
    version: String,
    /// The last cycle's claims.
    pub claims: Objects<Arc<Pvc>, (), PvcHealth>,
    /// The last cycle's Deployments, StatefulSets and DaemonSets.
    pub workloads: Objects<Arc<Workload>, (), WorkloadHealth>,
    /// The last cycle's lists as its snapshot had them, for the follower to take back
    /// ([`Judged::shelf`]): the pods judged in place, not taken apart, so that an unchanged
    /// pod's record is neither copied into the cycle nor let go by it; the nodes, claims and
    /// events, taken again as they are while nothing of their kind changes.
    shelf: GivenBack,
    /// The last cycle's healthy pods' judgements, as its health listed them, given back once the
    /// cycle's rules and series have read them ([`Judged::keep_healthy`]): a healthy pod's kept
    /// judgement is taken from here, moved, rather than copied from its entry (a write to its
    /// count, and another when the cycle lets its copy go).
    healthy: std::vec::IntoIter<Arc<PodHealth>>,
    /// Healthy pods' judgements taken again in the last cycle by a copy, their list not given
    /// back (for the tests).
    pub copied: usize,
    /// The last cycle's pods that this one has not (by namespace and name), found by the walk
    /// beside them; None when the cycle judged afresh, without that walk. What the rules
    /// remember of those pods is let go by these names, without a look at every pod.
    pub pods_gone: Option<Vec<(String, String)>>,
    /// The last cycle's events' index, taken again while its events are the same records.
    pub events: super::events::KeptIndex,
}

/// What a node's judgement reads besides its record: what its pods ask of it and how many they
/// are, and the newest event about it (kept, so that its address is not another event's while
/// it is compared).
#[derive(PartialEq)]
pub struct NodeReads {
    asks: (Resources, u64),
    event: Option<ByAddress<Event>>,
}

/// A shared record compared by its address: kept, so that the address is not another
/// record's while it is compared.
pub struct ByAddress<T>(Arc<T>);

impl<T> PartialEq for ByAddress<T> {
    fn eq(&self, other: &ByAddress<T>) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> Clone for ByAddress<T> {
    fn clone(&self) -> ByAddress<T> {
        ByAddress(self.0.clone())
    }
}

impl<T> ByAddress<T> {
    /// Whether `kept` is the very record `now` is, or both are none.
    fn same(kept: Option<&ByAddress<T>>, now: Option<&Arc<T>>) -> bool {
        match (kept, now) {
            (None, None) => true,
            (Some(k), Some(n)) => Arc::ptr_eq(&k.0, n),
            _ => false,
        }
    }
}

/// The last cycle's objects of one kind, in the cycle's order, each with what else its
/// judgement read and the judgement as the cycle left it: an object whose record and reads are
/// those of the last cycle, and whose judgement reads nothing else, takes it again.
pub struct Objects<T, R, H> {
    last: Vec<Object<T, R, H>>,
    /// Objects judged afresh and taken again in the last cycle.
    pub judged: Judgements,
}

struct Object<T, R, H> {
    record: T,
    reads: R,
    health: Arc<H>,
}

impl<T, R, H> Default for Objects<T, R, H> {
    fn default() -> Self {
        Objects { last: Vec::new(), judged: Judgements::default() }
    }
}

impl<T: Clone + PartialEq, R: PartialEq, H> Objects<T, R, H> {
    /// Each of `objects`' judgement (in their order, `order`'s): the last cycle's when the
    /// object's record and `reads` are the same, `alone` says its judgement reads nothing else,
    /// and the cycle is not judged `afresh`; otherwise `judge`'s.
    pub(super) fn judge(
        &mut self,
        objects: &[T],
        afresh: bool,
        order: impl Fn(&T, &T) -> std::cmp::Ordering,
        reads: impl Fn(&T) -> R,
        alone: impl Fn(&T) -> bool,
        mut judge: impl FnMut(&T) -> H,
    ) -> Vec<Arc<H>> {
        use std::cmp::Ordering::{Equal, Less};
        self.judged = Judgements::default();
        let mut last = std::mem::take(&mut self.last).into_iter().peekable();
        let mut kept = Vec::with_capacity(objects.len());
        for o in objects {
            // Those before it are gone (or out of order: judged afresh, at more cost).
            while last.next_if(|k| order(&k.record, o) == Less).is_some() {}
            let reads = reads(o);
            let prior = last
                .next_if(|k| order(&k.record, o) == Equal)
                .filter(|k| !afresh && alone(o) && k.record == *o && k.reads == reads);
            kept.push(match prior {
                Some(k) => {
                    self.judged.again += 1;
                    k
                }
                None => {
                    self.judged.afresh += 1;
                    Object { record: o.clone(), reads, health: Arc::new(judge(o)) }
                }
            });
        }
        let healths = kept.iter().map(|k| k.health.clone()).collect();
        self.last = kept;
        healths
    }

    /// The judgements as the cycle left them (changed after `judge`), for the next to take.
    pub(super) fn finish(&mut self, healths: &[Arc<H>]) {
        for (k, h) in self.last.iter_mut().zip(healths) {
            k.health = h.clone();
        }
    }
}

/// How a cycle's objects of a kind were judged: afresh, or their judgement taken again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Judgements {
    pub afresh: usize,
    pub again: usize,
}

/// Makes room in `list` (empty) for `n` pods, and a sixty-fourth more, when it has less or more
/// than twice that: a list of every pod kept from one cycle to the next neither doubles when
/// the cluster grows by a pod (as `Vec::reserve` would: at 150,000 pods, two lists held 9.6 MB
/// each where 4.8 do) nor stays at the size of a cluster that shrank.
fn room<T>(list: &mut Vec<T>, n: usize) {
    debug_assert!(list.is_empty());
    let enough = n + n / 64;
    if list.capacity() < n {
        list.reserve_exact(enough);
    } else if list.capacity() > 2 * enough {
        list.shrink_to(enough);
    }
}

/// A pod's names, by which a cycle's pods are ordered.
fn key(p: &Pod) -> (&str, &str) {
    (&*p.namespace, &*p.name)
}

/// A pod that names a claim, as [`Judged`] keeps it.
fn claimant(p: &Pod) -> (String, String) {
    (p.namespace.to_string(), p.name.to_string())
}

/// A pod of the cycle as the last cycle had it: None for a pod whose record is not the very one
/// of the last cycle (new, or changed).
pub(super) type Prior = Option<Entry>;

impl Judged {
    /// Starts a cycle of `pods`, in their canonical order: each pod's prior, found by walking the
    /// last cycle's pods beside them (a record compared by its address, names only where the
    /// records differ); and the demand changed by the pods that differ. `afresh`: every pod
    /// judged again and added up again (a full derivation, whose judgements the next cycle may
    /// take again).
    ///
    /// The room of the last cycle's list is the next's, and the priors' list is the one given
    /// back ([`Judged::give_back_priors`]): at 150,000 pods each is some megabytes, which a
    /// cycle allocated afresh and the system gave it again page by page, zeroed, since the cycle
    /// before had given its memory back (the allocator gives freed pages back at once:
    /// [`crate::allocator`]).
    pub(super) fn start(&mut self, pods: &[Arc<Pod>], afresh: bool) -> Vec<Prior> {
        self.last = Judgements::default();
        self.copied = 0;
        self.afresh = afresh;
        let mut last = std::mem::take(&mut self.pods);
        let mut priors = std::mem::take(&mut self.spare_priors);
        priors.clear();
        room(&mut priors, pods.len());
        self.pods_gone = (!afresh).then(Vec::new);
        if afresh {
            self.demand = Demand::of(pods);
            self.claimants = pods.iter().filter(|p| !p.claims.is_empty()).map(|p| (claimant(p), p.clone())).collect();
            last.clear();
            room(&mut last, pods.len());
            self.next = last;
            priors.extend(pods.iter().map(|_| None));
            return priors;
        }
        let mut walk = last.drain(..).peekable();
        for p in pods {
            // The last cycle's pods before this one are gone.
            while walk.peek().is_some_and(|(q, _)| !Arc::ptr_eq(q, p) && key(q) < key(p)) {
                let (q, _) = walk.next().expect("peeked");
                self.gone(&q);
                self.went(&q);
            }
            match walk.next_if(|(q, _)| Arc::ptr_eq(q, p)) {
                Some(entry) => priors.push(Some(entry)),
                None => {
                    // Changed (the same names, another record) or new.
                    if let Some((q, _)) = walk.next_if(|(q, _)| key(q) == key(p)) {
                        self.gone(&q);
                    }
                    self.demand.count(p, 1);
                    if !p.claims.is_empty() {
                        self.claimants.insert(claimant(p), p.clone());
                    }
                    priors.push(None);
                }
            }
        }
        for (q, _) in walk {
            self.gone(&q);
            self.went(&q);
        }
        room(&mut last, pods.len());
        self.next = last;
        priors
    }

    /// A pod of the last cycle that this one has not: its names, for the rules.
    fn went(&mut self, q: &Pod) {
        if let Some(gone) = &mut self.pods_gone {
            gone.push((q.namespace.to_string(), q.name.to_string()));
        }
    }

    /// The priors [`Judged::start`] gave, once taken: their room serves the next cycle's.
    pub(super) fn give_back_priors(&mut self, priors: Vec<Prior>) {
        debug_assert!(priors.is_empty(), "every prior taken");
        self.spare_priors = priors;
    }

    /// A pod of the last cycle that went, or whose record changed: taken away from the demand
    /// and the claims' users.
    fn gone(&mut self, q: &Pod) {
        self.demand.count(q, -1);
        if !q.claims.is_empty() {
            self.claimants.remove(&claimant(q));
        }
    }

    /// The judgement of `pod`, and what a cycle reads of it: the one kept when its prior has
    /// one and the newest event about the pod (`newest`) is the one it was judged with;
    /// otherwise `judge`'s, kept for the next cycle when it needed nothing but the pod and that
    /// event.
    pub(super) fn judge<'e>(
        &mut self,
        pod: &Arc<Pod>,
        prior: Prior,
        newest: impl Fn(&Pod) -> Option<&'e Arc<Event>>,
        judge: impl FnOnce(&Pod) -> PodHealth,
    ) -> (Arc<PodHealth>, Looks) {
        if let Some((record, Some(kept))) = prior {
            // A healthy pod's judgement read no event, and the newest event about a pod is the
            // last cycle's while the events are the same records: nothing to look up.
            if !kept.looks.problem
                || self.events.same_records()
                || ByAddress::same(kept.event.as_ref(), newest(&record))
            {
                self.last.again += 1;
                let health = if kept.looks.problem { kept.health.clone() } else { self.healthy(&kept.health) };
                let taken = (health, kept.looks);
                self.next.push((record, Some(kept)));
                return taken;
            }
        }
        self.last.afresh += 1;
        let alone = pod.deletion().is_none();
        let health = Arc::new(judge(pod));
        let looks = Looks::of(&health);
        let kept = alone.then(|| Kept {
            health: health.clone(),
            looks,
            event: if looks.problem { newest(pod).cloned().map(ByAddress) } else { None },
        });
        self.next.push((pod.clone(), kept));
        (health, looks)
    }

    /// A healthy pod's kept judgement, as the last cycle's health listed it: the healthy pods
    /// are listed in the order the cycle judges them, so it is found by walking them beside the
    /// cycle, those passed over (pods that changed or went) let go. Copied from the entry when
    /// the list was not given back.
    fn healthy(&mut self, kept: &Arc<PodHealth>) -> Arc<PodHealth> {
        self.healthy.by_ref().find(|h| Arc::ptr_eq(h, kept)).unwrap_or_else(|| {
            self.copied += 1;
            kept.clone()
        })
    }

    /// The healthy pods' judgements of the cycle just derived, once its rules and series have
    /// read them: the next cycle takes them from here.
    pub fn keep_healthy(&mut self, healthy: Vec<Arc<PodHealth>>) {
        self.healthy = healthy.into_iter();
    }

    /// Keeps the cycle's list of pods, judged, for the follower to take back.
    pub(super) fn keep_list(&mut self, pods: Vec<Arc<Pod>>) {
        self.shelf.pods = Some(pods);
    }

    /// Keeps the cycle's nodes, claims and events, judged, for the follower to take back.
    pub(super) fn keep_lists(&mut self, nodes: Vec<Arc<Node>>, pvcs: Vec<Arc<Pvc>>, events: Vec<Arc<Event>>) {
        (self.shelf.nodes, self.shelf.pvcs, self.shelf.events) = (Some(nodes), Some(pvcs), Some(events));
    }

    /// The last cycle's lists, as its snapshot had them: a follower's store takes each again
    /// while nothing of its kind changed, and changes the pods' where pods changed
    /// (`Store::shelve`).
    pub fn shelf(&mut self) -> GivenBack {
        std::mem::take(&mut self.shelf)
    }

    /// The cycle's nodes, after [`Judged::start`] (which changed what the pods ask of each):
    /// each node's judgement taken again when its record, what its pods ask of it, the newest
    /// event about it and the server's version are those it was judged with; otherwise judged
    /// afresh. Ready changes and usage are set on them after (shared: changed on a copy).
    pub(super) fn nodes(&mut self, s: &Snapshot, events: &EventIndex) -> Vec<Arc<NodeHealth>> {
        let afresh = self.afresh || self.version != s.version;
        self.version.clone_from(&s.version);
        let demand = &self.demand;
        self.nodes.judge(
            &s.nodes,
            afresh,
            |a, b| a.name.cmp(&b.name),
            |n| NodeReads {
                asks: demand.on(&n.name),
                event: events.newest("Node", "", &n.name).cloned().map(ByAddress),
            },
            |_| true,
            |n| super::node_health(s, n, demand, events),
        )
    }

    /// The cycle's claims, after [`Judged::start`] (which changed the pods that name a claim):
    /// a claim not Pending reads nothing but itself (a Pending one names the pods that use it
    /// and the events about it: judged afresh, with who uses each claim, found from those pods
    /// when a claim is first judged).
    pub(super) fn claims(
        &mut self,
        s: &Snapshot,
        mut judge: impl FnMut(&Arc<Pvc>, &super::ClaimUsers) -> PvcHealth,
    ) -> Vec<Arc<PvcHealth>> {
        let by_names = |a: &Arc<Pvc>, b: &Arc<Pvc>| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name));
        let claimants = &self.claimants;
        let users = std::cell::OnceCell::new();
        let judge = |c: &Arc<Pvc>| judge(c, users.get_or_init(|| super::claim_users(claimants.values())));
        self.claims.judge(&s.pvcs, self.afresh, by_names, |_| (), |c| c.phase != "Pending", judge)
    }

    /// The cycle's workloads, after its pods: one with every replica available and no update
    /// under way reads nothing but itself (the others name their pods with a problem and the
    /// events about them, or how long their update has made no progress: judged afresh).
    pub(super) fn workloads(
        &mut self,
        s: &Snapshot,
        judge: impl FnMut(&Arc<Workload>) -> WorkloadHealth,
    ) -> Vec<Arc<WorkloadHealth>> {
        let by_names = |a: &Arc<Workload>, b: &Arc<Workload>| {
            (a.kind, &a.namespace, &a.name).cmp(&(b.kind, &b.namespace, &b.name))
        };
        let settled = |w: &Arc<Workload>| w.unavailable() == 0 && !w.updating;
        self.workloads.judge(&s.workloads, self.afresh, by_names, |_| (), settled, judge)
    }

    /// Ends the cycle: its pods are the last cycle's of the next one, and its nodes' and
    /// workloads' judgements as it leaves them (with their Ready changes, usage, stuck rollouts
    /// and stopped controller) are taken again by the next.
    pub(super) fn finish(&mut self, nodes: &[Arc<NodeHealth>], workloads: &[Arc<WorkloadHealth>]) {
        self.pods = std::mem::take(&mut self.next);
        // What is left of the last cycle's healthy pods changed or went.
        self.healthy = Vec::new().into_iter();
        self.nodes.finish(nodes);
        self.workloads.finish(workloads);
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
        assert!(record <= 176, "a pod's record grew to {record} bytes");
        assert!(judged <= 128, "a pod's judgement grew to {judged} bytes");
    }

    /// The lists of every pod a followed cluster keeps between cycles grow by a sixty-fourth
    /// when the cluster grows, not twofold, and shrink with it.
    #[test]
    fn a_list_of_every_pod_is_kept_near_the_pods_count() {
        let mut list: Vec<u64> = Vec::new();
        let room = |list: &mut Vec<u64>, n: usize| {
            super::room(list, n);
            list.capacity()
        };
        assert_eq!(room(&mut list, 6400), 6500);
        assert_eq!(room(&mut list, 6401), 6500, "room enough: left as it is");
        let grown = room(&mut list, 6501);
        assert!((6501..=6602).contains(&grown), "grown to {grown} for one more pod than it had room for");
        let shrunk = room(&mut list, 100);
        assert!((100..=300).contains(&shrunk), "{shrunk} kept for 100 pods");
    }
}
