//! Watch mode: each collection followed by list-then-watch and kept, as compact records, in a
//! store updated in place; a cycle is then taken from the stores ([`Follower`] is a
//! [`Source`](super::Source) like the API server itself), so that everything after reading is
//! the one path it is for a cycle read by LIST.
//!
//! Four rooms: `decode` (a watch's frames into [`WatchEvent`]s), `machine` (what a
//! collection's task does next, a pure step function), `store` (the records and whether they
//! can be taken), and this module: the tasks that carry the machine's steps out, and the
//! [`Source`](super::Source) a cycle reads.
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

mod decode;
pub mod machine;
mod store;

use std::collections::HashMap;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use serde_json::value::RawValue;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::kinds::Kind;
use super::logged::{self, Applied};
use super::{CycleOptions, Event, FromApi, Node, Pod, Pvc, ReadList, ReadOptions, from_api, optional, read, workloads};
use crate::collection::{Collection, Follow};
use crate::error::{ReadError, ReadErrorKind};
use crate::kube::Fetcher;
use crate::kube::fetch::{Frame, Watch, WatchFrom, watch_uri};
use crate::kube::request::field_selector;
use crate::logs::Emit as _;
use decode::{Head, decode};
pub use decode::{Object, WatchEvent};
use machine::{Action, Ended, Happened, Machine, is_forbidden};
#[cfg(test)]
pub(crate) use store::Records as TestRecords;
#[cfg(test)]
pub(crate) use store::Store as TestStore;
use store::{AnyStore, Key, Records, Store, Uid, lock};

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

/// Whether watch mode follows `c` (its row's [`Follow`]), and if so with which field selector
/// (the same as a LIST cycle's; `skip` leaves out the ignored namespaces). `/version` and the
/// Metrics API stay reads of each cycle.
fn followed(c: Collection, skip: &Option<String>) -> Option<Option<String>> {
    match c.about().follow {
        Follow::No => None,
        Follow::Whole | Follow::Quietly => Some(None),
        Follow::OutsideIgnored => Some(skip.clone()),
        Follow::Warnings => Some(Some("type=Warning".to_string())),
    }
}

/// Whether a change to `c` starts a cycle (not for a collection followed quietly).
fn starts_cycles(c: Collection) -> bool {
    c.about().follow != Follow::Quietly
}

/// Follows one collection into a store of its records.
type Spawn = fn(&mut Follower, Collection, Option<String>);

macro_rules! spawn_kinds {
    ($($(#[$m:meta])* $field:ident: $ty:ty),* $(,)?) => {
        impl Follower {
            /// Follows each kind of the registry that watch mode follows.
            fn spawn_kinds(&mut self, skip: &Option<String>) {
                $( $(#[$m])* if let Some(selector) = followed(<$ty as Kind>::COLLECTION, skip) {
                    self.spawn::<$ty>(<$ty as Kind>::COLLECTION, selector);
                } )*
            }
        }
    };
}
super::kinds::registry!(spawn_kinds);

/// One cluster followed by list-then-watch. Dropping it stops every watch.
pub struct Follower {
    shared: Arc<Shared>,
    /// Each followed collection's store, and those of the Metrics API (not followed: they keep
    /// the last interval's read).
    stores: HashMap<Collection, Arc<dyn AnyStore>>,
    tasks: Vec<JoinHandle<()>>,
    /// The ignored namespaces the watches were opened with.
    ignored: Vec<String>,
    /// What the last interval cycle read of `/version`, taken again by the cycles between
    /// intervals.
    version: Mutex<Option<Result<super::version::Version, ReadError>>>,
    /// The collections whose last list came from their store: in the store's order.
    from_stores: Mutex<std::collections::HashSet<Collection>>,
    /// What the last interval cycle read of the server besides the collections, taken again by
    /// the cycles between intervals.
    server_reads: Mutex<HashMap<super::ServerRead, Box<dyn std::any::Any + Send>>>,
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

    fn error(&self, c: Collection, kind: ReadErrorKind) -> ReadError {
        ReadError { address: self.fetcher.address().to_string(), collection: c, kind }
    }

    fn invalid(&self, c: Collection, detail: String) -> ReadError {
        self.error(c, ReadErrorKind::Unreadable { detail })
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
            version: Mutex::new(None),
            from_stores: Mutex::default(),
            server_reads: Mutex::default(),
        };
        let skip = field_selector(None, &options.ignored_namespaces);
        // The core and the APIServices, each with its record (the kinds follow from the
        // registry); `/version` and the Metrics API are not followed.
        let named: [(Collection, Spawn); 8] = [
            (Collection::NODES, Follower::spawn::<Arc<Node>>),
            (Collection::PODS, Follower::spawn::<Arc<Pod>>),
            (Collection::DEPLOYMENTS, Follower::spawn::<workloads::DeploymentRecord>),
            (Collection::STATEFULSETS, Follower::spawn::<workloads::StatefulSetRecord>),
            (Collection::DAEMONSETS, Follower::spawn::<workloads::DaemonSetRecord>),
            (Collection::PVCS, Follower::spawn::<Arc<Pvc>>),
            (Collection::EVENTS, Follower::spawn::<Arc<Event>>),
            (Collection::APISERVICES, Follower::spawn::<optional::ApiService>),
        ];
        for (c, spawn) in named {
            if let Some(selector) = followed(c, &skip) {
                spawn(&mut f, c, selector);
            }
        }
        f.spawn_kinds(&skip);
        for c in [Collection::POD_METRICS, Collection::NODE_METRICS] {
            f.stores.insert(c, Arc::new(Store::<optional::Usage>::not_followed()));
        }
        f
    }

    fn spawn<T: Followed>(&mut self, c: Collection, selector: Option<String>) {
        let store = Arc::new(Store::<T>::new());
        self.stores.insert(c, store.clone());
        self.tasks.push(tokio::spawn(follow(self.shared.clone(), c, selector, store)));
    }

    /// The lists the last cycle took from the stores, given back once judged (`Store::shelve`):
    /// the next cycle's pods are that list changed where pods changed; its nodes, claims and
    /// events are their list as it was while nothing of their kind changed. A list the last
    /// cycle did not take from its store is let go.
    pub fn shelve(&self, given: super::GivenBack) {
        fn back<T: Followed>(f: &Follower, c: Collection, list: Option<Vec<T>>, key: Option<store::KeyOf<T>>) {
            if let Some(list) = list
                && lock(&f.from_stores).contains(&c)
                && let Some(store) = f.store::<T>(c)
            {
                store.shelve(list, key);
            }
        }
        let names: Option<store::KeyOf<Arc<Pod>>> = Some(|p| (&*p.namespace, &*p.name));
        back(self, Collection::PODS, given.pods, names);
        back(self, Collection::NODES, given.nodes, None);
        back(self, Collection::PVCS, given.pvcs, None);
        // In the events' order, not the store's.
        back(self, Collection::EVENTS, given.events, None);
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
        let options = CycleOptions { record: false, ..options.clone() };
        // Boxed, as in `Connected::read`.
        Box::pin(super::run(self, &options, now)).await
    }

    /// The store of collection `c`, of records `T` (a collection's records are always of one
    /// type: None only for a collection the follower has no store of).
    fn store<T: Followed>(&self, c: Collection) -> Option<&Store<T>> {
        self.stores.get(&c).and_then(|s| s.as_any().downcast_ref::<Store<T>>())
    }

    /// The collections whose watch is not granted, read every interval instead.
    pub fn read_every_interval(&self) -> Vec<Collection> {
        let mut out: Vec<Collection> =
            self.stores.iter().filter(|(_, s)| s.every_interval()).map(|(c, _)| *c).collect();
        out.sort_by_key(|c| super::kinds::rank(*c));
        out
    }

    /// The collections whose last watch the server sent in protobuf.
    pub fn in_protobuf(&self) -> Vec<Collection> {
        let mut out: Vec<Collection> = self.stores.iter().filter(|(_, s)| s.protobuf()).map(|(c, _)| *c).collect();
        out.sort_by_key(|c| super::kinds::rank(*c));
        out
    }
}

/// A read of the server itself: done at an interval cycle, kept in `last`, and taken again from
/// there by the cycles between intervals.
async fn once_an_interval<T: Clone>(
    last: &Mutex<Option<Result<T, ReadError>>>,
    how: ReadOptions,
    read: impl Future<Output = Result<T, ReadError>>,
) -> Result<T, ReadError> {
    if how.between
        && let Some(kept) = lock(last).clone()
    {
        return kept;
    }
    let outcome = read.await;
    *lock(last) = Some(outcome.clone());
    outcome
}

impl super::Source for Follower {
    fn fetcher(&self) -> &Fetcher {
        &self.shared.fetcher
    }

    async fn list<T: Followed>(&self, c: Collection, selector: Option<&str>, how: ReadOptions) -> ReadList<T> {
        let read = async { read::<T>(&self.shared.fetcher, c, selector, false).await.map(|(items, _)| items) };
        let from_store = |yes: bool| {
            let mut from = lock(&self.from_stores);
            if yes { from.insert(c) } else { from.remove(&c) }
        };
        from_store(false);
        let Some(store) = self.store::<T>(c) else { return read.await.map(|items| (items, None)) };
        if let Some(taken) = store.take(self.shared.interval()).await {
            from_store(taken.is_ok());
            return taken.map(|items| (items, None));
        }
        once_an_interval(store.last_read(), how, read).await.map(|items| (items, None))
    }

    async fn each_interval<T: Clone + Send + 'static>(
        &self,
        what: super::ServerRead,
        how: ReadOptions,
        read: impl Future<Output = T> + Send,
    ) -> T {
        if how.between {
            let kept = lock(&self.server_reads).get(&what).and_then(|k| k.downcast_ref::<T>()).cloned();
            if let Some(kept) = kept {
                return kept;
            }
        }
        let read = read.await;
        lock(&self.server_reads).insert(what, Box::new(read.clone()));
        read
    }

    /// A store keeps its records by namespace and name, each once (`store::Key`).
    fn in_order(&self, c: Collection) -> bool {
        lock(&self.from_stores).contains(&c)
    }

    /// The pods' store changes the list the last cycle gave back (`Store::shelve`).
    fn put_at(&self, c: Collection) -> Option<Vec<usize>> {
        if !self.in_order(c) {
            return None;
        }
        self.stores.get(&c).and_then(|s| s.put_at())
    }

    async fn version(&self, how: ReadOptions) -> Result<(super::version::Version, Option<Box<RawValue>>), ReadError> {
        let read = async { super::read_version(&self.shared.fetcher, false).await.map(|(v, _)| v) };
        once_an_interval(&self.version, how, read).await.map(|v| (v, None))
    }

    fn read_every_interval(&self) -> Vec<Collection> {
        Follower::read_every_interval(self)
    }
}

/// A server-side timeout between 5 and 10 minutes, so that a cluster's watches (and many
/// clusters') do not all end together.
fn spread_timeout() -> u32 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    300 + (h.finish() % 301) as u32
}

/// A fresh list: the records, the resourceVersion to watch from, and the stream it came on
/// (a streaming list goes on as the watch).
struct Listed<T> {
    items: Records<T>,
    resource_version: String,
    stream: Option<Watch>,
}

/// Why a collection cannot be listed.
enum Refused {
    /// The watch is not granted (403 on the streaming list).
    Watch(ReadError),
    Read(ReadError),
}

/// A server that does not serve streaming lists refuses their parameters as invalid (422;
/// 400 from a proxy or an older server).
fn is_unsupported(e: &ReadError) -> bool {
    matches!(e.kind, ReadErrorKind::Status { code: 400 | 422, .. })
}

/// One collection followed until the follower is dropped: each step the machine says carried
/// out, and what it came to told back. The lists and the opening of a watch are boxed: a task
/// holds its future's largest state for its whole life, and a followed collection spends it
/// reading its stream (264 bytes in a debug build), not listing (1,976 for the pods'): at 5,000
/// clusters of 18 collections, about 100 MB (`the_followed_collections_task_is_small_while_it_reads`).
async fn follow<T: Followed>(shared: Arc<Shared>, c: Collection, selector: Option<String>, store: Arc<Store<T>>) {
    let selector = selector.as_deref();
    let mut machine = Machine::new();
    let mut action = machine.start();
    // The records of the list just made, until the store takes them; the stream open.
    let mut listed: Option<Records<T>> = None;
    let mut stream: Option<Watch> = None;
    loop {
        let outcome = match action {
            Action::List => match Box::pin(first_list::<T>(&shared, c, selector)).await {
                Ok(l) => {
                    listed = Some(l.items);
                    let streaming = l.stream.is_some();
                    stream = l.stream;
                    Happened::Listed { resource_version: l.resource_version, streaming }
                }
                Err(Refused::Watch(e)) => Happened::WatchRefused(e),
                Err(Refused::Read(e)) => Happened::ListFailed(e),
            },
            Action::ListWithoutWatch => match Box::pin(paginated::<T>(&shared, c, selector)).await {
                Ok(l) => {
                    listed = Some(l.items);
                    Happened::ListedWithoutWatch(Ok(()))
                }
                Err(Refused::Read(e) | Refused::Watch(e)) => Happened::ListedWithoutWatch(Err(e)),
            },
            Action::Open => {
                let uri =
                    watch_uri(c.path(), selector, WatchFrom::Version(machine.resource_version()), spread_timeout());
                match Box::pin(shared.fetcher.watch(c, &uri, T::PROTOBUF.is_some())).await {
                    Ok(w) => {
                        stream = Some(w);
                        Happened::Opened
                    }
                    Err(e) => Happened::NotOpened(e),
                }
            }
            Action::Read => match stream.take() {
                Some(mut watch) => {
                    store.protobuf.store(watch.protobuf(), Ordering::Relaxed);
                    Happened::Ended(consume(&shared, c, &store, &mut watch, &mut machine).await)
                }
                None => Happened::Ended(Ended::Closed { after: Duration::ZERO }),
            },
        };
        let next = machine.step(outcome, Instant::now(), shared.interval());
        let changed = matches!(next.store, machine::ToStore::Replace { changed: true });
        store.told(next.store, &mut listed);
        if changed && starts_cycles(c) {
            shared.changed.notify_one();
        }
        if let Some(wait) = next.wait {
            tokio::time::sleep(wait).await;
        }
        action = next.then;
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
        let opened = shared.fetcher.watch(c, &uri, T::PROTOBUF.is_some()).await;
        if opened.is_ok() {
            shared.streaming.store(1, Ordering::Relaxed);
        }
        if opened.as_ref().is_err_and(is_unsupported) {
            shared.streaming.store(2, Ordering::Relaxed);
        }
        probe.take();
        match opened {
            Ok(mut watch) => {
                // Gathered, then put in the map at once (`packed`).
                let mut items = Vec::new();
                loop {
                    let frame = match tokio::time::timeout(shared.bookmark * 2, watch.next_frame()).await {
                        Err(_) => {
                            let detail = "the streaming list sent nothing for twice the bookmark interval".to_string();
                            return Err(Refused::Read(shared.invalid(c, detail)));
                        }
                        Ok(Err(kind)) => return Err(Refused::Read(shared.error(c, kind))),
                        Ok(Ok(None)) => {
                            let detail = "the streaming list ended before its initial events did".to_string();
                            return Err(Refused::Read(shared.invalid(c, detail)));
                        }
                        Ok(Ok(Some(frame))) => frame,
                    };
                    match decode::<T>(&frame).map_err(|d| Refused::Read(shared.invalid(c, d.0)))? {
                        WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                            items.push((o.key, (Uid::of(&o.uid), o.record)));
                        }
                        WatchEvent::Deleted(_) => {}
                        WatchEvent::Bookmark { resource_version, initial_events_end: true } => {
                            return Ok(Listed { items: packed(items), resource_version, stream: Some(watch) });
                        }
                        WatchEvent::Bookmark { .. } => {}
                        WatchEvent::Error { code, message } => {
                            let kind = ReadErrorKind::Status { code, message };
                            return Err(Refused::Read(shared.error(c, kind)));
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
    let mut items = Vec::with_capacity(listed.items.len());
    for raw in &listed.items {
        let head: Head = serde_json::from_str(raw.get())
            .map_err(|e| Refused::Read(shared.invalid(c, format!("invalid item: {e}"))))?;
        let record =
            from_api::<T>(raw.get()).map_err(|e| Refused::Read(shared.invalid(c, format!("invalid item: {e}"))))?;
        let m = head.metadata;
        items.push((
            (m.namespace.unwrap_or_default().into(), m.name.unwrap_or_default().into()),
            (Uid::of(m.uid.as_deref().unwrap_or("")), record),
        ));
    }
    Ok(Listed { items: packed(items), resource_version: listed.resource_version, stream: None })
}

/// A list's records put in a store's map at once: its nodes filled (eleven records each), where
/// inserting them one by one in key order leaves each node split at six, and the map takes
/// nearly twice the room (at 150,000 pods, about 8 MB more). An object listed twice keeps its
/// last record, as inserting does. Its keys are held as [`Store::put`] holds them: the objects
/// of a namespace listed one after the other hold one copy of its name (a list is in key order).
fn packed<T>(items: Vec<(Key, (Uid, T))>) -> Records<T> {
    let mut last: Option<Arc<str>> = None;
    items
        .into_iter()
        .map(|((namespace, name), record)| {
            let namespace = match last.take() {
                Some(held) if held == namespace => held,
                _ => namespace,
            };
            last = Some(namespace.clone());
            ((namespace, name), record)
        })
        .collect()
}

/// Applies a stream's events to the store until it ends; each event's resourceVersion is told
/// to the machine, where the next watch opens from.
async fn consume<T: Followed>(
    shared: &Shared,
    c: Collection,
    store: &Store<T>,
    watch: &mut Watch,
    machine: &mut Machine,
) -> Ended {
    let opened = Instant::now();
    let interval = shared.interval();
    loop {
        let frame: Frame = match tokio::time::timeout(shared.bookmark * 2, watch.next_frame()).await {
            Err(_) => return Ended::Silent,
            Ok(Err(kind)) => return Ended::Failed(shared.error(c, kind)),
            Ok(Ok(None)) => return Ended::Closed { after: opened.elapsed() },
            Ok(Ok(Some(frame))) => frame,
        };
        let event = match decode::<T>(&frame) {
            Err(detail) => return Ended::Failed(shared.invalid(c, detail.0)),
            Ok(event) => event,
        };
        let name = event.name();
        let (key, rv, changed) = match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                // The key is the store's once applied: kept for the log only when it is read.
                let logged = logged::debugging().then(|| o.key.clone());
                let changed = store.put(o.key, &o.uid, o.record);
                (logged, o.resource_version, changed)
            }
            WatchEvent::Deleted(o) => {
                let changed = store.delete(&o.key, &o.uid);
                (logged::debugging().then_some(o.key), o.resource_version, changed)
            }
            WatchEvent::Bookmark { resource_version, .. } => (None, resource_version, false),
            WatchEvent::Error { code: 410, .. } => return Ended::Gone,
            WatchEvent::Error { code, message } => {
                return Ended::Failed(shared.error(c, ReadErrorKind::Status { code, message }));
            }
        };
        if let Some((namespace, name_)) = &key {
            let address = shared.fetcher.address();
            Applied { address, collection: c, event: name, namespace, name: name_, resource_version: &rv, changed }
                .emit();
        }
        machine.step(Happened::Seen { resource_version: rv }, Instant::now(), interval);
        if changed && starts_cycles(c) {
            shared.changed.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size of what an async fn of four arguments returns.
    fn future_size<A, B, C, D, F>(_: fn(A, B, C, D) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    /// The size of what an async fn of five arguments returns.
    fn future_size_5<A, B, C, D, E, F>(_: fn(A, B, C, D, E) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    #[test]
    fn a_list_packed_into_a_store_keeps_each_objects_last_record() {
        let key = |name: &str| -> Key { ("team-a".into(), name.into()) };
        let claim = |name: &str, phase: &str| crate::collect::Pvc {
            namespace: "team-a".into(),
            name: name.into(),
            phase: phase.into(),
        };
        let items = vec![
            (key("b"), (Uid::of("1"), claim("b", "1"))),
            (key("a"), (Uid::of("2"), claim("a", "2"))),
            (key("b"), (Uid::of("3"), claim("b", "3"))),
        ];
        let records = packed(items);
        let kept: Vec<_> = records.iter().map(|((_, name), (uid, r))| (&**name, *uid, r.phase.as_str())).collect();
        assert_eq!(kept, [("a", Uid::of("2"), "2"), ("b", Uid::of("3"), "3")]);
    }

    #[test]
    fn the_followed_collections_task_is_small_while_it_reads() {
        // A task holds its future's largest state for its life: what it holds while it reads
        // its stream, plus the machine, the list waiting for the store and the stream itself.
        let reading = future_size_5(consume::<Arc<Pod>>);
        for (kind, size) in [
            ("pods", future_size(follow::<Arc<Pod>>)),
            ("deployments", future_size(follow::<workloads::DeploymentRecord>)),
            ("jobs", future_size(follow::<crate::collect::kinds::job::Job>)),
        ] {
            assert!(
                size <= reading + 640,
                "following {kind} holds {size} bytes, reading a stream {reading}: is a list or a watch's opening \
                 no longer boxed?"
            );
        }
    }
}
