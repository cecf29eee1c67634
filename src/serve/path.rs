//! The one path every cycle of a cluster takes, whatever brought it (a read by `serve` itself,
//! an agent's report, and any other way cycles come in): **derive → commit → publish**.
//!
//! 1. [`derive`]: from the cycle to everything that follows from it, without touching anything
//!    shared: the health, the rules' transitions, the notifications' bodies, the history point,
//!    the series of /metrics.
//! 2. [`commit`]: the rules' state, the notifications and the history point saved in one
//!    transaction (on the blocking pool: SQLite never runs on the threads that serve pages).
//! 3. [`publish`]: one write of the board, so that the pages, the API and /metrics show either
//!    the last cycle or this one, never half of each.
//!
//! Derivation and commit run on one blocking task, one after the other; the board is written
//! only once the commit returned.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio::sync::Notify;

use super::events::Said;
use crate::board::{AgentView, Alerts, Board, Publication, Timings};
use crate::clock::{Clock, words};
use crate::collect::reader::{self, Unreadable};
use crate::collect::{self, CollectionStat};
use crate::health::judged::Judged;
use crate::health::{self, Health};
use crate::logs::Emit;
use crate::metrics::SeriesKept;
use crate::metrics::exposition::Packed;
use crate::notify::worker::Firing;
use crate::rules::builtin::QuietPods;
use crate::rules::{Alert, RuleState, Transition, TransitionState};
use crate::state::HistoryPoint;

/// What every cluster's path shares.
pub struct Shared {
    pub board: Arc<Board>,
    pub firing: Arc<Mutex<Firing>>,
    /// Wakes the delivery worker when a commit queued notifications.
    pub wake: Arc<Notify>,
    pub clock: Clock,
    /// Told when a cycle is derived, before its commit (tests hold the commit there).
    #[cfg(test)]
    pub derived: Option<Arc<Notify>>,
}

/// Why a cycle brought no snapshot: the words the page, the log and the monitor-unreachable
/// rule say.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Failure {
    /// The API server could not be read (by `serve` itself or, for an agent's cluster, by the
    /// agent, which sends the same words).
    #[error("{0}")]
    Unreadable(#[from] Unreadable),
    /// The agent says it cannot read its API server.
    #[error("The agent reports: {0}")]
    AgentReports(String),
    /// The agent has not reported for this long.
    #[error("No report from the agent for {}", words(*.0))]
    NoReport(SignedDuration),
}

/// One cycle of a cluster, however it arrived.
pub struct Arrival {
    /// When the cycle happened: the rules' "now" (an agent's cycles keep the agent's times).
    pub time: Timestamp,
    pub duration: Duration,
    pub stats: Vec<CollectionStat>,
    /// What was read, or why nothing could be.
    pub outcome: Result<collect::Snapshot, Failure>,
    /// Heard of this long after it happened (a cycle an agent kept while the server was away).
    pub late: Option<SignedDuration>,
    /// Alerts raised while no report came which the late cycles show did not hold: resolved.
    pub retracted: Vec<Alert>,
    /// For an agent's report: the address it reports and what is known of the agent now.
    pub agent: Option<(String, AgentView)>,
    /// Taken between two intervals, on a change a watch saw: shown and judged like any cycle,
    /// but not a point of the history (which keeps one point an interval).
    pub between: bool,
    /// Read from a watch's stores, its pods the records the stores keep, and the cluster large
    /// enough to keep its judgements ([`Arrival::from_stores`], [`KEEPS_JUDGEMENTS_FROM`]): a
    /// cycle between intervals judges again only the pods that changed (an interval cycle, the
    /// full derivation, judges them all).
    pub followed: bool,
}

/// How many pods a followed cluster has at least for its cycles to keep their judgements from
/// one to the next. Below, a cycle judges every pod, as in list mode, and keeps none: at 100
/// pods that costs about as much as taking the kept judgements again, and the judgements kept
/// were about 40 KB a cluster (200 MB at 5,000 clusters).
pub const KEEPS_JUDGEMENTS_FROM: usize = 1_000;

/// Sets [`KEEPS_JUDGEMENTS_FROM`], for tests whose small clusters must take the path of the kept
/// judgements (and its comparison with the full derivation at serve's debug level).
pub const TEST_KEEPS_JUDGEMENTS_ENV: &str = "DUMBMONIT_TEST_KEEPS_JUDGEMENTS_FROM";

/// [`KEEPS_JUDGEMENTS_FROM`], or what [`TEST_KEEPS_JUDGEMENTS_ENV`] sets.
pub fn keeps_judgements_from() -> usize {
    std::env::var(TEST_KEEPS_JUDGEMENTS_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(KEEPS_JUDGEMENTS_FROM)
}

impl Arrival {
    /// Read from a watch's stores: `followed` when the snapshot has `threshold` pods or more
    /// (serve's: [`keeps_judgements_from`]); a failed cycle keeps what was kept.
    pub fn from_stores(mut self, threshold: usize) -> Arrival {
        self.followed = self.outcome.as_ref().is_ok_and(|s| s.pods.len() >= threshold);
        self
    }

    /// A cycle read by `serve` itself.
    pub fn read(time: Timestamp, duration: Duration, stats: Vec<CollectionStat>, outcome: reader::Outcome) -> Arrival {
        Arrival {
            time,
            duration,
            stats,
            outcome: outcome.map_err(Failure::from),
            late: None,
            retracted: Vec::new(),
            agent: None,
            between: false,
            followed: false,
        }
    }
}

/// Everything a cycle leads to, before anything shared has changed.
struct Derived {
    time: Timestamp,
    duration: Duration,
    stats: Vec<CollectionStat>,
    /// The health of a good cycle (its pods without a problem already dropped).
    health: Option<Health>,
    failure: Option<Failure>,
    transitions: Vec<Transition>,
    /// (notifier, body) of each notification to queue.
    notifications: Vec<(String, String)>,
    /// When the firing alerts end at Alertmanager unless sent again.
    holds_until: Timestamp,
    point: Option<HistoryPoint>,
    /// The object series of a good cycle, and the monitor's own series of this cycle.
    objects: Option<Vec<Packed>>,
    own: Vec<Packed>,
    late: Option<SignedDuration>,
    agent: Option<(String, AgentView)>,
    /// Taken between two intervals, on a change a watch saw.
    between: bool,
}

/// A cluster's rules' state and the path its cycles take.
pub struct Track {
    pub name: String,
    pub state: RuleState,
    /// How far apart the cluster's cycles are on the cycles' clock: how often its firing alerts
    /// are sent again.
    period: Duration,
    /// The labels of each alert's namespace copied onto it (`namespace_labels`).
    namespace_labels: Arc<[String]>,
    /// What its last cycle left for the next to take again.
    kept: Kept,
    /// Its alerts as the board last listed them.
    shown: Shown,
    shared: Arc<Shared>,
}

/// What a cluster's cycle keeps for the next, so that the next costs what changed.
#[derive(Default)]
struct Kept {
    /// What the last cycle judged of its pods from the pods alone (watch mode).
    judged: Judged,
    /// The pods the rules had nothing to say of at the last cycle (watch mode).
    quiet: QuietPods,
    /// What the last cycle rendered of its series.
    series: SeriesKept,
}

impl Track {
    /// The cluster's saved state; the board shows its alerts until the first cycle. Its cycles
    /// come every `interval`. Read off the async threads: clusters taken over together (a
    /// replica's share, at scale thousands) wait for the store one after another, and the
    /// pages and the lease renewals must not wait with them.
    pub async fn load(name: &str, interval: Duration, shared: &Arc<Shared>) -> Track {
        let board = shared.board.clone();
        let cluster = name.to_string();
        let loaded =
            tokio::task::spawn_blocking(move || board.load_state(&cluster)).await.expect("a load does not panic");
        let board = &shared.board;
        let state: RuleState = match loaded {
            Ok(s) => s,
            Err(e) => {
                Said::StateNotLoaded { cluster: name, error: &e }.emit();
                RuleState::default()
            }
        };
        let period = shared.clock.period(interval);
        let mut shown = Shown::default();
        board.views().restored(name, shown.of(&state), state.last_cycle, period);
        Track {
            name: name.into(),
            state,
            period,
            namespace_labels: Arc::new([]),
            kept: Kept::default(),
            shown,
            shared: shared.clone(),
        }
    }

    /// Its alerts take these labels of their namespace (`namespace_labels`).
    pub fn with_namespace_labels(mut self, labels: &[String]) -> Track {
        self.namespace_labels = labels.into();
        self
    }

    /// The lists the last cycle judged, as its snapshot had them (watch mode), for the follower
    /// to take again, or change into the next cycle's.
    pub fn given_back(&mut self) -> crate::collect::GivenBack {
        self.kept.judged.shelf()
    }

    /// Takes one cycle: derive → commit → publish. Returns its transitions.
    pub async fn take(&mut self, arrival: Arrival) -> Vec<Transition> {
        let name = self.name.clone();
        let shared = self.shared.clone();
        let period = self.period;
        let wanted = self.namespace_labels.clone();
        let state = std::mem::take(&mut self.state);
        let kept = std::mem::take(&mut self.kept);
        // Both steps take a while at scale: off the threads that serve pages.
        let (state, kept, derived) = tokio::task::spawn_blocking(move || {
            let mut state = state;
            let mut kept = kept;
            let inputs = Inputs::gather(&shared.board, &state, period, wanted);
            let derived = derive(&mut state, &mut kept, &name, arrival, inputs);
            #[cfg(test)]
            if let Some(n) = &shared.derived {
                n.notify_one();
            }
            commit(&shared, &name, &state, &derived);
            (state, kept, derived)
        })
        .await
        .expect("the derivation and the commit do not panic");
        self.state = state;
        self.kept = kept;
        // The delivery worker sends what the commit queued and re-sends the firing alerts to
        // Alertmanager: after an interval's cycle, and after a cycle on a change only when it
        // changed an alert (a hundred changes a minute woke it to read the outbox and re-send
        // the same alerts a hundred times; Prometheus re-sends an unchanged alert once a minute).
        if wakes(&derived) {
            self.shared.wake.notify_one();
        }
        let transitions = derived.transitions.clone();
        let late = derived.late;
        // A failure that changes no alert is said here (one that does is said by its alert).
        if let (Some(failure), true) = (&derived.failure, transitions.is_empty()) {
            Said::CycleFailed { cluster: &self.name, error: failure }.emit();
        }
        let alerts = self.shown.of(&self.state);
        publish(&self.shared.board, &self.name, alerts, derived);
        for t in &transitions {
            Said::Alert { cluster: &self.name, transition: t, late }.emit();
        }
        transitions
    }
}

/// What a cycle's derivation takes from the house besides its arrival, gathered before it
/// runs, so that it reads nothing shared.
struct Inputs {
    /// The acknowledgements made since the last cycle for the alerts the cluster holds, by
    /// their alerts' keys.
    acknowledgements: Vec<(String, crate::rules::Acknowledgement)>,
    /// What keeps the notifiers quiet now: silences and maintenance windows.
    quiet: Arc<crate::silence::Quiet>,
    /// The notifiers now.
    notifiers: Arc<Vec<crate::notify::Notifier>>,
    /// The rules as the file tunes them now.
    tuning: Arc<crate::rules::tune::Tuning>,
    /// How often the cluster's firing alerts are sent again: its interval.
    resent_every: Duration,
    /// The namespace labels its alerts take.
    namespace_labels: Arc<[String]>,
}

impl Inputs {
    /// Takes the cluster's acknowledgements (they are its alerts' from now on) and what the
    /// quiet state and the notifiers are now.
    fn gather(board: &Board, state: &RuleState, resent_every: Duration, namespace_labels: Arc<[String]>) -> Inputs {
        Inputs {
            resent_every,
            namespace_labels,
            acknowledgements: board.quieting().take_acknowledgements(state.alerts.iter().map(|(k, a)| (k, &**a))),
            quiet: board.quieting().quiet(),
            notifiers: board.notifiers_now(),
            tuning: board.tuning_now(),
        }
    }
}

/// Step 1: the cycle's health, transitions, notifications, history point and series, from the
/// arrival and the inputs alone. Changes only the rules' state.
fn derive(state: &mut RuleState, kept: &mut Kept, cluster: &str, arrival: Arrival, inputs: Inputs) -> Derived {
    let now = arrival.time;
    // Acknowledgements made since the last cycle: held with their alerts from now on.
    for (key, ack) in inputs.acknowledgements {
        if let Some(a) = state.alerts.get_mut(&key) {
            Arc::make_mut(a).acknowledged = Some(ack);
        }
    }
    let (mut transitions, health, failure) = match arrival.outcome {
        Ok(snapshot) => {
            // Read before the health takes the snapshot; None when the namespaces were not.
            let owners = match snapshot.extras.namespaces.read() {
                Some(list) if !inputs.namespace_labels.is_empty() => {
                    Some(collect::kinds::namespace::owners(list, &inputs.namespace_labels))
                }
                _ => None,
            };
            if !arrival.followed {
                // A cluster read every interval, or too small to keep its judgements (it may
                // have been larger): nothing kept.
                kept.judged = Judged::default();
                kept.quiet = QuietPods::default();
            }
            let h = assess(snapshot, now, state, &mut kept.judged, cluster, (arrival.followed, arrival.between));
            // The pods gone since the last cycle, found by the judgements' walk: the rules let
            // go of their memories by name.
            kept.quiet.gone = kept.judged.pods_gone.take();
            let mut transitions = observe(state, &mut kept.quiet, now, cluster, &h, &inputs.tuning, arrival.followed);
            if let Some(owners) = &owners {
                state.label_owners(&mut transitions, owners);
            }
            (transitions, Some(h), None)
        }
        Err(failure) => {
            let transitions = state.observe_failure_tuned(now, cluster, &failure.to_string(), &inputs.tuning);
            (transitions, None, Some(failure))
        }
    };
    for alert in arrival.retracted {
        if !state.alerts.values().any(|a| a.labels == alert.labels) {
            transitions.push(Transition { time: now, state: TransitionState::Resolved, alert, previous_labels: None });
        }
    }
    // Silences and maintenance windows: what is muted is held and shown, not told (rules/quiet.rs).
    let told = state.told(now, &transitions, &inputs.quiet);
    // Notifications of a cycle heard of late say so; the alert's own times stay the cycle's.
    let told: Vec<Transition> = match arrival.late {
        None => told,
        Some(late) => told.into_iter().map(|t| late_note(t, late)).collect(),
    };
    let notifications = crate::notify::group::bodies(
        &inputs.notifiers,
        &mut state.groups,
        &told,
        &state.alerts,
        &inputs.quiet,
        now,
        inputs.resent_every,
    );
    let series =
        crate::metrics::cycle_series(cluster, health.as_ref(), arrival.duration, &arrival.stats, &mut kept.series);
    let health = health.map(|mut h| {
        // The healthy pods' judgements, read: a followed cluster's next cycle takes them again.
        let healthy = h.healthy_pods();
        if arrival.followed {
            kept.judged.keep_healthy(healthy);
        }
        h
    });
    let point = health.as_ref().filter(|_| !arrival.between).map(|h| HistoryPoint::of(now, &h.counts));
    Derived {
        time: now,
        duration: arrival.duration,
        stats: arrival.stats,
        health,
        failure,
        transitions,
        notifications,
        holds_until: crate::notify::holds_until(now, inputs.resent_every),
        point,
        objects: series.objects,
        own: series.own,
        late: arrival.late,
        agent: arrival.agent,
        between: arrival.between,
    }
}

/// A good cycle's health. Read from a watch's stores, between intervals, with the judgements
/// of the pods that did not change taken again; at an interval, in full (the safety net),
/// keeping them for the next. With `RUST_LOG=dumbmonit::serve=debug` (and in tests), a cycle
/// between intervals is derived both ways and any difference is logged with its object.
fn assess(
    snapshot: collect::Snapshot,
    now: Timestamp,
    state: &mut RuleState,
    judged: &mut Judged,
    cluster: &str,
    (followed, between): (bool, bool),
) -> Health {
    if !followed {
        return health::assess_with(snapshot, now, &mut state.memory);
    }
    if !between {
        return health::assess_judged(snapshot, now, &mut state.memory, Some((judged, true)));
    }
    let full = (cfg!(test) || Said::comparing()).then(|| (snapshot.clone(), state.memory.clone()));
    let h = health::assess_judged(snapshot, now, &mut state.memory, Some((judged, false)));
    if let Some((snapshot, mut memory)) = full {
        let full = health::assess_with(snapshot, now, &mut memory);
        let differs = health::judged::difference(&full, &h)
            .or_else(|| (memory != state.memory).then(|| "what the derivation remembers".to_string()));
        if let Some(object) = differs {
            Said::JudgedDiffers { cluster, object: &object }.emit();
            #[cfg(test)]
            panic!("cluster {cluster}: kept judgements differ from the full derivation at {object}");
        }
    }
    h
}

/// The rules' look at a good cycle. Read from a watch's stores, the pods they had nothing to
/// say of, whose judgement is the one they looked at, are passed over; with serve's debug log
/// (and in tests) the rules are also run over every pod and any difference is logged.
fn observe(
    state: &mut RuleState,
    quiet: &mut QuietPods,
    now: Timestamp,
    cluster: &str,
    h: &Health,
    tuning: &crate::rules::tune::Tuning,
    followed: bool,
) -> Vec<Transition> {
    if !followed {
        return state.observe_tuned(now, cluster, h, tuning);
    }
    let mut full = (cfg!(test) || Said::comparing()).then(|| state.clone());
    let transitions = state.observe_kept(now, cluster, h, tuning, Some(quiet));
    if let Some(full) = &mut full {
        let all = full.observe_tuned(now, cluster, h, tuning);
        let differs = if all != transitions {
            Some("the transitions")
        } else if full.alerts != state.alerts {
            Some("the alerts")
        } else if full.pods != state.pods {
            Some("what the rules remember of the pods")
        } else {
            None
        };
        if let Some(object) = differs {
            Said::JudgedDiffers { cluster, object }.emit();
            #[cfg(test)]
            panic!("cluster {cluster}: the rules over the pods that changed differ from the full look at {object}");
        }
    }
    transitions
}

/// Step 2: the state, the notifications and the history point in one transaction.
fn commit(shared: &Shared, name: &str, state: &RuleState, d: &Derived) {
    // What Alertmanager is re-sent changes before the outbox does: a re-send taken from the
    // previous cycle must never follow this cycle's resolution (it would fire the alert again).
    // An alert whose firing went untold is not re-sent either (Alertmanager would tell its
    // receivers); one told before its silence is, so that Alertmanager does not end it.
    // An alert whose escalation went untold is re-sent as the notifiers know it.
    let firing = state.alerts.values().filter(|a| a.firing() && !a.untold).map(|a| a.as_told()).collect();
    shared.firing.lock().expect("firing lock").cycled(name, firing, d.holds_until);
    let saving = std::time::Instant::now();
    let committed = shared.board.commit_cycle(name, state, &d.notifications, d.point);
    shared.board.timed(|t| Timings::push(&mut t.commit, saving.elapsed()));
    if let Err(e) = &committed {
        Said::NotPersisted { cluster: name, error: e }.emit();
    }
}

/// Whether a cycle wakes the delivery worker: an interval's cycle (its firing alerts re-sent to
/// Alertmanager), or one with a transition (an alert that fired, escalated or resolved) or a
/// notification to send. Between them, an alert whose words changed is re-sent with the next.
fn wakes(d: &Derived) -> bool {
    !d.between || !d.transitions.is_empty() || !d.notifications.is_empty()
}

/// Step 3: one write of the board.
fn publish(board: &Board, name: &str, alerts: Alerts, d: Derived) {
    board.views().publish(
        name,
        Publication {
            time: d.time,
            duration: d.duration,
            stats: d.stats,
            alerts,
            health: d.health.map(Arc::new),
            error: d.failure.map(|f| f.to_string()),
            objects: d.objects.map(Arc::new),
            own: Arc::new(d.own),
            agent: d.agent,
        },
    );
}

/// A transition as told when its cycle was heard of late.
fn late_note(mut t: Transition, late: SignedDuration) -> Transition {
    let note = format!(
        "Reported late: this happened at {}, {} before the server heard of it (the agent could not reach the server until then).",
        t.time,
        words(late)
    );
    t.alert.description = if t.alert.description.is_empty() { note } else { format!("{} {note}", t.alert.description) };
    t
}

/// A cluster's active alerts as the pages list them (firing first, then the most severe, then
/// the oldest), and each of them by its key, in the order of the keys: an alert the same as when
/// it was last listed is shared, not copied, and a list whose alerts are all the same is the last
/// one (with hundreds of alerts and a cycle a second in watch mode, copying them all was a
/// twentieth of a cycle).
#[derive(Default)]
struct Shown {
    list: Alerts,
    by_key: Vec<(String, Arc<Alert>)>,
}

impl Shown {
    /// The state's alerts as the pages list them.
    fn of(&mut self, state: &RuleState) -> Alerts {
        let mut last = std::mem::take(&mut self.by_key).into_iter().peekable();
        let mut changed = false;
        let mut by_key = Vec::with_capacity(state.alerts.len());
        for (key, alert) in &state.alerts {
            // Those before it are gone.
            while last.next_if(|(k, _)| k < key).is_some() {
                changed = true;
            }
            // The very alert the last cycle showed, or an equal one (`Arc` of an `Eq` type:
            // compared by address first).
            let same = last.next_if(|(k, a)| k == key && a == alert);
            by_key.push(same.unwrap_or_else(|| {
                changed = true;
                // Changed: its last copy is let go.
                last.next_if(|(k, _)| k == key);
                (key.clone(), alert.clone())
            }));
        }
        changed |= last.next().is_some();
        self.by_key = by_key;
        if changed {
            let mut list: Vec<Arc<Alert>> = self.by_key.iter().map(|(_, a)| a.clone()).collect();
            list.sort_by_key(|a| (!a.firing(), std::cmp::Reverse(a.severity), a.active_at));
            self.list = Arc::new(list);
        }
        self.list.clone()
    }
}

#[cfg(test)]
mod incremental;

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex, RwLock};
    use std::time::Duration;

    use tokio::sync::Notify;

    use super::*;
    use crate::board::{Arranged, Persistence};
    use crate::collect::Snapshot;
    use crate::collect::nodes::Node;
    use crate::state::Store;

    fn nodes(n: usize) -> Snapshot {
        let nodes = (0..n)
            .map(|i| Node {
                allocatable_pods: None,
                taints: vec![],
                name: format!("n{i}"),
                ready: Some("True".into()),
                ready_detail: None,
                conditions: Vec::new(),
                unschedulable: false,
                kubelet_version: "v1.37.2".into(),
                allocatable_cpu: None,
                allocatable_memory: None,
            })
            .map(Arc::new)
            .collect();
        Snapshot { nodes, ..Default::default() }
    }

    fn scrape(board: &Arc<Board>) -> String {
        String::from_utf8(crate::web::metrics::current(board).plain().to_vec()).unwrap()
    }

    /// The alerts are listed again when not one changed, and anew, in the pages' order, when
    /// one did.
    #[test]
    fn the_alerts_are_listed_anew_only_when_one_changed() {
        let alert = |key: &str, firing: bool, severity: crate::rules::Severity, minute: i64| {
            let mut a = crate::notify::payload::tests::alert();
            a.severity = severity;
            a.active_at = Timestamp::from_second(1_800_000_000 + 60 * minute).unwrap();
            a.fired_at = firing.then_some(a.active_at);
            a.summary = key.into();
            (key.to_string(), Arc::new(a))
        };
        use crate::rules::Severity::{Critical, Notice, Warning};
        let mut state = RuleState::default();
        state.alerts.extend([
            alert("a", false, Critical, 0),
            alert("b", true, Notice, 1),
            alert("c", true, Warning, 3),
            alert("d", true, Warning, 2),
        ]);
        let summaries = |list: &[Arc<Alert>]| list.iter().map(|a| a.summary.clone()).collect::<Vec<_>>();
        let mut shown = Shown::default();
        let first = shown.of(&state);
        assert_eq!(summaries(&first), ["d", "c", "b", "a"], "firing first, the most severe, the oldest");
        assert!(Arc::ptr_eq(&first, &shown.of(&state)), "nothing changed: the same list");
        // One alert changes: listed anew, in order.
        Arc::make_mut(state.alerts.get_mut("a").unwrap()).fired_at =
            Some(Timestamp::from_second(1_800_000_600).unwrap());
        let second = shown.of(&state);
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(summaries(&second), ["a", "d", "c", "b"]);
        assert!(!Arc::ptr_eq(&first[3], &second[0]), "the changed alert is copied anew");
        assert!(Arc::ptr_eq(&first[0], &second[1]), "the others are shared, not copied");
        // One goes, one comes: the same number of alerts, not the same alerts.
        state.alerts.remove("b");
        state.alerts.extend([alert("e", false, Notice, 5)]);
        assert_eq!(summaries(&shown.of(&state)), ["a", "d", "c", "e"]);
        state.alerts.clear();
        assert!(shown.of(&state).is_empty());
    }

    /// A cycle taken on a change (watch mode) is judged and shown like any cycle, but is no
    /// point of the history.
    #[test]
    fn a_cycle_between_intervals_is_no_point_of_the_history() {
        let board = super::incremental::board();
        let mut state = RuleState::default();
        let t0 = Timestamp::from_second(1_800_000_000).unwrap();
        let inputs = Inputs::gather(&board, &state, Duration::from_secs(60), Arc::new([]));
        let interval = derive(
            &mut state,
            &mut Kept::default(),
            "c",
            Arrival::read(t0, Duration::ZERO, Vec::new(), Ok(nodes(2))),
            inputs,
        );
        assert!(interval.point.is_some() && interval.health.is_some());
        let mut between = Arrival::read(t0, Duration::ZERO, Vec::new(), Ok(nodes(3)));
        between.between = true;
        let inputs = Inputs::gather(&board, &state, Duration::from_secs(60), Arc::new([]));
        let between = derive(&mut state, &mut Kept::default(), "c", between, inputs);
        assert!(between.point.is_none(), "no history point");
        assert_eq!(between.health.unwrap().counts.nodes, 3, "shown like any cycle");
    }

    /// The delivery worker is woken by an interval's cycle, and by a cycle on a change only when
    /// an alert fired, escalated or resolved in it (or it queued a notification).
    #[tokio::test]
    async fn a_cycle_on_a_change_wakes_the_delivery_worker_only_when_what_fires_changed() {
        use futures_util::FutureExt;
        let board = Arc::new(Board::in_memory("wakes", None));
        board.views().arrange(&[Arranged { name: "c".into(), address: "a".into(), agent: false, from_pages: false }]);
        let wake = Arc::new(Notify::new());
        let shared =
            Arc::new(Shared { board, firing: Arc::default(), wake: wake.clone(), clock: Clock::Wall, derived: None });
        let mut track = Track::load("c", Duration::from_secs(60), &shared).await;
        let woken = || wake.notified().now_or_never().is_some();
        let t0 = Timestamp::from_second(1_800_000_000).unwrap();
        let cycle = |second: i64, between: bool, outcome: Result<Snapshot, Failure>| {
            let mut a = Arrival::read(t0 + SignedDuration::from_secs(second), Duration::ZERO, Vec::new(), Ok(nodes(0)));
            (a.outcome, a.between) = (outcome, between);
            a
        };
        assert!(track.take(cycle(0, false, Ok(nodes(1)))).await.is_empty());
        assert!(woken(), "an interval's cycle wakes it, to re-send what fires");
        assert!(track.take(cycle(1, true, Ok(nodes(2)))).await.is_empty());
        assert!(!woken(), "a cycle on a change that changed nothing that fires does not");
        let failed = || Err(Failure::AgentReports("no route".into()));
        // The monitor-unreachable rule fires at the second failed cycle in a row.
        assert!(track.take(cycle(2, true, failed())).await.is_empty());
        assert!(!woken(), "a first failure fires nothing");
        let fired = track.take(cycle(3, true, failed())).await;
        assert!(fired.iter().any(|t| t.state == TransitionState::Firing), "{fired:?}");
        assert!(woken(), "a cycle on a change whose alert fires wakes it");
        assert!(track.take(cycle(4, true, failed())).await.is_empty());
        assert!(!woken(), "the same alert firing again: nothing new to send");
        assert!(!track.take(cycle(5, true, Ok(nodes(2)))).await.is_empty());
        assert!(woken(), "the alert resolved by a cycle on a change wakes it");
        assert!(track.take(cycle(60, false, Ok(nodes(2)))).await.is_empty());
        assert!(woken(), "every interval's cycle wakes it");
    }

    /// A scrape taken while a cycle is derived but not yet committed shows the previous cycle
    /// whole: its object series and its `up` and durations, never this cycle's beside them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[allow(clippy::await_holding_lock, reason = "the test holds the store to hold the cycle at its commit")]
    async fn metrics_served_during_a_cycle_are_one_cycles() {
        let store = Arc::new(Mutex::new(Store::open_in_memory("one-cycle").unwrap()));
        let reader = Store::open_in_memory("one-cycle").unwrap();
        let board = Arc::new(Board::new(
            Persistence { store: store.clone(), reader, error: None },
            None,
            Default::default(),
            Arc::new(RwLock::new(Arc::new(Vec::new()))),
            None,
            Arc::default(),
        ));
        board.views().arrange(&[Arranged { name: "c".into(), address: "a".into(), agent: false, from_pages: false }]);
        let derived = Arc::new(Notify::new());
        let shared = Arc::new(Shared {
            board: board.clone(),
            firing: Arc::default(),
            wake: Arc::new(Notify::new()),
            clock: Clock::Wall,
            derived: Some(derived.clone()),
        });
        let mut track = Track::load("c", Duration::from_secs(60), &shared).await;
        let t0 = Timestamp::from_second(1_800_000_000).unwrap();
        let first = Arrival::read(t0, Duration::from_millis(100), Vec::new(), Ok(nodes(1)));
        track.take(first).await;
        // The first cycle's notice, kept since nobody waited for it.
        derived.notified().await;
        let before = scrape(&board);
        assert!(before.contains("dumbmonit_k8s_nodes{cluster=\"c\"} 1"), "{before}");
        assert!(before.contains("dumbmonit_k8s_cycle_duration_seconds{cluster=\"c\"} 0.1"), "{before}");

        // The next cycle is derived, then held at its commit.
        let held = store.lock().unwrap();
        let second =
            Arrival::read(t0 + SignedDuration::from_secs(60), Duration::from_millis(300), Vec::new(), Ok(nodes(2)));
        let taking = tokio::spawn(async move {
            track.take(second).await;
            track
        });
        derived.notified().await;
        for _ in 0..20 {
            assert_eq!(scrape(&board), before, "a scrape during the cycle's commit shows the last cycle only");
            tokio::task::yield_now().await;
        }
        drop(held);
        taking.await.unwrap();
        let after = scrape(&board);
        assert!(after.contains("dumbmonit_k8s_nodes{cluster=\"c\"} 2"), "{after}");
        assert!(after.contains("dumbmonit_k8s_cycle_duration_seconds{cluster=\"c\"} 0.3"), "{after}");
    }
}
