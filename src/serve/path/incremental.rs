//! The property a cycle between intervals keeps: derived from the judgements of the pods that
//! did not change, it is the cycle derived in full from the same stores. Random sequences of
//! watch events (added, modified, deleted, bookmarks, relists after a 410) over nodes, pods,
//! workloads, claims and events are applied to the stores watch mode keeps; after each, one
//! cluster takes the cycle as watch mode does and another as a full derivation, and every
//! series of the exposition, every alert with its times, every transition, the health the
//! pages show and `check --output json` must be the same.

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;

use super::*;
use crate::collect::follow::{TestRecords, TestStore};
use crate::collect::nodes::Node;
use crate::collect::pods::{ContainerState, Owner, Phase, PodDetail};
use crate::collect::workloads::{DeploymentRecord, Workload};
use crate::collect::{Event, Pod, Pvc, Snapshot};
use crate::rules::engine::PodRef;
use crate::state::Store;

/// One watch event, or what happens between them.
#[derive(Clone, Debug)]
enum Step {
    /// A pod added or modified into one of the shapes of [`shaped`].
    Pod {
        index: u8,
        shape: u8,
    },
    PodDeleted {
        index: u8,
    },
    /// The pod deleted and created again under the same name (a new uid).
    PodRecreated {
        index: u8,
        shape: u8,
    },
    Node {
        index: u8,
        ready: bool,
    },
    NodeDeleted {
        index: u8,
    },
    Workload {
        index: u8,
        ready: u8,
    },
    Claim {
        index: u8,
        bound: bool,
    },
    /// A Warning event about a pod.
    Event {
        pod: u8,
        reason: u8,
    },
    EventDeleted {
        pod: u8,
    },
    /// A Warning event about a node.
    NodeEvent {
        node: u8,
        reason: u8,
    },
    /// A bookmark: nothing changes.
    Bookmark,
    /// A collection listed afresh after a 410: every record new, most equal to the old.
    Relisted {
        kind: u8,
    },
    /// Time passes.
    Tick {
        seconds: u16,
    },
    /// The cycle is an interval's (the full derivation in watch mode too).
    Interval,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..10u8, 0..11u8).prop_map(|(index, shape)| Step::Pod { index, shape }),
        1 => (0..10u8).prop_map(|index| Step::PodDeleted { index }),
        1 => (0..10u8, 0..11u8).prop_map(|(index, shape)| Step::PodRecreated { index, shape }),
        2 => (0..3u8, any::<bool>()).prop_map(|(index, ready)| Step::Node { index, ready }),
        1 => (0..3u8).prop_map(|index| Step::NodeDeleted { index }),
        1 => (0..3u8, 0..4u8).prop_map(|(index, ready)| Step::Workload { index, ready }),
        1 => (0..3u8, any::<bool>()).prop_map(|(index, bound)| Step::Claim { index, bound }),
        2 => (0..10u8, 0..3u8).prop_map(|(pod, reason)| Step::Event { pod, reason }),
        1 => (0..10u8).prop_map(|pod| Step::EventDeleted { pod }),
        1 => (0..3u8, 0..3u8).prop_map(|(node, reason)| Step::NodeEvent { node, reason }),
        1 => Just(Step::Bookmark),
        1 => (0..5u8).prop_map(|kind| Step::Relisted { kind }),
        2 => (1..2400u16).prop_map(|seconds| Step::Tick { seconds }),
        1 => Just(Step::Interval),
    ]
}

fn t0() -> Timestamp {
    Timestamp::from_second(1_800_000_000).unwrap()
}

fn key(namespace: &str, name: &str) -> (Arc<str>, Arc<str>) {
    (namespace.into(), name.into())
}

fn pod_key(index: u8) -> (Arc<str>, Arc<str>) {
    key(if index.is_multiple_of(2) { "a" } else { "b" }, &format!("p{index}"))
}

/// Pod `index` in one of eleven shapes: healthy or not, on a node or not, being deleted or not,
/// a workload's or bare, with a claim or not, Succeeded (left out of a cycle).
fn shaped(index: u8, shape: u8) -> Pod {
    let (namespace, name) = pod_key(index);
    let mut p = Pod {
        namespace,
        name,
        workload: if index < 6 { format!("w{}", index % 3).into() } else { "".into() },
        owner: if index < 6 { Owner::Deployment } else { Owner::None },
        phase: Phase::from("Running"),
        ready: true,
        detail: None,
        restarts: 0,
        containers: Vec::new(),
        claims: Vec::new(),
        node: format!("n{}", index % 3).into(),
        resources: Default::default(),
    };
    let waiting = |reason: &str| ContainerState {
        name: "app".into(),
        init: false,
        ready: false,
        restarts: 7,
        waiting: Some((reason.into(), Some("back-off".into()))),
        last_terminated: Some(("Error".into(), 1)),
        failed_with: None,
    };
    match shape {
        0 => {}
        1 => p.ready = false,
        2 => {
            p.phase = Phase::from("Pending");
            p.ready = false;
            p.node = "".into();
            p.detail =
                Some(Box::new(PodDetail { scheduling: Some("0/3 nodes are available".into()), ..Default::default() }));
        }
        3 => {
            // Being deleted: its grace period ends ten minutes after the start.
            p.detail = Some(Box::new(PodDetail {
                deletion: Some(t0() + SignedDuration::from_mins(10)),
                finalizers: vec!["example.com/hold".into()],
                ..Default::default()
            }));
        }
        4 => {
            p.ready = false;
            p.restarts = 7;
            p.containers.push(waiting("CrashLoopBackOff"));
        }
        5 => {
            p.phase = Phase::from("Failed");
            p.ready = false;
            p.containers.push(ContainerState {
                failed_with: Some(("Error".into(), 2, Some("exited".into()))),
                waiting: None,
                ..waiting("")
            });
        }
        6 => p.restarts = 3 + i64::from(index),
        7 => p.claims = vec![format!("data-{}", index % 3)],
        10 => {
            p.phase = Phase::from("Succeeded");
            p.ready = false;
            p.claims = vec![format!("data-{}", index % 3)];
        }
        8 => {
            p.ready = false;
            p.containers.push(waiting("ImagePullBackOff"));
        }
        _ => p.resources.cpu_requests = 250 + i64::from(index),
    }
    p
}

fn node(index: u8, ready: bool) -> Node {
    Node {
        name: format!("n{index}"),
        ready: Some(if ready { "True" } else { "False" }.into()),
        ready_detail: None,
        conditions: Vec::new(),
        unschedulable: false,
        kubelet_version: "v1.37.2".into(),
        allocatable_cpu: Some(4000),
        allocatable_memory: Some(8 << 30),
        allocatable_pods: Some(110),
        taints: Vec::new(),
    }
}

/// Deployment `w{index}` of namespace `a`, as the API server sends it.
fn workload(index: u8, ready: u8) -> DeploymentRecord {
    let json = serde_json::json!({
        "metadata": {"namespace": "a", "name": format!("w{index}"), "generation": 1},
        "spec": {"replicas": 3},
        "status": {"observedGeneration": 1, "readyReplicas": ready, "availableReplicas": ready, "updatedReplicas": 3},
    });
    crate::collect::from_api::<DeploymentRecord>(&json.to_string()).expect("a Deployment")
}

fn event(pod: u8, reason: u8, now: Timestamp) -> Event {
    let (namespace, name) = pod_key(pod);
    Event {
        namespace: namespace.to_string(),
        kind: "Pod".into(),
        object_namespace: Some(namespace.to_string()),
        object_name: name.to_string(),
        reason: ["BackOff", "FailedMount", "FailedScheduling"][usize::from(reason)].into(),
        message: format!("something about it ({reason})"),
        event_type: "Warning".into(),
        last_seen: Some(now),
        count: 1,
    }
}

/// The stores of one followed cluster.
struct Stores {
    nodes: TestStore<Arc<Node>>,
    pods: TestStore<Arc<Pod>>,
    workloads: TestStore<DeploymentRecord>,
    pvcs: TestStore<Arc<Pvc>>,
    events: TestStore<Arc<Event>>,
    /// Each pod's uid, changed when it is created again.
    generation: [u32; 10],
}

/// Everything listed afresh: new records (decoded again: a pod is a new allocation), equal to
/// the old.
fn relist<T: crate::collect::follow::Followed>(store: &TestStore<T>, fresh: impl Fn(&T) -> T) {
    let items: TestRecords<T> = store.lock().items.iter().map(|(k, (u, r))| (k.clone(), (*u, fresh(r)))).collect();
    store.replace(items);
}

impl Stores {
    fn new() -> Stores {
        let s = Stores {
            nodes: TestStore::new(),
            pods: TestStore::new(),
            workloads: TestStore::new(),
            pvcs: TestStore::new(),
            events: TestStore::new(),
            generation: [0; 10],
        };
        for i in 0..3 {
            s.nodes.put(key("", &format!("n{i}")), &format!("node-{i}"), Arc::new(node(i, true)));
        }
        for i in 0..10 {
            s.pods.put(pod_key(i), &format!("pod-{i}-0"), Arc::new(shaped(i, 0)));
        }
        s
    }

    fn apply(&mut self, step: &Step, now: Timestamp) {
        match *step {
            Step::Pod { index, shape } => {
                let uid = format!("pod-{index}-{}", self.generation[usize::from(index)]);
                self.pods.put(pod_key(index), &uid, Arc::new(shaped(index, shape)));
            }
            Step::PodDeleted { index } => {
                let uid = format!("pod-{index}-{}", self.generation[usize::from(index)]);
                self.pods.delete(&pod_key(index), &uid);
            }
            Step::PodRecreated { index, shape } => {
                self.generation[usize::from(index)] += 1;
                let uid = format!("pod-{index}-{}", self.generation[usize::from(index)]);
                self.pods.put(pod_key(index), &uid, Arc::new(shaped(index, shape)));
            }
            Step::Node { index, ready } => {
                self.nodes.put(key("", &format!("n{index}")), &format!("node-{index}"), Arc::new(node(index, ready)));
            }
            Step::NodeDeleted { index } => {
                self.nodes.delete(&key("", &format!("n{index}")), "");
            }
            Step::Workload { index, ready } => {
                self.workloads.put(key("a", &format!("w{index}")), &format!("w-{index}"), workload(index, ready));
            }
            Step::Claim { index, bound } => {
                let name = format!("data-{index}");
                let phase = if bound { "Bound" } else { "Pending" };
                let claim = Pvc { namespace: "a".into(), name: name.clone(), phase: phase.into() };
                self.pvcs.put(key("a", &name), &format!("pvc-{index}"), Arc::new(claim));
            }
            Step::Event { pod, reason } => {
                self.events.put(
                    key("e", &format!("e{pod}")),
                    &format!("event-{pod}"),
                    Arc::new(event(pod, reason, now)),
                );
            }
            Step::NodeEvent { node, reason } => {
                let mut e = event(0, reason, now);
                (e.kind, e.object_namespace, e.object_name) = ("Node".into(), None, format!("n{node}"));
                self.events.put(key("e", &format!("node-e{node}")), &format!("node-event-{node}"), Arc::new(e));
            }
            Step::EventDeleted { pod } => {
                self.events.delete(&key("e", &format!("e{pod}")), "");
            }
            Step::Bookmark | Step::Tick { .. } | Step::Interval => {}
            Step::Relisted { kind } => match kind {
                0 => relist(&self.nodes, |n| Arc::new(Node::clone(n))),
                1 => relist(&self.pods, |p| Arc::new(Pod::clone(p))),
                2 => relist(&self.workloads, |w| DeploymentRecord(Arc::new(Workload::clone(&w.0)))),
                3 => relist(&self.pvcs, |c| Arc::new(Pvc::clone(c))),
                _ => relist(&self.events, |e| Arc::new(Event::clone(e))),
            },
        }
    }

    /// A cycle taken from the stores as a follower takes it: the pods, the list the last cycle
    /// gave back changed where pods changed since; the nodes, claims and events, the lists it
    /// gave back while nothing of their kind changed (every record, when none was given back).
    fn followed(&self, now: Timestamp) -> Snapshot {
        let mut s = self.snapshot(now);
        let as_left = |at: Option<Vec<usize>>| at.is_some_and(|at| at.is_empty());
        let lists = crate::collect::Lists {
            nodes: self.nodes.taken(),
            pods: self.pods.taken(),
            pods_put_at: self.pods.put_at(),
            pvcs: self.pvcs.taken(),
            events: self.events.taken(),
            in_order: crate::collect::InOrder { nodes: true, pods: true, pvcs: true, workloads: false },
            as_left: crate::collect::AsLeft {
                pvcs: as_left(self.pvcs.put_at()),
                events: as_left(self.events.put_at()),
            },
            ..Default::default()
        };
        let taken = lists.into_snapshot(now, &Default::default());
        (s.nodes, s.pods, s.pvcs, s.events) = (taken.nodes, taken.pods, taken.pvcs, taken.events);
        s
    }

    /// The cycle's lists, given back to their stores once judged.
    fn give_back(&self, kept: &mut Kept) {
        let given = kept.judged.shelf();
        if let Some(list) = given.pods {
            self.pods.shelve(list, Some(|p| (&*p.namespace, &*p.name)));
        }
        // Not in their stores' key order once in a snapshot (the events), or not changed in place.
        if let Some(list) = given.nodes {
            self.nodes.shelve(list, None);
        }
        if let Some(list) = given.pvcs {
            self.pvcs.shelve(list, None);
        }
        if let Some(list) = given.events {
            self.events.shelve(list, None);
        }
    }

    /// A cycle taken from the stores, every record copied out.
    fn snapshot(&self, now: Timestamp) -> Snapshot {
        let mut s = Snapshot {
            time: now,
            version: "v1.37.2".into(),
            nodes: self.nodes.records(),
            pods: self.pods.records(),
            workloads: self.workloads.records().into_iter().map(|d| d.0).collect(),
            pvcs: self.pvcs.records(),
            events: self.events.records(),
            ..Default::default()
        };
        s.pods.retain(|p| p.phase != Phase::Succeeded);
        s.canonical_order();
        s
    }
}

/// A board on a state in memory of its own, as the derivation's tests take it: tests run
/// side by side, and two boards of one name would share a database (and its table locks).
pub(super) fn board() -> Board {
    static BOARDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = BOARDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Board::in_memory(&format!("incremental-{n}"), None)
}

/// What a cycle shows and says, as text to compare.
struct Shown {
    exposition: String,
    alerts: String,
    transitions: String,
    health: String,
    json: String,
}

fn gunzip(bytes: &[u8]) -> String {
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes).read_to_string(&mut text).expect("gzip");
    text
}

fn shown(state: &RuleState, d: &Derived, snapshot: Snapshot) -> Shown {
    let objects = d.objects.as_deref().unwrap_or_default();
    let health = d.health.as_ref().expect("a good cycle");
    let cycle = crate::collect::Cycle {
        time: d.time,
        duration: Duration::ZERO,
        stats: Vec::new(),
        result: Ok(snapshot),
        recording: None,
    };
    Shown {
        exposition: gunzip(&crate::metrics::exposition::merge_gzip(&[objects])),
        alerts: format!("{:#?}", state.alerts),
        transitions: format!("{:#?}", d.transitions),
        health: format!("{}\n{}\n{:#?}", health.summary(), health.counters(), health.pods),
        json: crate::report::json::render("https://c", &cycle, Some(health), None),
    }
}

/// Takes one cycle of the stores at `now` both ways and checks that they are the same.
fn both_ways(
    board: &Board,
    full: &mut RuleState,
    watched: &mut (RuleState, Kept),
    stores: &Stores,
    now: Timestamp,
    between: bool,
) -> Result<(), TestCaseError> {
    let arrival = |followed: bool| {
        let snapshot = if followed { stores.followed(now) } else { stores.snapshot(now) };
        let mut a = Arrival::read(now, Duration::ZERO, Vec::new(), Ok(snapshot));
        a.between = between;
        a.followed = followed;
        a
    };
    let inputs = Inputs::gather(board, full, Duration::from_secs(60), Arc::new([]));
    let f = derive(full, &mut Kept::default(), "c", arrival(false), inputs);
    let (state, kept) = watched;
    let inputs = Inputs::gather(board, state, Duration::from_secs(60), Arc::new([]));
    let w = derive(state, kept, "c", arrival(true), inputs);
    stores.give_back(kept);
    let (f, w) = (shown(full, &f, stores.snapshot(now)), shown(state, &w, stores.snapshot(now)));
    prop_assert_eq!(&f.exposition, &w.exposition, "the exposition");
    // The series rendered by kinds, as a cycle renders them, are those of every family at once.
    let h = crate::health::assess(stores.snapshot(now));
    let by_kinds = crate::metrics::cycle_series("c", Some(&h), Duration::ZERO, &[], &mut Default::default());
    let at_once = crate::metrics::exposition::pack(crate::metrics::exposition::prerender_led(
        &crate::metrics::cluster_families(&h),
        Some(("cluster", "c")),
    ));
    prop_assert_eq!(
        gunzip(&crate::metrics::exposition::merge_gzip(&[by_kinds.objects.as_deref().unwrap()])),
        gunzip(&crate::metrics::exposition::merge_gzip(&[&at_once])),
        "the series by kinds"
    );
    prop_assert_eq!(f.alerts, w.alerts, "the alerts and their times");
    prop_assert_eq!(f.transitions, w.transitions, "the transitions");
    prop_assert_eq!(f.health, w.health, "what the pages show");
    prop_assert_eq!(f.json, w.json, "check --output json");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_cycle_from_the_pods_that_changed_is_the_full_derivation(steps in proptest::collection::vec(step(), 1..40)) {
        let board = board();
        let mut stores = Stores::new();
        let mut now = t0();
        let mut full = RuleState::default();
        let mut watched = (RuleState::default(), Kept::default());
        // The watched cluster's state is committed each cycle (the pods the rules changed, when
        // the rows are as their last look left them): its rows are what the full look remembers.
        static CASE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let rows = format!("rows-{}", CASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let (mut store, mut reader) = (Store::open_in_memory(&rows).unwrap(), Store::open_in_memory(&rows).unwrap());
        let mut committed = |state: &RuleState, full: &RuleState| {
            store.commit_cycle("c", state, &[], None).unwrap();
            let written = reader.load("c").unwrap().pods;
            prop_assert_eq!(&written, &full.pods, "the pods' rows");
            Ok(())
        };
        // The first cycle, an interval's.
        both_ways(&board, &mut full, &mut watched, &stores, now, false)?;
        committed(&watched.0, &full)?;
        for step in &steps {
            if let Step::Tick { seconds } = step {
                now += SignedDuration::from_secs(i64::from(*seconds));
            } else {
                now += SignedDuration::from_secs(1);
            }
            stores.apply(step, now);
            both_ways(&board, &mut full, &mut watched, &stores, now, !matches!(step, Step::Interval))?;
            committed(&watched.0, &full)?;
        }
    }
}

/// One cluster followed from `stores`, taken both ways (as watch mode does and in full) at
/// each step; its first cycle an interval's.
struct Followed {
    board: Board,
    stores: Stores,
    full: RuleState,
    watched: (RuleState, Kept),
    now: Timestamp,
}

impl Followed {
    fn new() -> Followed {
        let mut f = Followed {
            board: board(),
            stores: Stores::new(),
            full: RuleState::default(),
            watched: (RuleState::default(), Kept::default()),
            now: t0(),
        };
        both_ways(&f.board, &mut f.full, &mut f.watched, &f.stores, f.now, false).unwrap();
        f
    }

    /// `step` applied `after` the last one, and the cycle between intervals it brings.
    fn step(&mut self, step: &Step, after: SignedDuration) {
        self.now += after;
        self.stores.apply(step, self.now);
        both_ways(&self.board, &mut self.full, &mut self.watched, &self.stores, self.now, true).unwrap();
    }

    /// Whether the last cycle took the nodes', claims' and events' lists as the cycle before
    /// left them (given back, nothing of their kind changed), rather than copied afresh.
    fn as_left(&self) -> [bool; 3] {
        let as_left = |at: Option<Vec<usize>>| at.is_some_and(|at| at.is_empty());
        [as_left(self.stores.nodes.put_at()), as_left(self.stores.pvcs.put_at()), as_left(self.stores.events.put_at())]
    }

    /// How the last cycle's kept judgements were taken.
    fn judged(&self) -> &crate::health::judged::Judged {
        &self.watched.1.judged
    }

    /// The health of the stores now, as a full derivation gives it (the same both ways:
    /// `both_ways` compares them).
    fn health(&self) -> crate::health::Health {
        crate::health::assess(self.stores.snapshot(self.now))
    }
}

/// The kept judgements are taken again: a cycle after a change to one pod of ten judges that
/// pod alone (the property above would hold as well if nothing were ever kept).
#[test]
fn a_change_to_one_pod_judges_that_pod_alone() {
    use crate::health::events::Taken;
    use crate::health::judged::Judgements;
    let mut f = Followed::new();
    assert_eq!(f.judged().last, Judgements { afresh: 10, again: 0 }, "an interval judges all");
    let five = SignedDuration::from_secs(5);
    f.step(&Step::Pod { index: 3, shape: 1 }, five);
    assert_eq!(f.judged().last, Judgements { afresh: 1, again: 9 });
    // The events are the same records: their index is the last cycle's.
    assert_eq!(f.judged().events.last, Taken::Kept);
    // A store keeps the list given back once it knows its lists come back (the first one
    // was let go): from the next cycle on, nothing changed, they are the lists given back.
    assert_eq!(f.as_left(), [false; 3]);
    // The nine pods the rules had nothing to say of are passed over.
    assert_eq!(f.watched.1.quiet.passed, 9);
    // The nodes' families, among others, are as they were: not compressed again.
    let (compressed, kept) = f.watched.1.series.last();
    assert!(kept > 10 && compressed > 0, "kept {kept}, compressed {compressed}");
    // Pod 3 is not ready now: a problem, whose judgement is kept while its record and the
    // newest event about it are the same.
    f.step(&Step::Bookmark, five);
    assert_eq!(f.judged().last, Judgements { afresh: 0, again: 10 });
    assert_eq!(f.as_left(), [true; 3], "the nodes', claims' and events' lists given back, taken again");
    // The nine healthy pods' judgements are those the last cycle's health gave back, moved.
    assert_eq!(f.judged().copied, 0, "the healthy pods' judgements taken from the list given back");
    // What the pages say of pod 3.
    let why = |f: &Followed| {
        let h = f.health();
        let pod = h.pods.iter().find(|p| &*p.name == "p3").expect("pod 3").clone();
        pod.why.iter().map(|m| crate::lang::Lang::En.say(m)).collect::<Vec<_>>().join("; ")
    };
    // An event about it: judged again, its why the event's.
    f.step(&Step::Event { pod: 3, reason: 1 }, five);
    assert_eq!(f.judged().last, Judgements { afresh: 1, again: 9 });
    assert_eq!(f.judged().events.last, Taken::Made, "an event changed: the index made again");
    assert_eq!(f.as_left(), [true, true, false], "an event changed: the events copied afresh");
    assert!(why(&f).contains("FailedMount: something about it (1)"), "{}", why(&f));
    // Another event about it, newer: judged again.
    f.step(&Step::Event { pod: 3, reason: 2 }, five);
    assert_eq!(f.judged().last, Judgements { afresh: 1, again: 9 });
    assert!(why(&f).contains("FailedScheduling: something about it (2)"), "{}", why(&f));
    // Kept again while nothing changes; judged again when the event goes.
    f.step(&Step::Bookmark, SignedDuration::ZERO);
    assert_eq!(f.judged().last, Judgements { afresh: 0, again: 10 });
    assert_eq!(f.judged().events.last, Taken::Kept);
    assert_eq!(f.as_left(), [true; 3], "the events' list given back taken again");
    f.step(&Step::EventDeleted { pod: 3 }, SignedDuration::ZERO);
    assert_eq!(f.judged().last, Judgements { afresh: 1, again: 9 });
    assert!(!why(&f).contains("something about it"), "{}", why(&f));
    // A relist makes every record new.
    f.step(&Step::Relisted { kind: 1 }, SignedDuration::ZERO);
    assert_eq!(f.judged().last, Judgements { afresh: 10, again: 0 });
}

/// A followed cluster with fewer pods than the threshold judges every pod at every cycle, as
/// list mode does, and keeps no judgement between cycles; one that shrinks below it lets go of
/// what it kept, and one that grows past it again starts keeping them from nothing.
#[test]
fn a_cluster_under_the_threshold_keeps_no_judgements() {
    use crate::health::judged::Judgements;
    let mut f = Followed::new();
    let five = SignedDuration::from_secs(5);
    f.step(&Step::Bookmark, five);
    assert_eq!(f.judged().last, Judgements { afresh: 0, again: 10 }, "kept while followed");
    assert_eq!(f.watched.1.quiet.passed, 10, "every pod passed over by the rules");
    // The threshold read against the snapshot's pods (a read that takes nothing from the stores).
    let probe = |f: &Followed, threshold: usize| {
        Arrival::read(f.now, Duration::ZERO, Vec::new(), Ok(f.stores.snapshot(f.now))).from_stores(threshold).followed
    };
    assert!(probe(&f, 10), "ten pods, a threshold of ten");
    assert!(!probe(&f, 11), "ten pods, a threshold of eleven");
    // A change, taken as watch mode takes it (the list given back, changed where pods changed),
    // with a threshold of eleven.
    f.now += five;
    f.stores.apply(&Step::Pod { index: 3, shape: 1 }, f.now);
    let mut a = Arrival::read(f.now, Duration::ZERO, Vec::new(), Ok(f.stores.followed(f.now))).from_stores(11);
    a.between = true;
    let inputs = Inputs::gather(&f.board, &f.watched.0, Duration::from_secs(60), Arc::new([]));
    let d = derive(&mut f.watched.0, &mut f.watched.1, "c", a, inputs);
    f.stores.give_back(&mut f.watched.1);
    assert_eq!(f.judged().last, Judgements::default(), "nothing judged by the kept judgements");
    assert_eq!(f.watched.1.quiet.passed, 0, "no pod passed over by the rules");
    let h = d.health.expect("a good cycle");
    let full = f.health();
    assert_eq!((h.summary(), h.counters()), (full.summary(), full.counters()), "the full derivation's");
    let problems: Vec<_> = full.pods.iter().filter(|p| p.has_problem()).collect();
    assert_eq!(format!("{:?}", h.pods.iter().collect::<Vec<_>>()), format!("{problems:?}"), "its pods with a problem");
    assert_eq!(h.pods.len(), 1, "pod 3, not ready");
    // Past the threshold again, on a change: judged from nothing kept, and the same as in full
    // (`step` compares them).
    f.step(&Step::Pod { index: 3, shape: 0 }, five);
    assert_eq!(f.judged().last, Judgements { afresh: 10, again: 0 }, "every pod judged, nothing kept before");
    f.step(&Step::Bookmark, five);
    assert_eq!(f.judged().last, Judgements { afresh: 0, again: 10 }, "kept again");
}

/// What the rules remember of a pod deleted is let go by its name, which the judgements' walk
/// found gone, without checking every memory against the cycle's pods.
#[test]
fn a_pod_gone_is_forgotten_by_its_name() {
    let mut f = Followed::new();
    let five = SignedDuration::from_secs(5);
    f.step(&Step::PodDeleted { index: 4 }, five);
    assert!(!f.watched.0.pods.contains_key(&PodRef(&pod_key(4).0, &pod_key(4).1)), "pod 4 forgotten");
    assert_eq!(f.watched.0.pods.len(), 9, "the nine others remembered");
    assert!(!f.watched.1.quiet.looked_for_gone, "found by its name");
    // Two at once, and one changed at the same time (its name stays): the same.
    f.step(&Step::PodDeleted { index: 6 }, SignedDuration::ZERO);
    f.stores.apply(&Step::PodDeleted { index: 7 }, f.now);
    f.step(&Step::Pod { index: 8, shape: 1 }, five);
    assert_eq!(f.watched.0.pods.len(), 7, "pods 4, 6 and 7 forgotten");
    assert!(!f.watched.1.quiet.looked_for_gone, "found by their names");
    // `step` compared what the rules remember with the full look's after each cycle.
}

/// The nodes' judgements are taken again while what each reads is the same: its record, what
/// its pods ask of it, the newest event about it.
#[test]
fn a_node_is_judged_again_only_when_what_it_reads_changed() {
    use crate::health::judged::Judgements;
    let mut f = Followed::new();
    assert_eq!(f.judged().nodes.judged, Judgements { afresh: 3, again: 0 }, "an interval judges all");
    let mut step = |step: Step, nodes: Judgements| {
        f.step(&step, SignedDuration::from_secs(5));
        assert_eq!(f.judged().nodes.judged, nodes, "after {step:?}");
        f.health()
    };
    // Pod 3 (on n0) not ready: its node's pods ask the same.
    step(Step::Pod { index: 3, shape: 1 }, Judgements { afresh: 0, again: 3 });
    // Pod 3 pending, on no node: n0 has a pod less.
    step(Step::Pod { index: 3, shape: 2 }, Judgements { afresh: 1, again: 2 });
    // Node n1 not ready, then an event about it, which its why says.
    step(Step::Node { index: 1, ready: false }, Judgements { afresh: 1, again: 2 });
    let h = step(Step::NodeEvent { node: 1, reason: 0 }, Judgements { afresh: 1, again: 2 });
    let n1 = h.nodes.iter().find(|n| n.name == "n1").expect("n1");
    assert!(n1.why.iter().any(|m| crate::lang::Lang::En.say(m).contains("BackOff")), "{n1:?}");
    step(Step::Bookmark, Judgements { afresh: 0, again: 3 });
    // Every node record new, equal to the old: compared, not judged again.
    step(Step::Relisted { kind: 0 }, Judgements { afresh: 0, again: 3 });
    step(Step::NodeDeleted { index: 2 }, Judgements { afresh: 0, again: 2 });
}

/// A pod whose restarts rose stays looked at by the rules until the rise leaves the restart
/// window, though its judgement is kept: what the rules remember of it is the full look's.
#[test]
fn a_rise_in_restarts_is_looked_at_until_its_window_ends() {
    let mut f = Followed::new();
    // Pod 1 restarted 4 times: under the threshold, nothing said.
    f.step(&Step::Pod { index: 1, shape: 6 }, SignedDuration::from_secs(5));
    for _ in 0..8 {
        f.step(&Step::Tick { seconds: 600 }, SignedDuration::from_mins(10));
    }
    assert!(f.full.pods[&("b".to_string(), "p1".to_string())].increases.is_empty(), "the rise left the window");
    assert_eq!(f.watched.1.quiet.passed, 10, "pod 1 passed over too once its rise is forgotten");
}

/// A pod the rules have something to say of, judged as it was, whose memory the clock leaves
/// as it is, is passed by without its memory looked up; at the look where its rise leaves the
/// restart window, its memory is looked up and changed as the full look changes it.
#[test]
fn a_said_pods_memory_is_looked_up_only_when_the_clock_changes_what_it_says() {
    let mut f = Followed::new();
    // Pod 1 restarted 4 times: a rise the rules remember for an hour.
    f.step(&Step::Pod { index: 1, shape: 6 }, SignedDuration::from_secs(5));
    assert_eq!(f.watched.1.quiet.unlooked, 0, "looked at afresh");
    let rise = |f: &Followed| f.watched.0.pods[&("b".to_string(), "p1".to_string())].increases.len();
    let mut looks = Vec::new();
    for _ in 0..7 {
        f.step(&Step::Tick { seconds: 600 }, SignedDuration::from_mins(10));
        looks.push((f.watched.1.quiet.unlooked, rise(&f)));
    }
    // Ten minutes a look: the rise, seen 5 s in, leaves its hour at the sixth look.
    assert_eq!(looks, [(1, 1), (1, 1), (1, 1), (1, 1), (1, 1), (0, 0), (0, 0)]);
    assert_eq!(f.watched.1.quiet.passed, 10, "quiet once its rise is let go");
    // `step` compared what the rules remember with the full look's after each cycle.
}

/// A pod with an alert, judged as it was and its memory saying the same, has its alert
/// evaluated again from what its observation made: the clock still fires it; a new why (an
/// event about it) is observed afresh.
#[test]
fn a_pod_with_an_alert_is_evaluated_again_from_what_its_observation_made() {
    let mut f = Followed::new();
    let crash_loop = |f: &Followed| {
        let alert = f.watched.0.alerts.values().find(|a| a.alertname == "KubernetesPodCrashLooping");
        alert.map(|a| (a.fired_at.is_some(), a.description.clone()))
    };
    // Pod 3 crash-loops: observed afresh.
    f.step(&Step::Pod { index: 3, shape: 4 }, SignedDuration::from_secs(5));
    assert_eq!(f.watched.1.quiet.steady, 0);
    assert_eq!(crash_loop(&f).map(|(fired, _)| fired), Some(false), "pending for ten minutes");
    f.step(&Step::Bookmark, SignedDuration::from_secs(5));
    assert_eq!((f.watched.1.quiet.steady, f.watched.1.quiet.passed), (1, 9));
    // Ten minutes on: fired by the clock, from what the observation made.
    f.step(&Step::Tick { seconds: 600 }, SignedDuration::from_mins(10));
    assert_eq!(f.watched.1.quiet.steady, 1);
    assert_eq!(crash_loop(&f).map(|(fired, _)| fired), Some(true));
    // An event about it: its why changes, observed afresh, its description the event's.
    f.step(&Step::Event { pod: 3, reason: 1 }, SignedDuration::from_secs(5));
    assert_eq!(f.watched.1.quiet.steady, 0);
    let (_, description) = crash_loop(&f).unwrap();
    assert!(description.contains("something about it (1)"), "{description}");
    f.step(&Step::Bookmark, SignedDuration::from_secs(5));
    assert_eq!(f.watched.1.quiet.steady, 1);
    // Healthy again: resolved once the crash-loop window closes, as the full look has it.
    f.step(&Step::Pod { index: 3, shape: 0 }, SignedDuration::from_secs(5));
    f.step(&Step::Tick { seconds: 600 }, SignedDuration::from_mins(10));
    assert_eq!(crash_loop(&f), None);
}

/// A claim not Pending, and a workload with every replica available and no update under way,
/// take their judgement again while their record is the same; the others are judged afresh.
#[test]
fn a_settled_claim_or_workload_is_judged_again_only_when_it_changed() {
    use crate::health::judged::Judgements;
    let mut f = Followed::new();
    let mut step = |step: Step, claims: Judgements, workloads: Judgements| {
        f.step(&step, SignedDuration::from_secs(5));
        let judged = f.judged();
        assert_eq!((judged.claims.judged, judged.workloads.judged), (claims, workloads), "after {step:?}");
    };
    let none = Judgements::default();
    let (one_afresh, one_again) = (Judgements { afresh: 1, again: 0 }, Judgements { afresh: 0, again: 1 });
    step(Step::Claim { index: 0, bound: true }, one_afresh, none);
    step(Step::Bookmark, one_again, none);
    // A Pending claim reads the pods and the events: judged at each cycle.
    step(Step::Claim { index: 1, bound: false }, Judgements { afresh: 1, again: 1 }, none);
    step(Step::Bookmark, Judgements { afresh: 1, again: 1 }, none);
    // Every claim record new, equal to the old: compared, not judged again (but the Pending one).
    step(Step::Relisted { kind: 3 }, Judgements { afresh: 1, again: 1 }, none);
    let claims = Judgements { afresh: 1, again: 1 };
    step(Step::Workload { index: 0, ready: 3 }, claims, one_afresh);
    step(Step::Bookmark, claims, one_again);
    // Replicas missing: its why reads its pods and events, judged at each cycle.
    step(Step::Workload { index: 1, ready: 1 }, claims, Judgements { afresh: 1, again: 1 });
    step(Step::Bookmark, claims, Judgements { afresh: 1, again: 1 });
    step(Step::Workload { index: 1, ready: 3 }, claims, Judgements { afresh: 1, again: 1 });
    step(Step::Bookmark, claims, Judgements { afresh: 0, again: 2 });
}
