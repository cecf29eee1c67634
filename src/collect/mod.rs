//! One cycle: the eight collections read in parallel, each into compact records.

pub mod events;
pub mod nodes;
pub mod pods;
pub mod pvcs;
pub mod version;
pub mod workloads;

use std::future::Future;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use serde::{Deserialize, Deserializer};

use crate::error::ReadError;
use crate::kube::Fetcher;
use crate::kube::request::field_selector;

pub use events::Event;
pub use nodes::Node;
pub use pods::Pod;
pub use pvcs::Pvc;
pub use workloads::{Workload, WorkloadKind};

/// What one cycle reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Collection {
    Version,
    Nodes,
    Pods,
    Deployments,
    StatefulSets,
    DaemonSets,
    PersistentVolumeClaims,
    Events,
}

impl Collection {
    pub const ALL: [Collection; 8] = [
        Collection::Version,
        Collection::Nodes,
        Collection::Pods,
        Collection::Deployments,
        Collection::StatefulSets,
        Collection::DaemonSets,
        Collection::PersistentVolumeClaims,
        Collection::Events,
    ];

    /// The name used in messages and in the `collection` label.
    pub fn name(self) -> &'static str {
        match self {
            Collection::Version => "version",
            Collection::Nodes => "nodes",
            Collection::Pods => "pods",
            Collection::Deployments => "deployments",
            Collection::StatefulSets => "statefulsets",
            Collection::DaemonSets => "daemonsets",
            Collection::PersistentVolumeClaims => "persistentvolumeclaims",
            Collection::Events => "events",
        }
    }

    /// The resource as RBAC and the API server name it (`deployments.apps`).
    pub fn resource(self) -> &'static str {
        match self {
            Collection::Version => "/version",
            Collection::Deployments => "deployments.apps",
            Collection::StatefulSets => "statefulsets.apps",
            Collection::DaemonSets => "daemonsets.apps",
            other => other.name(),
        }
    }

    pub fn path(self) -> &'static str {
        match self {
            Collection::Version => "/version",
            Collection::Nodes => "/api/v1/nodes",
            Collection::Pods => "/api/v1/pods",
            Collection::Deployments => "/apis/apps/v1/deployments",
            Collection::StatefulSets => "/apis/apps/v1/statefulsets",
            Collection::DaemonSets => "/apis/apps/v1/daemonsets",
            Collection::PersistentVolumeClaims => "/api/v1/persistentvolumeclaims",
            Collection::Events => "/api/v1/events",
        }
    }
}

/// Everything one successful cycle read, in compact records, ignored namespaces left out.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// When the cycle started: "now" for every age and window.
    pub time: Timestamp,
    /// `gitVersion` of /version.
    pub version: String,
    pub nodes: Vec<Node>,
    /// Every pod but the Succeeded ones.
    pub pods: Vec<Pod>,
    pub workloads: Vec<Workload>,
    pub pvcs: Vec<Pvc>,
    /// Warning events.
    pub events: Vec<Event>,
}

/// How one collection went.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectionStat {
    pub collection: Collection,
    pub duration: Duration,
    pub ok: bool,
}

/// The outcome of one cycle. A cycle succeeds only if all eight reads succeed.
#[derive(Debug)]
pub struct Cycle {
    pub time: Timestamp,
    pub duration: Duration,
    pub stats: Vec<CollectionStat>,
    pub result: Result<Snapshot, ReadError>,
}

/// What a cycle leaves out.
#[derive(Clone, Debug, Default)]
pub struct CycleOptions {
    pub ignored_namespaces: Vec<String>,
}

impl CycleOptions {
    fn ignored(&self, namespace: &str) -> bool {
        self.ignored_namespaces.iter().any(|n| n == namespace)
    }
}

/// Reads the eight collections in parallel.
pub async fn run(fetcher: &Fetcher, options: &CycleOptions, now: Timestamp) -> Cycle {
    let started = Instant::now();
    let skip = field_selector(None, &options.ignored_namespaces);
    let skip = skip.as_deref();
    let f = fetcher;
    let (version, nodes, pods, deployments, statefulsets, daemonsets, pvcs, events) = tokio::join!(
        timed(Collection::Version, f.get::<version::Version>(Collection::Version, Collection::Version.path())),
        timed(Collection::Nodes, f.list::<Node>(Collection::Nodes, Collection::Nodes.path(), None)),
        timed(Collection::Pods, f.list::<Pod>(Collection::Pods, Collection::Pods.path(), skip)),
        timed(
            Collection::Deployments,
            f.list::<workloads::Replicated>(Collection::Deployments, Collection::Deployments.path(), skip)
        ),
        timed(
            Collection::StatefulSets,
            f.list::<workloads::Replicated>(Collection::StatefulSets, Collection::StatefulSets.path(), skip)
        ),
        timed(
            Collection::DaemonSets,
            f.list::<workloads::Daemon>(Collection::DaemonSets, Collection::DaemonSets.path(), skip)
        ),
        timed(
            Collection::PersistentVolumeClaims,
            f.list::<Pvc>(Collection::PersistentVolumeClaims, Collection::PersistentVolumeClaims.path(), skip)
        ),
        // Not filtered by namespace on the server: a Node's events may be recorded in an ignored one.
        timed(Collection::Events, f.list::<Event>(Collection::Events, Collection::Events.path(), Some("type=Warning"))),
    );
    let stats = vec![
        version.0.clone(),
        nodes.0.clone(),
        pods.0.clone(),
        deployments.0.clone(),
        statefulsets.0.clone(),
        daemonsets.0.clone(),
        pvcs.0.clone(),
        events.0.clone(),
    ];
    // The first failure in collection order is the cycle's one error.
    let result = (|| {
        let version = version.1?;
        let nodes = nodes.1?;
        let mut pods = pods.1?;
        let mut workloads: Vec<Workload> = deployments
            .1?
            .into_iter()
            .map(|d| d.into_workload(WorkloadKind::Deployment))
            .chain(statefulsets.1?.into_iter().map(|s| s.into_workload(WorkloadKind::StatefulSet)))
            .chain(daemonsets.1?.into_iter().map(workloads::Daemon::into_workload))
            .collect();
        let mut pvcs = pvcs.1?;
        let mut events = events.1?;
        pods.retain(|p| p.phase != "Succeeded" && !options.ignored(&p.namespace));
        workloads.retain(|w| !options.ignored(&w.namespace));
        pvcs.retain(|p| !options.ignored(&p.namespace));
        events.retain(|e| {
            e.event_type == "Warning"
                && (e.kind == "Node"
                    || !(options.ignored(&e.namespace)
                        || e.object_namespace.as_deref().is_some_and(|n| options.ignored(n))))
        });
        Ok(Snapshot { time: now, version: version.git_version, nodes, pods, workloads, pvcs, events })
    })();
    Cycle { time: now, duration: started.elapsed(), stats, result }
}

async fn timed<T>(
    collection: Collection,
    read: impl Future<Output = Result<T, ReadError>>,
) -> (CollectionStat, Result<T, ReadError>) {
    let started = Instant::now();
    let result = read.await;
    (CollectionStat { collection, duration: started.elapsed(), ok: result.is_ok() }, result)
}

/// Deserializes `null` as the default, for fields the API server may send as null.
pub(crate) fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// The fields of `metadata` the views use.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Meta {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    #[serde(deserialize_with = "nullable")]
    pub namespace: String,
    pub creation_timestamp: Option<String>,
}

/// A `metav1.Time` or `MicroTime`, when it parses.
pub(crate) fn parse_time(s: Option<&str>) -> Option<Timestamp> {
    s.filter(|s| !s.is_empty()).and_then(|s| s.parse().ok())
}
