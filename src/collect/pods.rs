//! Pods: phase, readiness, what each container waits for or last died of, the claims they use.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::quantity::{ContainerResources, Demand, Quantities, Resources, pod_demand};
use super::{Meta, nullable};

/// The compact record of a Pod.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pod {
    /// Its namespace, name and workload are shared, not copied, with its health
    /// ([`crate::health::PodHealth`]) while both are held: a watch's store and a cycle's health
    /// hold the same names once.
    pub namespace: Arc<str>,
    pub name: Arc<str>,
    /// The controller behind the pod (the Deployment for a ReplicaSet's pod); empty for a bare pod.
    pub workload: Arc<str>,
    /// What kind of controller that is.
    #[serde(default)]
    pub owner: Owner,
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
    /// `spec.nodeName`: where it is scheduled; empty while it is not. Shared by the pods on the
    /// same node in a watch's store ([`super::Words`]).
    pub node: Arc<str>,
    /// What it asks of its node, as the scheduler counts it.
    pub resources: Resources,
}

/// The kind of a pod's controller, in one byte: whether a workload rule speaks for its pods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Owner {
    /// A bare pod.
    #[default]
    None,
    /// A ReplicaSet traced to its Deployment.
    Deployment,
    StatefulSet,
    DaemonSet,
    Job,
    /// Another controller: a ReplicaSet of its own, a custom resource's operator.
    Other,
}

impl Owner {
    /// A workload rule (`KubernetesWorkloadReplicasMissing`) counts this pod's readiness, or
    /// the Job rules its end.
    pub fn judged_elsewhere(self) -> bool {
        matches!(self, Owner::Deployment | Owner::StatefulSet | Owner::DaemonSet | Owner::Job)
    }
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
    /// `state.terminated` when it exited with a failure (a failed Job's pod says why by it):
    /// (reason, exit code, message). Kept only for a code other than 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_with: Option<(String, i64, Option<String>)>,
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
    message: Option<String>,
}

impl RawContainerStatus {
    fn compact(self, init: bool) -> ContainerState {
        let (waiting, terminated) = self.state.map(|s| (s.waiting, s.terminated)).unwrap_or_default();
        let waiting = waiting.map(|w| (w.reason, w.message.filter(|m| !m.is_empty())));
        let failed_with = terminated
            .filter(|t| t.exit_code != 0)
            .map(|t| (t.reason, t.exit_code, t.message.filter(|m| !m.trim().is_empty())));
        let last_terminated = self.last_state.and_then(|s| s.terminated).map(|t| (t.reason, t.exit_code));
        ContainerState {
            name: self.name,
            init,
            ready: self.ready,
            restarts: self.restart_count,
            waiting,
            last_terminated,
            failed_with,
        }
    }
}

/// The workload a pod belongs to: its controller, with a ReplicaSet traced to its Deployment by
/// removing `-<pod-template-hash>` from the ReplicaSet's name.
fn workload_of(meta: &PodMeta) -> (String, Owner) {
    let Some(owner) = meta.owner_references.iter().find(|o| o.controller) else {
        return (String::new(), Owner::None);
    };
    let kind = match owner.kind.as_str() {
        "StatefulSet" => Owner::StatefulSet,
        "DaemonSet" => Owner::DaemonSet,
        "Job" => Owner::Job,
        _ => Owner::Other,
    };
    if owner.kind == "ReplicaSet" {
        let hash = meta.labels.as_ref().and_then(|l| l.template_hash.as_deref()).unwrap_or("");
        if !hash.is_empty()
            && let Some(deployment) = owner.name.strip_suffix(hash).and_then(|n| n.strip_suffix('-'))
        {
            return (deployment.to_string(), Owner::Deployment);
        }
    }
    (owner.name.clone(), kind)
}

impl From<RawPod> for Pod {
    fn from(raw: RawPod) -> Pod {
        let (workload, owner) = workload_of(&raw.metadata);
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
            namespace: raw.metadata.meta.namespace.into(),
            name: raw.metadata.meta.name.into(),
            workload: workload.into(),
            owner,
            phase: Phase::from(status.phase.as_str()),
            ready,
            detail: (status_detail.is_some() || scheduling.is_some() || deletion.is_some())
                .then(|| Box::new(PodDetail { status: status_detail, scheduling, deletion, finalizers })),
            restarts,
            containers,
            claims,
            node: spec.node_name.into(),
            resources,
        }
    }
}

impl super::FromApi for Pod {
    type Raw = RawPod;
    const PROTOBUF: Option<super::Decoder<Pod>> = Some(Pod::from_protobuf);
}

/// Cycles hold pods shared: a cycle taken from a watch's store points at the records the store
/// keeps rather than copying them, and the derivation tells an unchanged pod by its pointer.
impl From<RawPod> for Arc<Pod> {
    fn from(raw: RawPod) -> Arc<Pod> {
        Arc::new(Pod::from(raw))
    }
}

impl super::FromApi for Arc<Pod> {
    type Raw = RawPod;
    const PROTOBUF: Option<super::Decoder<Arc<Pod>>> = Some(Pod::shared_from_protobuf);

    /// A record just decoded (no other holder yet) takes its store's key's names, and the node
    /// and workload the store's other pods hold.
    fn share_names(&mut self, (namespace, name): &(Arc<str>, Arc<str>), words: &mut super::Words) {
        if let Some(p) = Arc::get_mut(self) {
            if p.namespace == *namespace {
                p.namespace = namespace.clone();
            }
            if p.name == *name {
                p.name = name.clone();
            }
            words.share(&mut p.node);
            words.share(&mut p.workload);
        }
    }
}

impl Pod {
    /// [`Pod::from_protobuf`], shared.
    fn shared_from_protobuf(message: &[u8]) -> Result<Arc<Pod>, super::Undecoded> {
        Pod::from_protobuf(message).map(Arc::new)
    }

    /// Decodes its protobuf message into the compact record.
    pub fn from_protobuf(message: &[u8]) -> Result<Pod, super::Undecoded> {
        use prost::Message;
        let pod = wire::Pod::decode(message).map_err(|e| super::Undecoded(format!("invalid protobuf Pod: {e}")))?;
        Ok(Pod::from(RawPod::from(pod)))
    }
}

/// A Pod in protobuf: the fields [`RawPod`] reads, with the field numbers of `k8s.io/api`'s
/// `core/v1/generated.proto`. Each becomes the raw form its JSON gives, so that one conversion
/// makes the record.
mod wire {
    use std::collections::HashMap;

    pub use crate::collect::nodes::wire::Condition;
    use crate::kube::proto::{ObjectMeta, Quantity};

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Pod {
        #[prost(message, optional, tag = "1")]
        pub metadata: Option<ObjectMeta>,
        #[prost(message, optional, tag = "2")]
        pub spec: Option<Spec>,
        #[prost(message, optional, tag = "3")]
        pub status: Option<Status>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Spec {
        #[prost(message, repeated, tag = "1")]
        pub volumes: Vec<Volume>,
        #[prost(message, repeated, tag = "2")]
        pub containers: Vec<Container>,
        #[prost(string, tag = "10")]
        pub node_name: String,
        #[prost(message, repeated, tag = "20")]
        pub init_containers: Vec<Container>,
        #[prost(map = "string, message", tag = "32")]
        pub overhead: HashMap<String, Quantity>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Volume {
        #[prost(message, optional, tag = "2")]
        pub volume_source: Option<VolumeSource>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct VolumeSource {
        #[prost(message, optional, tag = "10")]
        pub persistent_volume_claim: Option<ClaimSource>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ClaimSource {
        #[prost(string, tag = "1")]
        pub claim_name: String,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Container {
        #[prost(message, optional, tag = "8")]
        pub resources: Option<Resources>,
        #[prost(string, optional, tag = "24")]
        pub restart_policy: Option<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Resources {
        #[prost(map = "string, message", tag = "1")]
        pub limits: HashMap<String, Quantity>,
        #[prost(map = "string, message", tag = "2")]
        pub requests: HashMap<String, Quantity>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Status {
        #[prost(string, tag = "1")]
        pub phase: String,
        #[prost(message, repeated, tag = "2")]
        pub conditions: Vec<Condition>,
        #[prost(string, tag = "3")]
        pub message: String,
        #[prost(string, tag = "4")]
        pub reason: String,
        #[prost(message, repeated, tag = "8")]
        pub container_statuses: Vec<ContainerStatus>,
        #[prost(message, repeated, tag = "10")]
        pub init_container_statuses: Vec<ContainerStatus>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ContainerStatus {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub state: Option<ContainerState>,
        #[prost(message, optional, tag = "3")]
        pub last_state: Option<ContainerState>,
        #[prost(bool, tag = "4")]
        pub ready: bool,
        #[prost(int32, tag = "5")]
        pub restart_count: i32,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ContainerState {
        #[prost(message, optional, tag = "1")]
        pub waiting: Option<Waiting>,
        #[prost(message, optional, tag = "3")]
        pub terminated: Option<Terminated>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Waiting {
        #[prost(string, tag = "1")]
        pub reason: String,
        #[prost(string, tag = "2")]
        pub message: String,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Terminated {
        #[prost(int32, tag = "1")]
        pub exit_code: i32,
        #[prost(string, tag = "3")]
        pub reason: String,
        #[prost(string, tag = "4")]
        pub message: String,
    }
}

impl From<wire::Pod> for RawPod {
    fn from(p: wire::Pod) -> RawPod {
        use crate::kube::proto::text;
        let m = p.metadata.unwrap_or_default();
        let template_hash = m.labels.get("pod-template-hash").cloned();
        let metadata = PodMeta {
            meta: Meta {
                name: m.name,
                namespace: m.namespace,
                creation_timestamp: m.creation_timestamp.and_then(|t| t.to_rfc3339()),
            },
            labels: Some(Labels { template_hash }),
            owner_references: m
                .owner_references
                .into_iter()
                .map(|o| OwnerReference { kind: o.kind, name: o.name, controller: o.controller.unwrap_or(false) })
                .collect(),
            deletion_timestamp: m.deletion_timestamp.and_then(|t| t.to_rfc3339()),
            finalizers: m.finalizers,
        };
        let container = |c: wire::Container| {
            let r = c.resources.unwrap_or_default();
            ContainerSpec {
                resources: ContainerResources::new(
                    Quantities::from_protobuf(r.requests),
                    Quantities::from_protobuf(r.limits),
                ),
                restart_policy: c.restart_policy.and_then(text),
            }
        };
        let spec = p.spec.map(|s| Spec {
            volumes: s
                .volumes
                .into_iter()
                .map(|v| Volume {
                    persistent_volume_claim: v
                        .volume_source
                        .and_then(|s| s.persistent_volume_claim)
                        .map(|c| ClaimSource { claim_name: c.claim_name }),
                })
                .collect(),
            node_name: s.node_name,
            containers: s.containers.into_iter().map(container).collect(),
            init_containers: s.init_containers.into_iter().map(container).collect(),
            overhead: Quantities::from_protobuf(s.overhead),
        });
        let state = |s: wire::ContainerState| RawState {
            waiting: s.waiting.map(|w| Waiting { reason: w.reason, message: text(w.message) }),
            terminated: s.terminated.map(|t| Terminated {
                reason: t.reason,
                exit_code: i64::from(t.exit_code),
                message: text(t.message),
            }),
        };
        let container_status = |c: wire::ContainerStatus| RawContainerStatus {
            name: c.name,
            ready: c.ready,
            restart_count: i64::from(c.restart_count),
            state: c.state.map(state),
            last_state: c.last_state.map(state),
        };
        let status = p.status.map(|s| Status {
            phase: s.phase,
            reason: text(s.reason),
            message: text(s.message),
            conditions: s.conditions.into_iter().map(super::nodes::Condition::from).collect(),
            init_container_statuses: s.init_container_statuses.into_iter().map(container_status).collect(),
            container_statuses: s.container_statuses.into_iter().map(container_status).collect(),
        });
        RawPod { metadata, spec, status }
    }
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
        assert_eq!(&*p.workload, "api");
        let p = pod(
            r#"{"metadata":{"name":"db-0","ownerReferences":[{"kind":"StatefulSet","name":"db","controller":true}]}}"#,
        );
        assert_eq!(&*p.workload, "db");
        let p = pod(
            r#"{"metadata":{"name":"x","ownerReferences":[{"kind":"ReplicaSet","name":"rs-plain","controller":true}]}}"#,
        );
        assert_eq!(&*p.workload, "rs-plain", "a ReplicaSet without the hash label keeps its name");
        let p = pod(r#"{"metadata":{"name":"x","ownerReferences":[{"kind":"Node","name":"n1","controller":false}]}}"#);
        assert_eq!(&*p.workload, "", "an owner that is not the controller does not count");
        let p = pod(r#"{"metadata":{"name":"bare","labels":null,"ownerReferences":null},"spec":null,"status":null}"#);
        assert_eq!((&*p.workload, p.phase.as_str(), p.ready), ("", "", false));
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
    fn a_pod_in_protobuf_is_the_same_record_as_in_json() {
        use crate::kube::proto::{ObjectMeta, OwnerReference, Quantity, Time};
        use prost::Message;
        let json = r#"{"metadata":{"name":"api-7c9696d669-8tpp6","namespace":"shop",
            "labels":{"pod-template-hash":"7c9696d669"},"deletionTimestamp":"2026-12-01T06:35:00Z",
            "finalizers":["example.com/hold"],
            "ownerReferences":[{"kind":"ReplicaSet","name":"api-7c9696d669","controller":true}]},
          "spec":{"nodeName":"node-a","volumes":[{"name":"d","persistentVolumeClaim":{"claimName":"data"}},{"name":"e","emptyDir":{}}],
            "initContainers":[{"name":"proxy","restartPolicy":"Always","resources":{"requests":{"cpu":"50m","memory":"32Mi"}}}],
            "containers":[{"name":"app","resources":{"requests":{"cpu":"250m","memory":"256Mi"},"limits":{"memory":"512Mi"}}}]},
          "status":{"phase":"Pending","reason":"Evicted","conditions":[{"type":"Ready","status":"False"},
              {"type":"PodScheduled","status":"False","reason":"Unschedulable"}],
            "containerStatuses":[{"name":"app","ready":false,"restartCount":4,
              "state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 40s"}},
              "lastState":{"terminated":{"reason":"Error","exitCode":137}}}]}}"#;
        let q = |s: &str| Quantity { string: s.into() };
        let map = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), q(v))).collect();
        let empty = String::new;
        let message = wire::Pod {
            metadata: Some(ObjectMeta {
                name: "api-7c9696d669-8tpp6".into(),
                namespace: "shop".into(),
                labels: [("pod-template-hash".to_string(), "7c9696d669".to_string())].into(),
                deletion_timestamp: Some(Time { seconds: 1_796_106_900, nanos: 0 }),
                finalizers: vec!["example.com/hold".into()],
                owner_references: vec![OwnerReference {
                    kind: "ReplicaSet".into(),
                    name: "api-7c9696d669".into(),
                    controller: Some(true),
                }],
                ..Default::default()
            }),
            spec: Some(wire::Spec {
                node_name: "node-a".into(),
                volumes: vec![
                    wire::Volume {
                        volume_source: Some(wire::VolumeSource {
                            persistent_volume_claim: Some(wire::ClaimSource { claim_name: "data".into() }),
                        }),
                    },
                    wire::Volume { volume_source: Some(wire::VolumeSource { persistent_volume_claim: None }) },
                ],
                init_containers: vec![wire::Container {
                    resources: Some(wire::Resources {
                        requests: map(&[("cpu", "50m"), ("memory", "32Mi")]),
                        limits: map(&[]),
                    }),
                    restart_policy: Some("Always".into()),
                }],
                containers: vec![wire::Container {
                    resources: Some(wire::Resources {
                        requests: map(&[("cpu", "250m"), ("memory", "256Mi")]),
                        limits: map(&[("memory", "512Mi")]),
                    }),
                    restart_policy: None,
                }],
                overhead: map(&[]),
            }),
            status: Some(wire::Status {
                phase: "Pending".into(),
                reason: "Evicted".into(),
                message: empty(),
                conditions: vec![
                    wire::Condition { kind: "Ready".into(), status: "False".into(), reason: empty(), message: empty() },
                    // Protobuf writes the empty message that JSON leaves out: the reason is said.
                    wire::Condition {
                        kind: "PodScheduled".into(),
                        status: "False".into(),
                        reason: "Unschedulable".into(),
                        message: empty(),
                    },
                ],
                container_statuses: vec![wire::ContainerStatus {
                    name: "app".into(),
                    ready: false,
                    restart_count: 4,
                    state: Some(wire::ContainerState {
                        waiting: Some(wire::Waiting {
                            reason: "CrashLoopBackOff".into(),
                            message: "back-off 40s".into(),
                        }),
                        terminated: None,
                    }),
                    last_state: Some(wire::ContainerState {
                        waiting: None,
                        terminated: Some(wire::Terminated {
                            exit_code: 137,
                            reason: "Error".into(),
                            message: String::new(),
                        }),
                    }),
                }],
                init_container_statuses: vec![],
            }),
        };
        let from_protobuf = Pod::from_protobuf(&message.encode_to_vec()).unwrap();
        let from_json = pod(json);
        assert_eq!(from_protobuf, from_json);
        assert_eq!(&*from_json.workload, "api");
        assert_eq!(from_json.scheduling(), Some("Unschedulable"));
        assert_eq!(from_json.finalizers(), ["example.com/hold"]);
        assert_eq!(from_json.resources.cpu_requests, 300);
        assert!(Pod::from_protobuf(b"\x0a\xff").is_err());
    }

    #[test]
    fn what_a_pod_asks_of_its_node() {
        let p = pod(r#"{"metadata":{"name":"p","namespace":"n"},
            "spec":{"nodeName":"node-a","overhead":{"cpu":"10m","memory":"1Mi"},
              "initContainers":[{"name":"migrate","resources":{"requests":{"cpu":"1","memory":"64Mi"}}},
                                {"name":"proxy","restartPolicy":"Always","resources":{"requests":{"cpu":"50m","memory":"32Mi"},"limits":{"memory":"64Mi"}}}],
              "containers":[{"name":"app","resources":{"requests":{"cpu":"250m","memory":"256Mi"},"limits":{"cpu":"500m","memory":"512Mi"}}},
                            {"name":"plain"}]}}"#);
        assert_eq!(&*p.node, "node-a");
        // CPU: the migration (1 core, before the sidecar starts) beats app + sidecar (300m).
        assert_eq!(p.resources.cpu_requests, 1010);
        // Memory: app + sidecar (288Mi) beats the migration (64Mi).
        assert_eq!(p.resources.memory_requests, (288 + 1) * 1024 * 1024);
        assert_eq!(p.resources.cpu_limits, 510);
        assert_eq!(p.resources.memory_limits, (576 + 1) * 1024 * 1024);
    }
}
