//! One cycle: the eight collections read in parallel, each into compact records, beside the
//! optional reads; every read timed and judged by one wrapper ([`timed`]).

pub mod backends;
pub mod events;
pub mod follow;
pub mod kinds;
pub mod logged;
pub mod nodes;
pub mod optional;
pub mod pods;
pub mod pvcs;
pub mod quantity;
pub mod raw;
pub mod reader;
pub mod scope;
pub mod version;
pub mod workloads;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;

use jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::error::{ReadError, ReadErrorKind};
use crate::kube::Fetcher;
pub use crate::kube::certificates::Certificates;
pub use crate::kube::fetch::nullable;
use crate::kube::request::field_selector;
use optional::{Extras, Optional};
pub use raw::{OptionalList, RawList, Recording};

pub use events::Event;
pub use nodes::Node;
pub use pods::Pod;
pub use pvcs::Pvc;
pub use workloads::{Workload, WorkloadKind};

pub use crate::collection::Collection;

/// Everything one successful cycle read, in compact records, ignored namespaces left out.
///
/// This is the seam between reading and everything after it: a cycle read here, one pushed by
/// an agent (see `wire`) and one read back from a recording all become a `Snapshot`, and the
/// derivation, the rules, the metrics and the pages only ever see that.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, Deserialize)]
pub struct Snapshot {
    /// When the cycle started: "now" for every age and window.
    pub time: Timestamp,
    /// `gitVersion` of /version.
    pub version: String,
    /// Shared with the store a watch keeps them in.
    pub nodes: Vec<Arc<Node>>,
    /// Every pod but the Succeeded ones, shared with the store a watch keeps them in.
    pub pods: Vec<Arc<Pod>>,
    /// Shared with the store a watch keeps them in.
    pub workloads: Vec<Arc<Workload>>,
    pub pvcs: Vec<Arc<Pvc>>,
    /// Warning events, shared with the store a watch keeps them in.
    pub events: Vec<Arc<Event>>,
    /// What the optional reads found.
    pub extras: optional::Extras,
    /// When the certificates of the connection expire.
    #[serde(default)]
    pub certificates: Certificates,
}

/// The eight collections as read (live or from a recording), before filtering.
#[derive(Debug, Default)]
pub struct Lists {
    pub version: version::Version,
    pub nodes: Vec<Arc<Node>>,
    pub pods: Vec<Arc<Pod>>,
    pub deployments: Vec<workloads::DeploymentRecord>,
    pub statefulsets: Vec<workloads::StatefulSetRecord>,
    pub daemonsets: Vec<workloads::DaemonSetRecord>,
    pub pvcs: Vec<Arc<Pvc>>,
    pub events: Vec<Arc<Event>>,
    pub extras: optional::Extras,
    pub certificates: Certificates,
    /// Which lists are known to be in their canonical order, each object once.
    pub in_order: InOrder,
    /// When the pods are the list the last cycle left (Succeeded pods and ignored namespaces
    /// already out) changed by a watch's store: where the store put the pods that changed, the
    /// only ones to leave out or keep again (at 150,000 pods, reading every pod's phase was a
    /// cache miss a pod at each cycle on a change).
    pub pods_put_at: Option<Vec<usize>>,
    /// Which lists are the very lists the last cycle left (watch mode, nothing of their kind
    /// changed since): already filtered and in order, not read again. The claims' only when
    /// `in_order` says so of them too.
    pub as_left: AsLeft,
}

/// Which of a cycle's lists are those the last cycle's snapshot left, given back to a watch's
/// store and taken again as they were (see [`GivenBack`]): what the snapshot leaves out is out
/// already, and the events are in their order.
#[derive(Clone, Copy, Debug, Default)]
pub struct AsLeft {
    pub pvcs: bool,
    pub events: bool,
}

/// The lists a cycle took from a watch's stores, given back once judged (watch mode): the next
/// cycle takes each as it is while nothing of its kind changed, and the pods' list changed
/// where pods changed, rather than a record read (and its count written) for each object.
#[derive(Debug, Default)]
pub struct GivenBack {
    pub nodes: Option<Vec<Arc<Node>>>,
    pub pods: Option<Vec<Arc<Pod>>>,
    pub pvcs: Option<Vec<Arc<Pvc>>>,
    pub events: Option<Vec<Arc<Event>>>,
}

/// Which of a cycle's lists are known to be in their canonical order (namespace, then name), each
/// object once: those given so by their source (a watch's store), not checked again.
#[derive(Clone, Copy, Debug, Default)]
pub struct InOrder {
    pub nodes: bool,
    pub pods: bool,
    pub pvcs: bool,
    /// The Deployments, the StatefulSets and the DaemonSets, each list.
    pub workloads: bool,
}

impl Lists {
    /// Leaves out Succeeded pods and the ignored namespaces (but not events about Nodes).
    pub fn into_snapshot(self, time: Timestamp, options: &CycleOptions) -> Snapshot {
        let ordered = self.in_order;
        let mut nodes = self.nodes;
        once_each(&mut nodes, ordered.nodes, |n| ("", &n.name));
        let ignored = &options.ignored_namespaces;
        let kept_pod = |p: &Arc<Pod>| p.phase != "Succeeded" && !ignored.iter().any(|n| *n == *p.namespace);
        let mut pods = self.pods;
        match &self.pods_put_at {
            Some(at) => retain_at(&mut pods, at, kept_pod),
            None => pods.retain(kept_pod),
        }
        once_each(&mut pods, ordered.pods, |p| (&p.namespace, &p.name));
        let mut workloads: Vec<Arc<Workload>> = self
            .deployments
            .into_iter()
            .map(|d| d.0)
            .chain(self.statefulsets.into_iter().map(|s| s.0))
            .chain(self.daemonsets.into_iter().map(|d| d.0))
            .collect();
        // A Deployment and a StatefulSet may share a name: one of each per kind. Each kind's list
        // in order, they come in order, by kind first.
        fn key(w: &Workload) -> (WorkloadKind, &str, &str) {
            (w.kind, w.namespace.as_str(), w.name.as_str())
        }
        if ordered.workloads {
            debug_assert!(workloads.is_sorted_by(|a, b| key(a) < key(b)), "a source's workloads out of order");
        } else {
            workloads.sort_by(|a, b| key(a).cmp(&key(b)));
            workloads.dedup_by(|a, b| key(a) == key(b));
        }
        let mut pvcs = self.pvcs;
        once_each(&mut pvcs, ordered.pvcs, |p| (&p.namespace, &p.name));
        let mut events = self.events;
        if !self.as_left.events {
            events.retain(|e| e.event_type == "Warning");
        }
        // Lists left by the last cycle: set aside while the rest is left out, then put back.
        fn aside<T>(list: &mut Vec<T>, yes: bool) -> Vec<T> {
            if yes { std::mem::take(list) } else { Vec::new() }
        }
        let (left_pvcs, left_events) = (aside(&mut pvcs, self.as_left.pvcs), aside(&mut events, self.as_left.events));
        let mut snapshot = Snapshot {
            time,
            version: self.version.git_version,
            nodes,
            pods,
            workloads,
            pvcs,
            events,
            extras: self.extras,
            certificates: self.certificates,
        };
        snapshot.leave_out_but_pods(ignored);
        // Nodes, pods, claims and workloads are in their canonical order already (above; what
        // is left out keeps it): the events only are not, but for those the last cycle left.
        if self.as_left.events {
            debug_assert!(left_events.is_sorted(), "events given back out of order");
            snapshot.events = left_events;
        } else {
            snapshot.events.sort();
        }
        if self.as_left.pvcs {
            snapshot.pvcs = left_pvcs;
        }
        snapshot
    }
}

impl Snapshot {
    /// Leaves out what is in the ignored namespaces (but not events about Nodes, which may be
    /// recorded in one).
    pub fn leave_out(&mut self, ignored: &[String]) {
        if ignored.is_empty() {
            return;
        }
        self.pods.retain(|p| !ignored.iter().any(|n| *n == *p.namespace));
        self.leave_out_but_pods(ignored);
    }

    /// [`Snapshot::leave_out`] but for the pods.
    fn leave_out_but_pods(&mut self, ignored: &[String]) {
        if ignored.is_empty() {
            return;
        }
        let ignored = |namespace: &str| ignored.iter().any(|n| n == namespace);
        self.workloads.retain(|w| !ignored(&w.namespace));
        self.pvcs.retain(|p| !ignored(&p.namespace));
        self.events.retain(|e| {
            e.kind == "Node" || !(ignored(&e.namespace) || e.object_namespace.as_deref().is_some_and(ignored))
        });
        self.extras.leave_out(&ignored);
    }

    /// Puts every list in its one order: nodes by name; pods and claims by namespace then name;
    /// workloads by kind, namespace and name; events by every field. A snapshot rebuilt from an
    /// agent's report (which does not carry order) is then the snapshot the agent read.
    pub fn canonical_order(&mut self) {
        self.nodes.sort_by(|a, b| a.name.cmp(&b.name));
        self.pods.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        self.workloads.sort_by(|a, b| (a.kind, &a.namespace, &a.name).cmp(&(b.kind, &b.namespace, &b.name)));
        self.pvcs.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        self.events.sort();
    }
}

/// Leaves out the items at `at` (in increasing order) that `keep` does not keep; every other
/// item is kept unread.
fn retain_at<T>(items: &mut Vec<T>, at: &[usize], keep: impl Fn(&T) -> bool) {
    let mut at = at.iter().copied().peekable();
    let mut i = 0;
    // `retain` visits each item once, in order.
    items.retain(|item| {
        let here = i;
        i += 1;
        while at.next_if(|&a| a < here).is_some() {}
        at.next_if_eq(&here).is_none() || keep(item)
    });
}

/// Orders objects by (namespace, name) and keeps one of each. A List never holds an object
/// twice, but a misbehaving server or proxy that repeats items across pages would otherwise
/// make one pod count twice.
///
/// A list its source gives `in_order` is left as it is (checked in debug builds).
fn once_each<T>(items: &mut Vec<T>, in_order: bool, key: impl Fn(&T) -> (&str, &str)) {
    if in_order {
        debug_assert!(items.is_sorted_by(|a, b| key(a) < key(b)), "a source's list out of order");
        return;
    }
    // A list read in this order, each once (as the API server gives it): nothing to do then.
    if items.is_sorted_by(|a, b| key(a) < key(b)) {
        return;
    }
    items.sort_by(|a, b| key(a).cmp(&key(b)));
    items.dedup_by(|a, b| key(a) == key(b));
}

/// How one collection went: `collection_duration_seconds` and `collection_success`.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectionStat {
    pub collection: Collection,
    pub duration: Duration,
    pub ok: bool,
}

impl CollectionStat {
    /// How a read that took `duration` went, as node_exporter judges a collector: success when it
    /// gave what it was asked for, failure for any error (for an optional read, a 403 too: the
    /// monitor is refused what it is deployed to read). None, no stat at all, for an optional
    /// read of an API the cluster does not serve (404: metrics-server not deployed, say): that
    /// collection is not there to read, which is not a failure of the monitor. A core read has
    /// a stat whatever happened.
    pub fn of<T>(collection: Collection, duration: Duration, result: &Result<T, ReadError>) -> Option<CollectionStat> {
        let not_served = matches!(result, Err(ReadError { kind: ReadErrorKind::Status { code: 404, .. }, .. }));
        if not_served && collection.optional() {
            return None;
        }
        Some(CollectionStat { collection, duration, ok: result.is_ok() })
    }
}

/// The outcome of one cycle. A cycle succeeds only if all eight reads succeed.
#[derive(Debug)]
pub struct Cycle {
    pub time: Timestamp,
    pub duration: Duration,
    /// The eight core reads in their order, then the optional reads that have a stat (see
    /// [`CollectionStat::of`]; none for the Metrics API when it was not asked).
    pub stats: Vec<CollectionStat>,
    pub result: Result<Snapshot, ReadError>,
    /// What the API server returned, when the cycle was asked to record it and succeeded.
    pub recording: Option<Recording>,
}

/// What a cycle reads of the server besides the collections, when it needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ServerRead {
    /// The events that say what the Pending claims wait for.
    ClaimEvents,
    /// The Services and EndpointSlices behind the admission webhooks.
    Backends,
}

/// How a cycle reads each collection from its [`Source`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions {
    /// Keep each List as the API server returned it (`--record`).
    pub record: bool,
    /// A cycle between intervals (watch mode): what is read from the server itself at each
    /// interval is taken as the last interval cycle read it.
    pub between: bool,
}

/// What a cycle leaves out, and whether it keeps what it read.
#[derive(Clone, Debug, Default)]
pub struct CycleOptions {
    pub ignored_namespaces: Vec<String>,
    /// Keep each List as the API server returned it, for `--record`.
    pub record: bool,
    /// Watch mode: a cycle taken on a change, between intervals, which takes `/version`, the
    /// Metrics API and the collections read every interval as the last interval cycle read them.
    pub between: bool,
    /// Namespaced access: the namespaces to read, each by itself (see [`scope`]); empty, the
    /// whole cluster.
    pub namespaces: Vec<String>,
}

impl CycleOptions {
    /// What a connection's settings say a cycle leaves out and reads (`ignored_namespaces`,
    /// `namespaces`).
    pub fn of(connect: &crate::kube::connect::ConnectOptions) -> CycleOptions {
        CycleOptions {
            ignored_namespaces: connect.ignored_namespaces.clone(),
            namespaces: connect.namespaces.clone(),
            ..CycleOptions::default()
        }
    }
}

/// A compact record that is decoded from the object the API server sends: the API's JSON is
/// read into `Raw`, which becomes the record. The record's own serde form is the agent's wire
/// form (`wire`), not the API's.
pub trait FromApi: Sized {
    type Raw: DeserializeOwned + Into<Self>;
    /// The kind's protobuf decoding, when it is read from protobuf too (its watches then ask
    /// for it): its message (out of its envelope) into the compact record, by way of the same
    /// raw form as its JSON. A kind read from protobuf is given its decoder here or not at all.
    const PROTOBUF: Option<Decoder<Self>> = None;

    /// Takes the names its store keeps it by (namespace, name), for those of its own that are
    /// the same, and the words its store's records hold alike from `words`: each is then held
    /// once, not once a record, for as long as the store keeps them. A record that holds none
    /// keeps nothing.
    fn share_names(&mut self, _key: &(Arc<str>, Arc<str>), _words: &mut Words) {}
}

/// Texts many records of a kind hold alike (the node a pod is on, its workload): a store holds
/// one copy of each for all its records. Those no record holds any more are let go as more
/// come: a cluster whose nodes come and go does not grow it for ever.
#[derive(Debug, Default)]
pub struct Words {
    held: std::collections::HashSet<Arc<str>>,
    /// How many it held when those no record held were last let go.
    pruned: usize,
}

impl Words {
    /// Makes `word` the copy held: the one held already, or itself, held from now on.
    pub fn share(&mut self, word: &mut Arc<str>) {
        if let Some(held) = self.held.get(&**word) {
            *word = held.clone();
            return;
        }
        if self.held.len() >= 2 * self.pruned + 64 {
            self.held.retain(|w| Arc::strong_count(w) > 1);
            self.pruned = self.held.len();
        }
        self.held.insert(word.clone());
    }
}

/// A kind's protobuf decoding: its message into its compact record, or why not.
pub type Decoder<T> = fn(&[u8]) -> Result<T, Undecoded>;

/// Why an object or an event could not be decoded: said as the detail of the read's error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Undecoded(pub String);

/// An item as the API server sends it, decoded into its compact record `T`.
#[derive(Debug)]
#[repr(transparent)]
pub struct Api<T>(pub T);

impl<'de, T: FromApi> Deserialize<'de> for Api<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Api<T>, D::Error> {
        T::Raw::deserialize(d).map(|raw| Api(raw.into()))
    }
}

/// Decodes one object of the API into its compact record.
pub fn from_api<T: FromApi>(json: &str) -> serde_json::Result<T> {
    serde_json::from_str::<Api<T>>(json).map(|a| a.0)
}

/// Unwraps decoded items (in place: `Api<T>` has the layout of `T`).
pub fn unwrap_api<T>(items: Vec<Api<T>>) -> Vec<T> {
    items.into_iter().map(|a| a.0).collect()
}

/// Where a cycle's collections come from: the API server itself (a [`Fetcher`]: every
/// collection listed) or the stores of watch mode ([`follow::Follower`]). Either way the cycle is
/// assembled by [`run`], and everything after it is the same.
pub trait Source: Sync {
    /// The connection: for `/version` (by default) and the reads of a namespaced scope.
    fn fetcher(&self) -> &Fetcher;

    /// One collection's compact records (and, when recording, the List as returned).
    fn list<T: follow::Followed>(
        &self,
        c: Collection,
        selector: Option<&str>,
        how: ReadOptions,
    ) -> impl Future<Output = ReadList<T>> + Send;

    /// `/version` (and, when recording, as returned).
    fn version(
        &self,
        how: ReadOptions,
    ) -> impl Future<Output = Result<(version::Version, Option<Box<RawValue>>), ReadError>> + Send {
        read_version(self.fetcher(), how.record)
    }

    /// The collections whose watch is not granted (read every interval instead).
    fn read_every_interval(&self) -> Vec<Collection> {
        Vec::new()
    }

    /// A read of the server itself beside the collections: by default `read`, at every cycle.
    /// A watch's cycles between intervals take it as the last interval cycle made it, as they
    /// take `/version`, so that a cycle on a change reads nothing of the server.
    fn each_interval<T: Clone + Send + 'static>(
        &self,
        _what: ServerRead,
        _how: ReadOptions,
        read: impl Future<Output = T> + Send,
    ) -> impl Future<Output = T> + Send {
        read
    }

    /// Whether the last list of `c` this source gave holds its objects in their canonical order
    /// (namespace, then name), each once: a cycle then does not check the order again (at
    /// 10,000 pods, that check was a tenth of a cycle taken from a watch's stores).
    fn in_order(&self, _c: Collection) -> bool {
        false
    }

    /// When the last list of `c` this source gave is the one the last cycle left (filtered
    /// already), changed: where it put the objects that changed (see [`Lists::pods_put_at`]);
    /// none when it is that list as it was ([`Lists::as_left`]).
    fn put_at(&self, _c: Collection) -> Option<Vec<usize>> {
        None
    }
}

impl Source for Fetcher {
    fn fetcher(&self) -> &Fetcher {
        self
    }

    async fn list<T: follow::Followed>(&self, c: Collection, selector: Option<&str>, how: ReadOptions) -> ReadList<T> {
        read::<T>(self, c, selector, how.record).await
    }
}

/// Reads one List into compact views, keeping the raw items too when recording.
async fn read<T: FromApi>(
    f: &Fetcher,
    c: Collection,
    selector: Option<&str>,
    record: bool,
) -> Result<(Vec<T>, Option<RawList>), ReadError> {
    if !record {
        return Ok((unwrap_api(f.list::<Api<T>>(c, c.path(), selector).await?.items), None));
    }
    let listed = f.list::<Box<RawValue>>(c, c.path(), selector).await?;
    let items =
        listed.items.iter().map(|raw| from_api::<T>(raw.get())).collect::<Result<Vec<T>, _>>().map_err(|e| {
            ReadError {
                address: f.address().to_string(),
                collection: c,
                kind: crate::error::ReadErrorKind::Unreadable { detail: format!("invalid item: {e}") },
            }
        })?;
    Ok((items, Some(RawList { collection: c, resource_version: listed.resource_version, items: listed.items })))
}

async fn read_version(f: &Fetcher, record: bool) -> Result<(version::Version, Option<Box<RawValue>>), ReadError> {
    let c = Collection::VERSION;
    if !record {
        return Ok((f.get(c, c.path()).await?, None));
    }
    let raw: Box<RawValue> = f.get(c, c.path()).await?;
    let v = serde_json::from_str(raw.get()).map_err(|e| ReadError {
        address: f.address().to_string(),
        collection: c,
        kind: crate::error::ReadErrorKind::Unreadable { detail: format!("invalid JSON: {e}") },
    })?;
    Ok((v, Some(raw)))
}

/// One collection's List: from the source, or with namespaced access in each namespace.
async fn list_in<S: Source, T: follow::Followed>(
    s: &S,
    scope: Option<&scope::Scope>,
    c: Collection,
    selector: Option<&str>,
    rec: ReadOptions,
) -> ReadList<T> {
    match scope {
        Some(scope) if c.namespaced() => scope.list::<T>(s.fetcher(), c, selector).await,
        _ => s.list::<T>(c, selector, rec).await,
    }
}

/// Reads `/version`, then the other collections in parallel (and the optional reads), from
/// `source`.
pub async fn run<S: Source>(source: &S, options: &CycleOptions, now: Timestamp) -> Cycle {
    let started = Instant::now();
    let skip = field_selector(None, &options.ignored_namespaces);
    let skip = skip.as_deref();
    let scope = scope::Scope::new(&options.namespaces, &options.ignored_namespaces);
    let sc = scope.as_ref();
    let namespaced = sc.is_some();
    // A recording keeps cluster-wide Lists: not with namespaced access (refused where set).
    let (s, rec) = (source, ReadOptions { record: options.record && sc.is_none(), between: options.between });
    let f = s.fetcher();
    // `/version` first, alone: it opens the cycle's connection, which the other reads then
    // share where the server speaks HTTP/2. Sent together, each read found no connection yet
    // and made its own, a TLS handshake each (up to 13 a cycle) for one connection kept.
    let version = timed(Collection::VERSION, s.version(rec)).await;
    let (nodes, pods, deployments, statefulsets, daemonsets, pvcs, events, extras) = tokio::join!(
        timed(Collection::NODES, s.list::<Arc<Node>>(Collection::NODES, None, rec)),
        timed(Collection::PODS, list_in::<S, Arc<Pod>>(s, sc, Collection::PODS, skip, rec)),
        timed(
            Collection::DEPLOYMENTS,
            list_in::<S, workloads::DeploymentRecord>(s, sc, Collection::DEPLOYMENTS, skip, rec)
        ),
        timed(
            Collection::STATEFULSETS,
            list_in::<S, workloads::StatefulSetRecord>(s, sc, Collection::STATEFULSETS, skip, rec)
        ),
        timed(
            Collection::DAEMONSETS,
            list_in::<S, workloads::DaemonSetRecord>(s, sc, Collection::DAEMONSETS, skip, rec)
        ),
        timed(Collection::PVCS, list_in::<S, Arc<Pvc>>(s, sc, Collection::PVCS, skip, rec)),
        // Not filtered by namespace on the server: a Node's events may be recorded in an ignored one.
        timed(Collection::EVENTS, list_in::<S, Arc<Event>>(s, sc, Collection::EVENTS, Some("type=Warning"), rec)),
        read_optional(s, sc, rec),
    );
    // What a Pending claim waits for: one List more, in a cycle that has one.
    let pending = pvcs.1.as_ref().is_ok_and(|(claims, _)| claims.iter().any(|c| c.phase == "Pending"));
    let claim_events = async { if pending { read_claim_events(f, sc).await } else { Vec::new() } };
    let claim_events = s.each_interval(ServerRead::ClaimEvents, rec, claim_events).await;
    // Whether the namespaces in which nothing at all was found exist (after the lists: only for
    // those, so that a namespace that has objects costs no request more).
    let not_found = match sc {
        Some(sc) => sc.not_found(f).await,
        None => Vec::new(),
    };
    // Namespaced access: nodes refused leave the cycle whole, without nodes and without a stat
    // (not a failure of the monitor: the token was never meant to see them).
    let (nodes, nodes_hidden) = match nodes {
        (_, Err(e)) if sc.is_some() && scope::forbidden(&e) => ((None, Ok((Vec::new(), None))), true),
        read => (read, false),
    };
    let (mut extras, optional, optional_stats) = extras;
    extras.claim_events = claim_events;
    extras.namespaced = scope.map(|sc| sc.finish(&not_found, nodes_hidden));
    // Said of the collections read every interval instead: one whose list is refused too is
    // not granted at all, as list mode says.
    let read_ok = |c: &Collection| {
        optional_stats
            .iter()
            .chain(
                [&nodes.0, &pods.0, &deployments.0, &statefulsets.0, &daemonsets.0, &pvcs.0, &events.0]
                    .into_iter()
                    .flatten(),
            )
            .any(|st| st.collection == *c && st.ok)
    };
    extras.watch_not_granted =
        s.read_every_interval().iter().filter(|c| read_ok(c)).map(|c| c.resource().to_string()).collect();
    let core_stats = [
        version.0.clone(),
        nodes.0.clone(),
        pods.0.clone(),
        deployments.0.clone(),
        statefulsets.0.clone(),
        daemonsets.0.clone(),
        pvcs.0.clone(),
        events.0.clone(),
    ];
    let stats = core_stats.into_iter().flatten().chain(optional_stats).collect();
    let unauthorized = [
        version.1.as_ref().err(),
        nodes.1.as_ref().err(),
        pods.1.as_ref().err(),
        deployments.1.as_ref().err(),
        statefulsets.1.as_ref().err(),
        daemonsets.1.as_ref().err(),
        pvcs.1.as_ref().err(),
        events.1.as_ref().err(),
    ]
    .into_iter()
    .flatten()
    .find(|e| e.kind == ReadErrorKind::Unauthorized)
    .cloned();
    // The first failure in collection order is the cycle's one error (see `cause`).
    let assembled = (|| {
        let (version, raw_version) = version.1?;
        let mut raw = Vec::new();
        let nodes = kept(nodes.1, &mut raw)?;
        let pods = kept(pods.1, &mut raw)?;
        let deployments = kept(deployments.1, &mut raw)?;
        let statefulsets = kept(statefulsets.1, &mut raw)?;
        let daemonsets = kept(daemonsets.1, &mut raw)?;
        let pvcs = kept(pvcs.1, &mut raw)?;
        let events = kept(events.1, &mut raw)?;
        let certificates = f.certificates();
        // A namespaced read of a namespaced kind is the scope's, not the source's.
        let in_order = |c: Collection| !(namespaced && c.namespaced()) && s.in_order(c);
        let in_order = InOrder {
            nodes: in_order(Collection::NODES),
            pods: in_order(Collection::PODS),
            pvcs: in_order(Collection::PVCS),
            workloads: [Collection::DEPLOYMENTS, Collection::STATEFULSETS, Collection::DAEMONSETS]
                .into_iter()
                .all(in_order),
        };
        let lists = Lists {
            version,
            nodes,
            pods,
            deployments,
            statefulsets,
            daemonsets,
            pvcs,
            events,
            extras,
            certificates: certificates.clone(),
            in_order,
            pods_put_at: if in_order.pods { s.put_at(Collection::PODS) } else { None },
            as_left: AsLeft {
                pvcs: in_order.pvcs && s.put_at(Collection::PVCS).is_some_and(|at| at.is_empty()),
                events: !namespaced && s.put_at(Collection::EVENTS).is_some_and(|at| at.is_empty()),
            },
        };
        let recording = raw_version.map(|version| Recording { version, lists: raw, optional, certificates });
        Ok((lists.into_snapshot(now, options), recording))
    })();
    let (result, recording) = match assembled {
        Ok((snapshot, recording)) => (Ok(snapshot), recording),
        Err(e) => (Err(cause(e, unauthorized)), None),
    };
    Cycle { time: now, duration: started.elapsed(), stats, result, recording }
}

/// The cycle's one error: the first failure in collection order, except that a read whose
/// connection was closed under it (GOAWAY) gives way to a 401 of the same cycle. kube-apiserver
/// closes a connection that carried a request it would not authenticate, cutting the other
/// reads on it: the 401 says what happened, the cut read only that it was there.
fn cause(first: ReadError, unauthorized: Option<ReadError>) -> ReadError {
    match (&first.kind, unauthorized) {
        (ReadErrorKind::GoneAway, Some(u)) => u,
        _ => first,
    }
}

/// The optional reads, in parallel with the core's: the APIServices and the registry's kinds
/// at once, the Metrics API once its APIService is known not to be down. Also what to record of
/// each, and the stat of each read that has one, in the order of `kinds::every`.
async fn read_optional<S: Source>(
    s: &S,
    sc: Option<&scope::Scope>,
    rec: ReadOptions,
) -> (Extras, Vec<(Collection, OptionalList)>, Vec<CollectionStat>) {
    let f = s.fetcher();
    // Through the source, as every read: in watch mode a cycle between intervals takes the
    // Metrics API's answer of the last interval cycle instead of asking again.
    let pod_metrics = async {
        match sc {
            Some(sc) => sc.list::<optional::Usage>(f, Collection::POD_METRICS, None).await,
            None => s.list::<optional::Usage>(Collection::POD_METRICS, None, rec).await,
        }
    };
    let metrics = async {
        let apiservices =
            timed(Collection::APISERVICES, s.list::<optional::ApiService>(Collection::APISERVICES, None, rec)).await;
        let down = apiservices.1.as_ref().is_ok_and(|(list, _)| {
            list.iter().any(|a| a.name == optional::METRICS_APISERVICE && a.available == Some(false))
        });
        let (nodes, pods) = if down {
            (None, None)
        } else {
            let (n, p) = tokio::join!(
                timed(Collection::NODE_METRICS, s.list::<optional::Usage>(Collection::NODE_METRICS, None, rec)),
                timed(Collection::POD_METRICS, pod_metrics)
            );
            (Some(n), Some(p))
        };
        (apiservices, nodes, pods)
    };
    let ((apiservices, nodes, pods), kinds) = tokio::join!(metrics, join_all(kind_reads(s, sc, rec)));
    let (mut recorded, mut stats) = (Vec::new(), Vec::new());
    let (r, st) = (&mut recorded, &mut stats);
    let mut extras = Extras {
        apiservices: kept_optional(Collection::APISERVICES, Some(apiservices), st, r),
        node_metrics: kept_optional(Collection::NODE_METRICS, nodes, st, r),
        pod_metrics: kept_optional(Collection::POD_METRICS, pods, st, r),
        ..Extras::default()
    };
    for read in kinds {
        st.extend(read.stats);
        r.extend(read.recorded);
        (read.put)(&mut extras);
    }
    let (services, endpointslices, backend_stats) =
        s.each_interval(ServerRead::Backends, rec, read_backends(f, &extras)).await;
    (extras.services, extras.endpointslices) = (services, endpointslices);
    stats.extend(backend_stats);
    (extras, recorded, stats)
}

/// The PersistentVolume controller's events that say what Pending claims wait for
/// (`pvcs::CLAIM_EVENTS`): straight from the API server, watch mode too (its store of events
/// holds the Warning ones). A failure leaves the claims' why to their Warning events: it is
/// said in the log, not as a read of its own.
async fn read_claim_events(f: &Fetcher, sc: Option<&scope::Scope>) -> Vec<Event> {
    let read = match sc {
        Some(sc) => sc.list::<Event>(f, Collection::EVENTS, Some(pvcs::CLAIM_EVENTS)).await,
        None => read::<Event>(f, Collection::EVENTS, Some(pvcs::CLAIM_EVENTS), false).await,
    };
    match read {
        Ok((events, _)) => events.into_iter().filter(|e| pvcs::WAITS.contains(&e.reason.as_str())).collect(),
        Err(e) => {
            tracing::debug!(target: "dumbmonit::collect", error = %e, "what the Pending claims wait for was not read");
            Vec::new()
        }
    }
}

/// The webhooks' Services and EndpointSlices, listed in the namespaces those Services live in
/// (each namespace's two Lists in parallel), once the webhooks are read; not asked when no
/// webhook names a Service.
async fn read_backends(f: &Fetcher, extras: &Extras) -> Backends {
    let validating = extras.validatingwebhookconfigurations.read().into_iter().flatten().map(|v| &v.0);
    let mutating = extras.mutatingwebhookconfigurations.read().into_iter().flatten().map(|m| &m.0);
    let namespaces = backends::namespaces(validating.chain(mutating));
    // Not filtered by the ignored namespaces: a webhook in one stops changes everywhere.
    let Some(scope) = scope::Scope::new(&namespaces, &[]) else {
        return (Optional::Skipped, Optional::Skipped, Vec::new());
    };
    let (services, slices) = tokio::join!(
        timed(backends::SERVICES, scope.list::<backends::Service>(f, backends::SERVICES, None)),
        timed(backends::ENDPOINTSLICES, scope.list::<backends::EndpointSlice>(f, backends::ENDPOINTSLICES, None)),
    );
    let (mut none, mut stats) = (Vec::new(), Vec::new());
    let services = kept_optional(backends::SERVICES, Some(services), &mut stats, &mut none);
    let slices = kept_optional(backends::ENDPOINTSLICES, Some(slices), &mut stats, &mut none);
    (services, slices, stats)
}

/// The webhooks' Services and EndpointSlices as read, and how their reads went.
type Backends = (Optional<Vec<backends::Service>>, Optional<Vec<backends::EndpointSlice>>, Vec<CollectionStat>);

/// What one of the registry's kinds read, ready to take its place in the cycle: its stat
/// (when it has one), what to record of it, and its outcome to put into the extras.
struct KindRead {
    stats: Vec<CollectionStat>,
    recorded: Vec<(Collection, OptionalList)>,
    put: Box<dyn FnOnce(&mut Extras) + Send>,
}

/// Reads one kind of the registry, through the one wrapper.
async fn read_kind<S: Source, K: kinds::Kind + optional::InExtras>(
    s: &S,
    sc: Option<&scope::Scope>,
    rec: ReadOptions,
) -> KindRead {
    let c = K::COLLECTION;
    let read = timed(c, list_in::<S, K>(s, sc, c, None, rec)).await;
    let (mut stats, mut recorded) = (Vec::new(), Vec::new());
    let outcome = kept_optional(c, Some(read), &mut stats, &mut recorded);
    KindRead { stats, recorded, put: Box::new(move |extras| *K::slot(extras) = outcome) }
}

type Reading<'a> = std::pin::Pin<Box<dyn Future<Output = KindRead> + Send + 'a>>;

macro_rules! reads {
    ($($(#[$m:meta])* $field:ident: $ty:ty),* $(,)?) => {
        /// The reads of the registry's kinds, in its order.
        #[allow(clippy::vec_init_then_push)] // a line of the registry may be left out (cfg)
        fn kind_reads<'a, S: Source>(s: &'a S, sc: Option<&'a scope::Scope>, rec: ReadOptions) -> Vec<Reading<'a>> {
            let mut out: Vec<Reading<'a>> = Vec::new();
            $( $(#[$m])* out.push(Box::pin(read_kind::<S, $ty>(s, sc, rec))); )*
            out
        }
    };
}
kinds::registry!(reads);

/// An optional read's outcome (None: not asked for); its stat, when it has one, goes to `stats`,
/// and what to record of it to `recorded` when recording.
fn kept_optional<T>(
    c: Collection,
    read: Option<Timed<ReadList<T>>>,
    stats: &mut Vec<CollectionStat>,
    recorded: &mut Vec<(Collection, OptionalList)>,
) -> Optional<Vec<T>> {
    let Some((stat, read)) = read else {
        return Optional::Skipped;
    };
    stats.extend(stat);
    match read {
        Ok((items, raw)) => {
            recorded.extend(raw.map(|raw| (c, OptionalList::Read(raw))));
            Optional::Read(items)
        }
        Err(e) => {
            let outcome = Optional::from_result(Err(e));
            let shown = match &outcome {
                Optional::Failed(m) => OptionalList::Failed(m.clone()),
                _ => OptionalList::NotGranted,
            };
            recorded.push((c, shown));
            outcome
        }
    }
}

/// A List read: its items, and the List as returned when recording.
pub type ReadList<T> = Result<(Vec<T>, Option<RawList>), ReadError>;

/// A read's items, its raw List (when recording) set aside in `raw`.
fn kept<T>(read: ReadList<T>, raw: &mut Vec<RawList>) -> Result<Vec<T>, ReadError> {
    let (items, list) = read?;
    raw.extend(list);
    Ok(items)
}

/// A read's outcome beside its stat.
type Timed<R> = (Option<CollectionStat>, R);

/// The one wrapper every read of a cycle goes through, core and optional alike: times it, and
/// judges it ([`CollectionStat::of`]).
async fn timed<T>(
    collection: Collection,
    read: impl Future<Output = Result<T, ReadError>>,
) -> Timed<Result<T, ReadError>> {
    let started = Instant::now();
    let result = read.await;
    (CollectionStat::of(collection, started.elapsed(), &result), result)
}

/// The fields of `metadata` the views use.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Meta {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    #[serde(deserialize_with = "nullable")]
    pub namespace: String,
    pub creation_timestamp: Option<String>,
}

/// `metadata` with the generation: what the spec's last change made it, for a controller's
/// `status.observedGeneration` to be compared with.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct GenerationMeta {
    #[serde(flatten)]
    pub meta: Meta,
    #[serde(deserialize_with = "nullable")]
    pub generation: i64,
}

/// A `metav1.Time` or `MicroTime`, when it parses.
pub(crate) fn parse_time(s: Option<&str>) -> Option<Timestamp> {
    s.filter(|s| !s.is_empty()).and_then(|s| s.parse().ok())
}

#[cfg(test)]
mod tests {
    /// A word no record holds any more is let go as more come, and one still held is kept.
    #[test]
    fn words_no_record_holds_are_let_go() {
        let mut words = Words::default();
        let mut kept: Arc<str> = "node-kept".into();
        words.share(&mut kept);
        for i in 0..1000 {
            words.share(&mut Arc::from(format!("node-{i}")));
        }
        assert!(words.held.len() <= 2 * 64 + 1, "{} words held for one record", words.held.len());
        let mut again: Arc<str> = "node-kept".into();
        words.share(&mut again);
        assert!(Arc::ptr_eq(&again, &kept), "a word still held is the copy shared");
    }

    use super::*;
    use kinds::Kind;
    use kinds::{cronjob::CronJob, hpa::Hpa, job::Job};

    /// A list a store changed from the one the last cycle left: only the pods it put in are
    /// left out or kept again; the others are as that cycle kept them, not read.
    #[test]
    fn a_list_changed_from_the_last_cycles_leaves_out_only_among_the_pods_put_in() {
        let pod = |namespace: &str, name: &str, phase: &str| {
            Arc::new(Pod {
                namespace: namespace.into(),
                name: name.into(),
                workload: "".into(),
                owner: Default::default(),
                phase: phase.into(),
                ready: false,
                detail: None,
                restarts: 0,
                containers: vec![],
                claims: vec![],
                node: "".into(),
                resources: Default::default(),
            })
        };
        let list = || {
            vec![
                pod("a", "p0", "Succeeded"),
                pod("a", "p1", "Succeeded"),
                pod("a", "p2", "Running"),
                pod("hidden", "p3", "Running"),
                pod("hidden", "p4", "Running"),
                pod("z", "p5", "Succeeded"),
            ]
        };
        let options = CycleOptions { ignored_namespaces: vec!["hidden".into()], ..Default::default() };
        let names = |lists: Lists| -> Vec<String> {
            lists.into_snapshot(Timestamp::UNIX_EPOCH, &options).pods.iter().map(|p| p.name.to_string()).collect()
        };
        let in_order = InOrder { pods: true, ..Default::default() };
        let fresh = Lists { pods: list(), in_order, ..Default::default() };
        assert_eq!(names(fresh), ["p2"], "a list made afresh: every pod read");
        let changed = Lists { pods: list(), in_order, pods_put_at: Some(vec![1, 2, 4]), ..Default::default() };
        assert_eq!(names(changed), ["p0", "p2", "p3", "p5"], "p1 and p4 were put in; p0, p3 and p5 are the cycle's");
        let none_put = Lists { pods: list(), in_order, pods_put_at: Some(vec![]), ..Default::default() };
        assert_eq!(names(none_put).len(), 6);
    }

    /// The claims and events the last cycle left, taken again from a watch's stores, are that
    /// cycle's already: left out where they should be and in order, so not read again (what a
    /// cycle would leave out of a fresh list, as here, shows that they are not).
    #[test]
    fn lists_the_last_cycle_left_are_taken_as_they_are() {
        let event = |namespace: &str, reason: &str, event_type: &str| {
            Arc::new(Event {
                namespace: namespace.into(),
                kind: "Pod".into(),
                object_namespace: Some(namespace.into()),
                object_name: "p".into(),
                reason: reason.into(),
                message: String::new(),
                event_type: event_type.into(),
                last_seen: None,
                count: 1,
            })
        };
        // In the events' order; one Normal, one in an ignored namespace.
        let events = || {
            vec![
                event("a", "Started", "Normal"),
                event("hidden", "BackOff", "Warning"),
                event("z", "Failed", "Warning"),
            ]
        };
        let claim =
            |namespace: &str| Arc::new(Pvc { namespace: namespace.into(), name: "c".into(), phase: "Bound".into() });
        let claims = || vec![claim("a"), claim("hidden")];
        let options = CycleOptions { ignored_namespaces: vec!["hidden".into()], ..Default::default() };
        let taken = |as_left: AsLeft| {
            let lists = Lists {
                events: events(),
                pvcs: claims(),
                in_order: InOrder { pvcs: true, ..Default::default() },
                as_left,
                ..Default::default()
            };
            let s = lists.into_snapshot(Timestamp::UNIX_EPOCH, &options);
            (s.pvcs.len(), s.events.iter().map(|e| e.reason.as_str()).collect::<Vec<_>>().join(","))
        };
        assert_eq!(taken(AsLeft::default()), (1, "Failed".to_string()), "lists made afresh: every object read");
        assert_eq!(taken(AsLeft { pvcs: true, events: true }), (2, "Started,BackOff,Failed".to_string()));
        assert_eq!(taken(AsLeft { pvcs: false, events: true }), (1, "Started,BackOff,Failed".to_string()));
        assert_eq!(taken(AsLeft { pvcs: true, events: false }), (2, "Failed".to_string()));
    }

    fn failed(kind: ReadErrorKind) -> Result<(), ReadError> {
        Err(ReadError { address: "https://k3s.lan:6443".into(), collection: Job::COLLECTION, kind })
    }

    fn ok(stat: Option<CollectionStat>) -> Option<bool> {
        stat.map(|s| s.ok)
    }

    #[test]
    fn every_read_is_judged_alike_but_an_api_the_cluster_does_not_serve() {
        let d = Duration::from_millis(12);
        let not_found = || failed(ReadErrorKind::Status { code: 404, message: "the server could not find it".into() });
        let forbidden = || failed(ReadErrorKind::Forbidden { message: "jobs.batch is forbidden".into() });
        let timeout = || failed(ReadErrorKind::Timeout { after: Duration::from_secs(10) });
        for c in crate::collect::kinds::every().into_iter() {
            let stat = CollectionStat::of(c, d, &Ok::<(), ReadError>(()));
            assert_eq!(stat, Some(CollectionStat { collection: c, duration: d, ok: true }), "{c:?}");
            assert_eq!(ok(CollectionStat::of(c, d, &forbidden())), Some(false), "{c:?}: a refused read failed");
            assert_eq!(ok(CollectionStat::of(c, d, &timeout())), Some(false), "{c:?}");
            let absent = if c.optional() { None } else { Some(false) };
            assert_eq!(ok(CollectionStat::of(c, d, &not_found())), absent, "{c:?}: 404");
        }
        let unavailable = failed(ReadErrorKind::Status { code: 503, message: "the server is currently unable".into() });
        assert_eq!(ok(CollectionStat::of(Collection::NODE_METRICS, d, &unavailable)), Some(false));
    }

    /// A list read is put in order, each object once; a list its source gives in order (a
    /// watch's store) is left as it is, and one that is not after all is caught in debug builds,
    /// which every test runs.
    #[test]
    fn a_list_is_put_in_order_once_each_unless_its_source_gives_it_so() {
        fn key<'a>(o: &'a (&str, &str)) -> (&'a str, &'a str) {
            (o.0, o.1)
        }
        let mut read = vec![("shop", "b"), ("lab", "y"), ("shop", "b"), ("lab", "a")];
        once_each(&mut read, false, key);
        assert_eq!(read, [("lab", "a"), ("lab", "y"), ("shop", "b")]);
        let mut given = read.clone();
        once_each(&mut given, true, key);
        assert_eq!(given, read);
        let wrong = std::panic::catch_unwind(|| once_each(&mut vec![("shop", "b"), ("lab", "y")], true, key));
        assert_eq!(wrong.is_err(), cfg!(debug_assertions), "a list out of order, given as in order");
    }

    #[test]
    fn a_read_cut_by_a_goaway_gives_way_to_the_401_that_caused_it() {
        let error = |collection, kind| ReadError { address: "https://k3s.lan:6443".into(), collection, kind };
        let cut = error(Collection::NODES, ReadErrorKind::GoneAway);
        let refused = error(Collection::PODS, ReadErrorKind::Unauthorized);
        assert_eq!(cause(cut.clone(), Some(refused.clone())), refused);
        assert_eq!(cause(cut.clone(), None), cut, "no 401: the cut is all there is to say");
        let timeout = error(Collection::NODES, ReadErrorKind::Timeout { after: Duration::from_secs(10) });
        assert_eq!(cause(timeout.clone(), Some(refused)), timeout, "only a cut connection gives way");
        assert_eq!(
            cut.to_string(),
            "The connection to https://k3s.lan:6443 while reading nodes was closed by the API server before its \
             answer (HTTP/2 GOAWAY)"
        );
    }

    #[tokio::test]
    async fn the_wrapper_times_the_read_and_keeps_its_outcome() {
        let read = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok::<u32, ReadError>(7)
        };
        let (stat, result) = timed(Hpa::COLLECTION, read).await;
        let stat = stat.unwrap();
        assert_eq!((stat.collection, stat.ok, result.unwrap()), (Hpa::COLLECTION, true, 7));
        assert!(stat.duration >= Duration::from_millis(20), "{:?}", stat.duration);
        let (stat, result) =
            timed(CronJob::COLLECTION, async { failed(ReadErrorKind::Status { code: 404, message: String::new() }) })
                .await;
        assert!(stat.is_none() && result.is_err());
    }
}
