//! Pods: phase, readiness, what each container waits for or last died of, the claims they use.

use serde::{Deserialize, Serialize};

use super::quantity::{ContainerResources, Demand, Quantities, Resources, pod_demand};
use super::{Meta, nullable};

/// The compact record of a Pod.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pod {
    pub namespace: String,
    pub name: String,
    /// The controller behind the pod (the Deployment for a ReplicaSet's pod); empty for a bare pod.
    pub workload: String,
    pub phase: Phase,
    /// The Ready condition is `"True"`.
    pub ready: bool,
    /// What a few pods have to say; boxed, so that the many that say nothing cost 8 bytes.
    pub detail: Option<Box<PodDetail>>,
    /// Sum of `restartCount` over containers and init containers.
    pub restarts: i64,
    /// The containers with something to say: waiting, or not ready (init containers first).
    /// A healthy pod keeps none, so that a large cluster costs little memory.
    pub containers: Vec<ContainerState>,
    /// `spec.volumes[].persistentVolumeClaim.claimName`.
    pub claims: Vec<String>,
    /// `spec.nodeName`: where it is scheduled; empty while it is not.
    pub node: String,
    /// What it asks of its node, as the scheduler counts it.
    pub resources: Resources,
}

/// `status.phase`, in one byte (its text is one of five words).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    /// No phase given.
    #[default]
    None,
    Pending,
    Running,
    Succeeded,
    Failed,
    Unknown,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::None => "",
            Phase::Pending => "Pending",
            Phase::Running => "Running",
            Phase::Succeeded => "Succeeded",
            Phase::Failed => "Failed",
            Phase::Unknown => "Unknown",
        }
    }
}

impl From<&str> for Phase {
    fn from(s: &str) -> Phase {
        match s {
            "" => Phase::None,
            "Pending" => Phase::Pending,
            "Running" => Phase::Running,
            "Succeeded" => Phase::Succeeded,
            "Failed" => Phase::Failed,
            // Not a phase Kubernetes has: as unknown as it gets.
            _ => Phase::Unknown,
        }
    }
}

impl PartialEq<&str> for Phase {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl serde::Serialize for Phase {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Phase {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Phase, D::Error> {
        Ok(Phase::from(String::deserialize(d)?.as_str()))
    }
}

/// `status.reason` and `status.message` (an eviction, say), and the scheduler's message while
/// PodScheduled is False.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PodDetail {
    pub status: Option<String>,
    pub scheduling: Option<String>,
    /// `metadata.deletionTimestamp`: when the pod's grace period ends (the deletion request plus
    /// `deletionGracePeriodSeconds`); set once the pod is being deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion: Option<jiff::Timestamp>,
    /// `metadata.finalizers`, kept for a pod being deleted only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
}

/// One container's status, as far as the health rules need it.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct ContainerState {
    pub name: String,
    pub init: bool,
    pub ready: bool,
    pub restarts: i64,
    /// `state.waiting`: (reason, message).
    pub waiting: Option<(String, Option<String>)>,
    /// `lastState.terminated`: (reason, exit code).
    pub last_terminated: Option<(String, i64)>,
}

impl Pod {
    pub fn status_detail(&self) -> Option<&str> {
        self.detail.as_ref().and_then(|d| d.status.as_deref())
    }

    pub fn scheduling(&self) -> Option<&str> {
        self.detail.as_ref().and_then(|d| d.scheduling.as_deref())
    }

    /// When its grace period ends, for a pod being deleted.
    pub fn deletion(&self) -> Option<jiff::Timestamp> {
        self.detail.as_ref().and_then(|d| d.deletion)
    }

    /// The finalizers of a pod being deleted.
    pub fn finalizers(&self) -> &[String] {
        self.detail.as_ref().map(|d| d.finalizers.as_slice()).unwrap_or_default()
    }

    pub fn restarts(&self) -> i64 {
        self.restarts
    }

    pub fn crashlooping(&self) -> bool {
        self.containers.iter().any(|c| c.waiting.as_ref().is_some_and(|(r, _)| r == "CrashLoopBackOff"))
    }

    /// Containers waiting for something other than starting or a crash-loop back-off.
    pub fn blocked(&self) -> impl Iterator<Item = &ContainerState> {
        self.containers.iter().filter(|c| {
            c.waiting.as_ref().is_some_and(|(r, _)| {
                !matches!(r.as_str(), "ContainerCreating" | "PodInitializing" | "CrashLoopBackOff") && !r.is_empty()
            })
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawPod {
    #[serde(default)]
    metadata: PodMeta,
    spec: Option<Spec>,
    status: Option<Status>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct PodMeta {
    #[serde(flatten)]
    meta: Meta,
    labels: Option<Labels>,
    #[serde(deserialize_with = "nullable")]
    owner_references: Vec<OwnerReference>,
    deletion_timestamp: Option<String>,
    #[serde(deserialize_with = "nullable")]
    finalizers: Vec<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Labels {
    #[serde(rename = "pod-template-hash")]
    template_hash: Option<String>,
}

/// One of `metadata.ownerReferences` (pods, and Jobs owned by a CronJob).
#[derive(Default, Deserialize)]
#[serde(default)]
pub(super) struct OwnerReference {
    #[serde(deserialize_with = "nullable")]
    pub(super) kind: String,
    #[serde(deserialize_with = "nullable")]
    pub(super) name: String,
    #[serde(deserialize_with = "nullable")]
    pub(super) controller: bool,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Spec {
    #[serde(deserialize_with = "nullable")]
    volumes: Vec<Volume>,
    #[serde(deserialize_with = "nullable")]
    node_name: String,
    #[serde(deserialize_with = "nullable")]
    containers: Vec<ContainerSpec>,
    #[serde(deserialize_with = "nullable")]
    init_containers: Vec<ContainerSpec>,
    #[serde(deserialize_with = "nullable")]
    overhead: Quantities,
}

/// Of a container's spec, only its resources and whether it is a sidecar.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ContainerSpec {
    #[serde(deserialize_with = "nullable")]
    resources: ContainerResources,
    restart_policy: Option<String>,
}

impl ContainerSpec {
    fn demand(self) -> Demand {
        Demand { resources: self.resources, restart_always: self.restart_policy.as_deref() == Some("Always") }
    }
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Volume {
    persistent_volume_claim: Option<ClaimSource>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ClaimSource {
    #[serde(deserialize_with = "nullable")]
    claim_name: String,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Status {
    #[serde(deserialize_with = "nullable")]
    phase: String,
    reason: Option<String>,
    message: Option<String>,
    #[serde(deserialize_with = "nullable")]
    conditions: Vec<super::nodes::Condition>,
    #[serde(deserialize_with = "nullable")]
    init_container_statuses: Vec<RawContainerStatus>,
    #[serde(deserialize_with = "nullable")]
    container_statuses: Vec<RawContainerStatus>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RawContainerStatus {
    #[serde(deserialize_with = "nullable")]
    name: String,
    #[serde(deserialize_with = "nullable")]
    ready: bool,
    #[serde(deserialize_with = "nullable")]
    restart_count: i64,
    state: Option<RawState>,
    last_state: Option<RawState>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RawState {
    waiting: Option<Waiting>,
    terminated: Option<Terminated>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Waiting {
    #[serde(deserialize_with = "nullable")]
    reason: String,
    message: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Terminated {
    #[serde(deserialize_with = "nullable")]
    reason: String,
    #[serde(deserialize_with = "nullable")]
    exit_code: i64,
}

impl RawContainerStatus {
    fn compact(self, init: bool) -> ContainerState {
        let waiting = self.state.and_then(|s| s.waiting).map(|w| (w.reason, w.message.filter(|m| !m.is_empty())));
        let last_terminated = self.last_state.and_then(|s| s.terminated).map(|t| (t.reason, t.exit_code));
        ContainerState {
            name: self.name,
            init,
            ready: self.ready,
            restarts: self.restart_count,
            waiting,
            last_terminated,
        }
    }
}

/// The workload a pod belongs to: its controller, with a ReplicaSet traced to its Deployment by
/// removing `-<pod-template-hash>` from the ReplicaSet's name.
fn workload_of(meta: &PodMeta) -> String {
    let Some(owner) = meta.owner_references.iter().find(|o| o.controller) else {
        return String::new();
    };
    if owner.kind == "ReplicaSet" {
        let hash = meta.labels.as_ref().and_then(|l| l.template_hash.as_deref()).unwrap_or("");
        if !hash.is_empty()
            && let Some(deployment) = owner.name.strip_suffix(hash).and_then(|n| n.strip_suffix('-'))
        {
            return deployment.to_string();
        }
    }
    owner.name.clone()
}

impl From<RawPod> for Pod {
    fn from(raw: RawPod) -> Pod {
        let workload = workload_of(&raw.metadata);
        let status = raw.status.unwrap_or_default();
        let ready = status.conditions.iter().any(|c| c.kind == "Ready" && c.status == "True");
        let scheduling = status
            .conditions
            .iter()
            .find(|c| c.kind == "PodScheduled" && c.status == "False")
            .map(|c| c.message.clone().or_else(|| c.reason.clone()).unwrap_or_default());
        let status_detail = match (status.reason.filter(|r| !r.is_empty()), status.message.filter(|m| !m.is_empty())) {
            (Some(r), Some(m)) => Some(format!("{r}: {m}")),
            (Some(x), None) | (None, Some(x)) => Some(x),
            (None, None) => None,
        };
        let mut restarts = 0;
        let containers = status
            .init_container_statuses
            .into_iter()
            .map(|c| c.compact(true))
            .chain(status.container_statuses.into_iter().map(|c| c.compact(false)))
            .inspect(|c| restarts += c.restarts)
            .filter(|c| c.waiting.is_some() || !c.ready)
            .collect();
        let spec = raw.spec.unwrap_or_default();
        let claims = spec.volumes.into_iter().filter_map(|v| v.persistent_volume_claim).map(|c| c.claim_name).collect();
        let app: Vec<Demand> = spec.containers.into_iter().map(ContainerSpec::demand).collect();
        let init: Vec<Demand> = spec.init_containers.into_iter().map(ContainerSpec::demand).collect();
        let resources = pod_demand(&app, &init, &spec.overhead);
        let deletion = super::parse_time(raw.metadata.deletion_timestamp.as_deref());
        let finalizers = if deletion.is_some() { raw.metadata.finalizers } else { Vec::new() };
        Pod {
            namespace: raw.metadata.meta.namespace,
            name: raw.metadata.meta.name,
            workload,
            phase: Phase::from(status.phase.as_str()),
            ready,
            detail: (status_detail.is_some() || scheduling.is_some() || deletion.is_some())
                .then(|| Box::new(PodDetail { status: status_detail, scheduling, deletion, finalizers })),
            restarts,
            containers,
            claims,
            node: spec.node_name,
            resources,
        }
    }
}

impl super::FromApi for Pod {
    type Raw = RawPod;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(json: &str) -> Pod {
        crate::collect::from_api(json).unwrap()
    }

    #[test]
    fn workload_follows_the_controller() {
        let p = pod(r#"{"metadata":{"name":"api-7c9696d669-8tpp6","namespace":"shop",
            "labels":{"pod-template-hash":"7c9696d669"},
            "ownerReferences":[{"kind":"ReplicaSet","name":"api-7c9696d669","controller":true}]}}"#);
        assert_eq!(p.workload, "api");
        let p = pod(
            r#"{"metadata":{"name":"db-0","ownerReferences":[{"kind":"StatefulSet","name":"db","controller":true}]}}"#,
        );
        assert_eq!(p.workload, "db");
        let p = pod(
            r#"{"metadata":{"name":"x","ownerReferences":[{"kind":"ReplicaSet","name":"rs-plain","controller":true}]}}"#,
        );
        assert_eq!(p.workload, "rs-plain", "a ReplicaSet without the hash label keeps its name");
        let p = pod(r#"{"metadata":{"name":"x","ownerReferences":[{"kind":"Node","name":"n1","controller":false}]}}"#);
        assert_eq!(p.workload, "", "an owner that is not the controller does not count");
        let p = pod(r#"{"metadata":{"name":"bare","labels":null,"ownerReferences":null},"spec":null,"status":null}"#);
        assert_eq!((p.workload.as_str(), p.phase.as_str(), p.ready), ("", "", false));
        assert_eq!(std::mem::size_of::<Phase>(), 1);
    }

    #[test]
    fn containers_restarts_and_claims() {
        let p = pod(r#"{"metadata":{"name":"p","namespace":"n"},
            "spec":{"volumes":[{"name":"a","persistentVolumeClaim":{"claimName":"data"}},{"name":"b","emptyDir":{}}]},
            "status":{"phase":"Pending","conditions":[{"type":"Ready","status":"False"}],
              "initContainerStatuses":[{"name":"init","restartCount":2,"state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off"}},
                 "lastState":{"terminated":{"reason":"Error","exitCode":1}}}],
              "containerStatuses":[{"name":"app","restartCount":1,"state":{"waiting":{"reason":"PodInitializing"}}},
                                   {"name":"side","restartCount":0,"state":{"waiting":{"reason":"ImagePullBackOff","message":"Back-off pulling image"}}}]}}"#);
        assert_eq!(p.restarts(), 3);
        assert!(p.crashlooping());
        assert_eq!(p.claims, ["data"]);
        assert_eq!(p.blocked().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["side"]);
        assert_eq!(p.containers[0].last_terminated, Some(("Error".into(), 1)));
        assert!(p.containers[0].init);
    }

    #[test]
    fn what_a_pod_asks_of_its_node() {
        let p = pod(r#"{"metadata":{"name":"p","namespace":"n"},
            "spec":{"nodeName":"node-a","overhead":{"cpu":"10m","memory":"1Mi"},
              "initContainers":[{"name":"migrate","resources":{"requests":{"cpu":"1","memory":"64Mi"}}},
                                {"name":"proxy","restartPolicy":"Always","resources":{"requests":{"cpu":"50m","memory":"32Mi"},"limits":{"memory":"64Mi"}}}],
              "containers":[{"name":"app","resources":{"requests":{"cpu":"250m","memory":"256Mi"},"limits":{"cpu":"500m","memory":"512Mi"}}},
                            {"name":"plain"}]}}"#);
        assert_eq!(p.node, "node-a");
        // CPU: the migration (1 core, before the sidecar starts) beats app + sidecar (300m).
        assert_eq!(p.resources.cpu_requests, 1010);
        // Memory: app + sidecar (288Mi) beats the migration (64Mi).
        assert_eq!(p.resources.memory_requests, (288 + 1) * 1024 * 1024);
        assert_eq!(p.resources.cpu_limits, 510);
        assert_eq!(p.resources.memory_limits, (576 + 1) * 1024 * 1024);
    }
}
