//! From what a cycle read to what is wrong and why: the one derivation that the metrics,
//! the reports, the rules and the pages all read from. What it remembers between cycles is its
//! own [`Memory`]: the health it returns is final, and nothing after it writes into it.

pub mod admission;
pub mod batch;
pub mod demand;
pub mod events;
pub mod extras;
pub mod judged;
pub mod memory;
pub mod plane;
pub mod policy;
pub mod why;

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use crate::collect::nodes::PRESSURE_CONDITIONS;
use crate::collect::quantity::Resources;
use crate::collect::{Event, Node, Pod, Pvc, Snapshot, Workload, WorkloadKind};
use crate::lang::{Lang, Message};
use events::EventIndex;
pub use memory::Memory;
use why::{clean_line, exit_meaning, ours};

/// How long an explanation may be, in characters.
const WHY_MAX: usize = 400;

/// The health of one cluster at one cycle.
#[derive(Clone, Debug)]
pub struct Health {
    pub time: Timestamp,
    pub version: String,
    pub counts: Counts,
    /// Shared with what a followed cluster keeps of its nodes' judgements.
    pub nodes: Vec<Arc<NodeHealth>>,
    /// Every pod but the Succeeded ones: those with a problem first, each group by namespace
    /// then name. Shared with what a followed cluster keeps of its pods' judgements.
    pub pods: Vec<Arc<PodHealth>>,
    /// Shared with what a followed cluster keeps of its workloads' judgements.
    pub workloads: Vec<Arc<WorkloadHealth>>,
    /// Shared with what a followed cluster keeps of its claims' judgements.
    pub pvcs: Vec<Arc<PvcHealth>>,
    /// Warning events of the last hour per reason, highest count first (ties: reason ascending).
    pub events_by_reason: Vec<(String, u64)>,
    /// What the optional reads found.
    pub extras: extras::ExtrasHealth,
    /// When the connection's certificates expire.
    pub certificates: crate::collect::Certificates,
    /// What the pods ask of the cluster, against what its nodes can give.
    pub capacity: Capacity,
}

#[cfg(test)]
impl Health {
    /// A good cycle's health at `time` of a cluster with nothing in it (for tests, which fill in
    /// what they look at).
    pub fn empty(time: Timestamp, version: &str) -> Health {
        Health {
            capacity: Default::default(),
            time,
            version: version.into(),
            counts: Counts::default(),
            nodes: vec![],
            pods: vec![],
            workloads: vec![],
            pvcs: vec![],
            events_by_reason: vec![],
            extras: Default::default(),
            certificates: Default::default(),
        }
    }
}

/// A resource requested past what the cluster holds without its largest node.
pub struct Overcommitted {
    /// `cpu` or `memory`.
    pub resource: &'static str,
    /// Its rule's messages (`rule-cpu-overcommit`).
    pub words: &'static str,
    /// The arguments of its rule's summary and description.
    pub args: Vec<(&'static str, crate::lang::Arg)>,
}

/// One line `check` and the page say of a signal that has no table of its own: its message and
/// its arguments.
pub struct Said {
    pub words: String,
    pub args: Vec<(&'static str, crate::lang::Arg)>,
}

/// What the non-terminated pods request (scheduled or not), against what the Ready and
/// schedulable nodes can give: whether the cluster could lose a node and still hold them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Capacity {
    /// Requests: millicores and bytes.
    pub cpu_requests: i64,
    pub memory_requests: i64,
    /// Allocatable of the Ready, schedulable nodes: millicores and bytes.
    pub cpu_allocatable: i64,
    pub memory_allocatable: i64,
    /// The largest of those nodes' allocatable (the node the cluster could lose).
    pub cpu_largest: i64,
    pub memory_largest: i64,
    /// How many nodes count.
    pub nodes: u64,
}

impl Capacity {
    fn of(nodes: &[Arc<NodeHealth>], requested: &Resources) -> Capacity {
        let mut c = Capacity {
            cpu_requests: requested.cpu_requests,
            memory_requests: requested.memory_requests,
            ..Capacity::default()
        };
        for n in nodes.iter().filter(|n| n.ready && !n.unschedulable) {
            let (cpu, memory) = (n.allocatable_cpu.unwrap_or(0), n.allocatable_memory.unwrap_or(0));
            // Held at the largest figure: an allocatable comes from the cluster, and a huge one
            // must not wrap the sum or panic.
            c.cpu_allocatable = c.cpu_allocatable.saturating_add(cpu);
            c.memory_allocatable = c.memory_allocatable.saturating_add(memory);
            c.cpu_largest = c.cpu_largest.max(cpu);
            c.memory_largest = c.memory_largest.max(memory);
            c.nodes += 1;
        }
        c
    }

    /// What the requests must fit in: all of it with one node, else all but the largest node.
    fn room(&self, total: i64, largest: i64) -> i64 {
        if self.nodes > 1 { total.saturating_sub(largest) } else { total }
    }

    /// CPU requests past what the cluster holds without its largest node.
    pub fn cpu_overcommitted(&self) -> bool {
        self.nodes > 0 && self.cpu_requests > self.room(self.cpu_allocatable, self.cpu_largest)
    }

    pub fn memory_overcommitted(&self) -> bool {
        self.nodes > 0 && self.memory_requests > self.room(self.memory_allocatable, self.memory_largest)
    }

    /// Each resource overcommitted, with the arguments of its rule's summary (requests, room,
    /// allocatable in its unit; the number of nodes).
    pub fn overcommitted(&self) -> Vec<Overcommitted> {
        let cores = |m: i64| crate::lang::quantity("cpu", m as f64 / 1000.0);
        let bytes = |b: i64| crate::lang::quantity("memory", b as f64);
        let mut out = Vec::new();
        for (resource, words, over, said, (requests, total, largest)) in [
            (
                "cpu",
                "rule-cpu-overcommit",
                self.cpu_overcommitted(),
                &cores as &dyn Fn(i64) -> String,
                (self.cpu_requests, self.cpu_allocatable, self.cpu_largest),
            ),
            (
                "memory",
                "rule-memory-overcommit",
                self.memory_overcommitted(),
                &bytes,
                (self.memory_requests, self.memory_allocatable, self.memory_largest),
            ),
        ] {
            if over {
                let args = vec![
                    ("requests", said(requests).into()),
                    ("room", said(self.room(total, largest)).into()),
                    ("allocatable", said(total).into()),
                    ("largest", said(largest).into()),
                    ("nodes", (self.nodes as i64).into()),
                ];
                out.push(Overcommitted { resource, words, args });
            }
        }
        out
    }
}

/// A certificate that expires within this is a problem (Notice); within [`CERTIFICATE_URGENT`],
/// a Warning.
pub const CERTIFICATE_SOON: SignedDuration = SignedDuration::from_hours(30 * 24);
pub const CERTIFICATE_URGENT: SignedDuration = SignedDuration::from_hours(7 * 24);

/// A certificate of the connection that expires within [`CERTIFICATE_SOON`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Expiring {
    /// `serving` or `client`.
    pub certificate: &'static str,
    pub not_after: Timestamp,
    /// Whole days left (0 on its last day, negative once expired).
    pub days: i64,
}

/// The counters, over every object.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Counts {
    pub nodes: u64,
    pub nodes_ready: u64,
    pub nodes_not_ready: u64,
    pub nodes_under_pressure: u64,
    pub nodes_cordoned: u64,
    pub pods: u64,
    pub pods_running: u64,
    pub pods_pending: u64,
    pub pods_failed: u64,
    pub pods_crashlooping: u64,
    pub pods_not_ready: u64,
    /// Running pods whose only problem is that they are not ready (the sentence names these).
    #[serde(skip)]
    pub pods_only_not_ready: u64,
    pub pods_blocked: u64,
    /// Pods past the end of their grace period, still there.
    pub pods_stuck_terminating: u64,
    pub workloads: u64,
    pub workloads_missing_replicas: u64,
    /// Deployments past their progress deadline, and StatefulSets and DaemonSets whose update
    /// made no progress for 15 minutes (known only across cycles: see [`Memory`]).
    pub rollouts_stuck: u64,
    /// Nodes whose kubelet is outside the supported version skew.
    pub nodes_version_skew: u64,
    pub pvcs: u64,
    pub pvcs_pending: u64,
    pub warning_events: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeHealth {
    pub name: String,
    pub ready: bool,
    /// `True`, `False`, `Unknown`, or `missing` when the node lists no Ready condition.
    pub ready_status: String,
    /// The pressure conditions the node lists: (`memory`|`disk`|`pid`|`network`, true when "True").
    #[serde(serialize_with = "as_map")]
    pub pressure: Vec<(String, bool)>,
    pub unschedulable: bool,
    pub kubelet_version: String,
    /// The reasons, the cluster's words and ours (`why`): English in JSON.
    #[serde(serialize_with = "why::english")]
    pub why: Vec<Message>,
    /// `status.allocatable`: millicores and bytes.
    pub allocatable_cpu: Option<i64>,
    pub allocatable_memory: Option<i64>,
    /// The requests and limits of its pods that are neither Succeeded nor Failed.
    #[serde(serialize_with = "resources_map")]
    pub requested: Resources,
    /// Used now, from the Metrics API: millicores and bytes (None when it cannot be read).
    pub usage_cpu: Option<i64>,
    pub usage_memory: Option<i64>,
    /// Its kubelet is newer than the API server, or more than three minor versions older.
    pub kubelet_skew: bool,
    /// Changes of its Ready condition in the last 15 minutes, as the [`Memory`] saw them across
    /// cycles (0 for a single reading).
    pub ready_transitions: u32,
    /// Its pods that are neither Succeeded nor Failed, against its allocatable `pods`.
    pub pods: u64,
    pub pods_capacity: Option<i64>,
    /// Its `NoSchedule` and `NoExecute` taints.
    pub taints: Vec<NodeTaint>,
}

/// A taint that keeps pods off a node (`NoSchedule`) or evicts them (`NoExecute`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeTaint {
    pub key: String,
    pub effect: String,
}

/// The taint the node controller puts on a node it has lost.
pub const UNREACHABLE_TAINT: &str = "node.kubernetes.io/unreachable";

/// A node with this share of its allocatable pods, or more, is full.
pub const NODE_PODS_FULL: f64 = 0.95;

impl NodeHealth {
    /// Its pods at [`NODE_PODS_FULL`] of its allocatable pods or more.
    pub fn too_many_pods(&self) -> bool {
        self.pods_capacity.is_some_and(|c| c > 0 && self.pods as f64 >= NODE_PODS_FULL * c as f64)
    }
}

/// Requests and limits as `{"cpu_requests_cores": 0.25, …, "memory_limits_bytes": …}`.
fn resources_map<S: serde::Serializer>(r: &Resources, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(4))?;
    m.serialize_entry("cpu_requests_cores", &(r.cpu_requests as f64 / 1000.0))?;
    m.serialize_entry("cpu_limits_cores", &(r.cpu_limits as f64 / 1000.0))?;
    m.serialize_entry("memory_requests_bytes", &r.memory_requests)?;
    m.serialize_entry("memory_limits_bytes", &r.memory_limits)?;
    m.end()
}

impl NodeHealth {
    /// Limits past allocatable, in CPU or memory: the node promises more than it has.
    pub fn overcommitted(&self) -> bool {
        let over = |used: i64, total: Option<i64>| total.is_some_and(|t| t > 0 && used > t);
        over(self.requested.cpu_limits, self.allocatable_cpu)
            || over(self.requested.memory_limits, self.allocatable_memory)
    }
}

/// `[("memory", false)]` as `{"memory": false}`.
fn as_map<S: serde::Serializer>(pairs: &[(String, bool)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

impl NodeHealth {
    /// Memory, disk or PID pressure (the network condition is shown, not counted as pressure).
    pub fn under_pressure(&self) -> bool {
        self.pressure.iter().any(|(c, on)| *on && c != "network")
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PodHealth {
    /// The pod's own names (shared with its record, not copied).
    pub namespace: Arc<str>,
    pub name: Arc<str>,
    pub workload: Arc<str>,
    /// The kind of its controller.
    #[serde(skip)]
    pub owner: crate::collect::pods::Owner,
    pub phase: crate::collect::pods::Phase,
    pub ready: bool,
    pub crashlooping: bool,
    pub pending: bool,
    pub failed: bool,
    /// Running, but the Ready condition is not True.
    pub not_ready: bool,
    /// The waiting reasons that block a container (`ImagePullBackOff`…), each once.
    pub blocked: Vec<String>,
    pub restarts: i64,
    /// Seconds since the end of its grace period, for a pod being deleted and still there past it.
    pub terminating: Option<i64>,
    /// The reasons, the cluster's words and ours (`why`): English in JSON.
    #[serde(serialize_with = "why::english")]
    pub why: Vec<Message>,
}

#[cfg(test)]
impl NodeHealth {
    /// A node, Ready or not (`Unknown`), with no pod, for the tests of the rooms that read it.
    pub fn named(name: &str, ready: bool) -> NodeHealth {
        NodeHealth {
            pods: 0,
            pods_capacity: None,
            taints: vec![],
            name: name.into(),
            ready,
            ready_status: if ready { "True" } else { "Unknown" }.into(),
            pressure: vec![("memory".into(), false)],
            unschedulable: false,
            kubelet_version: "v1".into(),
            why: vec![],
            allocatable_cpu: None,
            allocatable_memory: None,
            requested: Default::default(),
            usage_cpu: None,
            usage_memory: None,
            kubelet_skew: false,
            ready_transitions: 0,
        }
    }
}

#[cfg(test)]
impl PodHealth {
    /// A Deployment's pod in `shop`, running and ready, for the tests of the rooms that read it.
    pub fn running(name: &str) -> PodHealth {
        PodHealth {
            namespace: "shop".into(),
            name: name.into(),
            workload: "api".into(),
            owner: crate::collect::pods::Owner::Deployment,
            phase: "Running".into(),
            ready: true,
            crashlooping: false,
            pending: false,
            failed: false,
            not_ready: false,
            blocked: vec![],
            restarts: 0,
            terminating: None,
            why: vec![],
        }
    }
}

impl PodHealth {
    /// Not ready (Running without its Ready condition, or of phase Unknown), with no other rule
    /// to say it: not a workload's pod (its workload's missing replicas say it), not a Job's,
    /// not crash-looping, blocked or stuck terminating (their own rules say those).
    pub fn not_ready_alone(&self) -> bool {
        (self.not_ready || self.phase == crate::collect::pods::Phase::Unknown)
            && !self.owner.judged_elsewhere()
            && !self.crashlooping
            && self.blocked.is_empty()
            && self.terminating.is_none()
    }

    pub fn has_problem(&self) -> bool {
        self.crashlooping
            || !self.blocked.is_empty()
            || self.pending
            || self.failed
            || self.not_ready
            || self.terminating.is_some()
    }

    /// The problems, most severe first, as words.
    pub fn problems(&self) -> Vec<String> {
        self.problems_in(Lang::En)
    }

    /// The problems in `lang` (`blocked (ImagePullBackOff)`, « bloqué (ImagePullBackOff) »).
    pub fn problems_in(&self, lang: Lang) -> Vec<String> {
        self.problem_messages().iter().map(|m| lang.say(m)).collect()
    }

    /// The problems, as messages to be said in any language.
    pub fn problem_messages(&self) -> Vec<Message> {
        let mut p = Vec::new();
        if self.crashlooping {
            p.push(Message::new("pod-crash-looping", &[]));
        }
        for b in &self.blocked {
            p.push(Message::new("pod-blocked", &[("reason", b.into())]));
        }
        if self.pending {
            p.push(Message::new("pod-pending", &[]));
        }
        if self.failed {
            p.push(Message::new("pod-failed", &[]));
        }
        if self.terminating.is_some() {
            p.push(Message::new("pod-stuck-terminating", &[]));
        }
        // A crash-looping, blocked or failed pod is not ready either; say so only when it is all.
        if self.not_ready && p.is_empty() {
            p.push(Message::new("pod-not-ready", &[]));
        }
        p
    }

    /// Running and not ready, with no other problem.
    pub fn only_not_ready(&self) -> bool {
        self.not_ready && !self.crashlooping && self.blocked.is_empty()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkloadHealth {
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
    pub desired: i64,
    pub ready: i64,
    pub unavailable: i64,
    /// Replicas at the current template, and whether an update is under way.
    pub updated: i64,
    pub updating: bool,
    /// A Deployment past its progress deadline, or (known across cycles, see [`Memory`]) a
    /// StatefulSet or DaemonSet whose update made no progress for 15 minutes.
    pub rollout_stuck: bool,
    /// `metadata.generation` − `status.observedGeneration`: changes its controller has not
    /// acted on.
    pub generation_lag: i64,
    /// A DaemonSet's pods on nodes it should not run on.
    pub misscheduled: i64,
    /// kube-controller-manager has stopped (its lease says so): what acts on the workload.
    pub controller_stopped: bool,
    /// The reasons, the cluster's words and ours (`why`): English in JSON.
    #[serde(serialize_with = "why::english")]
    pub why: Vec<Message>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PvcHealth {
    pub namespace: String,
    pub name: String,
    pub phase: String,
    pub bound: bool,
    /// Pending, and either used by a live pod or named by a Warning event: it should have bound.
    pub stuck: bool,
    /// The reasons, the cluster's words and ours (`why`): English in JSON.
    #[serde(serialize_with = "why::english")]
    pub why: Vec<Message>,
}

/// Whether anything needs attention, in the monitoring-plugin convention.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Grade {
    Ok = 0,
    /// Only Notice-level problems: pressure, pending or blocked pods, missing replicas, stuck claims.
    Notice = 1,
    /// A node not ready or a pod crash-looping.
    Critical = 2,
}

/// A map a cycle makes of the cluster's names and lets go at its end: hashed with foldhash, seeded
/// at random for each map (as hashbrown's own maps are), not SipHash. At 150,000 pods, SipHash was
/// about a ninth of watch mode's CPU, most of it the events' index (three names for each of 50,000
/// events). The names come from the cluster: the seed keeps a cluster from choosing names that
/// collide, and no order of these maps is shown.
pub(crate) type Names<K, V> = std::collections::HashMap<K, V, NamesHasher>;

/// The hasher of [`Names`], for what hashes the cluster's names at every cycle outside a map.
pub(crate) type NamesHasher = foldhash::fast::RandomState;

/// Adds a reason not already there (an empty one of the cluster's is none).
fn push_unique(why: &mut Vec<Message>, line: Option<impl Into<Message>>) {
    if let Some(l) = line.map(Into::into)
        && !(l.is_verbatim() && Lang::En.say(&l).is_empty())
        && !why.contains(&l)
    {
        why.push(l);
    }
}

/// Derives the cluster's health from one successful cycle read on its own: what only earlier
/// cycles tell (Ready changes, updates without progress) is as for a first cycle. The same as
/// [`assess_with`] and an empty [`Memory`].
pub fn assess(s: Snapshot) -> Health {
    let now = s.time;
    assess_with(s, now, &mut Memory::default())
}

/// Derives the cluster's health from one successful cycle taken at `now` (the rules' "now"),
/// with what `memory` holds of the cycles before it, which it updates. It consumes the
/// snapshot: each pod's health shares its record's names (namespace, name, workload) rather
/// than copying them, and the rest of the record is let go once the pod is judged.
pub fn assess_with(s: Snapshot, now: Timestamp, memory: &mut Memory) -> Health {
    assess_judged(s, now, memory, None)
}

/// [`assess_with`], taking again from `judged` the judgements of the pods that did not change
/// since its last cycle and needed nothing but themselves (see [`judged`]): the same health,
/// for the cost of the pods that changed. With `afresh`, every pod is judged again (the full
/// derivation), and what needs nothing else is kept for the next cycle.
pub fn assess_judged(
    mut snapshot: Snapshot,
    now: Timestamp,
    memory: &mut Memory,
    mut judged: Option<(&mut judged::Judged, bool)>,
) -> Health {
    let raw_pods = std::mem::take(&mut snapshot.pods);
    let raw_extras = std::mem::take(&mut snapshot.extras);
    let s = &snapshot;
    // The events' index: kept from the last cycle by a followed cluster's judgements while its
    // events are the same records, otherwise made.
    let hour_ago = s.time - SignedDuration::from_hours(1);
    let index = match &mut judged {
        Some((judged, afresh)) => judged.events.take(&s.events, hour_ago, *afresh),
        None => events::Index::of(&s.events, hour_ago),
    };
    let events = index.over(&s.events);
    // A snapshot's pods are in their canonical order (`Snapshot::canonical_order`).
    debug_assert!(raw_pods.is_sorted_by(|a, b| (&a.namespace, &a.name) <= (&b.namespace, &b.name)));
    // What the pods ask of each node: added up, or the last cycle's changed by what changed.
    let (mut kept, mut priors, whole) = match judged {
        Some((judged, afresh)) => {
            let priors = judged.start(&raw_pods, afresh);
            (Some(judged), priors, None)
        }
        None => (None, Vec::new(), Some(demand::Demand::of(&raw_pods))),
    };
    let demand_total = kept.as_ref().map_or_else(|| whole.as_ref().expect("added up"), |j| &j.demand).total();
    // Each object judged afresh, or (kept judgements) taken again when all it reads is the same.
    let mut nodes: Vec<Arc<NodeHealth>> = match kept.as_deref_mut() {
        Some(judged) => judged.nodes(s, &events),
        None => {
            let demand = whole.as_ref().expect("added up");
            s.nodes.iter().map(|n| Arc::new(node_health(s, n, demand, &events))).collect()
        }
    };
    let waits = claim_waits(&raw_extras.claim_events);
    let claim = |c: &Arc<Pvc>, users: &ClaimUsers| claim_health(c, users, &events, &waits);
    // Who uses each claim: of every pod, or (kept judgements) of the pods that name a claim,
    // kept by the same walk that changes the demand.
    let pvcs: Vec<Arc<PvcHealth>> = match kept.as_deref_mut() {
        Some(judged) => judged.claims(s, claim),
        None => {
            let users = claim_users(raw_pods.iter());
            s.pvcs.iter().map(|c| Arc::new(claim(c, &users))).collect()
        }
    };
    drop(waits);
    let not_ready: std::collections::HashSet<&str> =
        nodes.iter().filter(|n| !n.ready).map(|n| n.name.as_str()).collect();
    let judge = |p: &Pod| pod_health(p, &events, s.time, &not_ready);
    // Problems first, then by namespace and name: the pods come in that second order, so each
    // goes to its part as it is judged.
    let mut pods: Vec<Arc<PodHealth>> = Vec::new();
    let mut healthy: Vec<Arc<PodHealth>> = Vec::with_capacity(raw_pods.len());
    // The healthy pods that run: counted as they are placed, from what a kept judgement says
    // of itself (the counts then read the pods with a problem only).
    let mut healthy_running = 0;
    let mut place = |h: Arc<PodHealth>, looks: judged::Looks| {
        if looks.problem {
            pods.push(h);
        } else {
            healthy_running += u64::from(looks.running);
            healthy.push(h);
        }
    };
    match kept.as_deref_mut() {
        None => raw_pods.into_iter().for_each(|p| {
            let h = Arc::new(judge(&p));
            let looks = judged::Looks::of(&h);
            place(h, looks);
        }),
        Some(judged) => {
            let newest = |p: &Pod| events.newest("Pod", &p.namespace, &p.name);
            raw_pods.iter().zip(priors.drain(..)).for_each(|(p, prior)| {
                let (h, looks) = judged.judge(p, prior, newest, judge);
                place(h, looks);
            });
            judged.give_back_priors(priors);
            judged.keep_list(raw_pods);
        }
    }
    let problems = pods.len();
    pods.append(&mut healthy);
    let problem_pods = problem_pods(&pods[..problems]);
    let workload = |w: &Arc<Workload>| workload_health(w, &problem_pods, &events);
    let mut workloads: Vec<Arc<WorkloadHealth>> = match kept.as_deref_mut() {
        Some(judged) => judged.workloads(s, workload),
        None => s.workloads.iter().map(|w| Arc::new(workload(w))).collect(),
    };
    drop(problem_pods);
    memory.nodes(now, &mut nodes);
    memory.rollouts(now, &mut workloads);
    let (warning_events, events_by_reason) = events.of_the_hour();
    let pod_counts = PodCounts { problems: &pods[..problems], all: pods.len(), healthy_running };
    let counts = Counts::of(&nodes, pod_counts, &workloads, &pvcs, warning_events);

    let extras = extras::assess(raw_extras, &mut nodes, s.time, now, memory);
    let manager_stopped = extras.control_plane.iter().flatten().any(|c| c.down && c.component == plane::COMPONENTS[0]);
    // Set on a copy of a workload shared with the last cycle, and only where it differs.
    for w in workloads.iter_mut().filter(|w| w.controller_stopped != manager_stopped) {
        Arc::make_mut(w).controller_stopped = manager_stopped;
    }
    let (time, version, certificates) = (s.time, s.version.clone(), s.certificates.clone());
    if let Some(judged) = kept {
        judged.finish(&nodes, &workloads);
        judged.events.keep(index);
        // The lists the cycle read, for the follower to take again while their kind is unchanged.
        judged.keep_lists(snapshot.nodes, snapshot.pvcs, snapshot.events);
    }
    let capacity = Capacity::of(&nodes, &demand_total);
    let mut extras = extras;
    let nodes_visible = !extras.namespaced.as_ref().is_some_and(|n| n.nodes_hidden);
    extras.quota_commitments = extras
        .quotas
        .as_deref()
        .filter(|_| nodes_visible)
        .map(|q| policy::commitments(q, capacity.cpu_allocatable, capacity.memory_allocatable));
    Health { capacity, time, version, counts, nodes, pods, workloads, pvcs, events_by_reason, extras, certificates }
}

/// Who uses each claim (pods neither Succeeded, which are not here, nor Failed), by the claim's
/// namespace and name.
type ClaimUsers<'p> = Names<(&'p str, &'p str), Vec<&'p str>>;

/// Who uses each claim, of `pods` in their canonical order (every pod, or those that name a
/// claim).
fn claim_users<'p>(pods: impl Iterator<Item = &'p Arc<Pod>>) -> ClaimUsers<'p> {
    let mut users = ClaimUsers::default();
    for p in pods.filter(|p| !p.claims.is_empty() && p.phase != "Failed") {
        for claim in &p.claims {
            users.entry((&*p.namespace, claim.as_str())).or_default().push(&*p.name);
        }
    }
    users
}

/// A node: ready or not and why, its pressure, its kubelet's skew, what its pods ask. It reads
/// the node, the server's version, what the pods ask of the node and the newest event about it.
fn node_health(s: &Snapshot, n: &Node, demand: &demand::Demand, events: &EventIndex) -> NodeHealth {
    let server_minor = minor_version(&s.version);
    let ready = n.ready.as_deref() == Some("True");
    let pressure: Vec<(String, bool)> = PRESSURE_CONDITIONS
        .iter()
        .filter_map(|(kind, label)| {
            n.conditions.iter().find(|(k, _)| k == kind).map(|(_, st)| (label.to_string(), st == "True"))
        })
        .collect();
    let mut why = Vec::new();
    if !ready {
        push_unique(
            &mut why,
            Some(
                n.ready_detail
                    .as_deref()
                    .map_or_else(|| ours("why-node-no-ready", &[]), |d| Message::verbatim(clean_line(d, WHY_MAX))),
            ),
        );
    }
    for (kind, status) in &n.conditions {
        if status == "True" {
            push_unique(&mut why, Some(ours("why-condition-true", &[("condition", kind.into())])));
        }
    }
    if !why.is_empty() {
        push_unique(&mut why, events.why("Node", "", &n.name));
    }
    // A cordon's own taint is said by the scheduling column.
    for (key, effect) in n.taints.iter().filter(|(key, _)| key != "node.kubernetes.io/unschedulable") {
        let lost = if key == UNREACHABLE_TAINT { "yes" } else { "no" };
        let taint = format!("{key}:{effect}");
        push_unique(&mut why, Some(ours("why-tainted", &[("taint", taint.into()), ("lost", lost.into())])));
    }
    let kubelet_skew = outside_skew(server_minor, minor_version(&n.kubelet_version));
    if kubelet_skew {
        why.push(ours(
            "why-kubelet-skew",
            &[("kubelet", (&n.kubelet_version).into()), ("server", (&s.version).into())],
        ));
    }
    let (requested, pods) = demand.on(&n.name);
    NodeHealth {
        name: n.name.clone(),
        ready,
        ready_status: n.ready.clone().unwrap_or_else(|| "missing".into()),
        pressure,
        unschedulable: n.unschedulable,
        kubelet_version: n.kubelet_version.clone(),
        why,
        allocatable_cpu: n.allocatable_cpu,
        allocatable_memory: n.allocatable_memory,
        requested,
        pods,
        pods_capacity: n.allocatable_pods,
        taints: n.taints.iter().map(|(key, effect)| NodeTaint { key: key.clone(), effect: effect.clone() }).collect(),
        usage_cpu: None,
        usage_memory: None,
        kubelet_skew,
        ready_transitions: 0,
    }
}

/// The pods with a problem by their namespace and workload: one pass over them for what the
/// workloads need, never a scan per workload.
type ProblemPods<'p> = Names<(&'p str, &'p str), Vec<&'p PodHealth>>;

fn problem_pods(problems: &[Arc<PodHealth>]) -> ProblemPods<'_> {
    let mut by_workload = ProblemPods::default();
    for p in problems.iter().filter(|p| p.has_problem() && !p.workload.is_empty()) {
        by_workload.entry((&*p.namespace, &*p.workload)).or_default().push(p);
    }
    by_workload
}

/// A Deployment, StatefulSet or DaemonSet: its missing replicas and why, from its pods in
/// trouble and its newest Warning event (read only when replicas are missing).
fn workload_health(w: &Workload, problem_pods: &ProblemPods, events: &EventIndex) -> WorkloadHealth {
    let unavailable = w.unavailable();
    let mut why = Vec::new();
    if let Some(message) = &w.deadline_exceeded {
        why.push(Message::verbatim(clean_line(&format!("ProgressDeadlineExceeded: {message}"), WHY_MAX)));
    }
    if unavailable > 0 {
        for p in problem_pods.get(&(w.namespace.as_str(), w.name.as_str())).into_iter().flatten() {
            let problems = Message::list(&p.problem_messages(), ", ");
            why.push(ours("why-pod-is", &[("pod", (&p.name).into()), ("problems", problems.into())]));
        }
        push_unique(&mut why, events.why(w.kind.as_str(), &w.namespace, &w.name));
    }
    WorkloadHealth {
        kind: w.kind,
        namespace: w.namespace.clone(),
        name: w.name.clone(),
        desired: w.desired,
        ready: w.ready,
        unavailable,
        updated: w.updated,
        updating: w.updating,
        rollout_stuck: w.deadline_exceeded.is_some(),
        generation_lag: w.generation_lag,
        misscheduled: w.misscheduled,
        controller_stopped: false,
        why,
    }
}

/// What each Pending claim waits for, from the newest of the PersistentVolume controller's
/// events about it.
fn claim_waits(events: &[Event]) -> Names<(&str, &str), crate::collect::pvcs::Waits> {
    let mut newest: Names<(&str, &str), &Event> = Names::default();
    for e in events.iter().filter(|e| e.kind == "PersistentVolumeClaim") {
        let key = (e.object_namespace.as_deref().unwrap_or(&e.namespace), e.object_name.as_str());
        let entry = newest.entry(key).or_insert(e);
        if e.last_seen > entry.last_seen {
            *entry = e;
        }
    }
    newest
        .into_iter()
        .filter_map(|(k, e)| crate::collect::pvcs::Waits::of(&e.reason, &e.message).map(|w| (k, w)))
        .collect()
}

/// What a claim waits for, in words.
fn waiting_for(w: &crate::collect::pvcs::Waits) -> Message {
    match w {
        crate::collect::pvcs::Waits::FirstConsumer => ours("why-claim-first-consumer", &[]),
        crate::collect::pvcs::Waits::Provisioner(p) if p.is_empty() => ours("why-claim-any-provisioner", &[]),
        crate::collect::pvcs::Waits::Provisioner(p) => {
            ours("why-claim-provisioner", &[("provisioner", clean_line(p, WHY_MAX).into())])
        }
    }
}

/// A PersistentVolumeClaim: stuck when Pending and either used by a live pod or named by a
/// Warning event. A Pending one says what it waits for when the PersistentVolume controller
/// said it. A claim not Pending reads nothing but itself.
fn claim_health(
    c: &Pvc,
    users: &ClaimUsers,
    events: &EventIndex,
    waits: &Names<(&str, &str), crate::collect::pvcs::Waits>,
) -> PvcHealth {
    let users: &[&str] = users.get(&(c.namespace.as_str(), c.name.as_str())).map(Vec::as_slice).unwrap_or_default();
    let event = events.about("PersistentVolumeClaim", &c.namespace, &c.name);
    let stuck = c.phase == "Pending" && (!users.is_empty() || event.is_some());
    let mut why = Vec::new();
    if c.phase == "Pending"
        && let Some(w) = waits.get(&(c.namespace.as_str(), c.name.as_str()))
    {
        why.push(waiting_for(w));
    }
    if stuck {
        push_unique(&mut why, events.why("PersistentVolumeClaim", &c.namespace, &c.name));
        for u in users {
            why.push(ours("why-used-by", &[("pod", (*u).into())]));
        }
    }
    PvcHealth {
        namespace: c.namespace.clone(),
        name: c.name.clone(),
        phase: c.phase.clone(),
        bound: c.phase == "Bound",
        stuck,
        why,
    }
}

impl Counts {
    /// Adds what `p` counts for to the pods' counts.
    fn count_pod(&mut self, p: &PodHealth) {
        self.pods_running += u64::from(p.phase == crate::collect::pods::Phase::Running);
        self.pods_pending += u64::from(p.pending);
        self.pods_failed += u64::from(p.failed);
        self.pods_crashlooping += u64::from(p.crashlooping);
        self.pods_not_ready += u64::from(p.not_ready);
        self.pods_only_not_ready += u64::from(p.only_not_ready());
        self.pods_blocked += u64::from(!p.blocked.is_empty());
        self.pods_stuck_terminating += u64::from(p.terminating.is_some());
    }
}

/// What the counts read of a cycle's pods: those with a problem (every count but the running
/// pods' is of problems), how many pods there are, and how many of the others run.
struct PodCounts<'p> {
    problems: &'p [Arc<PodHealth>],
    all: usize,
    healthy_running: u64,
}

impl Counts {
    fn of(
        nodes: &[Arc<NodeHealth>],
        pods: PodCounts,
        workloads: &[Arc<WorkloadHealth>],
        pvcs: &[Arc<PvcHealth>],
        warning_events: u64,
    ) -> Counts {
        // One pass over the pods with a problem, not one a count; a healthy pod counts only as
        // running (or not), which was told as it was placed.
        let mut c = Counts { pods_running: pods.healthy_running, ..Counts::default() };
        for p in pods.problems {
            c.count_pod(p);
        }
        Counts {
            nodes: nodes.len() as u64,
            nodes_ready: nodes.iter().filter(|n| n.ready).count() as u64,
            nodes_not_ready: nodes.iter().filter(|n| !n.ready).count() as u64,
            nodes_under_pressure: nodes.iter().filter(|n| n.under_pressure()).count() as u64,
            nodes_cordoned: nodes.iter().filter(|n| n.unschedulable).count() as u64,
            pods: pods.all as u64,
            workloads: workloads.len() as u64,
            workloads_missing_replicas: workloads.iter().filter(|w| w.unavailable > 0).count() as u64,
            rollouts_stuck: workloads.iter().filter(|w| w.rollout_stuck).count() as u64,
            nodes_version_skew: nodes.iter().filter(|n| n.kubelet_skew).count() as u64,
            pvcs: pvcs.len() as u64,
            pvcs_pending: pvcs.iter().filter(|c| c.stuck).count() as u64,
            warning_events,
            ..c
        }
    }
}

/// The minor version of `v1.33.4+k3s1`, `v1.29.0-eks-5e0fdde`: 33, 29.
fn minor_version(version: &str) -> Option<u32> {
    let mut parts = version.trim_start_matches('v').split('.');
    let major = parts.next()?;
    let minor: String = parts.next()?.chars().take_while(|c| c.is_ascii_digit()).collect();
    (major == "1").then(|| minor.parse().ok()).flatten()
}

/// A kubelet newer than the API server, or more than three minor versions older, is outside
/// the skew Kubernetes supports. Unknown versions are not judged.
fn outside_skew(server: Option<u32>, kubelet: Option<u32>) -> bool {
    match (server, kubelet) {
        (Some(s), Some(k)) => k > s || s - k > 3,
        _ => false,
    }
}

fn pod_health(p: &Pod, events: &EventIndex, now: Timestamp, down: &std::collections::HashSet<&str>) -> PodHealth {
    let crashlooping = p.crashlooping();
    let pending = p.phase == "Pending";
    let failed = p.phase == "Failed";
    let not_ready = p.phase == "Running" && !p.ready;
    let mut blocked: Vec<String> = Vec::new();
    let mut why = Vec::new();
    for c in &p.containers {
        let Some((reason, _)) = &c.waiting else { continue };
        if reason == "CrashLoopBackOff" {
            let line = match &c.last_terminated {
                Some((why_reason, code)) => {
                    let r = if why_reason.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", clean_line(why_reason, WHY_MAX))
                    };
                    ours(
                        "why-last-exit",
                        &[
                            ("container", (&c.name).into()),
                            ("code", code.to_string().into()),
                            ("reason", r.into()),
                            ("meaning", exit_meaning(*code, why_reason).into()),
                        ],
                    )
                }
                None => ours("why-crashloop-no-exit", &[("container", (&c.name).into())]),
            };
            push_unique(&mut why, Some(line));
        }
    }
    for c in p.blocked() {
        let (reason, message) = c.waiting.as_ref().expect("blocked containers wait");
        if !blocked.contains(reason) {
            blocked.push(reason.clone());
        }
        let line = match message {
            Some(m) => format!("{}: {reason}: {m}", c.name),
            None => format!("{}: {reason}", c.name),
        };
        push_unique(&mut why, Some(clean_line(&line, WHY_MAX)));
    }
    if failed {
        push_unique(&mut why, p.status_detail().map(|d| clean_line(d, WHY_MAX)));
        // A failed pod (a Job's) says why by how its containers ended.
        for c in &p.containers {
            let Some((reason, code, message)) = &c.failed_with else { continue };
            let r = if reason.is_empty() { String::new() } else { format!(" ({})", clean_line(reason, WHY_MAX)) };
            let line = ours(
                "why-exit",
                &[
                    ("container", (&c.name).into()),
                    ("code", code.to_string().into()),
                    ("reason", r.into()),
                    ("meaning", exit_meaning(*code, reason).into()),
                    ("has_message", if message.is_some() { "yes" } else { "no" }.into()),
                    ("message", clean_line(message.as_deref().unwrap_or_default(), WHY_MAX).into()),
                ],
            );
            push_unique(&mut why, Some(line));
        }
    }
    if not_ready && !crashlooping && blocked.is_empty() {
        let names: Vec<&str> = p.containers.iter().filter(|c| !c.init && !c.ready).map(|c| c.name.as_str()).collect();
        if !names.is_empty() {
            why.push(ours("why-containers-not-ready", &[("containers", names.join(", ").into())]));
        }
    }
    let problem = crashlooping || !blocked.is_empty() || pending || failed || not_ready;
    if problem {
        push_unique(&mut why, events.why("Pod", &p.namespace, &p.name));
    }
    if pending && events.about("Pod", &p.namespace, &p.name).is_none() {
        push_unique(&mut why, p.scheduling().map(|m| clean_line(&format!("Unschedulable: {m}"), WHY_MAX)));
    }
    // deletionTimestamp is when the grace period ends: past it, the pod should be gone.
    let terminating = p.deletion().filter(|end| now > *end).map(|end| now.duration_since(end).as_secs());
    if terminating.is_some() {
        if !p.finalizers().is_empty() {
            let finalizers = clean_line(&p.finalizers().join(", "), WHY_MAX);
            why.push(ours("why-finalizers", &[("finalizers", finalizers.into())]));
        }
        if down.contains(&*p.node) {
            why.push(ours("why-node-down", &[("node", (&p.node).into())]));
        }
        if why.is_empty() {
            why.push(ours("why-past-grace", &[]));
        }
        if !problem {
            push_unique(&mut why, events.why("Pod", &p.namespace, &p.name));
        }
    }
    PodHealth {
        terminating,
        restarts: p.restarts(),
        namespace: p.namespace.clone(),
        name: p.name.clone(),
        workload: p.workload.clone(),
        owner: p.owner,
        phase: p.phase,
        ready: p.ready,
        crashlooping,
        pending,
        failed,
        not_ready,
        blocked,
        why,
    }
}

/// One kind of problem a cluster can have: how many of it, how grave, and how the one
/// sentence counts it. The table drives both [`Health::severity`] and [`Health::summary_in`],
/// in the sentence's order.
struct Problem {
    count: fn(&Health) -> u64,
    severity: Grade,
    /// Its message, given `count`.
    words: &'static str,
}

const PROBLEMS: [Problem; 25] = [
    Problem { count: Health::control_plane_down, severity: Grade::Critical, words: "count-control-plane-down" },
    Problem { count: Health::webhooks_refusing, severity: Grade::Critical, words: "count-webhooks-refusing" },
    Problem { count: |h| h.counts.nodes_not_ready, severity: Grade::Critical, words: "count-nodes-not-ready" },
    Problem { count: |h| h.counts.pods_crashlooping, severity: Grade::Critical, words: "count-pods-crashlooping" },
    Problem { count: |h| h.counts.nodes_under_pressure, severity: Grade::Notice, words: "count-nodes-under-pressure" },
    Problem { count: |h| h.counts.pods_blocked, severity: Grade::Notice, words: "count-pods-blocked" },
    Problem { count: |h| h.counts.pods_pending, severity: Grade::Notice, words: "count-pods-pending" },
    Problem { count: |h| h.counts.pods_failed, severity: Grade::Notice, words: "count-pods-failed" },
    // A pod not ready that is also crash-looping or blocked is counted there (and so judged):
    // here are those that are not ready and no more.
    Problem { count: |h| h.counts.pods_only_not_ready, severity: Grade::Notice, words: "count-pods-not-ready" },
    Problem {
        count: |h| h.counts.workloads_missing_replicas,
        severity: Grade::Notice,
        words: "count-workloads-missing-replicas",
    },
    Problem { count: |h| h.counts.pvcs_pending, severity: Grade::Notice, words: "count-claims-stuck" },
    Problem {
        count: |h| h.counts.pods_stuck_terminating,
        severity: Grade::Notice,
        words: "count-pods-stuck-terminating",
    },
    Problem { count: |h| h.counts.rollouts_stuck, severity: Grade::Notice, words: "count-rollouts-stuck" },
    Problem { count: Health::jobs_failed, severity: Grade::Notice, words: "count-jobs-failed" },
    Problem { count: Health::cronjobs_missed, severity: Grade::Notice, words: "count-cronjobs-missed" },
    Problem { count: |h| h.counts.nodes_version_skew, severity: Grade::Notice, words: "count-kubelets-skew" },
    Problem { count: Health::pdbs_short, severity: Grade::Notice, words: "count-pdbs-short" },
    Problem { count: Health::quotas_full, severity: Grade::Notice, words: "count-quotas-full" },
    Problem { count: Health::volumes_in_error, severity: Grade::Notice, words: "count-volumes-in-error" },
    Problem { count: Health::webhooks_skipped, severity: Grade::Notice, words: "count-webhooks-skipped" },
    Problem { count: Health::nodes_full, severity: Grade::Notice, words: "count-nodes-full" },
    Problem { count: Health::daemonsets_misscheduled, severity: Grade::Notice, words: "count-daemonsets-misscheduled" },
    Problem { count: Health::jobs_too_long, severity: Grade::Notice, words: "count-jobs-too-long" },
    Problem { count: Health::resources_overcommitted, severity: Grade::Notice, words: "count-overcommitted" },
    Problem { count: Health::quotas_overcommitted, severity: Grade::Notice, words: "count-quotas-overcommitted" },
];

/// A certificate of the connection that expires within 30 days is a problem of its own, said
/// with its date rather than counted.
const CERTIFICATE_SEVERITY: Grade = Grade::Notice;

/// How many of each kind of problem a health has, in the order of the sentence: counted once
/// and kept beside a health that is shown many times (some counts walk every volume, node or
/// workload: at 150,000 pods, counting them at each read of the cluster list cost more than
/// a cycle on a change).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Problems([u64; PROBLEMS.len()]);

impl Health {
    /// How many of each kind of problem it has.
    pub fn problems(&self) -> Problems {
        Problems(PROBLEMS.map(|p| (p.count)(self)))
    }

    /// The gravest problem there is.
    pub fn severity(&self) -> Grade {
        self.severity_of(&self.problems())
    }

    /// [`Health::severity`], its problems counted by [`Health::problems`].
    pub fn severity_of(&self, problems: &Problems) -> Grade {
        let counted = PROBLEMS.iter().zip(problems.0).filter(|(_, n)| *n > 0).map(|(p, _)| p.severity);
        let certificates = (!self.expiring().is_empty()).then_some(CERTIFICATE_SEVERITY);
        counted.chain(certificates).max().unwrap_or(Grade::Ok)
    }

    /// The one sentence: `3 pods crash-looping, 1 node not ready` or `Healthy: 3 nodes ready, 42 pods`.
    pub fn summary(&self) -> String {
        self.summary_in(Lang::En)
    }

    /// The one sentence in `lang`: « 3 pods en boucle de crash, 1 nœud non prêt ».
    pub fn summary_in(&self, lang: Lang) -> String {
        self.summary_of(lang, &self.problems())
    }

    /// [`Health::summary_in`], its problems counted by [`Health::problems`].
    pub fn summary_of(&self, lang: Lang, problems: &Problems) -> String {
        let c = &self.counts;
        let mut parts: Vec<String> = PROBLEMS
            .iter()
            .zip(problems.0)
            .filter(|(_, n)| *n > 0)
            .map(|(p, n)| lang.tr(p.words, &[("count", n.into())]))
            .collect();
        for e in self.expiring() {
            parts.push(lang.tr(
                "certificate-expires",
                &[
                    ("certificate", e.certificate.into()),
                    ("when", days_when(e.days).into()),
                    ("days", e.days.abs().into()),
                ],
            ));
        }
        let said = match (parts.is_empty(), self.nodes_visible()) {
            (true, true) => lang.tr("healthy-with-nodes", &[("nodes", c.nodes_ready.into()), ("pods", c.pods.into())]),
            (true, false) => lang.tr("healthy", &[("pods", c.pods.into())]),
            (false, _) => parts.join(", "),
        };
        match &self.extras.namespaced {
            Some(n) => lang.tr("watched-in", &[("said", said.into()), ("count", n.read.len().into())]),
            None => said,
        }
    }

    /// Whether node health is watched: not when namespaced access may not list nodes.
    pub fn nodes_visible(&self) -> bool {
        !self.extras.namespaced.as_ref().is_some_and(|n| n.nodes_hidden)
    }

    /// Failed Jobs that no newer run of their CronJob made history.
    pub fn jobs_failed(&self) -> u64 {
        self.extras.jobs.iter().flatten().filter(|j| !j.superseded).count() as u64
    }

    pub fn cronjobs_missed(&self) -> u64 {
        self.extras.cronjobs.iter().flatten().filter(|c| c.missed).count() as u64
    }

    /// The lines of the signals that have no table of their own, in the order they are said:
    /// requests overcommitted, nodes full of pods, DaemonSets misscheduled, changes no controller
    /// acted on, Jobs running too long; at most `most` of each.
    pub fn notice_lines(&self, most: usize) -> Vec<Said> {
        let mut out: Vec<Said> = Vec::new();
        if self.nodes_visible() {
            let over = self.capacity.overcommitted().into_iter();
            out.extend(over.map(|o| Said { words: format!("{}.summary", o.words), args: o.args }));
        }
        for q in self.extras.quota_commitments.iter().flatten().filter(|q| q.overcommitted) {
            out.push(Said { words: format!("{}.summary", q.words()), args: q.args() });
        }
        let said = |words: &str, args: Vec<(&'static str, crate::lang::Arg)>| Said { words: words.into(), args };
        out.extend(self.nodes.iter().filter(|n| n.too_many_pods()).take(most).map(|n| {
            said(
                "text-node-pods",
                vec![
                    ("node", (&n.name).into()),
                    ("pods", (n.pods as i64).into()),
                    ("capacity", n.pods_capacity.unwrap_or(0).into()),
                ],
            )
        }));
        out.extend(self.workloads.iter().filter(|w| w.misscheduled > 0).take(most).map(|w| {
            said(
                "text-misscheduled",
                vec![
                    ("namespace", (&w.namespace).into()),
                    ("name", (&w.name).into()),
                    ("count", w.misscheduled.into()),
                ],
            )
        }));
        out.extend(self.workloads.iter().filter(|w| w.generation_lag > 0).take(most).map(|w| {
            said(
                "text-generation",
                vec![
                    ("kind", w.kind.as_str().into()),
                    ("namespace", (&w.namespace).into()),
                    ("name", (&w.name).into()),
                    ("lag", w.generation_lag.into()),
                ],
            )
        }));
        let long = self.extras.running_jobs.iter().flatten().filter(|j| j.too_long());
        out.extend(long.take(most).map(|j| {
            said(
                "text-job-long",
                vec![
                    ("namespace", (&j.namespace).into()),
                    ("name", (&j.name).into()),
                    ("hours", (j.seconds / 3600).into()),
                ],
            )
        }));
        out
    }

    /// CPU and memory, each whose quotas promise past 1.5 times what the nodes give.
    pub fn quotas_overcommitted(&self) -> u64 {
        self.extras.quota_commitments.iter().flatten().filter(|q| q.overcommitted).count() as u64
    }

    /// Admission webhooks that cannot be reached and refuse what they intercept (`Fail`).
    pub fn webhooks_refusing(&self) -> u64 {
        self.extras.webhooks.iter().flatten().filter(|w| w.unavailable() && w.fails_closed()).count() as u64
    }

    /// Admission webhooks that cannot be reached and let what they intercept through (`Ignore`).
    pub fn webhooks_skipped(&self) -> u64 {
        self.extras.webhooks.iter().flatten().filter(|w| w.unavailable() && !w.fails_closed()).count() as u64
    }

    /// kube-controller-manager or kube-scheduler stopped renewing its lease.
    pub fn control_plane_down(&self) -> u64 {
        self.extras.control_plane.iter().flatten().filter(|c| c.down).count() as u64
    }

    pub fn pdbs_short(&self) -> u64 {
        self.extras.pdbs.iter().flatten().filter(|p| p.short).count() as u64
    }

    /// Quotas' resources all used or over: what needs more is refused (nearly full is not
    /// counted: the rule says it when it lasts).
    pub fn quotas_full(&self) -> u64 {
        let full = |q: &&policy::QuotaHealth| q.fullness.is_some_and(|f| f >= policy::Fullness::Full);
        self.extras.quotas.iter().flatten().filter(full).count() as u64
    }

    pub fn nodes_full(&self) -> u64 {
        self.nodes.iter().filter(|n| n.too_many_pods()).count() as u64
    }

    pub fn daemonsets_misscheduled(&self) -> u64 {
        self.workloads.iter().filter(|w| w.misscheduled > 0).count() as u64
    }

    pub fn jobs_too_long(&self) -> u64 {
        self.extras.running_jobs.iter().flatten().filter(|j| j.too_long()).count() as u64
    }

    /// CPU, memory or both requested past what the cluster holds without its largest node.
    pub fn resources_overcommitted(&self) -> u64 {
        if !self.nodes_visible() {
            return 0;
        }
        u64::from(self.capacity.cpu_overcommitted()) + u64::from(self.capacity.memory_overcommitted())
    }

    pub fn volumes_in_error(&self) -> u64 {
        self.extras.pvs.iter().flatten().filter(|v| v.in_error).count() as u64
    }

    /// The certificates of the connection that expire within 30 days.
    pub fn expiring(&self) -> Vec<Expiring> {
        [("serving", self.certificates.serving), ("client", self.certificates.client)]
            .into_iter()
            .filter_map(|(certificate, t)| {
                let t = t?;
                let left = t.duration_since(self.time);
                (left < CERTIFICATE_SOON).then(|| Expiring {
                    certificate,
                    not_after: t,
                    days: left.as_secs().div_euclid(86_400),
                })
            })
            .collect()
    }
}

/// Which way `days` points, for the `in-days` message: `today`, `future` or `past`.
pub fn days_when(days: i64) -> &'static str {
    match days {
        0 => "today",
        d if d > 0 => "future",
        _ => "past",
    }
}

impl Health {
    /// The pods with a problem: they come first.
    pub fn problem_pods(&self) -> &[Arc<PodHealth>] {
        &self.pods[..self.pods.partition_point(|p| p.has_problem())]
    }

    /// Takes the pods without a problem out, once the rules and the metrics have seen them:
    /// what `serve` keeps between cycles for its pages is then proportional to the trouble, not
    /// to the cluster (at 150,000 pods, some 50 MB less). The counts stay as they were. A
    /// followed cluster's kept judgements take them back ([`judged::Judged::keep_healthy`]).
    pub fn healthy_pods(&mut self) -> Vec<Arc<PodHealth>> {
        let problems = self.problem_pods().len();
        let healthy = self.pods.split_off(problems);
        self.pods.shrink_to_fit();
        self.extras.pod_usage = Vec::new();
        healthy
    }

    /// `3 nodes (3 ready), 42 pods (41 running, 1 pending, 0 failed), 12 workloads, 4 claims,
    /// 9 warning events in the last hour`
    pub fn counters(&self) -> String {
        self.counters_in(Lang::En)
    }

    /// The counters in `lang`.
    pub fn counters_in(&self, lang: Lang) -> String {
        let c = &self.counts;
        let nodes = if self.nodes_visible() {
            lang.tr("counters-nodes", &[("nodes", c.nodes.into()), ("ready", c.nodes_ready.into())])
        } else {
            String::new()
        };
        let rest = lang.tr(
            "counters",
            &[
                ("pods", c.pods.into()),
                ("running", c.pods_running.into()),
                ("pending", c.pods_pending.into()),
                ("failed", c.pods_failed.into()),
                ("workloads", c.workloads.into()),
                ("claims", c.pvcs.into()),
                ("events", c.warning_events.into()),
            ],
        );
        format!("{nodes}{rest}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::pods::ContainerState;
    use crate::collect::{Node, Pvc};

    /// The counts read the pods with a problem alone, and the healthy pods only as running or
    /// not: for every pod whatever its flags and phase, a count it adds to but the running
    /// pods' is one of a problem.
    #[test]
    fn the_counts_of_the_pods_with_a_problem_and_the_healthy_that_run_are_every_pods() {
        let mut every = Vec::new();
        for flags in 0..64u32 {
            for phase in ["Running", "Pending", "Failed", "Unknown", ""] {
                every.push(Arc::new(PodHealth {
                    phase: phase.into(),
                    crashlooping: flags & 1 != 0,
                    pending: flags & 2 != 0,
                    failed: flags & 4 != 0,
                    not_ready: flags & 8 != 0,
                    blocked: if flags & 16 != 0 { vec!["ImagePullBackOff".into()] } else { vec![] },
                    terminating: (flags & 32 != 0).then_some(30),
                    ..PodHealth::running(&format!("p-{flags}-{phase}"))
                }));
            }
        }
        // Every pod counted, as the counts did before they read only the problems.
        let mut one_by_one = Counts { pods: every.len() as u64, ..Counts::default() };
        for p in &every {
            one_by_one.count_pod(p);
        }
        let (problems, healthy): (Vec<_>, Vec<_>) = every.iter().cloned().partition(|p| p.has_problem());
        let healthy_running = healthy.iter().filter(|p| judged::Looks::of(p).running).count() as u64;
        assert_eq!(healthy.len(), 5, "one healthy pod a phase");
        let pods = PodCounts { problems: &problems, all: every.len(), healthy_running };
        assert_eq!(Counts::of(&[], pods, &[], &[], 0), one_by_one);
    }

    /// A Ready, schedulable node of this allocatable (millicores, bytes).
    fn ready_node(name: &str, cpu: i64, memory: i64) -> Node {
        Node {
            allocatable_pods: None,
            taints: vec![],
            name: name.into(),
            ready: Some("True".into()),
            ready_detail: None,
            conditions: vec![],
            unschedulable: false,
            kubelet_version: "v1".into(),
            allocatable_cpu: Some(cpu),
            allocatable_memory: Some(memory),
        }
    }

    fn pod(ns: &str, name: &str, phase: &str) -> Pod {
        Pod {
            namespace: ns.into(),
            name: name.into(),
            workload: "".into(),
            owner: Default::default(),
            phase: phase.into(),
            ready: phase == "Running",
            detail: None,
            restarts: 0,
            containers: vec![],
            claims: vec![],
            node: "".into(),
            resources: Resources::default(),
        }
    }

    #[test]
    fn problems_come_first_then_by_namespace_and_name() {
        let mut crash = pod("z", "crash", "Running");
        crash.ready = false;
        crash.containers.push(ContainerState {
            name: "app".into(),
            waiting: Some(("CrashLoopBackOff".into(), None)),
            last_terminated: Some(("OOMKilled".into(), 137)),
            restarts: 7,
            ..Default::default()
        });
        let mut s = Snapshot {
            pods: [pod("b", "ok", "Running"), crash, pod("a", "ok", "Running"), pod("y", "wait", "Pending")]
                .map(Arc::new)
                .into(),
            ..Default::default()
        };
        // As every snapshot is once read (the derivation takes the pods in this order).
        s.canonical_order();
        let h = assess(s);
        let order: Vec<String> = h.pods.iter().map(|p| format!("{}/{}", p.namespace, p.name)).collect();
        assert_eq!(order, ["y/wait", "z/crash", "a/ok", "b/ok"]);
        assert_eq!(
            why::said(&h.pods[1].why, Lang::En),
            ["app: last exit code 137 (OOMKilled): SIGKILL: out of memory, the container went over its memory limit"]
        );
        assert_eq!(
            why::said(&h.pods[1].why, Lang::Fr),
            [
                "app\u{a0}: dernier code de sortie 137 (OOMKilled)\u{a0}: SIGKILL\u{a0}: mémoire épuisée, le conteneur a dépassé sa limite de mémoire"
            ]
        );
        assert_eq!(h.severity(), Grade::Critical);
        assert_eq!(h.summary(), "1 pod crash-looping, 1 pod pending");
        assert_eq!(h.counts.pods_not_ready, 1, "the metric still counts every Running pod that is not ready");
    }

    /// A pod's health holds its record's names, not copies: in a full derivation, and in a
    /// followed cluster's cycle, where the store keeps the record beside the health.
    #[test]
    fn a_pod_s_health_shares_its_record_s_names() {
        let mut crash = pod("shop", "api-1", "Running");
        crash.workload = "api".into();
        crash.ready = false;
        let records: Vec<Arc<Pod>> = [crash, pod("shop", "api-2", "Running")].map(Arc::new).into();
        let shares = |h: &Health| {
            assert_eq!(h.pods.len(), records.len());
            for (p, r) in h.pods.iter().zip(&records) {
                assert!(Arc::ptr_eq(&p.namespace, &r.namespace), "{}: namespace copied", r.name);
                assert!(Arc::ptr_eq(&p.name, &r.name), "{}: name copied", r.name);
                assert!(Arc::ptr_eq(&p.workload, &r.workload), "{}: workload copied", r.name);
            }
        };
        let snapshot = || Snapshot { pods: records.clone(), ..Default::default() };
        shares(&assess(snapshot()));
        let mut judged = judged::Judged::default();
        let mut memory = Memory::default();
        for afresh in [true, false, false] {
            let s = snapshot();
            let now = s.time;
            shares(&assess_judged(s, now, &mut memory, Some((&mut judged, afresh))));
        }
        assert_eq!(judged.last.again, 2, "the second cycle on took both judgements again");
    }

    #[test]
    fn a_failed_pod_says_how_its_containers_ended() {
        let mut failed = pod("batch", "report-29400000-x7k2p", "Failed");
        failed.containers.push(ContainerState {
            name: "report".into(),
            failed_with: Some(("Error".into(), 2, Some("open /data/input.csv: no such file or directory\n".into()))),
            ..Default::default()
        });
        failed.containers.push(ContainerState { name: "sidecar".into(), failed_with: None, ..Default::default() });
        let h = assess(Snapshot { pods: vec![Arc::new(failed)], ..Default::default() });
        assert_eq!(
            why::said(&h.pods[0].why, Lang::En),
            ["report: exit code 2 (Error): misuse of a shell command or bad arguments: \
                 open /data/input.csv: no such file or directory"]
        );
    }

    #[test]
    fn healthy_summary_and_claims_that_merely_wait() {
        let s = Snapshot {
            nodes: vec![ready_node("n", 2000, 1 << 30).into()],
            pods: vec![Arc::new(pod("a", "p", "Running"))],
            pvcs: vec![Arc::new(Pvc { namespace: "a".into(), name: "wffc".into(), phase: "Pending".into() })],
            ..Default::default()
        };
        let h = assess(s);
        assert!(!h.pvcs[0].stuck);
        assert_eq!(h.summary(), "Healthy: 1 node ready, 1 pod");
        assert_eq!(h.severity(), Grade::Ok);
    }

    /// Nodes whose allocatable is huge (a quantity from the cluster) are added up without
    /// overflowing: the capacity is held at the largest figure.
    #[test]
    fn huge_allocatables_are_summed_without_overflowing() {
        let node = |name: &str| ready_node(name, i64::MAX, i64::MAX);
        let h = assess(Snapshot { nodes: vec![node("n1").into(), node("n2").into()], ..Default::default() });
        assert_eq!((h.capacity.cpu_allocatable, h.capacity.memory_allocatable), (i64::MAX, i64::MAX));
        assert!(!h.capacity.cpu_overcommitted() && h.capacity.overcommitted().is_empty());
    }

    #[test]
    fn each_node_sums_what_its_live_pods_ask() {
        let node = |name: &str| ready_node(name, 1000, 1 << 30);
        let on = |name: &str, phase: &str, node: &str, cpu: i64, cpu_limit: i64| {
            let mut p = pod("a", name, phase);
            p.node = node.into();
            p.resources =
                Resources { cpu_requests: cpu, cpu_limits: cpu_limit, memory_requests: 1 << 20, memory_limits: 0 };
            p
        };
        let mut s = Snapshot {
            nodes: vec![node("n1").into(), node("n2").into()],
            pods: vec![
                on("p1", "Running", "n1", 300, 800),
                on("p2", "Pending", "n1", 200, 400),
                on("gone", "Failed", "n1", 5000, 5000),
                on("waiting", "Pending", "", 700, 0),
            ]
            .into_iter()
            .map(Arc::new)
            .collect(),
            ..Default::default()
        };
        s.canonical_order();
        let h = assess(s);
        let n1 = &h.nodes[0];
        assert_eq!(
            n1.requested,
            Resources { cpu_requests: 500, cpu_limits: 1200, memory_requests: 2 << 20, memory_limits: 0 },
            "a Failed pod and an unscheduled one ask nothing of the node"
        );
        assert!(n1.overcommitted(), "1.2 cores of limits on 1 allocatable");
        assert_eq!(h.nodes[1].requested, Resources::default());
        assert!(!h.nodes[1].overcommitted());
    }
}
