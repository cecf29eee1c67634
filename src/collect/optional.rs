//! The optional reads: each needs one permission more than the core's. Without it, or when it
//! fails, the cycle still succeeds; what the read would have shown is said to be missing, and why.
//!
//! - APIServices (`apiregistration.k8s.io`): whether each aggregated API is Available, and why not.
//! - The Metrics API (`metrics.k8s.io`, served by metrics-server through the aggregator): CPU and
//!   memory used per node and per pod. Read only when its APIService is not known to be down.
//! - HorizontalPodAutoscalers (`autoscaling/v2`): whether each can scale.
//! - Jobs and CronJobs (`batch/v1`): which Jobs failed, and when each CronJob last ran.

use serde::{Deserialize, Serialize};

use super::quantity::Quantities;
use super::{Meta, nullable};
use crate::error::{ReadError, ReadErrorKind};

/// The APIService that serves the Metrics API.
pub const METRICS_APISERVICE: &str = "v1beta1.metrics.k8s.io";

/// An optional read's outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Optional<T> {
    Read(T),
    /// 403: the service account may not read it.
    NotGranted,
    /// Not asked for: the Metrics API's APIService is not Available.
    #[default]
    Skipped,
    /// Another failure, in one line.
    Failed(String),
}

impl<T> Optional<T> {
    pub fn from_result(r: Result<T, ReadError>) -> Optional<T> {
        match r {
            Ok(v) => Optional::Read(v),
            Err(ReadError { kind: ReadErrorKind::Forbidden { .. }, .. }) => Optional::NotGranted,
            Err(e) => Optional::Failed(e.to_string()),
        }
    }

    pub fn read(&self) -> Option<&T> {
        match self {
            Optional::Read(v) => Some(v),
            _ => None,
        }
    }
}

/// What the optional reads found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Extras {
    pub apiservices: Optional<Vec<ApiService>>,
    pub node_metrics: Optional<Vec<Usage>>,
    pub pod_metrics: Optional<Vec<Usage>>,
    pub hpas: Optional<Vec<Hpa>>,
    #[serde(default)]
    pub jobs: Optional<Vec<Job>>,
    #[serde(default)]
    pub cronjobs: Optional<Vec<CronJob>>,
    /// Watch mode: the resources whose watch is not granted, read every interval instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub watch_not_granted: Vec<String>,
    /// Namespaced access (`namespaces`): what the cycle could and could not see. None: the
    /// whole cluster was read. Left out then, so that other reports stay what servers before
    /// namespaced access read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaced: Option<Namespaced>,
}

/// What a cycle read with namespaced access could and could not see.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Namespaced {
    /// How many namespaces were asked for (the ignored ones left out).
    pub asked: usize,
    /// The namespaces read, in the order given.
    pub read: Vec<String>,
    /// Those not read (not found, or a core read refused): their alerts neither fire nor
    /// resolve while so (a failed read resolves nothing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<String>,
    /// One line for each namespace not read, or read but in part: `team-c: not found`,
    /// `team-c: the service account may not list pods (403)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// The cluster-wide List of nodes was refused: node health is not watched (no node
    /// series, no node rule fires or resolves).
    #[serde(default)]
    pub nodes_hidden: bool,
    /// Events about nodes, recorded in `default`, are not among the namespaces read.
    #[serde(default)]
    pub node_events_hidden: bool,
}

/// The compact record of an APIService.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApiService {
    pub name: String,
    /// `namespace/name` of `spec.service`: set for an aggregated API, empty for a local one.
    pub service: String,
    /// The Available condition: None when the APIService lists none.
    pub available: Option<bool>,
    /// That condition's reason and message.
    pub reason: String,
    pub message: String,
}

#[derive(Deserialize)]
pub struct RawApiService {
    #[serde(default)]
    metadata: Meta,
    #[serde(default, deserialize_with = "nullable")]
    spec: ApiServiceSpec,
    #[serde(default, deserialize_with = "nullable")]
    status: ConditionsOnly,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ApiServiceSpec {
    service: Option<ServiceRef>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ServiceRef {
    #[serde(deserialize_with = "nullable")]
    namespace: String,
    #[serde(deserialize_with = "nullable")]
    name: String,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ConditionsOnly {
    #[serde(deserialize_with = "nullable")]
    conditions: Vec<super::nodes::Condition>,
}

impl From<RawApiService> for ApiService {
    fn from(raw: RawApiService) -> ApiService {
        let available = raw.status.conditions.into_iter().find(|c| c.kind == "Available");
        ApiService {
            name: raw.metadata.name,
            service: raw.spec.service.map(|s| format!("{}/{}", s.namespace, s.name)).unwrap_or_default(),
            available: available.as_ref().map(|c| c.status == "True"),
            reason: available.as_ref().and_then(|c| c.reason.clone()).unwrap_or_default(),
            message: available.and_then(|c| c.message).unwrap_or_default(),
        }
    }
}

/// CPU (millicores) and memory (bytes) used by a node, or by a pod (its containers summed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub namespace: String,
    pub name: String,
    pub cpu: i64,
    pub memory: i64,
}

#[derive(Deserialize)]
pub struct RawUsage {
    #[serde(default)]
    metadata: Meta,
    /// NodeMetrics.
    #[serde(default, deserialize_with = "nullable")]
    usage: Quantities,
    /// PodMetrics.
    #[serde(default, deserialize_with = "nullable")]
    containers: Vec<ContainerUsage>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ContainerUsage {
    #[serde(deserialize_with = "nullable")]
    usage: Quantities,
}

impl From<RawUsage> for Usage {
    fn from(raw: RawUsage) -> Usage {
        let all = std::iter::once(&raw.usage).chain(raw.containers.iter().map(|c| &c.usage));
        let (cpu, memory) =
            all.fold((0, 0), |(c, m), q| (c + q.cpu_millicores().unwrap_or(0), m + q.memory_bytes().unwrap_or(0)));
        Usage { namespace: raw.metadata.namespace, name: raw.metadata.name, cpu, memory }
    }
}

/// The compact record of an HPA.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hpa {
    pub namespace: String,
    pub name: String,
    pub max_replicas: i64,
    pub current_replicas: i64,
    /// The ScalingActive condition: (True, reason, message); None when not listed.
    pub scaling_active: Option<(bool, String, String)>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawHpa {
    #[serde(default)]
    metadata: Meta,
    #[serde(default, deserialize_with = "nullable")]
    spec: HpaSpec,
    #[serde(default, deserialize_with = "nullable")]
    status: HpaStatus,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct HpaSpec {
    #[serde(deserialize_with = "nullable")]
    max_replicas: i64,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct HpaStatus {
    #[serde(deserialize_with = "nullable")]
    current_replicas: i64,
    #[serde(deserialize_with = "nullable")]
    conditions: Vec<super::nodes::Condition>,
}

impl From<RawHpa> for Hpa {
    fn from(raw: RawHpa) -> Hpa {
        let active = raw.status.conditions.into_iter().find(|c| c.kind == "ScalingActive");
        Hpa {
            namespace: raw.metadata.namespace,
            name: raw.metadata.name,
            max_replicas: raw.spec.max_replicas,
            current_replicas: raw.status.current_replicas,
            scaling_active: active
                .map(|c| (c.status == "True", c.reason.unwrap_or_default(), c.message.unwrap_or_default())),
        }
    }
}

impl Hpa {
    /// At `maxReplicas`: it cannot scale out any further.
    pub fn at_max(&self) -> bool {
        self.max_replicas > 0 && self.current_replicas >= self.max_replicas
    }
}

/// The compact record of a Job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub namespace: String,
    pub name: String,
    /// The CronJob that created it (its controller), empty for a Job of its own.
    pub owner: String,
    pub created: Option<jiff::Timestamp>,
    /// The `Failed` condition is True: its reason and message (`BackoffLimitExceeded: Job has
    /// reached the specified backoff limit`).
    pub failed: Option<String>,
    /// The `Complete` condition is True.
    pub complete: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawJob {
    #[serde(default)]
    metadata: OwnedMeta,
    #[serde(default, deserialize_with = "nullable")]
    status: ConditionsOnly,
}

/// `metadata` with the owner references.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct OwnedMeta {
    #[serde(flatten)]
    meta: Meta,
    #[serde(deserialize_with = "nullable")]
    owner_references: Vec<super::pods::OwnerReference>,
}

impl From<RawJob> for Job {
    fn from(raw: RawJob) -> Job {
        let holds = |kind: &str| raw.status.conditions.iter().find(|c| c.kind == kind && c.status == "True");
        let failed = holds("Failed").map(|c| {
            match (c.reason.as_deref().filter(|r| !r.is_empty()), c.message.as_deref().filter(|m| !m.is_empty())) {
                (Some(r), Some(m)) => format!("{r}: {m}"),
                (Some(x), None) | (None, Some(x)) => x.to_string(),
                (None, None) => "Failed".into(),
            }
        });
        let complete = holds("Complete").is_some();
        let owner = raw
            .metadata
            .owner_references
            .iter()
            .find(|o| o.controller && o.kind == "CronJob")
            .map(|o| o.name.clone())
            .unwrap_or_default();
        Job {
            created: super::parse_time(raw.metadata.meta.creation_timestamp.as_deref()),
            namespace: raw.metadata.meta.namespace,
            name: raw.metadata.meta.name,
            owner,
            failed,
            complete,
        }
    }
}

/// The compact record of a CronJob.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CronJob {
    pub namespace: String,
    pub name: String,
    /// `spec.schedule`, as written (`*/5 * * * *`, `@hourly`).
    pub schedule: String,
    /// `spec.timeZone`: an IANA name; None for the controller's own time zone (UTC in the
    /// kube-controller-manager images).
    pub time_zone: Option<String>,
    pub suspended: bool,
    pub created: Option<jiff::Timestamp>,
    /// `status.lastScheduleTime`.
    pub last_schedule: Option<jiff::Timestamp>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawCronJob {
    #[serde(default)]
    metadata: Meta,
    #[serde(default, deserialize_with = "nullable")]
    spec: CronJobSpec,
    #[serde(default, deserialize_with = "nullable")]
    status: CronJobStatus,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct CronJobSpec {
    #[serde(deserialize_with = "nullable")]
    schedule: String,
    time_zone: Option<String>,
    #[serde(deserialize_with = "nullable")]
    suspend: bool,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct CronJobStatus {
    last_schedule_time: Option<String>,
}

impl From<RawCronJob> for CronJob {
    fn from(raw: RawCronJob) -> CronJob {
        CronJob {
            created: super::parse_time(raw.metadata.creation_timestamp.as_deref()),
            namespace: raw.metadata.namespace,
            name: raw.metadata.name,
            schedule: raw.spec.schedule,
            time_zone: raw.spec.time_zone.filter(|z| !z.is_empty()),
            suspended: raw.spec.suspend,
            last_schedule: super::parse_time(raw.status.last_schedule_time.as_deref()),
        }
    }
}

impl super::FromApi for Job {
    type Raw = RawJob;
}

impl super::FromApi for CronJob {
    type Raw = RawCronJob;
}

impl super::FromApi for ApiService {
    type Raw = RawApiService;
}

impl super::FromApi for Usage {
    type Raw = RawUsage;
}

impl super::FromApi for Hpa {
    type Raw = RawHpa;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aggregated_apiservice_that_fails_its_check() {
        let a: ApiService = crate::collect::from_api(
            r#"{"metadata":{"name":"v1beta1.metrics.k8s.io"},
                "spec":{"service":{"namespace":"kube-system","name":"metrics-server","port":443}},
                "status":{"conditions":[{"type":"Available","status":"False","reason":"FailedDiscoveryCheck",
                  "message":"failing or missing response from https://10.96.0.12:4443/apis/metrics.k8s.io/v1beta1"}]}}"#,
        )
        .unwrap();
        assert_eq!(a.service, "kube-system/metrics-server");
        assert_eq!(a.available, Some(false));
        assert_eq!(a.reason, "FailedDiscoveryCheck");
        let local: ApiService =
            crate::collect::from_api(r#"{"metadata":{"name":"v1.apps"},"spec":{},"status":null}"#).unwrap();
        assert_eq!((local.service.as_str(), local.available), ("", None));
    }

    #[test]
    fn usage_of_a_node_and_of_a_pod() {
        let n: Usage =
            crate::collect::from_api(r#"{"metadata":{"name":"n1"},"usage":{"cpu":"250000000n","memory":"1048576Ki"}}"#)
                .unwrap();
        assert_eq!((n.cpu, n.memory), (250, 1 << 30));
        let p: Usage = crate::collect::from_api(
            r#"{"metadata":{"name":"p","namespace":"a"},"containers":[
                {"name":"app","usage":{"cpu":"2500000n","memory":"24Mi"}},{"name":"side","usage":{"cpu":"1m","memory":"8Mi"}}]}"#,
        )
        .unwrap();
        assert_eq!((p.namespace.as_str(), p.cpu, p.memory), ("a", 4, 32 << 20));
    }

    #[test]
    fn an_hpa_that_cannot_get_metrics() {
        let h: Hpa = crate::collect::from_api(
            r#"{"metadata":{"name":"web","namespace":"shop"},"spec":{"maxReplicas":10},
                "status":{"currentReplicas":10,"conditions":[{"type":"ScalingActive","status":"False",
                  "reason":"FailedGetResourceMetric","message":"unable to get metrics"}]}}"#,
        )
        .unwrap();
        assert_eq!(h.scaling_active, Some((false, "FailedGetResourceMetric".into(), "unable to get metrics".into())));
        assert!(h.at_max());
    }
}
