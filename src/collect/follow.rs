//! Watch mode: each collection followed by list-then-watch and kept, as compact records, in a
//! store updated in place; a cycle is then taken from the stores ([`Follower`] is a
//! [`Source`](super::Source) like the API server itself), so that everything after reading is
//! the one path it is for a cycle read by LIST.
//!
//! Each collection's task: the first list by streaming list (KEP-3157: a watch with
//! `sendInitialEvents=true`, ending at the bookmark annotated `k8s.io/initial-events-end`) where
//! the server supports it, by the paginated LIST otherwise (found out once, by the answer to the
//! first streaming list); then a watch from the list's resourceVersion, with bookmarks and a
//! server-side timeout spread between 5 and 10 minutes, resumed from the last resourceVersion
//! seen. A 410 (on opening, or as an `ERROR` event) lists afresh; a stream that drops, or stays
//! silent past twice the bookmark interval, is opened again (with backoff when it failed). A 403 on the watch
//! (a role with get and list only) leaves the collection to be read every interval, as in list
//! mode, and the page says so.

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::logged::{self, Applied};
use super::{CycleOptions, Event, FromApi, Node, Pod, Pvc, ReadList, from_api, optional, read, workloads};
use crate::collection::Collection;
use crate::error::{ReadError, ReadErrorKind};
use crate::kube::Fetcher;
use crate::kube::fetch::{Frame, Status, Watch, WatchFrom, watch_uri};
use crate::kube::proto;
use crate::kube::request::field_selector;
use crate::logs::Event as _;

/// What a store keeps of a collection: its compact record, `Clone` to be taken into a cycle,
/// `PartialEq` to tell an event that changes it from one that does not.
pub trait Followed: FromApi + Clone + PartialEq + Send + Sync + 'static {}
impl<T: FromApi + Clone + PartialEq + Send + Sync + 'static> Followed for T {}

/// The annotation of the bookmark that ends a streaming list's initial events.
pub const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// How often the API server sends a bookmark on a quiet watch (its watch cache: about a
/// minute, and only to a watch of a collection that changes). A stream silent for twice this is
/// opened again.
pub const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// Sets [`BOOKMARK_INTERVAL`] in seconds, for tests whose simulated API server sends bookmarks
/// more often.
pub const TEST_BOOKMARK_ENV: &str = "DUMBMONIT_TEST_BOOKMARK_INTERVAL";

/// The longest wait between two tries to open a watch or list again.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// The collections watch mode follows, with the field selector each is read with (the same as
/// a LIST cycle's). `/version` and the Metrics API stay reads of each cycle.
fn followed(ignored_namespaces: &[String]) -> Vec<(Collection, Option<String>)> {
    let skip = field_selector(None, ignored_namespaces);
    vec![
        (Collection::Nodes, None),
        (Collection::Pods, skip.clone()),
        (Collection::Deployments, skip.clone()),
        (Collection::StatefulSets, skip.clone()),
        (Collection::DaemonSets, skip.clone()),
        (Collection::PersistentVolumeClaims, skip),
        // Not filtered by namespace on the server: a Node's events may be recorded in an ignored one.
        (Collection::Events, Some("type=Warning".to_string())),
        (Collection::ApiServices, None),
        (Collection::Hpas, None),
        (Collection::Jobs, None),
        (Collection::CronJobs, None),
    ]
}

/// One cluster followed by list-then-watch. Dropping it stops every watch.
pub struct Follower {
    shared: Arc<Shared>,
    stores: HashMap<Collection, Arc<dyn AnyStore>>,
    tasks: Vec<JoinHandle<()>>,
    /// The ignored namespaces the watches were opened with.
    ignored: Vec<String>,
    /// Whether the cycle being taken is one between intervals.
    between: std::sync::atomic::AtomicBool,
    /// What the last interval cycle read from the server itself (`/version`, the Metrics API,
    /// collections read every interval), by collection: a `Result<Vec<T>, ReadError>` (for
    /// `/version`, of `Version`), reused by the cycles between intervals.
    reads: Mutex<HashMap<Collection, Box<dyn Any + Send>>>,
}

/// A store whatever its records: what a follower asks of each.
trait AnyStore: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn every_interval(&self) -> bool;
    fn protobuf(&self) -> bool;
}

impl<T: Followed> AnyStore for Store<T> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn every_interval(&self) -> bool {
        matches!(self.lock().sync, InSync::EveryInterval)
    }

    fn protobuf(&self) -> bool {
        self.protobuf.load(Ordering::Relaxed)
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// What the tasks of one cluster share.
struct Shared {
    fetcher: Fetcher,
    /// Told of every change applied to a store (not of bookmarks).
    changed: Arc<Notify>,
    /// The cluster's interval, in milliseconds: a watch broken for longer fails the cycle.
    interval_ms: AtomicU64,
    /// Whether the server serves streaming lists: 0 not known yet, 1 yes, 2 no.
    streaming: AtomicU8,
    /// Held by the collection that finds out: the others wait for its answer.
    probing: tokio::sync::Mutex<()>,
    bookmark: Duration,
}

impl Shared {
    fn interval(&self) -> Duration {
        Duration::from_millis(self.interval_ms.load(Ordering::Relaxed))
    }
}

/// Whether a store can be taken into a cycle, and if not, why.
#[derive(Clone, Debug)]
enum InSync {
    /// The first list has not finished.
    Starting,
    /// The store follows the server.
    Following,
    /// The store was in sync, but its watch cannot be opened (or dropped) since `since`.
    Broken { since: Instant, error: ReadError },
    /// Its last list failed.
    Failed(ReadError),
    /// The watch is not granted: the collection is read every interval.
    EveryInterval,
}

/// (namespace, name): one object of the collection.
type Key = (String, String);

/// An object's uid as a store keeps it: only ever compared, to tell a recreated object from the
/// one it replaces, so kept as a fingerprint of 8 bytes rather than 36 characters on the heap
/// (at 150,000 pods, 10 MB). `Uid::NONE` for an object without one (a DELETED without it
/// removes whatever is kept under its key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Uid(u64);

impl Uid {
    const NONE: Uid = Uid(0);

    fn of(uid: &str) -> Uid {
        if uid.is_empty() {
            return Uid::NONE;
        }
        // SipHash with fixed keys: the same uid gives the same fingerprint for the process's
        // life; the low bit set keeps it apart from NONE.
        let mut h = std::hash::DefaultHasher::new();
        h.write(uid.as_bytes());
        Uid(h.finish() | 1)
    }
}

/// One collection as followed: its compact records by namespace and name, with the uid that
/// tells a recreated object.
struct Store<T> {
    state: Mutex<Kept<T>>,
    /// Told when the first list finishes (or fails).
    settled: Notify,
    /// Whether the server sent the last watch opened in protobuf.
    protobuf: std::sync::atomic::AtomicBool,
}

struct Kept<T> {
    /// In key order, so that a cycle takes them as a List gives them (sorted by namespace and
    /// name, which the snapshot's ordering then only checks: at 150,000 pods, sorting records
    /// taken in a hash map's order was a tenth of a cycle's CPU).
    items: BTreeMap<Key, (Uid, T)>,
    sync: InSync,
}

impl<T: Followed> Store<T> {
    fn new() -> Store<T> {
        Store {
            state: Mutex::new(Kept { items: BTreeMap::new(), sync: InSync::Starting }),
            settled: Notify::new(),
            protobuf: Default::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn replace(&self, items: BTreeMap<Key, (Uid, T)>) {
        let mut k = self.lock();
        k.items = items;
        k.sync = InSync::Following;
        drop(k);
        self.settled.notify_waiters();
    }

    fn set(&self, sync: InSync) {
        self.lock().sync = sync;
        self.settled.notify_waiters();
    }

    /// The watch could not be opened, or dropped: broken since the first time.
    fn broken(&self, error: ReadError) {
        let mut k = self.lock();
        k.sync = match &k.sync {
            InSync::Broken { since, .. } => InSync::Broken { since: *since, error },
            InSync::Following => InSync::Broken { since: Instant::now(), error },
            other => other.clone(),
        };
    }

    /// A watch is open: the store follows again.
    fn opened(&self) {
        let mut k = self.lock();
        if matches!(k.sync, InSync::Broken { .. }) {
            k.sync = InSync::Following;
        }
    }

    /// Applies one event; whether it changed the records. An object rewritten into the same
    /// record (a node's status heartbeat, a label, an annotation, `managedFields`) changes
    /// nothing a cycle derives, so it takes no cycle.
    fn apply(&self, kind: &str, key: Key, uid: &str, record: Option<T>) -> bool {
        let uid = Uid::of(uid);
        let mut k = self.lock();
        match (kind, record) {
            ("DELETED", _) => {
                // A DELETED for an older incarnation leaves the recreated object alone.
                let ours = k.items.get(&key).is_some_and(|(u, _)| uid == Uid::NONE || *u == uid);
                if ours {
                    k.items.remove(&key);
                }
                ours
            }
            (_, Some(record)) => {
                if k.items.get(&key).is_some_and(|(u, r)| *u == uid && *r == record) {
                    return false;
                }
                k.items.insert(key, (uid, record));
                true
            }
            (_, None) => false,
        }
    }

    /// The records, or why the store cannot be taken; None: read it now, every interval.
    async fn take(&self, interval: Duration) -> Option<Result<Vec<T>, ReadError>> {
        loop {
            let settled = self.settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            {
                let k = self.lock();
                match &k.sync {
                    InSync::Starting => {}
                    InSync::Following => return Some(Ok(k.items.values().map(|(_, r)| r.clone()).collect())),
                    InSync::Broken { since, error } if since.elapsed() > interval => return Some(Err(error.clone())),
                    InSync::Broken { .. } => return Some(Ok(k.items.values().map(|(_, r)| r.clone()).collect())),
                    InSync::Failed(e) => return Some(Err(e.clone())),
                    InSync::EveryInterval => return None,
                }
            }
            settled.await;
        }
    }
}

impl Follower {
    /// Starts following every collection of the cluster behind `fetcher`; `changed` is told of
    /// each change applied.
    pub fn start(fetcher: Fetcher, options: &CycleOptions, interval: Duration, changed: Arc<Notify>) -> Follower {
        let bookmark = std::env::var(TEST_BOOKMARK_ENV)
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64)
            .unwrap_or(BOOKMARK_INTERVAL);
        let shared = Arc::new(Shared {
            fetcher,
            changed,
            interval_ms: AtomicU64::new(interval.as_millis() as u64),
            streaming: AtomicU8::new(0),
            probing: tokio::sync::Mutex::new(()),
            bookmark,
        });
        let mut f = Follower {
            shared,
            stores: HashMap::new(),
            tasks: Vec::new(),
            ignored: options.ignored_namespaces.clone(),
            between: Default::default(),
            reads: Default::default(),
        };
        for (c, selector) in followed(&options.ignored_namespaces) {
            match c {
                Collection::Nodes => f.spawn::<Node>(c, selector),
                Collection::Pods => f.spawn::<Pod>(c, selector),
                Collection::Deployments | Collection::StatefulSets => f.spawn::<workloads::Replicated>(c, selector),
                Collection::DaemonSets => f.spawn::<workloads::Daemon>(c, selector),
                Collection::PersistentVolumeClaims => f.spawn::<Pvc>(c, selector),
                Collection::Events => f.spawn::<Event>(c, selector),
                Collection::ApiServices => f.spawn::<optional::ApiService>(c, selector),
                Collection::Hpas => f.spawn::<optional::Hpa>(c, selector),
                Collection::Jobs => f.spawn::<optional::Job>(c, selector),
                Collection::CronJobs => f.spawn::<optional::CronJob>(c, selector),
                _ => unreachable!("only the collections above are followed"),
            }
        }
        f
    }

    fn spawn<T: Followed>(&mut self, c: Collection, selector: Option<String>) {
        let store = Arc::new(Store::<T>::new());
        self.stores.insert(c, store.clone());
        self.tasks.push(tokio::spawn(follow(self.shared.clone(), c, selector, store)));
    }

    /// The fetcher the follower reads with.
    pub fn fetcher(&self) -> &Fetcher {
        &self.shared.fetcher
    }

    /// Whether this follower watches with these ignored namespaces.
    pub fn ignores(&self, ignored: &[String]) -> bool {
        self.ignored == ignored
    }

    /// The interval a broken watch is allowed before the cycle fails.
    pub fn set_interval(&self, interval: Duration) {
        self.shared.interval_ms.store(interval.as_millis() as u64, Ordering::Relaxed);
    }

    /// Reads one cycle from the stores (and `/version` and the Metrics API from the server,
    /// but for a cycle between intervals, which takes the last interval's).
    pub async fn cycle(&self, options: &CycleOptions, now: Timestamp) -> super::Cycle {
        self.between.store(options.between, Ordering::Relaxed);
        let options = CycleOptions { record: false, ..options.clone() };
        // Boxed, as in `Connected::read`.
        Box::pin(super::run(self, &options, now)).await
    }

    fn store<T: Followed>(&self, c: Collection) -> Option<&Store<T>> {
        self.stores.get(&c).and_then(|s| s.as_any().downcast_ref::<Store<T>>())
    }

    /// The collections whose watch is not granted, read every interval instead.
    pub fn read_every_interval(&self) -> Vec<Collection> {
        let mut out: Vec<Collection> =
            self.stores.iter().filter(|(_, s)| s.every_interval()).map(|(c, _)| *c).collect();
        out.sort();
        out
    }

    /// The collections whose last watch the server sent in protobuf.
    pub fn in_protobuf(&self) -> Vec<Collection> {
        let mut out: Vec<Collection> = self.stores.iter().filter(|(_, s)| s.protobuf()).map(|(c, _)| *c).collect();
        out.sort();
        out
    }

    /// A read of the server itself: done at an interval cycle, and its outcome taken again by
    /// the cycles between intervals.
    async fn once_an_interval<T: Clone + Send + 'static>(
        &self,
        c: Collection,
        read: impl Future<Output = Result<T, ReadError>>,
    ) -> Result<T, ReadError> {
        let reads = || self.reads.lock().unwrap_or_else(|e| e.into_inner());
        if self.between.load(Ordering::Relaxed)
            && let Some(kept) = reads().get(&c).and_then(|r| r.downcast_ref::<Result<T, ReadError>>())
        {
            return kept.clone();
        }
        let outcome = read.await;
        reads().insert(c, Box::new(outcome.clone()));
        outcome
    }
}

impl super::Source for Follower {
    fn fetcher(&self) -> &Fetcher {
        &self.shared.fetcher
    }

    async fn list<T: Followed>(&self, c: Collection, selector: Option<&str>, _record: bool) -> ReadList<T> {
        if let Some(store) = self.store::<T>(c)
            && let Some(taken) = store.take(self.shared.interval()).await
        {
            return taken.map(|items| (items, None));
        }
        let read = async { read::<T>(&self.shared.fetcher, c, selector, false).await.map(|(items, _)| items) };
        self.once_an_interval(c, read).await.map(|items| (items, None))
    }

    async fn version(&self, _record: bool) -> Result<(super::version::Version, Option<Box<RawValue>>), ReadError> {
        let read = async { super::read_version(&self.shared.fetcher, false).await.map(|(v, _)| v) };
        self.once_an_interval(Collection::Version, read).await.map(|v| (v, None))
    }

    fn read_every_interval(&self) -> Vec<Collection> {
        Follower::read_every_interval(self)
    }
}

/// The fields of an object's metadata a store needs.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Meta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    annotations: Option<HashMap<String, String>>,
}

#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    metadata: Meta,
}

/// One line of a watch.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: String,
    #[serde(borrow)]
    object: &'a RawValue,
}

/// An event of a watch, decoded.
enum Change<T> {
    /// ADDED, MODIFIED or DELETED.
    Object {
        kind: String,
        key: Key,
        uid: String,
        resource_version: String,
        record: Option<T>,
    },
    Bookmark {
        resource_version: String,
        initial_events_end: bool,
    },
    /// An `ERROR` event: the Status it carries.
    Error {
        code: u16,
        message: String,
    },
}

fn invalid(c: Collection, f: &Fetcher, detail: String) -> ReadError {
    ReadError { address: f.address().to_string(), collection: c, kind: ReadErrorKind::Unreadable { detail } }
}

fn decode<T: Followed>(frame: &Frame) -> Result<Change<T>, String> {
    match frame {
        Frame::Json(line) => decode_json(line),
        Frame::Protobuf(event) => decode_protobuf(event),
    }
}

fn decode_json<T: Followed>(line: &[u8]) -> Result<Change<T>, String> {
    let line: Line = serde_json::from_slice(line).map_err(|e| format!("invalid watch event: {e}"))?;
    match line.kind.as_str() {
        "ERROR" => {
            let s: Status = serde_json::from_str(line.object.get()).map_err(|e| format!("invalid ERROR event: {e}"))?;
            Ok(Change::Error { code: s.code.unwrap_or(500), message: s.message.unwrap_or_default() })
        }
        "BOOKMARK" => {
            let head: Head = serde_json::from_str(line.object.get()).map_err(|e| format!("invalid bookmark: {e}"))?;
            let end =
                head.metadata.annotations.as_ref().and_then(|a| a.get(INITIAL_EVENTS_END)).is_some_and(|v| v == "true");
            Ok(Change::Bookmark {
                resource_version: head.metadata.resource_version.unwrap_or_default(),
                initial_events_end: end,
            })
        }
        kind @ ("ADDED" | "MODIFIED" | "DELETED") => {
            let head: Head = serde_json::from_str(line.object.get()).map_err(|e| format!("invalid object: {e}"))?;
            let record = if kind == "DELETED" {
                None
            } else {
                Some(from_api::<T>(line.object.get()).map_err(|e| format!("invalid item: {e}"))?)
            };
            let m = head.metadata;
            Ok(Change::Object {
                kind: kind.to_string(),
                key: (m.namespace.unwrap_or_default(), m.name.unwrap_or_default()),
                uid: m.uid.unwrap_or_default(),
                resource_version: m.resource_version.unwrap_or_default(),
                record,
            })
        }
        other => Err(format!("unknown watch event type {other:?}")),
    }
}

/// The same event in protobuf: its object (behind its envelope) read by the kind's protobuf
/// decoding, the metadata and an `ERROR`'s Status by the messages every kind shares.
fn decode_protobuf<T: Followed>(event: &[u8]) -> Result<Change<T>, String> {
    use prost::Message;
    let event = proto::WatchEvent::decode(event).map_err(|e| format!("invalid watch event: {e}"))?;
    let object =
        proto::unwrap(event.object.as_ref().map_or(&[][..], |o| o.raw.as_slice())).map_err(|e| e.to_string())?.raw;
    let head = || {
        proto::Head::decode(object.as_slice())
            .map(|h| h.metadata.unwrap_or_default())
            .map_err(|e| format!("invalid object: {e}"))
    };
    match event.kind.as_str() {
        "ERROR" => {
            let s = proto::Status::decode(object.as_slice()).map_err(|e| format!("invalid ERROR event: {e}"))?;
            Ok(Change::Error { code: u16::try_from(s.code).ok().filter(|c| *c > 0).unwrap_or(500), message: s.message })
        }
        "BOOKMARK" => {
            let m = head()?;
            let end = m.annotations.get(INITIAL_EVENTS_END).is_some_and(|v| v == "true");
            Ok(Change::Bookmark { resource_version: m.resource_version, initial_events_end: end })
        }
        kind @ ("ADDED" | "MODIFIED" | "DELETED") => {
            let m = head()?;
            let record = if kind == "DELETED" { None } else { Some(T::from_protobuf(&object)?) };
            Ok(Change::Object {
                kind: kind.to_string(),
                key: (m.namespace, m.name),
                uid: m.uid,
                resource_version: m.resource_version,
                record,
            })
        }
        other => Err(format!("unknown watch event type {other:?}")),
    }
}

/// How a stream ended.
enum Ended {
    /// The server closed it (its timeout): open the next from the last resourceVersion.
    Closed,
    /// 410: the resourceVersion is too old, list afresh.
    Gone,
    /// Nothing came for twice the bookmark interval.
    Silent,
    /// The connection dropped, or the server sent an ERROR other than 410, or garbage.
    Failed(ReadError),
}

/// A server-side timeout between 5 and 10 minutes, so that a cluster's watches (and many
/// clusters') do not all end together.
fn spread_timeout() -> u32 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    300 + (h.finish() % 301) as u32
}

/// Doubles from half a second up to the interval (at most 10 s); reset by a success.
struct Backoff(Duration);

impl Backoff {
    fn reset(&mut self) {
        self.0 = Duration::ZERO;
    }

    async fn wait(&mut self, interval: Duration) {
        self.0 =
            (self.0 * 2).max(Duration::from_millis(500)).min(MAX_BACKOFF.min(interval.max(Duration::from_secs(1))));
        tokio::time::sleep(self.0).await;
    }
}

/// A fresh list: the records, the resourceVersion to watch from, and the stream it came on
/// (a streaming list goes on as the watch).
struct Listed<T> {
    items: BTreeMap<Key, (Uid, T)>,
    resource_version: String,
    stream: Option<Watch>,
    /// By a streaming list: the watch is granted.
    watched: bool,
}

/// Why a collection cannot be listed.
enum Refused {
    /// The watch is not granted (403 on the streaming list).
    Watch(ReadError),
    Read(ReadError),
}

fn is_forbidden(e: &ReadError) -> bool {
    matches!(e.kind, ReadErrorKind::Forbidden { .. })
}

fn is_gone(e: &ReadError) -> bool {
    matches!(e.kind, ReadErrorKind::Status { code: 410, .. })
}

/// A server that does not serve streaming lists refuses their parameters as invalid (422;
/// 400 from a proxy or an older server).
fn is_unsupported(e: &ReadError) -> bool {
    matches!(e.kind, ReadErrorKind::Status { code: 400 | 422, .. })
}

/// How often a collection whose watch is not granted tries it again (a role may be given the
/// verb later).
const WATCH_RETRY: Duration = Duration::from_secs(300);

/// What a 403 on a watch leads to.
struct Refusals {
    /// The watch was granted once: a 403 is first taken for a passing one (an API server that
    /// has just started refuses everything until its authorizer has its roles).
    granted: bool,
    since: Option<Instant>,
}

impl Refusals {
    /// True: read every interval (for a while); false: retry soon, as for a broken watch.
    fn refused(&mut self, interval: Duration) -> bool {
        let since = *self.since.get_or_insert_with(Instant::now);
        !self.granted || since.elapsed() >= interval
    }
}

/// One collection followed until the follower is dropped.
async fn follow<T: Followed>(shared: Arc<Shared>, c: Collection, selector: Option<String>, store: Arc<Store<T>>) {
    let mut backoff = Backoff(Duration::ZERO);
    let mut refusals = Refusals { granted: false, since: None };
    let selector = selector.as_deref();
    'list: loop {
        let listed = match first_list::<T>(&shared, c, selector).await {
            Ok(l) => l,
            Err(Refused::Watch(_)) if refusals.refused(shared.interval()) => {
                store.set(InSync::EveryInterval);
                tokio::time::sleep(WATCH_RETRY).await;
                continue;
            }
            // A watch granted before and refused now, for a while: the store is kept fresh by
            // a List meanwhile, and a List refused too fails the cycle with the List's words.
            Err(Refused::Watch(_)) => {
                match paginated::<T>(&shared, c, selector).await {
                    Ok(listed) => store.replace(listed.items),
                    Err(Refused::Read(e) | Refused::Watch(e)) => store.set(InSync::Failed(e)),
                }
                backoff.wait(shared.interval()).await;
                continue;
            }
            Err(Refused::Read(e)) => {
                store.set(InSync::Failed(e));
                backoff.wait(shared.interval()).await;
                continue;
            }
        };
        store.replace(listed.items);
        shared.changed.notify_one();
        backoff.reset();
        // A refusal is over only once a watch opens.
        refusals.granted |= listed.watched;
        let mut resource_version = listed.resource_version;
        let mut stream = listed.stream;
        loop {
            let mut watch = match stream.take() {
                Some(w) => {
                    store.protobuf.store(w.protobuf(), Ordering::Relaxed);
                    w
                }
                None => {
                    let uri = watch_uri(c.path(), selector, WatchFrom::Version(&resource_version), spread_timeout());
                    match shared.fetcher.watch(c, &uri, T::PROTOBUF).await {
                        Ok(w) => {
                            store.protobuf.store(w.protobuf(), Ordering::Relaxed);
                            store.opened();
                            refusals = Refusals { granted: true, since: None };
                            w
                        }
                        Err(e) if is_gone(&e) => continue 'list,
                        // Not granted (any more, or for a while).
                        Err(e) if is_forbidden(&e) => {
                            if refusals.refused(shared.interval()) {
                                store.set(InSync::EveryInterval);
                                tokio::time::sleep(WATCH_RETRY).await;
                            } else {
                                backoff.wait(shared.interval()).await;
                            }
                            continue 'list;
                        }
                        Err(e) => {
                            store.broken(e);
                            backoff.wait(shared.interval()).await;
                            continue;
                        }
                    }
                }
            };
            let opened = Instant::now();
            match consume(&shared, c, &store, &mut watch, &mut resource_version).await {
                // The server's timeout: the next opened at once. A stream closed as soon as it
                // opened (a proxy in the way) waits like a failure, not to loop.
                Ended::Closed if opened.elapsed() >= Duration::from_secs(1) => backoff.reset(),
                Ended::Closed => backoff.wait(shared.interval()).await,
                Ended::Gone => continue 'list,
                // Opened again from the last resourceVersion: an idle collection gets no bookmark
                // from kube-apiserver, so silence alone is not a fault; a server that is gone
                // fails the next opening.
                Ended::Silent => {}
                Ended::Failed(e) => {
                    store.broken(e);
                    backoff.wait(shared.interval()).await;
                }
            }
        }
    }
}

/// The first list: streaming where the server serves it, paginated otherwise.
async fn first_list<T: Followed>(shared: &Shared, c: Collection, selector: Option<&str>) -> Result<Listed<T>, Refused> {
    // Until it is known, one collection at a time asks for a streaming list.
    let mut probe = match shared.streaming.load(Ordering::Relaxed) {
        0 => Some(shared.probing.lock().await),
        _ => None,
    };
    if shared.streaming.load(Ordering::Relaxed) != 2 {
        let uri = watch_uri(c.path(), selector, WatchFrom::InitialEvents, spread_timeout());
        let opened = shared.fetcher.watch(c, &uri, T::PROTOBUF).await;
        if opened.is_ok() {
            shared.streaming.store(1, Ordering::Relaxed);
        }
        if opened.as_ref().is_err_and(is_unsupported) {
            shared.streaming.store(2, Ordering::Relaxed);
        }
        probe.take();
        match opened {
            Ok(mut watch) => {
                let mut items = BTreeMap::new();
                loop {
                    let frame = match tokio::time::timeout(shared.bookmark * 2, watch.next_frame()).await {
                        Err(_) => {
                            let detail = "the streaming list sent nothing for twice the bookmark interval".to_string();
                            return Err(Refused::Read(invalid(c, &shared.fetcher, detail)));
                        }
                        Ok(Err(kind)) => return Err(Refused::Read(shared_error(shared, c, kind))),
                        Ok(Ok(None)) => {
                            let detail = "the streaming list ended before its initial events did".to_string();
                            return Err(Refused::Read(invalid(c, &shared.fetcher, detail)));
                        }
                        Ok(Ok(Some(frame))) => frame,
                    };
                    match decode::<T>(&frame).map_err(|d| Refused::Read(invalid(c, &shared.fetcher, d)))? {
                        Change::Object { key, uid, record: Some(record), .. } => {
                            items.insert(key, (Uid::of(&uid), record));
                        }
                        Change::Object { .. } => {}
                        Change::Bookmark { resource_version, initial_events_end: true } => {
                            return Ok(Listed { items, resource_version, stream: Some(watch), watched: true });
                        }
                        Change::Bookmark { .. } => {}
                        Change::Error { code, message } => {
                            let kind = ReadErrorKind::Status { code, message };
                            return Err(Refused::Read(shared_error(shared, c, kind)));
                        }
                    }
                }
            }
            Err(e) if is_forbidden(&e) => return Err(Refused::Watch(e)),
            Err(e) if is_unsupported(&e) => {}
            Err(e) => return Err(Refused::Read(e)),
        }
    }
    paginated(shared, c, selector).await
}

/// The paginated LIST of list mode, each item kept with its key and uid.
async fn paginated<T: Followed>(shared: &Shared, c: Collection, selector: Option<&str>) -> Result<Listed<T>, Refused> {
    let listed = shared.fetcher.list::<Box<RawValue>>(c, c.path(), selector).await.map_err(Refused::Read)?;
    let mut items = BTreeMap::new();
    for raw in &listed.items {
        let head: Head = serde_json::from_str(raw.get())
            .map_err(|e| Refused::Read(invalid(c, &shared.fetcher, format!("invalid item: {e}"))))?;
        let record = from_api::<T>(raw.get())
            .map_err(|e| Refused::Read(invalid(c, &shared.fetcher, format!("invalid item: {e}"))))?;
        let m = head.metadata;
        items.insert(
            (m.namespace.unwrap_or_default(), m.name.unwrap_or_default()),
            (Uid::of(m.uid.as_deref().unwrap_or("")), record),
        );
    }
    Ok(Listed { items, resource_version: listed.resource_version, stream: None, watched: false })
}

fn shared_error(shared: &Shared, c: Collection, kind: ReadErrorKind) -> ReadError {
    ReadError { address: shared.fetcher.address().to_string(), collection: c, kind }
}

/// Applies a stream's events to the store until it ends.
async fn consume<T: Followed>(
    shared: &Shared,
    c: Collection,
    store: &Store<T>,
    watch: &mut Watch,
    resource_version: &mut String,
) -> Ended {
    loop {
        let frame = match tokio::time::timeout(shared.bookmark * 2, watch.next_frame()).await {
            Err(_) => return Ended::Silent,
            Ok(Err(kind)) => return Ended::Failed(shared_error(shared, c, kind)),
            Ok(Ok(None)) => return Ended::Closed,
            Ok(Ok(Some(frame))) => frame,
        };
        match decode::<T>(&frame) {
            Err(detail) => return Ended::Failed(invalid(c, &shared.fetcher, detail)),
            Ok(Change::Object { kind, key, uid, resource_version: rv, record }) => {
                // The key is the store's once applied: kept for the log only when it is read.
                let logged = logged::debugging().then(|| key.clone());
                let changed = store.apply(&kind, key, &uid, record);
                if let Some((namespace, name)) = &logged {
                    let address = shared.fetcher.address();
                    let event = &kind;
                    Applied { address, collection: c, event, namespace, name, resource_version: &rv, changed }.emit();
                }
                if !rv.is_empty() {
                    *resource_version = rv;
                }
                if changed {
                    shared.changed.notify_one();
                }
            }
            Ok(Change::Bookmark { resource_version: rv, .. }) => {
                if !rv.is_empty() {
                    *resource_version = rv;
                }
            }
            Ok(Change::Error { code: 410, .. }) => return Ended::Gone,
            Ok(Change::Error { code, message }) => {
                return Ended::Failed(shared_error(shared, c, ReadErrorKind::Status { code, message }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_lines_decode_into_changes() {
        let added = br#"{"type":"ADDED","object":{"kind":"Node","metadata":{"name":"n1","uid":"u1","resourceVersion":"12"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}}"#;
        match decode_json::<Node>(added).unwrap() {
            Change::Object { kind, key, uid, resource_version, record } => {
                assert_eq!(
                    (kind.as_str(), key, uid.as_str(), resource_version.as_str()),
                    ("ADDED", (String::new(), "n1".into()), "u1", "12")
                );
                assert_eq!(record.unwrap().name, "n1");
            }
            _ => panic!("an object"),
        }
        let end = br#"{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"99","annotations":{"k8s.io/initial-events-end":"true"}}}}"#;
        assert!(
            matches!(decode_json::<Pod>(end).unwrap(), Change::Bookmark { ref resource_version, initial_events_end: true } if resource_version == "99")
        );
        let gone = br#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (9)","reason":"Expired","code":410}}"#;
        assert!(matches!(decode_json::<Pod>(gone).unwrap(), Change::Error { code: 410, .. }));
        assert!(decode_json::<Pod>(br#"{"type":"WHAT","object":{}}"#).is_err());
    }

    #[test]
    fn protobuf_events_decode_into_the_same_changes() {
        use prost::Message;
        let event = |kind: &str, object: Vec<u8>| {
            let e = proto::WatchEvent { kind: kind.into(), object: Some(proto::RawExtension { raw: object }) };
            Frame::Protobuf(e.encode_to_vec().into())
        };
        let meta = |name: &str, rv: &str| proto::ObjectMeta {
            name: name.into(),
            namespace: "shop".into(),
            uid: format!("uid-{name}"),
            resource_version: rv.into(),
            ..Default::default()
        };
        let head = |m: proto::ObjectMeta| proto::Head { metadata: Some(m) }.encode_to_vec();
        match decode::<Pod>(&event("DELETED", proto::envelope("Pod", head(meta("api-1", "12"))))).unwrap() {
            Change::Object { kind, key, uid, resource_version, record } => {
                assert_eq!(
                    (kind.as_str(), key, uid.as_str(), resource_version.as_str(), record.is_none()),
                    ("DELETED", ("shop".into(), "api-1".into()), "uid-api-1", "12", true)
                );
            }
            _ => panic!("an object"),
        }
        let mut end = meta("", "99");
        end.annotations.insert(INITIAL_EVENTS_END.into(), "true".into());
        assert!(matches!(
            decode::<Pod>(&event("BOOKMARK", proto::envelope("Pod", head(end)))).unwrap(),
            Change::Bookmark { ref resource_version, initial_events_end: true } if resource_version == "99"
        ));
        let gone =
            proto::Status { message: "too old resource version: 5 (9)".into(), reason: "Expired".into(), code: 410 };
        assert!(matches!(
            decode::<Pod>(&event("ERROR", proto::envelope("Status", gone.encode_to_vec()))).unwrap(),
            Change::Error { code: 410, ref message } if message == "too old resource version: 5 (9)"
        ));
        let refused = decode::<Pod>(&event("ADDED", head(meta("api-1", "12")))).err().unwrap();
        assert!(refused.contains("envelope"), "{refused}");
        assert!(decode::<Pod>(&Frame::Protobuf(bytes::Bytes::from_static(b"\xff\xff\xff"))).is_err());
    }

    fn claim(namespace: &str, name: &str, phase: &str) -> Pvc {
        Pvc { namespace: namespace.into(), name: name.into(), phase: phase.into() }
    }

    /// Claim `c` of namespace `a`, and its key: the one object of the stores' event tests.
    fn pvc(phase: &str) -> Pvc {
        claim("a", "c", phase)
    }

    fn key() -> Key {
        ("a".to_string(), "c".to_string())
    }

    #[test]
    fn a_recreated_object_is_not_removed_by_its_old_deletion() {
        let store = Store::<Pvc>::new();
        assert!(store.apply("ADDED", key(), "new", Some(pvc("Bound"))));
        assert!(!store.apply("DELETED", key(), "old", None));
        assert_eq!(store.lock().items.len(), 1, "the DELETED of the old uid leaves the new object");
        assert!(store.apply("DELETED", key(), "new", None));
        assert!(store.lock().items.is_empty());
        assert!(!store.apply("DELETED", key(), "new", None), "gone already");
    }

    #[test]
    fn an_event_that_leaves_the_record_as_it_was_is_no_change() {
        let store = Store::<Pvc>::new();
        assert!(store.apply("ADDED", key(), "u1", Some(pvc("Pending"))));
        assert!(!store.apply("MODIFIED", key(), "u1", Some(pvc("Pending"))), "a label changed, say");
        assert!(store.apply("MODIFIED", key(), "u1", Some(pvc("Bound"))));
        assert!(store.apply("ADDED", key(), "u2", Some(pvc("Bound"))), "recreated: another object");
        assert_eq!(store.lock().items[&key()].0, Uid::of("u2"));
        assert_ne!(Uid::of("u1"), Uid::of("u2"));
        assert_ne!(Uid::of("u2"), Uid::NONE);
    }

    #[tokio::test]
    async fn a_store_gives_its_records_in_namespace_and_name_order() {
        let store = Store::<Pvc>::new();
        store.replace(BTreeMap::new());
        for (ns, name) in [("b", "a"), ("a", "z"), ("a", "b"), ("c", "a")] {
            store.apply("ADDED", (ns.into(), name.into()), &format!("{ns}-{name}"), Some(claim(ns, name, "Bound")));
        }
        let taken = store.take(Duration::from_secs(60)).await.unwrap().unwrap();
        let order: Vec<(&str, &str)> = taken.iter().map(|p| (p.namespace.as_str(), p.name.as_str())).collect();
        assert_eq!(order, [("a", "b"), ("a", "z"), ("b", "a"), ("c", "a")]);
    }

    #[tokio::test]
    async fn a_broken_watch_fails_the_cycle_only_past_the_interval() {
        let store = Store::<Pvc>::new();
        store.replace(BTreeMap::new());
        let error = ReadError {
            address: "https://h".into(),
            collection: Collection::PersistentVolumeClaims,
            kind: ReadErrorKind::Refused,
        };
        store.broken(error.clone());
        assert!(store.take(Duration::from_secs(60)).await.unwrap().is_ok(), "broken for less than the interval");
        assert_eq!(store.take(Duration::ZERO).await.unwrap().unwrap_err(), error);
        store.opened();
        assert!(store.take(Duration::ZERO).await.unwrap().is_ok(), "open again");
        store.set(InSync::EveryInterval);
        assert!(store.take(Duration::ZERO).await.is_none(), "read every interval");
    }
}
