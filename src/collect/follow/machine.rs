//! List-then-watch as a state machine: what one collection's task does next, decided by a pure
//! step function from what its last step came to. The task (`follow`) only carries out the
//! steps; every decision is here, tested without a runtime.
//!
//! The first list is a streaming list where the server serves it (its stream goes on as the
//! watch), a paginated LIST otherwise; then a watch from the list's resourceVersion, opened
//! again from the last one seen when it ends. A 410 lists afresh. A stream that drops waits a
//! backoff; one the server closed after a while (its timeout) or that stayed silent is opened
//! again at once. A watch not granted leaves the collection to be read every interval, retried
//! every [`WATCH_RETRY`]; a watch granted before and refused now is first taken for a passing
//! refusal (an API server that has just started refuses everything until its authorizer has
//! its roles), the store kept fresh by a LIST meanwhile, for up to an interval.

use std::time::{Duration, Instant};

use crate::error::{ReadError, ReadErrorKind};

/// The longest wait between two tries to open a watch or list again.
pub const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// How often a collection whose watch is not granted tries it again (a role may be given the
/// verb later).
pub const WATCH_RETRY: Duration = Duration::from_secs(300);

/// A stream the server closed sooner than this after it opened (a proxy in the way) waits a
/// backoff like a failure, rather than being opened again in a loop.
pub const SHORTEST_STREAM: Duration = Duration::from_secs(1);

/// What the task does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// List the collection: streaming where the server serves it, paginated otherwise.
    List,
    /// List it by the paginated LIST alone: its watch is refused, perhaps for a while.
    ListWithoutWatch,
    /// Open a watch from the last resourceVersion.
    Open,
    /// Read the open stream until it ends.
    Read,
}

/// What the store is told.
#[derive(Clone, Debug, PartialEq)]
pub enum ToStore {
    Nothing,
    /// Replace its records by those listed: it follows the server; a cycle is due when
    /// `changed` (not for the LIST made while a watch is refused).
    Replace {
        changed: bool,
    },
    /// Its list failed: a cycle fails with this.
    Failed(ReadError),
    /// Its watch is not granted: read it every interval.
    EveryInterval,
    /// Its watch could not be opened, or dropped: broken since the first time.
    Broken(ReadError),
    /// A watch is open: it follows again.
    Opened,
}

/// What a step came to.
#[derive(Debug)]
pub enum Happened {
    /// A list came, with the resourceVersion to watch from; by a streaming list, whose stream
    /// goes on as the watch, or by a paginated one.
    Listed { resource_version: String, streaming: bool },
    /// The streaming list was refused 403: the watch is not granted.
    WatchRefused(ReadError),
    /// The list failed.
    ListFailed(ReadError),
    /// The LIST made while the watch is refused: done, or why not.
    ListedWithoutWatch(Result<(), ReadError>),
    /// The watch opened.
    Opened,
    /// The watch could not be opened.
    NotOpened(ReadError),
    /// An event or a bookmark, at this resourceVersion.
    Seen { resource_version: String },
    /// The stream ended.
    Ended(Ended),
}

/// How a stream ended.
#[derive(Debug)]
pub enum Ended {
    /// The server closed it (its timeout), `after` it opened.
    Closed { after: Duration },
    /// 410: the resourceVersion is too old, list afresh.
    Gone,
    /// Nothing came for twice the bookmark interval.
    Silent,
    /// The connection dropped, or the server sent an ERROR other than 410, or garbage.
    Failed(ReadError),
}

/// The next step: what the store is told, how long to wait, then what to do.
#[derive(Debug, PartialEq)]
pub struct Next {
    pub store: ToStore,
    pub wait: Option<Duration>,
    pub then: Action,
}

impl Next {
    fn to(then: Action) -> Next {
        Next { store: ToStore::Nothing, wait: None, then }
    }
}

/// One collection's list-then-watch, between its steps.
#[derive(Debug)]
pub struct Machine {
    /// The last resourceVersion seen: where a watch opens from.
    resource_version: String,
    /// The last wait between tries: doubled from half a second up to the interval (at most
    /// [`MAX_BACKOFF`]); zero after a success.
    backoff: Duration,
    /// The watch was granted once: a 403 is first taken for a passing one.
    granted: bool,
    /// Since when the watch is refused.
    refused_since: Option<Instant>,
}

impl Default for Machine {
    fn default() -> Machine {
        Machine::new()
    }
}

pub fn is_forbidden(e: &ReadError) -> bool {
    matches!(e.kind, ReadErrorKind::Forbidden { .. })
}

pub fn is_gone(e: &ReadError) -> bool {
    matches!(e.kind, ReadErrorKind::Status { code: 410, .. })
}

impl Machine {
    pub fn new() -> Machine {
        Machine { resource_version: String::new(), backoff: Duration::ZERO, granted: false, refused_since: None }
    }

    /// What the task does first.
    pub fn start(&self) -> Action {
        Action::List
    }

    /// Where the next watch opens from.
    pub fn resource_version(&self) -> &str {
        &self.resource_version
    }

    /// The next step after `outcome`, at `now`, for a cluster read every `interval`.
    pub fn step(&mut self, outcome: Happened, now: Instant, interval: Duration) -> Next {
        match outcome {
            Happened::Listed { resource_version, streaming } => {
                self.resource_version = resource_version;
                self.backoff = Duration::ZERO;
                // A refusal is over only once a watch opens.
                self.granted |= streaming;
                let then = if streaming { Action::Read } else { Action::Open };
                Next { store: ToStore::Replace { changed: true }, wait: None, then }
            }
            Happened::WatchRefused(_) if self.refused_for_long(now, interval) => {
                Next { store: ToStore::EveryInterval, wait: Some(WATCH_RETRY), then: Action::List }
            }
            // A watch granted before and refused now, for a while: the store is kept fresh by
            // a LIST meanwhile, and a LIST refused too fails the cycle with the LIST's words.
            Happened::WatchRefused(_) => Next::to(Action::ListWithoutWatch),
            Happened::ListedWithoutWatch(done) => {
                let store = match done {
                    Ok(()) => ToStore::Replace { changed: false },
                    Err(e) => ToStore::Failed(e),
                };
                Next { store, wait: Some(self.back_off(interval)), then: Action::List }
            }
            Happened::ListFailed(e) => {
                Next { store: ToStore::Failed(e), wait: Some(self.back_off(interval)), then: Action::List }
            }
            Happened::Opened => {
                self.granted = true;
                self.refused_since = None;
                Next { store: ToStore::Opened, wait: None, then: Action::Read }
            }
            Happened::NotOpened(e) if is_gone(&e) => Next::to(Action::List),
            // Not granted (any more, or for a while).
            Happened::NotOpened(e) if is_forbidden(&e) => {
                if self.refused_for_long(now, interval) {
                    Next { store: ToStore::EveryInterval, wait: Some(WATCH_RETRY), then: Action::List }
                } else {
                    Next { store: ToStore::Nothing, wait: Some(self.back_off(interval)), then: Action::List }
                }
            }
            Happened::NotOpened(e) => {
                Next { store: ToStore::Broken(e), wait: Some(self.back_off(interval)), then: Action::Open }
            }
            Happened::Seen { resource_version } => {
                if !resource_version.is_empty() {
                    self.resource_version = resource_version;
                }
                Next::to(Action::Read)
            }
            // The server's timeout: the next opened at once. A stream closed as soon as it
            // opened waits like a failure, not to loop.
            Happened::Ended(Ended::Closed { after }) if after >= SHORTEST_STREAM => {
                self.backoff = Duration::ZERO;
                Next::to(Action::Open)
            }
            Happened::Ended(Ended::Closed { .. }) => {
                Next { store: ToStore::Nothing, wait: Some(self.back_off(interval)), then: Action::Open }
            }
            Happened::Ended(Ended::Gone) => Next::to(Action::List),
            // Opened again from the last resourceVersion: an idle collection gets no bookmark
            // from kube-apiserver, so silence alone is not a fault; a server that is gone fails
            // the next opening.
            Happened::Ended(Ended::Silent) => Next::to(Action::Open),
            Happened::Ended(Ended::Failed(e)) => {
                Next { store: ToStore::Broken(e), wait: Some(self.back_off(interval)), then: Action::Open }
            }
        }
    }

    /// The watch is refused: true when it is to be read every interval (never granted, or
    /// refused for an interval already).
    fn refused_for_long(&mut self, now: Instant, interval: Duration) -> bool {
        let since = *self.refused_since.get_or_insert(now);
        !self.granted || now.saturating_duration_since(since) >= interval
    }

    /// The next wait: double the last, from half a second up to the interval (at least a
    /// second, at most [`MAX_BACKOFF`]).
    fn back_off(&mut self, interval: Duration) -> Duration {
        let most = MAX_BACKOFF.min(interval.max(Duration::from_secs(1)));
        self.backoff = (self.backoff * 2).max(Duration::from_millis(500)).min(most);
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collection::Collection;

    const INTERVAL: Duration = Duration::from_secs(60);

    fn error(kind: ReadErrorKind) -> ReadError {
        ReadError { address: "https://h".into(), collection: Collection::PODS, kind }
    }

    fn gone() -> ReadError {
        error(ReadErrorKind::Status { code: 410, message: "too old resource version".into() })
    }

    fn forbidden() -> ReadError {
        error(ReadErrorKind::Forbidden { message: "may not watch pods".into() })
    }

    fn refused() -> ReadError {
        error(ReadErrorKind::Refused)
    }

    fn listed(rv: &str, streaming: bool) -> Happened {
        Happened::Listed { resource_version: rv.into(), streaming }
    }

    fn seen(rv: &str) -> Happened {
        Happened::Seen { resource_version: rv.into() }
    }

    /// Runs outcomes from the start at one instant; the steps taken.
    fn run(m: &mut Machine, at: Instant, outcomes: Vec<Happened>) -> Vec<Next> {
        outcomes.into_iter().map(|o| m.step(o, at, INTERVAL)).collect()
    }

    #[test]
    fn a_list_then_a_watch_from_its_version_then_each_event_moves_it_on() {
        let mut m = Machine::new();
        assert_eq!(m.start(), Action::List);
        let now = Instant::now();
        let steps = run(&mut m, now, vec![listed("10", false), Happened::Opened, seen("11"), seen("12")]);
        assert_eq!(steps[0], Next { store: ToStore::Replace { changed: true }, wait: None, then: Action::Open });
        assert_eq!(m.resource_version(), "12");
        assert_eq!(steps[1], Next { store: ToStore::Opened, wait: None, then: Action::Read });
        assert_eq!(steps[3].then, Action::Read);
        // A bookmark without a version (a server that leaves it out) moves nothing.
        m.step(seen(""), now, INTERVAL);
        assert_eq!(m.resource_version(), "12");
        // The server's timeout: opened again at once, from the last version seen.
        let next = m.step(Happened::Ended(Ended::Closed { after: Duration::from_secs(300) }), now, INTERVAL);
        assert_eq!(next, Next::to(Action::Open));
    }

    #[test]
    fn a_streaming_list_goes_on_as_the_watch() {
        let mut m = Machine::new();
        let next = m.step(listed("10", true), Instant::now(), INTERVAL);
        assert_eq!(next, Next { store: ToStore::Replace { changed: true }, wait: None, then: Action::Read });
    }

    #[test]
    fn a_gone_version_lists_afresh_whether_on_opening_or_in_the_stream() {
        let mut m = Machine::new();
        let now = Instant::now();
        run(&mut m, now, vec![listed("10", false), Happened::Opened]);
        assert_eq!(m.step(Happened::Ended(Ended::Gone), now, INTERVAL), Next::to(Action::List));
        run(&mut m, now, vec![listed("20", false)]);
        assert_eq!(m.step(Happened::NotOpened(gone()), now, INTERVAL), Next::to(Action::List));
        let next = m.step(listed("30", false), now, INTERVAL);
        assert_eq!((next.then, m.resource_version()), (Action::Open, "30"), "watched from the new list's version");
    }

    #[test]
    fn a_silent_stream_is_opened_again_at_once_and_a_dropped_one_after_a_backoff() {
        let mut m = Machine::new();
        let now = Instant::now();
        run(&mut m, now, vec![listed("10", false), Happened::Opened]);
        assert_eq!(m.step(Happened::Ended(Ended::Silent), now, INTERVAL), Next::to(Action::Open));
        let dropped = m.step(Happened::Ended(Ended::Failed(refused())), now, INTERVAL);
        assert_eq!(
            dropped,
            Next { store: ToStore::Broken(refused()), wait: Some(Duration::from_millis(500)), then: Action::Open }
        );
        // Failing to open again doubles the wait, up to its ceiling.
        let waits: Vec<Duration> =
            (0..6).map(|_| m.step(Happened::NotOpened(refused()), now, INTERVAL).wait.unwrap()).collect();
        assert_eq!(waits.iter().map(Duration::as_millis).collect::<Vec<_>>(), [1000, 2000, 4000, 8000, 10000, 10000]);
        // Open again: the next failure waits half a second again only after a success resets it.
        m.step(Happened::Opened, now, INTERVAL);
        m.step(Happened::Ended(Ended::Closed { after: Duration::from_secs(300) }), now, INTERVAL);
        assert_eq!(m.step(Happened::NotOpened(refused()), now, INTERVAL).wait, Some(Duration::from_millis(500)));
        // A stream closed as soon as it opened is not opened again in a loop.
        let quick = m.step(Happened::Ended(Ended::Closed { after: Duration::from_millis(20) }), now, INTERVAL);
        assert_eq!(quick.wait, Some(Duration::from_secs(1)));
        // The wait never passes the interval (nor falls under a second).
        let mut short = Machine::new();
        let waits: Vec<u128> = (0..4)
            .map(|_| short.step(Happened::ListFailed(refused()), now, Duration::from_secs(2)).wait.unwrap().as_millis())
            .collect();
        assert_eq!(waits, [500, 1000, 2000, 2000]);
    }

    #[test]
    fn a_watch_never_granted_is_read_every_interval_and_tried_again_later() {
        let mut m = Machine::new();
        let next = m.step(Happened::WatchRefused(forbidden()), Instant::now(), INTERVAL);
        assert_eq!(next, Next { store: ToStore::EveryInterval, wait: Some(WATCH_RETRY), then: Action::List });
        // Also when the streaming list is not served and the watch itself is refused.
        let mut m = Machine::new();
        let now = Instant::now();
        m.step(listed("10", false), now, INTERVAL);
        let next = m.step(Happened::NotOpened(forbidden()), now, INTERVAL);
        assert_eq!(next, Next { store: ToStore::EveryInterval, wait: Some(WATCH_RETRY), then: Action::List });
    }

    #[test]
    fn a_watch_granted_before_is_first_taken_for_a_passing_refusal() {
        let mut m = Machine::new();
        let t0 = Instant::now();
        run(&mut m, t0, vec![listed("10", true), seen("11"), Happened::Ended(Ended::Closed { after: INTERVAL })]);
        // Refused now: kept fresh by a LIST, then tried again, for up to an interval.
        let next = m.step(Happened::NotOpened(forbidden()), t0, INTERVAL);
        assert_eq!((next.store, next.then), (ToStore::Nothing, Action::List));
        let next = m.step(Happened::WatchRefused(forbidden()), t0 + Duration::from_secs(5), INTERVAL);
        assert_eq!(next, Next::to(Action::ListWithoutWatch));
        let next = m.step(Happened::ListedWithoutWatch(Ok(())), t0 + Duration::from_secs(6), INTERVAL);
        assert_eq!((next.store, next.then), (ToStore::Replace { changed: false }, Action::List));
        let next = m.step(Happened::WatchRefused(forbidden()), t0 + Duration::from_secs(7), INTERVAL);
        assert_eq!(next.then, Action::ListWithoutWatch);
        let next = m.step(Happened::ListedWithoutWatch(Err(forbidden())), t0 + Duration::from_secs(8), INTERVAL);
        assert_eq!(next.store, ToStore::Failed(forbidden()), "a LIST refused too fails the cycle");
        // Past an interval of refusals: read every interval.
        let next = m.step(Happened::WatchRefused(forbidden()), t0 + INTERVAL, INTERVAL);
        assert_eq!(next, Next { store: ToStore::EveryInterval, wait: Some(WATCH_RETRY), then: Action::List });
        // Granted again: a refusal later is a passing one again, counted afresh.
        let t1 = t0 + Duration::from_secs(600);
        run(&mut m, t1, vec![listed("50", false), Happened::Opened]);
        let next = m.step(Happened::NotOpened(forbidden()), t1, INTERVAL);
        assert_eq!((next.store, next.then), (ToStore::Nothing, Action::List));
    }

    #[test]
    fn a_failed_list_fails_the_cycle_and_is_tried_again_after_a_backoff() {
        let mut m = Machine::new();
        let next = m.step(Happened::ListFailed(refused()), Instant::now(), INTERVAL);
        assert_eq!(
            next,
            Next { store: ToStore::Failed(refused()), wait: Some(Duration::from_millis(500)), then: Action::List }
        );
    }
}
