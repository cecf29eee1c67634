//! A followed collection's store: its compact records by namespace and name, updated in place
//! by its watch's events, taken whole into a cycle; and whether it can be taken, and if not, why.

use std::any::Any;
use std::collections::BTreeMap;
use std::hash::Hasher;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::Followed;
use super::machine::ToStore;
use crate::collect::Words;
use crate::error::ReadError;

/// (namespace, name): one object of the collection. Shared, not copied: the objects of one
/// namespace kept side by side hold one copy of its name, and a record that holds its own names
/// holds the key's ([`crate::collect::FromApi::share_names`]).
pub type Key = (Arc<str>, Arc<str>);

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
    /// What its records hold alike, held once.
    words: Words,
    pub sync: InSync,
    /// The list last handed to a cycle, when the cycle gives it back, and the keys changed
    /// since it was handed out.
    lent: Lent<T>,
    /// Whether its cycles give their lists back (the pods'): only then are the keys changed
    /// kept.
    lends: bool,
    /// Where the last take put the records of the keys changed, when it changed a list given
    /// back (in increasing order); None when it copied every record. The rest of that list is
    /// as the last cycle left it.
    put_at: Option<Vec<usize>>,
}

impl<T> Kept<T> {
    /// A key not kept yet, holding the namespace its neighbour's key holds when it is the same.
    fn new_key(&self, key: Key) -> Key {
        use std::ops::Bound::{Excluded, Unbounded};
        let neighbours = [self.items.range(..&key).next_back(), self.items.range((Excluded(&key), Unbounded)).next()];
        match neighbours.into_iter().flatten().find(|((namespace, _), _)| *namespace == key.0) {
            Some(((namespace, _), _)) => (namespace.clone(), key.1),
            None => key,
        }
    }
}

/// What a store knows of the list it last handed to a cycle. A cycle that gives its list back
/// ([`Store::shelve`]) lets the next take change that list where objects changed, rather than
/// copy every record out of the store again: each record of the store is shared (`Arc`), and
/// copying one is a write to its count, which at 150,000 pods is a cache miss a pod at each
/// cycle, and another when the cycle lets it go.
enum Lent<T> {
    /// Nothing to change: no list handed out, or it cannot be changed into the store's (the
    /// store was replaced, or too many objects changed).
    None,
    /// Handed out, not given back yet: the keys changed since.
    Out { changed: Vec<Key> },
    /// Given back: the list as the cycle left it, how to read a record's key (None: the list is
    /// not in the store's key order, and is taken again only when nothing changed), and the
    /// keys changed since it was handed out.
    Back { list: Vec<T>, key: Option<KeyOf<T>>, changed: Vec<Key> },
}

/// A record's namespace and name, in a list given back (not every record holds its own: an
/// event's names are those of the object it is about).
pub type KeyOf<T> = fn(&T) -> (&str, &str);

/// Past this many changed keys a list handed out is made again, not changed: changing it
/// costs a search a key, making it a copy a record.
fn changes_past(items: usize) -> usize {
    64 + items / 16
}

impl<T> Lent<T> {
    /// One more key changed.
    fn changed(&mut self, key: &Key, items: usize) {
        let changed = match self {
            Lent::None => return,
            Lent::Out { changed } | Lent::Back { changed, .. } => changed,
        };
        if changed.len() >= changes_past(items) {
            *self = Lent::None;
        } else {
            changed.push(key.clone());
        }
    }
}

/// The list a cycle gave back, changed where `changed` says into what `items` hold: the records
/// of the keys changed found by halving the list (which is in key order), taken out and put in
/// as the store now has them; the others moved, not copied. The list may have left records out
/// (a Succeeded pod, an ignored namespace): those not changed stay out, and a cycle leaves out
/// again those changed, as it does every record of a list made afresh. Also says where it put
/// the records of the keys changed, in increasing order: the rest is as the cycle left it.
fn patched<T: Clone>(list: Vec<T>, key: KeyOf<T>, mut changed: Vec<Key>, items: &Records<T>) -> (Vec<T>, Vec<usize>) {
    changed.sort_unstable();
    changed.dedup();
    let places: Vec<(usize, bool)> = changed
        .iter()
        .map(|(namespace, name)| {
            let wanted = (&**namespace, &**name);
            let at = list.partition_point(|r| key(r) < wanted);
            (at, list.get(at).is_some_and(|r| key(r) == wanted))
        })
        .collect();
    let mut out = Vec::with_capacity(list.len() + changed.len());
    let mut put_at = Vec::with_capacity(changed.len());
    let mut old = list.into_iter();
    let mut next = 0;
    for ((at, there), k) in places.into_iter().zip(&changed) {
        out.extend(old.by_ref().take(at - next));
        next = at;
        if there {
            old.next();
            next += 1;
        }
        if let Some((_, record)) = items.get(k) {
            put_at.push(out.len());
            out.push(record.clone());
        }
    }
    out.extend(old);
    (out, put_at)
}

/// A store whatever its records: what a follower asks of each.
pub trait AnyStore: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn every_interval(&self) -> bool;
    fn protobuf(&self) -> bool;
    /// Where the last take put the records of the keys changed into the list given back (in
    /// increasing order), the rest being as the last cycle left it; None when it copied every
    /// record.
    fn put_at(&self) -> Option<Vec<usize>>;
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

    fn put_at(&self) -> Option<Vec<usize>> {
        Store::put_at(self)
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
            state: Mutex::new(Kept {
                items: BTreeMap::new(),
                words: Words::default(),
                sync,
                lent: Lent::None,
                lends: false,
                put_at: None,
            }),
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

    /// Replaces the records with a list's, each holding its key's names and the words the
    /// others hold ([`crate::collect::FromApi::share_names`]).
    pub fn replace(&self, mut items: Records<T>) {
        let mut words = Words::default();
        for (key, (_, record)) in items.iter_mut() {
            record.share_names(key, &mut words);
        }
        let mut k = self.lock();
        k.words = words;
        k.items = items;
        k.lent = Lent::None;
        k.sync = InSync::Following;
        drop(k);
        self.settled.notify_waiters();
    }

    pub fn set(&self, sync: InSync) {
        let mut k = self.lock();
        k.sync = sync;
        // Its cycles read the server now: a list given back would not be the store's.
        k.lent = Lent::None;
        drop(k);
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
    pub fn put(&self, key: Key, uid: &str, mut record: T) -> bool {
        let uid = Uid::of(uid);
        let mut k = self.lock();
        // The key the store keeps for the object (inserting keeps it), or a new one.
        let key = match k.items.get_key_value(&key) {
            Some((_, (u, r))) if *u == uid && *r == record => return false,
            Some((kept, _)) => kept.clone(),
            None => k.new_key(key),
        };
        record.share_names(&key, &mut k.words);
        let items = k.items.len();
        k.lent.changed(&key, items);
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
            let items = k.items.len();
            k.lent.changed(key, items);
        }
        ours
    }

    /// The list of records a cycle took, given back once the cycle is done with it: the next
    /// take hands it out again as it is when no object changed since. `key`: how to read a
    /// record's key when the list is in key order, as taken (though it may have left records
    /// out), so that the next take changes it where objects changed; None for a list the cycle
    /// put in another order (the events), copied afresh when anything changed. A list of another
    /// take than the last is let go.
    pub fn shelve(&self, list: Vec<T>, key: Option<KeyOf<T>>) {
        let mut k = self.lock();
        k.lends = true;
        if let Lent::Out { changed } = std::mem::replace(&mut k.lent, Lent::None) {
            k.lent = Lent::Back { list, key, changed };
        }
    }

    /// The records as a cycle takes them: the list given back as it is when nothing changed,
    /// changed where objects changed when it is in key order, or every record copied out.
    /// Either way the list is out until given back.
    fn hand_out(k: &mut Kept<T>) -> Vec<T> {
        let list = match std::mem::replace(&mut k.lent, Lent::None) {
            // Nothing changed: the cycle's list is the last one, not a record read.
            Lent::Back { list, changed, .. } if changed.is_empty() => {
                k.put_at = Some(Vec::new());
                list
            }
            Lent::Back { list, key: Some(key), changed } => {
                let (list, put_at) = patched(list, key, changed, &k.items);
                k.put_at = Some(put_at);
                list
            }
            Lent::None | Lent::Out { .. } | Lent::Back { key: None, .. } => {
                k.put_at = None;
                k.items.values().map(|(_, r)| r.clone()).collect()
            }
        };
        if k.lends {
            k.lent = Lent::Out { changed: Vec::new() };
        }
        list
    }

    /// Where the last take put the records of the keys changed into the list given back (in
    /// increasing order), the rest being as the last cycle left it; None when it copied every
    /// record.
    pub fn put_at(&self) -> Option<Vec<usize>> {
        self.lock().put_at.clone()
    }

    /// The records, or why the store cannot be taken; None: read it now, every interval.
    pub async fn take(&self, interval: Duration) -> Option<Result<Vec<T>, ReadError>> {
        loop {
            let settled = self.settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            {
                let mut k = self.lock();
                match &k.sync {
                    InSync::Starting => {}
                    InSync::Following => return Some(Ok(Store::hand_out(&mut k))),
                    InSync::Broken { since, error } if since.elapsed() > interval => return Some(Err(error.clone())),
                    InSync::Broken { .. } => return Some(Ok(Store::hand_out(&mut k))),
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

    /// The records as a followed cycle takes them, changing the list given back (for tests).
    #[cfg(test)]
    pub fn taken(&self) -> Vec<T> {
        Store::hand_out(&mut self.lock())
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
    use std::sync::Arc;

    fn claim(namespace: &str, name: &str, phase: &str) -> Pvc {
        Pvc { namespace: namespace.into(), name: name.into(), phase: phase.into() }
    }

    /// Claim `c` of namespace `a`, and its key: the one object of the stores' event tests.
    fn pvc(phase: &str) -> Pvc {
        claim("a", "c", phase)
    }

    fn key() -> Key {
        ("a".into(), "c".into())
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

    #[test]
    fn a_list_given_back_is_changed_where_objects_changed_and_moved_elsewhere() {
        let store = Store::<Arc<Pvc>>::new();
        store.replace(BTreeMap::new());
        let by_names: Option<KeyOf<Arc<Pvc>>> = Some(|c| (c.namespace.as_str(), c.name.as_str()));
        let put =
            |name: &str, phase: &str| store.put(("a".into(), name.into()), name, Arc::new(claim("a", name, phase)));
        for name in ["b", "d", "f", "h"] {
            put(name, "Bound");
        }
        // Until a cycle gave a list back, the store keeps no changed key: its lists may never
        // come back (only the pods' do).
        let zeroth = store.taken();
        put("b", "Lost");
        assert!(matches!(store.lock().lent, Lent::None));
        store.shelve(zeroth, by_names);
        assert!(matches!(store.lock().lent, Lent::None), "given back before its store lends: let go");
        put("b", "Bound");
        let first = store.taken();
        assert_eq!(first.len(), 4, "none given back: every record");
        // The cycle left `f` out (as one leaves out a Succeeded pod) and gives the list back.
        let given: Vec<Arc<Pvc>> = first.iter().filter(|c| c.name != "f").cloned().collect();
        store.shelve(given, by_names);
        assert!(matches!(store.lock().lent, Lent::Back { .. }));
        put("a", "Bound"); // before every other
        put("d", "Pending"); // changed
        put("e", "Bound"); // between two
        put("z", "Bound"); // after every other
        assert!(store.delete(&("a".into(), "h".into()), "h"));
        put("e", "Lost"); // changed twice
        let taken = store.taken();
        let names: Vec<(&str, &str)> = taken.iter().map(|c| (c.name.as_str(), c.phase.as_str())).collect();
        assert_eq!(names, [("a", "Bound"), ("b", "Bound"), ("d", "Pending"), ("e", "Lost"), ("z", "Bound")]);
        assert!(Arc::ptr_eq(&taken[1], &first[0]), "an unchanged record is the very one, moved");
        let e = store.lock().items[&(Arc::from("a"), Arc::from("e"))].1.clone();
        assert!(Arc::ptr_eq(&taken[3], &e), "a changed record is the store's");
        assert_eq!(store.put_at(), Some(vec![0, 2, 3, 4]), "where the changed records were put");

        // Not given back: the next take copies every record again (`f` too).
        let again = store.taken();
        assert_eq!(again, store.records());
        assert_eq!(store.put_at(), None, "every record copied");
        // Given back, then the store listed afresh: every record.
        store.shelve(again, by_names);
        let items = store.lock().items.clone();
        store.replace(items);
        assert_eq!(store.taken(), store.records());
        // Given back, then more changes than are worth a search each: every record.
        let records = store.records();
        store.shelve(records, by_names);
        for i in 0..200 {
            put(&format!("m{i:03}"), "Bound");
        }
        assert!(changes_past(store.lock().items.len()) < 200);
        assert!(matches!(store.lock().lent, Lent::None));
        assert_eq!(store.taken(), store.records());
        // Given back after its cycles were told to read the server: let go.
        store.set(InSync::EveryInterval);
        store.shelve(Vec::new(), by_names);
        assert!(matches!(store.lock().lent, Lent::None));
    }

    #[test]
    fn a_list_given_back_in_another_order_is_taken_again_only_while_nothing_changed() {
        let store = Store::<Arc<Pvc>>::new();
        store.replace(BTreeMap::new());
        let put =
            |name: &str, phase: &str| store.put(("a".into(), name.into()), name, Arc::new(claim("a", name, phase)));
        for name in ["b", "d", "f"] {
            put(name, "Bound");
        }
        // The first list given back is let go: the store did not know its lists come back.
        store.shelve(store.taken(), None);
        let first = store.taken();
        // The cycle put the list in its own order and left `d` out.
        let given: Vec<Arc<Pvc>> = first.iter().rev().filter(|c| c.name != "d").cloned().collect();
        store.shelve(given.clone(), None);
        assert!(!put("b", "Bound"), "no change");
        let again = store.taken();
        assert_eq!(store.put_at(), Some(Vec::new()), "nothing changed: the list as the cycle left it");
        assert_eq!(again.len(), 2);
        assert!(again.iter().zip(&given).all(|(a, b)| Arc::ptr_eq(a, b)), "the very list, in its order");
        store.shelve(again, None);
        put("f", "Lost");
        let changed = store.taken();
        assert_eq!(store.put_at(), None, "changed, and not in key order: every record copied");
        assert_eq!(changed, store.records());
        // A deletion is a change too.
        store.shelve(changed, None);
        assert!(store.delete(&("a".into(), "b".into()), "b"));
        assert_eq!(store.taken(), store.records());
        assert_eq!(store.put_at(), None);
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

    /// A pod's record and its key hold one copy of its names, the pods of a namespace kept side
    /// by side one copy of the namespace's, and the pods on a node one copy of its name: as
    /// listed, and as put one by one.
    #[test]
    fn a_store_holds_each_name_once() {
        use crate::collect::{Pod, from_api};
        let pod = |namespace: &str, name: &str, phase: &str| -> Arc<Pod> {
            let json = format!(
                r#"{{"metadata":{{"namespace":"{namespace}","name":"{name}"}},"spec":{{"nodeName":"node-1"}},"status":{{"phase":"{phase}"}}}}"#
            );
            from_api(&json).expect("a pod")
        };
        let item = |namespace: &str, name: &str| {
            ((namespace.into(), name.into()), (Uid::of(name), pod(namespace, name, "Running")))
        };
        let once = |store: &Store<Arc<Pod>>| {
            let k = store.lock();
            for ((namespace, name), (_, p)) in &k.items {
                assert!(Arc::ptr_eq(namespace, &p.namespace), "{name}: its namespace held twice");
                assert!(Arc::ptr_eq(name, &p.name), "{name}: its name held twice");
            }
            for namespace in ["shop", "web"] {
                let held: Vec<&Arc<str>> = k.items.keys().map(|(n, _)| n).filter(|n| &***n == namespace).collect();
                assert!(held.windows(2).all(|w| Arc::ptr_eq(w[0], w[1])), "{namespace} held more than once");
            }
            let nodes: Vec<&Arc<str>> = k.items.values().map(|(_, p)| &p.node).collect();
            assert!(nodes.windows(2).all(|w| Arc::ptr_eq(w[0], w[1])), "the node's name held more than once");
        };
        let store = Store::<Arc<Pod>>::new();
        store.replace(super::super::packed(vec![item("shop", "a"), item("shop", "c"), item("web", "x")]));
        once(&store);
        assert!(store.put(("shop".into(), "b".into()), "b", pod("shop", "b", "Running")), "added between two");
        assert!(store.put(("web".into(), "w".into()), "w", pod("web", "w", "Running")), "added before the only one");
        assert!(store.put(("zoo".into(), "z".into()), "z", pod("zoo", "z", "Running")), "in a namespace of its own");
        assert!(store.put(("shop".into(), "a".into()), "a", pod("shop", "a", "Pending")), "changed");
        once(&store);
        let a = store.lock().items[&(Arc::from("shop"), Arc::from("a"))].1.clone();
        assert_eq!(a.phase, crate::collect::pods::Phase::Pending, "the changed record is kept");
        assert_eq!(store.lock().items.len(), 6);
    }
}
