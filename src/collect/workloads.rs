//! Deployments, StatefulSets and DaemonSets: desired against ready and available replicas.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{GenerationMeta, nullable};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WorkloadKind {
    Deployment,
    StatefulSet,
    DaemonSet,
}

impl WorkloadKind {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::StatefulSet => "StatefulSet",
            WorkloadKind::DaemonSet => "DaemonSet",
        }
    }
}

impl Serialize for WorkloadKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for WorkloadKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<WorkloadKind, D::Error> {
        match String::deserialize(d)?.as_str() {
            "Deployment" => Ok(WorkloadKind::Deployment),
            "StatefulSet" => Ok(WorkloadKind::StatefulSet),
            "DaemonSet" => Ok(WorkloadKind::DaemonSet),
            other => Err(serde::de::Error::custom(format!("not a workload kind: {other}"))),
        }
    }
}

/// A Deployment, a StatefulSet or a DaemonSet as a cycle takes it: its workload, made once
/// when the object is read, and shared (a watch's store hands it to each cycle without a copy,
/// and a cycle on a change tells an unchanged one by its address). The object's other fields
/// (its conditions but a stalled rollout's, its revisions) are not kept: an event that changes
/// only those changes nothing a cycle derives.
macro_rules! record {
    ($(#[$m:meta])* $record:ident, $raw:ty, $make:expr) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $record(pub Arc<Workload>);

        impl super::FromApi for $record {
            type Raw = $raw;
        }

        impl From<$raw> for $record {
            fn from(raw: $raw) -> $record {
                let make: fn($raw) -> Workload = $make;
                $record(Arc::new(make(raw)))
            }
        }
    };
}

record!(
    /// A Deployment's workload.
    DeploymentRecord,
    Replicated,
    |d| d.into_workload(WorkloadKind::Deployment)
);
record!(
    /// A StatefulSet's workload.
    StatefulSetRecord,
    Replicated,
    |s| s.into_workload(WorkloadKind::StatefulSet)
);
record!(
    /// A DaemonSet's workload.
    DaemonSetRecord,
    Daemon,
    Daemon::into_workload
);

/// The compact record of a workload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workload {
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
    pub desired: i64,
    pub ready: i64,
    pub available: i64,
    /// Replicas (a DaemonSet's scheduled pods) already at the current template:
    /// `status.updatedReplicas`, `status.updatedNumberScheduled`.
    #[serde(default)]
    pub updated: i64,
    /// An update is under way: fewer replicas updated than the update aims at (for a StatefulSet,
    /// while `updateRevision` differs from `currentRevision`, above its partition). Never for the
    /// `OnDelete` strategy, whose updates wait for someone to delete pods.
    #[serde(default)]
    pub updating: bool,
    /// A Deployment whose `Progressing` condition is False with reason `ProgressDeadlineExceeded`:
    /// that condition's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_exceeded: Option<String>,
    /// `metadata.generation` − `status.observedGeneration` (0 when the controller has seen the
    /// spec's last change, never below): changes its controller has not acted on.
    #[serde(default)]
    pub generation_lag: i64,
    /// A DaemonSet's `status.numberMisscheduled`: its pods on nodes it should not run on.
    #[serde(default)]
    pub misscheduled: i64,
}

impl Workload {
    /// max(desired − available, 0).
    pub fn unavailable(&self) -> i64 {
        (self.desired - self.available).max(0)
    }
}

/// A Deployment or StatefulSet: `spec.replicas` (absent: 1), `status.readyReplicas`,
/// `status.availableReplicas` (absent: 0).
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Replicated {
    #[serde(default)]
    metadata: GenerationMeta,
    spec: Option<ReplicatedSpec>,
    status: Option<ReplicatedStatus>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
struct ReplicatedSpec {
    replicas: Option<i64>,
    update_strategy: Option<UpdateStrategy>,
}

/// A StatefulSet's or DaemonSet's `spec.updateStrategy`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
struct UpdateStrategy {
    #[serde(rename = "type", deserialize_with = "nullable")]
    kind: String,
    rolling_update: Option<RollingUpdate>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
struct RollingUpdate {
    partition: Option<i64>,
}

impl UpdateStrategy {
    fn on_delete(s: Option<&UpdateStrategy>) -> bool {
        s.is_some_and(|s| s.kind == "OnDelete")
    }
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
struct ReplicatedStatus {
    #[serde(deserialize_with = "nullable")]
    observed_generation: i64,
    #[serde(deserialize_with = "nullable")]
    ready_replicas: i64,
    #[serde(deserialize_with = "nullable")]
    available_replicas: i64,
    #[serde(deserialize_with = "nullable")]
    updated_replicas: i64,
    #[serde(deserialize_with = "nullable")]
    current_revision: String,
    #[serde(deserialize_with = "nullable")]
    update_revision: String,
    #[serde(deserialize_with = "nullable")]
    conditions: Vec<super::nodes::Condition>,
}

impl Replicated {
    pub fn into_workload(self, kind: WorkloadKind) -> Workload {
        let status = self.status.unwrap_or_default();
        let spec = self.spec.unwrap_or_default();
        let desired = spec.replicas.unwrap_or(1);
        let updated = status.updated_replicas;
        let updating = match kind {
            WorkloadKind::StatefulSet => {
                let strategy = spec.update_strategy.as_ref();
                let partition = strategy.and_then(|s| s.rolling_update.as_ref()).and_then(|r| r.partition).unwrap_or(0);
                !UpdateStrategy::on_delete(strategy)
                    && !status.update_revision.is_empty()
                    && status.update_revision != status.current_revision
                    && updated < (desired - partition).max(0)
            }
            _ => updated < desired,
        };
        let deadline_exceeded = status
            .conditions
            .iter()
            .find(|c| {
                c.kind == "Progressing"
                    && c.status == "False"
                    && c.reason.as_deref() == Some("ProgressDeadlineExceeded")
            })
            .map(|c| c.message.clone().unwrap_or_default());
        Workload {
            kind,
            generation_lag: (self.metadata.generation - status.observed_generation).max(0),
            misscheduled: 0,
            namespace: self.metadata.meta.namespace,
            name: self.metadata.meta.name,
            desired,
            ready: status.ready_replicas,
            available: status.available_replicas,
            updated,
            updating,
            deadline_exceeded: deadline_exceeded.filter(|_| kind == WorkloadKind::Deployment),
        }
    }
}

/// A DaemonSet: `status.desiredNumberScheduled`, `numberReady`, `numberAvailable`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Daemon {
    #[serde(default)]
    metadata: GenerationMeta,
    spec: Option<DaemonSpec>,
    status: Option<DaemonStatus>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
struct DaemonSpec {
    update_strategy: Option<UpdateStrategy>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
struct DaemonStatus {
    #[serde(deserialize_with = "nullable")]
    observed_generation: i64,
    #[serde(deserialize_with = "nullable")]
    number_misscheduled: i64,
    #[serde(deserialize_with = "nullable")]
    desired_number_scheduled: i64,
    #[serde(deserialize_with = "nullable")]
    number_ready: i64,
    #[serde(deserialize_with = "nullable")]
    number_available: i64,
    #[serde(deserialize_with = "nullable")]
    updated_number_scheduled: i64,
}

impl Daemon {
    pub fn into_workload(self) -> Workload {
        let s = self.status.unwrap_or_default();
        let on_delete = UpdateStrategy::on_delete(self.spec.as_ref().and_then(|s| s.update_strategy.as_ref()));
        Workload {
            kind: WorkloadKind::DaemonSet,
            generation_lag: (self.metadata.generation - s.observed_generation).max(0),
            misscheduled: s.number_misscheduled,
            namespace: self.metadata.meta.namespace,
            name: self.metadata.meta.name,
            desired: s.desired_number_scheduled,
            ready: s.number_ready,
            available: s.number_available,
            updated: s.updated_number_scheduled,
            updating: !on_delete && s.updated_number_scheduled < s.desired_number_scheduled,
            deadline_exceeded: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store keeps a workload as a cycle derives it: an event that changes only what the
    /// derivation does not read (a Deployment's revisions, an Available condition's message)
    /// leaves the record as it was, so it takes no cycle; one that changes a replica count does.
    #[test]
    fn a_workloads_record_is_what_a_cycle_derives_of_it() {
        let deployment = |ready: i64, revision: &str, message: &str| {
            let json = serde_json::json!({
                "metadata": {"namespace": "shop", "name": "api", "generation": 2},
                "spec": {"replicas": 3},
                "status": {
                    "observedGeneration": 2, "readyReplicas": ready, "availableReplicas": ready,
                    "updatedReplicas": 3, "currentRevision": revision, "updateRevision": revision,
                    "conditions": [{"type": "Available", "status": "True", "message": message}],
                },
            });
            super::super::from_api::<DeploymentRecord>(&json.to_string()).unwrap()
        };
        let first = deployment(3, "api-7c9696d669", "Deployment has minimum availability.");
        assert_eq!((first.0.kind, first.0.ready, first.0.unavailable()), (WorkloadKind::Deployment, 3, 0));
        assert_eq!(first, deployment(3, "api-5d8f7b9c4", "has minimum availability"), "nothing it derives changed");
        assert_ne!(first, deployment(2, "api-7c9696d669", "Deployment has minimum availability."));
        let statefulset = super::super::from_api::<StatefulSetRecord>(r#"{"metadata":{"name":"db"}}"#).unwrap();
        assert_eq!(statefulset.0.kind, WorkloadKind::StatefulSet);
        let daemonset = super::super::from_api::<DaemonSetRecord>(r#"{"metadata":{"name":"agent"}}"#).unwrap();
        assert_eq!(daemonset.0.kind, WorkloadKind::DaemonSet);
    }

    #[test]
    fn absent_replicas_default_like_the_api() {
        let d: Replicated =
            serde_json::from_str(r#"{"metadata":{"name":"a","namespace":"n"},"spec":{},"status":{}}"#).unwrap();
        let w = d.into_workload(WorkloadKind::Deployment);
        assert_eq!((w.desired, w.ready, w.available, w.unavailable()), (1, 0, 0, 1));
        let d: Replicated = serde_json::from_str(
            r#"{"metadata":{"name":"a"},"spec":{"replicas":0},"status":{"readyReplicas":1,"availableReplicas":1}}"#,
        )
        .unwrap();
        assert_eq!(d.into_workload(WorkloadKind::StatefulSet).unavailable(), 0, "never negative");
        let ds: Daemon = serde_json::from_str(
            r#"{"metadata":{"name":"d"},"status":{"desiredNumberScheduled":3,"numberReady":2,"numberAvailable":1}}"#,
        )
        .unwrap();
        let w = ds.into_workload();
        assert_eq!((w.desired, w.ready, w.unavailable()), (3, 2, 2));
    }

    #[test]
    fn a_change_its_controller_has_not_seen_and_pods_where_they_should_not_be() {
        let d: Replicated = serde_json::from_str(
            r#"{"metadata":{"name":"a","generation":5},"spec":{},"status":{"observedGeneration":3}}"#,
        )
        .unwrap();
        assert_eq!(d.into_workload(WorkloadKind::Deployment).generation_lag, 2);
        let seen: Replicated =
            serde_json::from_str(r#"{"metadata":{"name":"a","generation":1},"status":{"observedGeneration":4}}"#)
                .unwrap();
        assert_eq!(seen.into_workload(WorkloadKind::StatefulSet).generation_lag, 0, "never below 0");
        let ds: Daemon = serde_json::from_str(
            r#"{"metadata":{"name":"d","generation":2},"status":{"observedGeneration":2,"numberMisscheduled":1}}"#,
        )
        .unwrap();
        let w = ds.into_workload();
        assert_eq!((w.generation_lag, w.misscheduled), (0, 1));
    }
}
