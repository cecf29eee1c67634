//! A followed collection's store: its compact records by namespace and name, updated in place
//! by its watch's events, taken whole into a cycle; and whether it can be taken, and if not, why.

use std::any::Any;
use std::collections::BTreeMap;
use std::hash::Hasher;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::Followed;
use super::machine::ToStore;
use crate::error::ReadError;

/// (namespace, name): one object of the collection.
pub type Key = (String, String);

/// Whether a store can be taken into a cycle, and if not, why.
#[derive(Clone, Debug)]
pub enum InSync {
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
    /// Not followed (the Metrics API): read at each interval cycle.
    NotFollowed,
}

/// An object's uid as a store keeps it: only ever compared, to tell a recreated object from the
/// one it replaces, so kept as a fingerprint of 8 bytes rather than 36 characters on the heap
/// (at 150,000 pods, 10 MB). `Uid::NONE` for an object without one (a DELETED without it
/// removes whatever is kept under its key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uid(u64);

impl Uid {
    pub const NONE: Uid = Uid(0);

    pub fn of(uid: &str) -> Uid {
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

/// A collection's records by key, each with the uid that tells a recreated object.
pub type Records<T> = BTreeMap<Key, (Uid, T)>;

/// One collection as followed.
pub struct Store<T> {
    state: Mutex<Kept<T>>,
    /// Told when the first list finishes (or fails).
    settled: Notify,
    /// Whether the server sent the last watch opened in protobuf.
    pub protobuf: AtomicBool,
    /// What the last interval cycle read from the server itself, when the collection is read
    /// every interval: taken again by the cycles between intervals.
    last_read: Mutex<Option<Result<Vec<T>, ReadError>>>,
}

pub struct Kept<T> {
    /// In key order, so that a cycle takes them as a List gives them (sorted by namespace and
    /// name, which the snapshot's ordering then only checks: at 150,000 pods, sorting records
    /// taken in a hash map's order was a tenth of a cycle's CPU).
    pub items: Records<T>,
    pub sync: InSync,
}

/// A store whatever its records: what a follower asks of each.
pub trait AnyStore: Send + Sync {
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

/// A lock whose holder may have panicked: what it guards is whole at every step.
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T: Followed> Store<T> {
    pub fn new() -> Store<T> {
        Store::in_sync(InSync::Starting)
    }

    /// The store of a collection that is not followed: read at each interval cycle.
    pub fn not_followed() -> Store<T> {
        Store::in_sync(InSync::NotFollowed)
    }

    fn in_sync(sync: InSync) -> Store<T> {
        Store {
            state: Mutex::new(Kept { items: BTreeMap::new(), sync }),
            settled: Notify::new(),
            protobuf: Default::default(),
            last_read: Mutex::new(None),
        }
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, Kept<T>> {
        lock(&self.state)
    }

    /// Carries out what the list-then-watch machine tells the store; `listed`: the records of
    /// the list just made, for a replacement.
    pub fn told(&self, told: ToStore, listed: &mut Option<Records<T>>) {
        match told {
            ToStore::Nothing => {}
            ToStore::Replace { .. } => {
                if let Some(items) = listed.take() {
                    self.replace(items);
                }
            }
            ToStore::Failed(e) => self.set(InSync::Failed(e)),
            ToStore::EveryInterval => self.set(InSync::EveryInterval),
            ToStore::Broken(e) => self.broken(e),
            ToStore::Opened => self.opened(),
        }
    }

    pub fn replace(&self, items: Records<T>) {
        let mut k = self.lock();
        k.items = items;
        k.sync = InSync::Following;
        drop(k);
        self.settled.notify_waiters();
    }

    pub fn set(&self, sync: InSync) {
        self.lock().sync = sync;
        self.settled.notify_waiters();
    }

    /// The watch could not be opened, or dropped: broken since the first time.
    pub fn broken(&self, error: ReadError) {
        let mut k = self.lock();
        k.sync = match &k.sync {
            InSync::Broken { since, .. } => InSync::Broken { since: *since, error },
            InSync::Following => InSync::Broken { since: Instant::now(), error },
            other => other.clone(),
        };
    }

    /// A watch is open: the store follows again.
    pub fn opened(&self) {
        let mut k = self.lock();
        if matches!(k.sync, InSync::Broken { .. }) {
            k.sync = InSync::Following;
        }
    }

    /// An object added or modified; whether it changed the records. An object rewritten into
    /// the same record (a node's status heartbeat, a label, an annotation, `managedFields`)
    /// changes nothing a cycle derives, so it takes no cycle.
    pub fn put(&self, key: Key, uid: &str, record: T) -> bool {
        let uid = Uid::of(uid);
        let mut k = self.lock();
        if k.items.get(&key).is_some_and(|(u, r)| *u == uid && *r == record) {
            return false;
        }
        k.items.insert(key, (uid, record));
        true
    }

    /// An object deleted; whether it was kept. A DELETED for an older incarnation leaves the
    /// recreated object alone.
    pub fn delete(&self, key: &Key, uid: &str) -> bool {
        let uid = Uid::of(uid);
        let mut k = self.lock();
        let ours = k.items.get(key).is_some_and(|(u, _)| uid == Uid::NONE || *u == uid);
        if ours {
            k.items.remove(key);
        }
        ours
    }

    /// The records, or why the store cannot be taken; None: read it now, every interval.
    pub async fn take(&self, interval: Duration) -> Option<Result<Vec<T>, ReadError>> {
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
                    InSync::EveryInterval | InSync::NotFollowed => return None,
                }
            }
            settled.await;
        }
    }

    /// The records as a cycle takes them, whatever the store's state (for tests).
    #[cfg(test)]
    pub fn records(&self) -> Vec<T> {
        self.lock().items.values().map(|(_, r)| r.clone()).collect()
    }

    /// What the last interval cycle read of a collection read every interval.
    pub fn last_read(&self) -> &Mutex<Option<Result<Vec<T>, ReadError>>> {
        &self.last_read
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::Pvc;
    use crate::collection::Collection;
    use crate::error::ReadErrorKind;

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
        assert!(store.put(key(), "new", pvc("Bound")));
        assert!(!store.delete(&key(), "old"));
        assert_eq!(store.lock().items.len(), 1, "the DELETED of the old uid leaves the new object");
        assert!(store.delete(&key(), "new"));
        assert!(store.lock().items.is_empty());
        assert!(!store.delete(&key(), "new"), "gone already");
    }

    #[test]
    fn an_event_that_leaves_the_record_as_it_was_is_no_change() {
        let store = Store::<Pvc>::new();
        assert!(store.put(key(), "u1", pvc("Pending")));
        assert!(!store.put(key(), "u1", pvc("Pending")), "a label changed, say");
        assert!(store.put(key(), "u1", pvc("Bound")));
        assert!(store.put(key(), "u2", pvc("Bound")), "recreated: another object");
        assert_eq!(store.lock().items[&key()].0, Uid::of("u2"));
        assert_ne!(Uid::of("u1"), Uid::of("u2"));
        assert_ne!(Uid::of("u2"), Uid::NONE);
    }

    #[tokio::test]
    async fn a_store_gives_its_records_in_namespace_and_name_order() {
        let store = Store::<Pvc>::new();
        store.replace(BTreeMap::new());
        for (ns, name) in [("b", "a"), ("a", "z"), ("a", "b"), ("c", "a")] {
            store.put((ns.into(), name.into()), &format!("{ns}-{name}"), claim(ns, name, "Bound"));
        }
        let taken = store.take(Duration::from_secs(60)).await.unwrap().unwrap();
        let order: Vec<(&str, &str)> = taken.iter().map(|p| (p.namespace.as_str(), p.name.as_str())).collect();
        assert_eq!(order, [("a", "b"), ("a", "z"), ("b", "a"), ("c", "a")]);
    }

    #[tokio::test]
    async fn a_broken_watch_fails_the_cycle_only_past_the_interval() {
        let store = Store::<Pvc>::new();
        store.replace(BTreeMap::new());
        let error =
            ReadError { address: "https://h".into(), collection: Collection::PVCS, kind: ReadErrorKind::Refused };
        store.broken(error.clone());
        assert!(store.take(Duration::from_secs(60)).await.unwrap().is_ok(), "broken for less than the interval");
        assert_eq!(store.take(Duration::ZERO).await.unwrap().unwrap_err(), error);
        store.opened();
        assert!(store.take(Duration::ZERO).await.unwrap().is_ok(), "open again");
        store.set(InSync::EveryInterval);
        assert!(store.take(Duration::ZERO).await.is_none(), "read every interval");
        assert!(Store::<Pvc>::not_followed().take(Duration::ZERO).await.is_none(), "never followed");
        assert!(!Store::<Pvc>::not_followed().every_interval(), "not said to be read every interval");
    }
}
