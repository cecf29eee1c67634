//! Every `dumbmonit_k8s_` metric, derived from a cycle's health.
//!
//! Each kind of object has a table of generators (name, help, type, samples of one object), in
//! the manner of kube-state-metrics; the cluster-wide counters are a table over `Health`.

pub mod cache;
pub mod exposition;
mod objects;

use exposition::{Family, MetricType, Packed, Packer, Sample, pack, prerender_led};

use crate::collect::{CollectionStat, Cycle};
use crate::health::{Health, PodHealth};

pub const PREFIX: &str = "dumbmonit_k8s_";

/// How many pods the per-pod families describe: those with problems first.
pub const POD_SERIES_LIMIT: usize = 500;

/// How many reasons `warning_events_by_reason` lists.
pub const EVENT_REASONS_LIMIT: usize = 20;

/// A metric of one kind of object: its name (without the prefix), help, type, and the samples
/// it yields for one object.
pub(crate) struct Generator<T> {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: MetricType,
    pub samples: fn(&T, &mut Vec<Sample>),
}

fn apply<'a, T: 'a>(gens: &[Generator<T>], objects: impl Iterator<Item = &'a T> + Clone, out: &mut Vec<Family>) {
    for g in gens {
        let mut samples = Vec::new();
        for o in objects.clone() {
            (g.samples)(o, &mut samples);
        }
        out.push(Family { name: format!("{PREFIX}{}", g.name), help: g.help, kind: g.kind, samples });
    }
}

/// What a cluster's cycle keeps of its series for the next: the compressed fragment of each
/// family (compressed again only when its text changed); for the kinds with many objects
/// (nodes, workloads, claims, volumes), their objects as last rendered and their fragments,
/// taken again whole while the objects are the same (no sample built, no text written); and the
/// pods' families in pieces, each taken again while its pods are the same.
#[derive(Default)]
pub struct SeriesKept {
    /// The families of the other kinds and of the cluster.
    packer: Packer,
    pods: PodSeries,
    nodes: KindSeries<std::sync::Arc<crate::health::NodeHealth>>,
    workloads: KindSeries<std::sync::Arc<crate::health::WorkloadHealth>>,
    pvcs: KindSeries<std::sync::Arc<crate::health::PvcHealth>>,
    pvs: KindSeries<crate::health::policy::PvHealth>,
    /// The optional kinds whose health holds no age (the others' ages move at every cycle).
    apiservices: KindSeries<crate::health::extras::ApiServiceHealth>,
    hpas: KindSeries<crate::health::extras::HpaHealth>,
    pdbs: KindSeries<crate::health::policy::PdbHealth>,
    quotas: KindSeries<crate::health::policy::QuotaHealth>,
    webhooks: KindSeries<crate::health::admission::WebhookHealth>,
}

impl SeriesKept {
    /// Families compressed, and taken again, by the last cycle (for tests and benchmarks).
    pub fn last(&self) -> (usize, usize) {
        let kinds = [
            self.nodes.last(),
            self.workloads.last(),
            self.pvcs.last(),
            self.pvs.last(),
            self.apiservices.last(),
            self.hpas.last(),
            self.pdbs.last(),
            self.quotas.last(),
            self.webhooks.last(),
        ];
        let pods = (self.packer.compressed + self.pods.pieces.compressed, self.packer.kept + self.pods.pieces.kept);
        kinds.iter().fold(pods, |(c, k), (kc, kk)| (c + kc, k + kk))
    }
}

/// About how many objects a piece of a kind's families holds ([`Pieces`]).
const PIECE_OBJECTS: u64 = 32;
/// Up to this many objects of a kind, its families are written whole and compressed a fragment
/// each when their text changed, as a small cluster's always were: in pieces, 5,000 clusters of
/// 100 pods held a seventh more of compressed series and their /metrics took longer to join,
/// and in list mode each cluster would keep its healthy pods' judgements from one cycle to the
/// next only for this.
const ONE_PIECE: usize = 128;

/// The pods' families, in pieces ([`Pieces`]) past [`ONE_PIECE`] pods; up to it, written
/// whole by the cluster's packer.
#[derive(Default)]
struct PodSeries {
    pieces: Pieces<std::sync::Arc<PodHealth>>,
}

impl PodSeries {
    /// The fragments of the pods' families over `pods`, family after family, each family's in
    /// the pods' order; up to [`ONE_PIECE`] pods, written whole by `packer` (started).
    fn packed(&mut self, packer: &mut Packer, pods: &[std::sync::Arc<PodHealth>], lead: (&str, &str)) -> Vec<Packed> {
        if pods.len() <= ONE_PIECE {
            self.pieces.forget();
            return plain(packer, lead, |f| apply::<PodHealth>(objects::PODS, pods.iter().map(|p| &**p), f));
        }
        self.pieces.packed(objects::PODS, pods, names::pod, lead)
    }
}

/// A kind's families in pieces of some tens of objects, each piece compressed on its own and
/// kept while its objects are the same: a cycle in which one pod of 500 changed renders and
/// compresses the piece that pod is in, not every pod's series (on the real API server at
/// 10,000 pods, that was a fifth of a cycle on a change), and one in which a pod came to one
/// node of 5,000 renders that node's piece. A piece ends after an object whose names hash to
/// one of [`PIECE_OBJECTS`] values, so where pieces end depends on the objects listed, not on
/// where the list starts: an object that comes, goes or changes changes the piece it is in (or
/// the two it cuts), not the others. The text is the same however the objects are cut: a
/// family's pieces follow one another.
struct Pieces<T> {
    /// The hash that cuts the objects: seeded at random, so a cluster cannot name its objects to
    /// make one piece of them all (it would only cost more). An object's names are hashed when its
    /// piece is cut anew, not when a piece is taken again: the health's hasher of names, not
    /// SipHash.
    keys: crate::health::NamesHasher,
    /// The last cycle's pieces, by their first object's namespace and name.
    last: crate::health::Names<(String, String), Piece<T>>,
    /// Families compressed, and taken again, by the last cycle.
    compressed: usize,
    kept: usize,
    /// Objects whose names the last cycle hashed to cut its pieces (for the tests).
    hashed: usize,
}

impl<T> Default for Pieces<T> {
    fn default() -> Pieces<T> {
        Pieces { keys: Default::default(), last: Default::default(), compressed: 0, kept: 0, hashed: 0 }
    }
}

/// Some objects listed one after another, and each family's fragment of them (None for a family
/// with no sample of these objects).
struct Piece<T> {
    objects: Vec<T>,
    families: Vec<Option<Packed>>,
    /// Whether its last object's names end a piece (otherwise it ended with the list).
    ended: bool,
}

impl<T: Clone + PartialEq> Pieces<T> {
    /// The fragments of `gens`' families over `objects` (named by `key`), family after family,
    /// each family's in the objects' order.
    fn packed<O>(
        &mut self,
        gens: &[Generator<O>],
        objects: &[T],
        key: impl Fn(&O) -> (&str, &str),
        lead: (&str, &str),
    ) -> Vec<Packed>
    where
        T: std::borrow::Borrow<O>,
    {
        use std::hash::BuildHasher;
        (self.compressed, self.kept, self.hashed) = (0, 0, 0);
        let mut last = std::mem::take(&mut self.last);
        let mut pieces = Vec::new();
        let mut start = 0;
        while start < objects.len() {
            let (namespace, name) = key(objects[start].borrow());
            let first = (namespace.to_string(), name.to_string());
            let kept = last.remove(&first);
            // The last cycle's piece that began with this object, its objects come again one
            // after the other, each the same record or an equal one (an `Arc` of an `Eq` type:
            // compared by address first): their names are the same, so the piece ends where it
            // ended, unless it ended with the last cycle's list and more objects follow now.
            // Its objects' names are not hashed again (at 10,000 simulated pods, hashing every
            // pod's names was a quarter of the series' cost at a cycle on a change).
            let again = |k: &Piece<T>| {
                !k.objects.is_empty()
                    && objects[start..].starts_with(&k.objects)
                    && (k.ended || start + k.objects.len() == objects.len())
            };
            let piece = match kept {
                Some(mut kept) if again(&kept) => {
                    self.kept += kept.families.iter().flatten().count();
                    // This cycle's records: the last ones are let go (shared records), or
                    // written over in place (an equal text into its own room).
                    let n = kept.objects.len();
                    kept.objects.clone_from_slice(&objects[start..start + n]);
                    kept
                }
                _ => {
                    // Cut where the objects' names say, from this one on.
                    let mut end = start;
                    let ended = loop {
                        self.hashed += 1;
                        if self.keys.hash_one(key(objects[end].borrow())).is_multiple_of(PIECE_OBJECTS) {
                            break true;
                        }
                        if end + 1 == objects.len() {
                            break false;
                        }
                        end += 1;
                    };
                    let these = &objects[start..=end];
                    let families = gens
                        .iter()
                        .map(|g| {
                            let mut families = Vec::with_capacity(1);
                            apply(std::slice::from_ref(g), these.iter().map(|o| o.borrow()), &mut families);
                            pack(prerender_led(&families, Some(lead))).pop()
                        })
                        .collect::<Vec<_>>();
                    self.compressed += families.iter().flatten().count();
                    Piece { objects: these.to_vec(), families, ended }
                }
            };
            start += piece.objects.len();
            pieces.push((first, piece));
        }
        let mut out = Vec::new();
        for family in 0..gens.len() {
            out.extend(pieces.iter().filter_map(|(_, piece)| piece.families[family].clone()));
        }
        self.last = pieces.into_iter().collect();
        out
    }

    /// Nothing kept: the kind is written whole, or not read.
    fn forget(&mut self) {
        (self.compressed, self.kept, self.hashed) = (0, 0, 0);
        self.last = Default::default();
    }
}

/// One kind's objects as last rendered, and their families' fragments (kept by its own packer,
/// so that a change to some of its objects compresses again only the families it changed). The
/// objects are kept as the health holds them (nodes, workloads and claims shared: compared by
/// their address first).
struct KindSeries<T> {
    objects: Vec<T>,
    packed: Vec<Packed>,
    packer: Packer,
    /// Whether `objects` and `packed` are of the last cycle.
    valid: bool,
    /// How many times its families were written whole (for tests: a family whose text is the
    /// same is not compressed again, whether written or taken again).
    written: usize,
    /// Past [`ONE_PIECE`] objects, the families in pieces, each kept while its objects are the
    /// same: one node of 5,000 that changed renders its piece, not every node's series.
    pieces: Pieces<T>,
}

impl<T> Default for KindSeries<T> {
    fn default() -> KindSeries<T> {
        KindSeries {
            objects: Vec::new(),
            packed: Vec::new(),
            packer: Packer::default(),
            valid: false,
            written: 0,
            pieces: Pieces::default(),
        }
    }
}

impl<T: Clone + PartialEq> KindSeries<T> {
    /// The fragments of `objects`' families (named by `key`): the last ones when the objects
    /// are the same; past [`ONE_PIECE`] objects, in pieces.
    fn packed<O>(
        &mut self,
        gens: &[Generator<O>],
        objects: &[T],
        key: impl Fn(&O) -> (&str, &str),
        lead: (&str, &str),
    ) -> Vec<Packed>
    where
        T: std::borrow::Borrow<O>,
    {
        if objects.len() > ONE_PIECE {
            self.forget_whole();
            return self.pieces.packed(gens, objects, key, lead);
        }
        self.pieces.forget();
        if self.valid && self.objects == objects {
            (self.packer.compressed, self.packer.kept) = (0, self.packed.len());
        } else {
            let mut families = Vec::new();
            apply(gens, objects.iter().map(|o| o.borrow()), &mut families);
            self.written += 1;
            self.packed = self.packer.pack_all(prerender_led(&families, Some(lead)));
            self.objects = objects.to_vec();
            self.valid = true;
        }
        self.packed.clone()
    }

    /// The kind was not read: nothing kept is of the last cycle.
    fn unread(&mut self) -> Vec<Packed> {
        self.forget_whole();
        self.pieces.forget();
        Vec::new()
    }

    /// Nothing kept of the kind written whole: it is in pieces, or not read.
    fn forget_whole(&mut self) {
        self.valid = false;
        (self.objects, self.packed) = (Vec::new(), Vec::new());
        (self.packer.compressed, self.packer.kept) = (0, 0);
    }

    /// Families compressed, and taken again, by the last cycle.
    fn last(&self) -> (usize, usize) {
        (self.packer.compressed + self.pieces.compressed, self.packer.kept + self.pieces.kept)
    }
}

/// How each kind's objects are named, for where its pieces end ([`Pieces`]).
mod names {
    use crate::health::admission::WebhookHealth;
    use crate::health::extras::{ApiServiceHealth, HpaHealth};
    use crate::health::policy::{PdbHealth, PvHealth, QuotaHealth};
    use crate::health::{NodeHealth, PodHealth, PvcHealth, WorkloadHealth};

    pub fn pod(p: &PodHealth) -> (&str, &str) {
        (&p.namespace, &p.name)
    }
    pub fn node(n: &NodeHealth) -> (&str, &str) {
        ("", &n.name)
    }
    pub fn workload(w: &WorkloadHealth) -> (&str, &str) {
        (&w.namespace, &w.name)
    }
    pub fn pvc(c: &PvcHealth) -> (&str, &str) {
        (&c.namespace, &c.name)
    }
    pub fn pv(v: &PvHealth) -> (&str, &str) {
        ("", &v.volume.name)
    }
    pub fn apiservice(a: &ApiServiceHealth) -> (&str, &str) {
        ("", &a.name)
    }
    pub fn hpa(h: &HpaHealth) -> (&str, &str) {
        (&h.namespace, &h.name)
    }
    pub fn pdb(p: &PdbHealth) -> (&str, &str) {
        (&p.namespace, &p.name)
    }
    pub fn quota(q: &QuotaHealth) -> (&str, &str) {
        (&q.namespace, &q.quota)
    }
    pub fn webhook(w: &WebhookHealth) -> (&str, &str) {
        (&w.configuration, &w.webhook)
    }
}

/// The fragments of the families `fill` makes.
fn plain(packer: &mut Packer, lead: (&str, &str), fill: impl FnOnce(&mut Vec<Family>)) -> Vec<Packed> {
    let mut families = Vec::new();
    fill(&mut families);
    packer.pack(prerender_led(&families, Some(lead)))
}

/// The object series of a good cycle, with the `cluster` label first, compressed, taking again
/// from `kept` what did not change since the last (in the order of [`cluster_families`]).
fn object_series(cluster: &str, h: &Health, kept: &mut SeriesKept) -> Vec<Packed> {
    let lead = ("cluster", cluster);
    let SeriesKept { packer, pods, nodes, workloads, pvcs, pvs, apiservices, hpas, pdbs, quotas, webhooks } = kept;
    let e = &h.extras;
    packer.start();
    let mut out = plain(packer, lead, |f| apply(objects::CLUSTER, std::iter::once(h), f));
    out.extend(nodes.packed(objects::NODES, &h.nodes, names::node, lead));
    out.extend(pods.packed(packer, &h.pods[..h.pods.len().min(POD_SERIES_LIMIT)], lead));
    out.extend(workloads.packed(objects::WORKLOADS, &h.workloads, names::workload, lead));
    out.extend(pvcs.packed(objects::PVCS, &h.pvcs, names::pvc, lead));
    // An optional kind not read has no family (a family without samples is left out), as one
    // read with no object.
    out.extend(apiservices.packed(
        objects::APISERVICES,
        e.apiservices.as_deref().unwrap_or_default(),
        names::apiservice,
        lead,
    ));
    out.extend(hpas.packed(objects::HPAS, e.hpas.as_deref().unwrap_or_default(), names::hpa, lead));
    out.extend(plain(packer, lead, |f| {
        apply(objects::CRONJOBS, e.cronjobs.iter().flatten(), f);
        apply(objects::RUNNING_JOBS, e.running_jobs.iter().flatten(), f);
    }));
    out.extend(pdbs.packed(objects::PDBS, e.pdbs.as_deref().unwrap_or_default(), names::pdb, lead));
    out.extend(quotas.packed(objects::QUOTAS, e.quotas.as_deref().unwrap_or_default(), names::quota, lead));
    out.extend(match &e.pvs {
        Some(list) => pvs.packed(objects::PVS, list, names::pv, lead),
        None => pvs.unread(),
    });
    out.extend(plain(packer, lead, |f| apply(objects::CONTROL_PLANE, e.control_plane.iter().flatten(), f)));
    out.extend(webhooks.packed(objects::WEBHOOKS, e.webhooks.as_deref().unwrap_or_default(), names::webhook, lead));
    packer.finish();
    out
}

/// The cluster's metrics for a successful cycle.
pub fn cluster_families(h: &Health) -> Vec<Family> {
    let mut out = Vec::new();
    apply(objects::CLUSTER, std::iter::once(h), &mut out);
    apply(objects::NODES, h.nodes.iter().map(|n| &**n), &mut out);
    let pods = h.pods.iter().take(POD_SERIES_LIMIT).map(|p| &**p);
    apply::<PodHealth>(objects::PODS, pods, &mut out);
    apply(objects::WORKLOADS, h.workloads.iter().map(|w| &**w), &mut out);
    apply(objects::PVCS, h.pvcs.iter().map(|c| &**c), &mut out);
    apply(objects::APISERVICES, h.extras.apiservices.iter().flatten(), &mut out);
    apply(objects::HPAS, h.extras.hpas.iter().flatten(), &mut out);
    apply(objects::CRONJOBS, h.extras.cronjobs.iter().flatten(), &mut out);
    apply(objects::RUNNING_JOBS, h.extras.running_jobs.iter().flatten(), &mut out);
    apply(objects::PDBS, h.extras.pdbs.iter().flatten(), &mut out);
    apply(objects::QUOTAS, h.extras.quotas.iter().flatten(), &mut out);
    apply(objects::PVS, h.extras.pvs.iter().flatten(), &mut out);
    apply(objects::CONTROL_PLANE, h.extras.control_plane.iter().flatten(), &mut out);
    apply(objects::WEBHOOKS, h.extras.webhooks.iter().flatten(), &mut out);
    out
}

/// The monitor's own metrics for a cycle: `up`, the cycle's duration, each collection's
/// duration and success.
pub fn monitor_families(up: bool, duration: std::time::Duration, stats: &[CollectionStat]) -> Vec<Family> {
    let family = |name: &str, help: &'static str, samples: Vec<Sample>| Family {
        name: format!("{PREFIX}{name}"),
        help,
        kind: MetricType::Gauge,
        samples,
    };
    vec![
        family(
            "up",
            "1 when the last cycle read all eight collections, else 0.",
            vec![Sample::new(vec![], if up { 1.0 } else { 0.0 })],
        ),
        family(
            "cycle_duration_seconds",
            "Wall time of the last cycle, in seconds.",
            vec![Sample::new(vec![], duration.as_secs_f64())],
        ),
        family(
            "collection_duration_seconds",
            "Wall time of each collection's read in the last cycle, in seconds, all pages included.",
            stats
                .iter()
                .map(|s| Sample::new(vec![("collection", s.collection.name().into())], s.duration.as_secs_f64()))
                .collect(),
        ),
        family(
            "collection_success",
            "1 when the collection was read completely in the last cycle, else 0.",
            stats
                .iter()
                .map(|s| Sample::new(vec![("collection", s.collection.name().into())], if s.ok { 1.0 } else { 0.0 }))
                .collect(),
        ),
    ]
}

/// A cycle's series for `serve`'s /metrics, each with the `cluster` label first, rendered and
/// compressed once.
pub struct CycleSeries {
    /// The object series of a good cycle (a failed cycle has none: the last good ones stay).
    pub objects: Option<Vec<Packed>>,
    /// The monitor's own series (`up`, durations, each collection's success).
    pub own: Vec<Packed>,
}

/// The series of one cycle of `cluster`: its objects' when it was read (`health`), and its own.
/// `kept` holds what the cluster's last cycle rendered: what did not change is taken again.
pub fn cycle_series(
    cluster: &str,
    health: Option<&Health>,
    duration: std::time::Duration,
    stats: &[CollectionStat],
    kept: &mut SeriesKept,
) -> CycleSeries {
    let lead = Some(("cluster", cluster));
    CycleSeries {
        objects: health.map(|h| object_series(cluster, h, kept)),
        own: pack(prerender_led(&monitor_families(health.is_some(), duration, stats), lead)),
    }
}

/// The whole exposition of one cycle: the cluster's metrics when it succeeded, then the monitor's.
pub fn render(cycle: &Cycle, health: Option<&Health>) -> String {
    let mut families = health.map(cluster_families).unwrap_or_default();
    families.extend(monitor_families(cycle.result.is_ok(), cycle.duration, &cycle.stats));
    // The families go before the text is joined: at the envelope they hold as much as the text.
    let rendered = exposition::prerender(&families);
    drop(families);
    exposition::join(rendered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::Collection;
    use crate::collect::kinds::{Kind, cronjob::CronJob, hpa::Hpa, job::Job};
    use std::time::Duration;

    fn gunzip(packed: &[Packed]) -> String {
        use std::io::Read;
        let mut text = String::new();
        let gzip = exposition::merge_gzip(&[packed]);
        flate2::read::GzDecoder::new(&gzip[..]).read_to_string(&mut text).expect("gzip");
        text
    }

    fn pods(n: usize) -> Vec<std::sync::Arc<PodHealth>> {
        (0..n)
            .map(|i| {
                std::sync::Arc::new(PodHealth {
                    terminating: (i % 7 == 0).then_some(i as i64),
                    ..PodHealth::running(&format!("api-{i:04}"))
                })
            })
            .collect()
    }

    /// The pods' series as the families at once write them, with the cluster label.
    fn at_once(pods: &[std::sync::Arc<PodHealth>]) -> String {
        let mut families = Vec::new();
        apply::<PodHealth>(objects::PODS, pods.iter().map(|p| &**p), &mut families);
        exposition::join(prerender_led(&families, Some(("cluster", "c"))))
    }

    #[test]
    fn a_change_to_one_pod_compresses_its_piece_of_the_pods_series_alone() {
        let mut series = PodSeries::default();
        let mut listed = pods(500);
        let first = series.packed(&mut Packer::default(), &listed, ("cluster", "c"));
        assert_eq!(gunzip(&first), at_once(&listed), "pieces write the families' text");
        // Four families have a sample of every pod; a piece without a pod being deleted has no
        // `pod_terminating_seconds`, and no pod is blocked.
        let fragments = series.pieces.compressed;
        let families = objects::PODS.len() - 1;
        assert!(fragments > 2 * families, "500 pods in pieces: {fragments} fragments");
        assert_eq!(series.pieces.kept, 0);

        // Unchanged: every piece taken again, equal records or the same ones.
        listed[10] = std::sync::Arc::new((*listed[10]).clone());
        let again = series.packed(&mut Packer::default(), &listed, ("cluster", "c"));
        assert_eq!((series.pieces.compressed, series.pieces.kept), (0, fragments));
        assert_eq!(gunzip(&again), at_once(&listed));
        assert_eq!(series.pieces.hashed, 0, "no piece cut again");

        // One pod not ready: its piece's families alone compressed again.
        let mut changed = (*listed[250]).clone();
        changed.ready = false;
        listed[250] = std::sync::Arc::new(changed);
        let one = series.packed(&mut Packer::default(), &listed, ("cluster", "c"));
        assert!(
            (families - 1..=families).contains(&series.pieces.compressed),
            "one piece: {}",
            series.pieces.compressed
        );
        assert_eq!(series.pieces.compressed + series.pieces.kept, fragments);
        assert_eq!(gunzip(&one), at_once(&listed));
        let cut = series.pieces.hashed;
        assert!((1..100).contains(&cut), "the changed piece's pods alone hashed: {cut} of 500");

        // A pod gone (its piece joins the next when it ended it) and another come (it may cut
        // its piece in two): at most three pieces anew, whatever pods follow.
        listed.remove(100);
        let mut new = (*listed[300]).clone();
        new.name = "api-0300a".into();
        listed.insert(301, std::sync::Arc::new(new));
        let moved = series.packed(&mut Packer::default(), &listed, ("cluster", "c"));
        assert!(series.pieces.compressed <= 3 * families, "at most three pieces: {}", series.pieces.compressed);
        assert!(series.pieces.kept + 3 * families >= fragments, "kept {} of {fragments}", series.pieces.kept);
        assert_eq!(gunzip(&moved), at_once(&listed));
        assert!(series.pieces.hashed < 250, "the pieces moved alone cut again: {}", series.pieces.hashed);

        // The last piece ended with the list, not by its last pod's names: pods after it are
        // cut with it, as the names say (the same text as the families at once).
        let mut longer = listed.clone();
        let mut after = (**longer.last().expect("pods")).clone();
        for i in 0..40 {
            after.name = format!("api-9{i:03}").into();
            longer.push(std::sync::Arc::new(after.clone()));
        }
        let cuts = |s: &PodSeries| {
            let mut cuts: Vec<_> = s.pieces.last.iter().map(|(first, p)| (first.clone(), p.objects.len())).collect();
            cuts.sort();
            cuts
        };
        for list in [&longer, &listed] {
            assert_eq!(gunzip(&series.packed(&mut Packer::default(), list, ("cluster", "c"))), at_once(list));
            let mut afresh = PodSeries::default();
            afresh.pieces.keys = series.pieces.keys.clone();
            afresh.packed(&mut Packer::default(), list, ("cluster", "c"));
            assert_eq!(cuts(&series), cuts(&afresh), "cut where the names say, as afresh");
        }

        // A small cluster's pods are written whole by its packer, a fragment a family, and none
        // of them is kept; the same text again is not compressed again.
        let few = pods(ONE_PIECE);
        let mut packer = Packer::default();
        for compressed in [families, 0] {
            packer.start();
            assert_eq!(gunzip(&series.packed(&mut packer, &few, ("cluster", "c"))), at_once(&few));
            packer.finish();
            assert_eq!((packer.compressed, series.pieces.compressed), (compressed, 0));
            assert!(series.pieces.last.is_empty(), "no pod kept");
        }

        // No pod: no family.
        assert!(series.packed(&mut packer, &[], ("cluster", "c")).is_empty());
    }

    /// A cycle's series, as `object_series` gives them, and the families the full
    /// derivation writes for the same health.
    fn both(h: &Health, kept: &mut SeriesKept) -> (String, String) {
        let full = exposition::join(prerender_led(&cluster_families(h), Some(("cluster", "c"))));
        (gunzip(&object_series("c", h, kept)), full)
    }

    #[test]
    fn a_change_to_one_object_of_many_compresses_its_piece_of_the_kinds_series_alone() {
        use crate::health::policy::PvHealth;
        let pv = |i: usize| PvHealth {
            volume: std::sync::Arc::new(crate::collect::kinds::pv::Pv {
                name: format!("pvc-{i:05}"),
                phase: "Bound".into(),
                claim: format!("team/data-{i:05}"),
                why: String::new(),
            }),
            in_error: false,
        };
        let mut h = Health::empty(jiff::Timestamp::UNIX_EPOCH, "v1");
        let mut volumes: Vec<PvHealth> = (0..1_000).map(pv).collect();
        h.extras.pvs = Some(volumes.clone());
        let mut kept = SeriesKept::default();
        let (series, full) = both(&h, &mut kept);
        assert_eq!(series, full);
        let fragments = kept.pvs.pieces.compressed;
        assert!(fragments > 10 * objects::PVS.len(), "1,000 volumes in pieces: {fragments} fragments");
        assert_eq!(kept.pvs.written, 0, "not written whole");

        // The same volumes: every piece taken again.
        assert_eq!(both(&h, &mut kept), (series, full));
        assert_eq!((kept.pvs.pieces.compressed, kept.pvs.pieces.kept), (0, fragments));

        // One volume failed: its piece alone written again.
        std::sync::Arc::make_mut(&mut volumes[500].volume).phase = "Failed".into();
        volumes[500].in_error = true;
        h.extras.pvs = Some(volumes.clone());
        let (series, full) = both(&h, &mut kept);
        assert_eq!(series, full);
        assert!(series.contains("pvc-00500\",phase=\"Failed\"} 1"), "{series}");
        assert!((1..=objects::PVS.len()).contains(&kept.pvs.pieces.compressed), "{}", kept.pvs.pieces.compressed);
        assert_eq!(kept.pvs.pieces.compressed + kept.pvs.pieces.kept, fragments);

        // Down to a few: written whole, nothing kept in pieces; then not read: no family.
        volumes.truncate(ONE_PIECE);
        h.extras.pvs = Some(volumes);
        assert_eq!(both(&h, &mut kept).0, both(&h, &mut kept).1);
        assert_eq!((kept.pvs.written, kept.pvs.pieces.last.len()), (1, 0));
        h.extras.pvs = None;
        let (series, full) = both(&h, &mut kept);
        assert_eq!(series, full);
        assert!(!series.contains("pv_phase"), "{series}");
    }

    #[test]
    fn the_optional_kinds_series_are_taken_again_while_their_health_is_the_same() {
        use crate::health::policy::{PdbHealth, QuotaHealth};
        let quota = |used: f64| QuotaHealth {
            namespace: "team".into(),
            quota: "compute".into(),
            resource: "pods".into(),
            hard: 10.0,
            used,
            fullness: None,
        };
        let pdb = PdbHealth {
            namespace: "team".into(),
            name: "api".into(),
            current_healthy: 2,
            desired_healthy: 2,
            disruptions_allowed: 0,
            expected_pods: 2,
            short: false,
        };
        let mut h = Health::empty(jiff::Timestamp::UNIX_EPOCH, "v1");
        h.extras.quotas = Some(vec![quota(3.0)]);
        h.extras.pdbs = Some(vec![pdb]);
        let mut kept = SeriesKept::default();
        let (series, full) = both(&h, &mut kept);
        assert_eq!(series, full);
        assert!(series.contains("dumbmonit_k8s_resourcequota{cluster=\"c\",namespace=\"team\""), "{series}");
        assert_eq!((kept.quotas.written, kept.pdbs.written), (1, 1));
        assert!(kept.quotas.packer.compressed > 0 && kept.pdbs.packer.compressed > 0);

        // The same health: neither kind written again.
        assert_eq!(both(&h, &mut kept), (series.clone(), full));
        assert_eq!((kept.quotas.written, kept.pdbs.written), (1, 1));

        // One more pod in the quota: its families written and compressed again, the budgets'
        // taken as they were.
        h.extras.quotas = Some(vec![quota(4.0)]);
        let (series, full) = both(&h, &mut kept);
        assert_eq!(series, full);
        assert_eq!((kept.quotas.written, kept.pdbs.written), (2, 1));
        assert!(kept.quotas.packer.compressed > 0);

        // Quotas no longer read: no family, as the full derivation.
        h.extras.quotas = None;
        let (series, full) = both(&h, &mut kept);
        assert_eq!(series, full);
        assert!(!series.contains("resourcequota"), "{series}");
    }

    #[test]
    fn every_read_with_a_stat_has_its_success_and_duration() {
        let stat = |collection, ok| CollectionStat { collection, duration: Duration::from_millis(250), ok };
        let mut stats: Vec<CollectionStat> = Collection::ALL.iter().map(|&c| stat(c, true)).collect();
        // Jobs refused, node metrics failed, pod metrics not served (no stat), the rest read.
        stats.extend([
            stat(Collection::APISERVICES, true),
            stat(Collection::NODE_METRICS, false),
            stat(Hpa::COLLECTION, true),
            stat(Job::COLLECTION, false),
            stat(CronJob::COLLECTION, true),
        ]);
        let text = exposition::encode(&monitor_families(true, Duration::from_secs(1), &stats));
        for (c, ok) in [
            ("pods", 1),
            ("events", 1),
            ("apiservices", 1),
            ("node_metrics", 0),
            ("hpas", 1),
            ("jobs", 0),
            ("cronjobs", 1),
        ] {
            let success = format!("\ndumbmonit_k8s_collection_success{{collection=\"{c}\"}} {ok}\n");
            assert!(text.contains(&success), "{success:?} in {text}");
            let duration = format!("\ndumbmonit_k8s_collection_duration_seconds{{collection=\"{c}\"}} 0.25\n");
            assert!(text.contains(&duration), "{duration:?} in {text}");
        }
        assert!(!text.contains("pod_metrics"), "a read without a stat has no series: {text}");
        assert!(text.contains("\ndumbmonit_k8s_up 1\n"));
    }
}
