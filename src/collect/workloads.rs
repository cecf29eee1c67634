//! Deployments, StatefulSets and DaemonSets: desired against ready and available replicas.

use serde::{Deserialize, Serialize};

use super::{Meta, nullable};

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

impl super::FromApi for Replicated {
    type Raw = Replicated;
}

impl super::FromApi for Daemon {
    type Raw = Daemon;
}

/// The compact record of a workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
    pub desired: i64,
    pub ready: i64,
    pub available: i64,
}

impl Workload {
    /// max(desired − available, 0).
    pub fn unavailable(&self) -> i64 {
        (self.desired - self.available).max(0)
    }
}

/// A Deployment or StatefulSet: `spec.replicas` (absent: 1), `status.readyReplicas`,
/// `status.availableReplicas` (absent: 0).
#[derive(Debug, Deserialize)]
pub struct Replicated {
    #[serde(default)]
    metadata: Meta,
    spec: Option<ReplicatedSpec>,
    status: Option<ReplicatedStatus>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ReplicatedSpec {
    replicas: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ReplicatedStatus {
    #[serde(deserialize_with = "nullable")]
    ready_replicas: i64,
    #[serde(deserialize_with = "nullable")]
    available_replicas: i64,
}

impl Replicated {
    pub fn into_workload(self, kind: WorkloadKind) -> Workload {
        let status = self.status.unwrap_or_default();
        Workload {
            kind,
            namespace: self.metadata.namespace,
            name: self.metadata.name,
            desired: self.spec.and_then(|s| s.replicas).unwrap_or(1),
            ready: status.ready_replicas,
            available: status.available_replicas,
        }
    }
}

/// A DaemonSet: `status.desiredNumberScheduled`, `numberReady`, `numberAvailable`.
#[derive(Debug, Deserialize)]
pub struct Daemon {
    #[serde(default)]
    metadata: Meta,
    status: Option<DaemonStatus>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct DaemonStatus {
    #[serde(deserialize_with = "nullable")]
    desired_number_scheduled: i64,
    #[serde(deserialize_with = "nullable")]
    number_ready: i64,
    #[serde(deserialize_with = "nullable")]
    number_available: i64,
}

impl Daemon {
    pub fn into_workload(self) -> Workload {
        let s = self.status.unwrap_or_default();
        Workload {
            kind: WorkloadKind::DaemonSet,
            namespace: self.metadata.namespace,
            name: self.metadata.name,
            desired: s.desired_number_scheduled,
            ready: s.number_ready,
            available: s.number_available,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
