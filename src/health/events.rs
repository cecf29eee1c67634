//! What a cycle's judgements read of the Warning events: the newest event about each object, and
//! how many events of each reason the last hour saw.
//!
//! A cycle builds this index from its events in one walk (at 150,000 simulated pods, 50,000
//! events, each a read of another record's memory). A followed cluster that keeps its judgements
//! keeps the index too ([`KeptIndex`]): while its events are the very records of the last cycle (the
//! same allocations, in the same order, which a watch's store keeps until an event changes), the
//! newest event about each object is the same, and so are the hour's counts while no event leaves
//! the hour. A cycle on a pod's change then reads its events without a walk or a hash over them.

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::hash_table::{Entry, HashTable};
use jiff::Timestamp;

use super::NamesHasher;
use super::why::clean_line;
use crate::collect::Event;

/// The names an event is about: the kind, namespace and name of its object.
type About<'a> = (&'a str, &'a str, &'a str);

fn about(e: &Event) -> About<'_> {
    (e.kind.as_str(), e.object_namespace.as_deref().unwrap_or(""), e.object_name.as_str())
}

/// The newest event about each object, as its place in the events it was built of.
pub(super) struct Newest {
    places: HashTable<usize>,
    hasher: NamesHasher,
}

impl Newest {
    /// Of `events`: of two events about one object, the one last seen later (the first, when
    /// both were seen at the same time or neither says when).
    fn of(events: &[Arc<Event>]) -> Newest {
        let hasher = NamesHasher::default();
        // Sized once: growing it as the events come cost more than filling it.
        let mut places = HashTable::with_capacity(events.len());
        let rehash = |&i: &usize| hasher.hash_one(about(&events[i]));
        for (i, e) in events.iter().enumerate() {
            let key = about(e);
            match places.entry(hasher.hash_one(key), |&j: &usize| about(&events[j]) == key, rehash) {
                Entry::Occupied(mut kept) => {
                    if e.last_seen > events[*kept.get()].last_seen {
                        *kept.get_mut() = i;
                    }
                }
                Entry::Vacant(place) => {
                    place.insert(i);
                }
            }
        }
        Newest { places, hasher }
    }

    /// The newest event about the object, of the `events` the index was built of.
    fn find<'a>(&self, events: &'a [Arc<Event>], key: About) -> Option<&'a Arc<Event>> {
        self.places.find(self.hasher.hash_one(key), |&i| about(&events[i]) == key).map(|&i| &events[i])
    }
}

/// The Warning events of the hour before a time: how many, and how many of each reason.
#[derive(Debug)]
pub(super) struct OfTheHour {
    /// The start of the hour counted.
    since: Timestamp,
    count: u64,
    /// Most first, then by reason.
    by_reason: Vec<(String, u64)>,
    /// When the event counted that was seen first was last seen: the first to leave the hour.
    earliest: Option<Timestamp>,
}

impl OfTheHour {
    fn of(events: &[Arc<Event>], since: Timestamp) -> OfTheHour {
        let (mut count, mut by_reason, mut earliest) = (0, super::Names::<&str, u64>::default(), None);
        for e in events {
            let Some(seen) = e.last_seen.filter(|t| *t >= since) else { continue };
            count += 1;
            *by_reason.entry(e.reason.as_str()).or_default() += 1;
            earliest = Some(earliest.map_or(seen, |t: Timestamp| t.min(seen)));
        }
        let mut by_reason: Vec<(String, u64)> = by_reason.into_iter().map(|(r, n)| (r.to_string(), n)).collect();
        by_reason.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        OfTheHour { since, count, by_reason, earliest }
    }

    /// Whether the same events counted from `since` are those counted here: none has left the
    /// hour (and none can come into it, as the events are the same and the hour only moves on).
    fn holds_at(&self, since: Timestamp) -> bool {
        self.since <= since && self.earliest.is_none_or(|t| t >= since)
    }
}

/// What a cycle's judgements read of its events.
pub(super) struct EventIndex<'a> {
    events: &'a [Arc<Event>],
    newest: &'a Newest,
    hour: &'a OfTheHour,
}

impl<'a> EventIndex<'a> {
    /// The Warning events of the last hour: how many, and how many of each reason, most first.
    pub(super) fn of_the_hour(&self) -> (u64, Vec<(String, u64)>) {
        (self.hour.count, self.hour.by_reason.clone())
    }

    /// The newest event about the object, as shared.
    pub(super) fn newest(&self, kind: &str, namespace: &str, name: &str) -> Option<&'a Arc<Event>> {
        self.newest.find(self.events, (kind, namespace, name))
    }

    pub(super) fn about(&self, kind: &str, namespace: &str, name: &str) -> Option<&'a Event> {
        self.newest(kind, namespace, name).map(|e| &**e)
    }

    /// `Reason: message` of the newest Warning event about the object.
    pub(super) fn why(&self, kind: &str, namespace: &str, name: &str) -> Option<String> {
        self.about(kind, namespace, name).map(|e| clean_line(&format!("{}: {}", e.reason, e.message), super::WHY_MAX))
    }
}

/// The index of a cycle's events, made for it or kept from the last cycle.
pub(super) struct Index {
    newest: Newest,
    hour: OfTheHour,
}

impl Index {
    /// The index of `events`, the hour counted from `since`.
    pub(super) fn of(events: &[Arc<Event>], since: Timestamp) -> Index {
        Index { newest: Newest::of(events), hour: OfTheHour::of(events, since) }
    }

    /// What the cycle's judgements read through it, of the `events` it was made of.
    pub(super) fn over<'a>(&'a self, events: &'a [Arc<Event>]) -> EventIndex<'a> {
        EventIndex { events, newest: &self.newest, hour: &self.hour }
    }
}

/// The index a followed cluster keeps from one cycle to the next, with the events it was made
/// of (kept, so that no other event has one of their addresses while they are compared).
#[derive(Default)]
pub struct KeptIndex {
    events: Vec<Arc<Event>>,
    index: Option<Index>,
    /// How the last cycle had its index: made, kept whole, or kept with the hour counted again.
    pub last: Taken,
}

/// How a cycle had its events' index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Taken {
    #[default]
    Made,
    Kept,
    HourCounted,
}

impl KeptIndex {
    /// The index of `events` with the hour counted from `since`: the last cycle's, when the
    /// events are its very records and (for the hour) none left it; otherwise made again, or its
    /// hour counted again. `afresh`: made again, as a full derivation makes it.
    pub(super) fn take(&mut self, events: &[Arc<Event>], since: Timestamp, afresh: bool) -> Index {
        let same = !afresh
            && self.events.len() == events.len()
            && self.events.iter().zip(events).all(|(a, b)| Arc::ptr_eq(a, b));
        match self.index.take().filter(|_| same) {
            Some(kept) if kept.hour.holds_at(since) => {
                self.last = Taken::Kept;
                kept
            }
            Some(kept) => {
                self.last = Taken::HourCounted;
                Index { newest: kept.newest, hour: OfTheHour::of(events, since) }
            }
            None => {
                self.last = Taken::Made;
                self.events.clear();
                self.events.extend(events.iter().cloned());
                Index::of(events, since)
            }
        }
    }

    /// Whether the cycle's events are the very records of the last cycle (so the newest event
    /// about each object is the one it was), after [`KeptIndex::take`].
    pub(super) fn same_records(&self) -> bool {
        self.last != Taken::Made
    }

    /// Keeps the cycle's index for the next one (made of the events given to [`KeptIndex::take`]).
    pub(super) fn keep(&mut self, index: Index) {
        self.index = Some(index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str, name: &str, reason: &str, seen: i64) -> Arc<Event> {
        Arc::new(Event {
            namespace: "shop".into(),
            kind: kind.into(),
            object_namespace: Some("shop".into()),
            object_name: name.into(),
            reason: reason.into(),
            message: format!("{reason} of {name}"),
            event_type: "Warning".into(),
            last_seen: Some(Timestamp::from_second(seen).expect("a time")),
            count: 1,
        })
    }

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).expect("a time")
    }

    #[test]
    fn the_newest_event_about_an_object_is_the_one_last_seen_later_or_the_first_of_a_tie() {
        let events = vec![
            event("Pod", "api-1", "BackOff", 100),
            event("Pod", "api-1", "Failed", 300),
            event("Pod", "api-1", "Unhealthy", 200),
            event("Pod", "api-2", "FailedMount", 50),
            event("Pod", "api-2", "FailedScheduling", 50),
            event("Node", "api-1", "NodeNotReady", 10),
        ];
        let index = Index::of(&events, at(0));
        let read = index.over(&events);
        assert_eq!(read.about("Pod", "shop", "api-1").map(|e| e.reason.as_str()), Some("Failed"));
        assert_eq!(read.about("Pod", "shop", "api-2").map(|e| e.reason.as_str()), Some("FailedMount"));
        assert_eq!(read.about("Node", "shop", "api-1").map(|e| e.reason.as_str()), Some("NodeNotReady"));
        assert!(read.about("Pod", "shop", "api-3").is_none());
        assert!(read.about("Pod", "", "api-1").is_none());
    }

    #[test]
    fn the_hours_events_are_counted_by_reason_most_first() {
        let events = vec![
            event("Pod", "a", "BackOff", 3_700),
            event("Pod", "b", "BackOff", 4_000),
            event("Pod", "c", "Failed", 3_650),
            event("Pod", "d", "Evicted", 10),
        ];
        let index = Index::of(&events, at(3_600));
        let (count, by_reason) = index.over(&events).of_the_hour();
        assert_eq!(count, 3);
        assert_eq!(by_reason, vec![("BackOff".to_string(), 2), ("Failed".to_string(), 1)]);
    }

    #[test]
    fn a_kept_index_is_taken_again_while_its_events_are_the_same_and_none_leaves_the_hour() {
        let events = vec![event("Pod", "a", "BackOff", 3_700), event("Pod", "b", "Failed", 4_000)];
        let mut kept = KeptIndex::default();
        let check = |kept: &mut KeptIndex, events: &[Arc<Event>], since: i64, afresh: bool, taken: Taken| {
            let index = kept.take(events, at(since), afresh);
            assert_eq!(kept.last, taken, "since {since}");
            let fresh = Index::of(events, at(since));
            let counted = |h: &OfTheHour| (h.count, h.by_reason.clone(), h.earliest);
            assert_eq!(counted(&index.hour), counted(&fresh.hour), "since {since}");
            for e in events {
                let (kind, ns, name) = about(e);
                let (a, b) = (index.over(events).newest(kind, ns, name), fresh.over(events).newest(kind, ns, name));
                assert!(Arc::ptr_eq(a.expect("kept"), b.expect("made")));
            }
            kept.keep(index);
        };
        check(&mut kept, &events, 3_600, false, Taken::Made);
        // The same records: kept, until the first leaves the hour.
        check(&mut kept, &events, 3_650, false, Taken::Kept);
        check(&mut kept, &events, 3_700, false, Taken::Kept);
        check(&mut kept, &events, 3_701, false, Taken::HourCounted);
        check(&mut kept, &events, 3_702, false, Taken::Kept);
        // A time before the hour counted counts it again.
        check(&mut kept, &events, 3_000, false, Taken::HourCounted);
        // A full derivation makes it again.
        check(&mut kept, &events, 3_000, true, Taken::Made);
        // An equal event is another record: made again.
        let mut other = events.clone();
        other[1] = Arc::new(Event::clone(&events[1]));
        check(&mut kept, &other, 3_000, false, Taken::Made);
        // One event fewer: made again.
        check(&mut kept, &other[..1], 3_000, false, Taken::Made);
        check(&mut kept, &other[..1], 3_000, false, Taken::Kept);
    }
}
