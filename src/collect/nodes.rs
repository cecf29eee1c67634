//! Nodes: readiness, pressure, cordon, kubelet version.

use serde::{Deserialize, Serialize};

use super::{Meta, nullable};

/// The compact record of a Node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub name: String,
    /// The Ready condition's status (`True`, `False`, `Unknown`), `None` when the node lists none.
    pub ready: Option<String>,
    /// The Ready condition's reason and message, when it is not True.
    pub ready_detail: Option<String>,
    /// The pressure-like conditions the node lists: (type, status).
    pub conditions: Vec<(String, String)>,
    pub unschedulable: bool,
    pub kubelet_version: String,
    /// `status.allocatable`: CPU in millicores, memory in bytes (None when not reported).
    pub allocatable_cpu: Option<i64>,
    pub allocatable_memory: Option<i64>,
}

/// The conditions that become `node_pressure`, with their `condition` label.
pub const PRESSURE_CONDITIONS: [(&str, &str); 4] =
    [("MemoryPressure", "memory"), ("DiskPressure", "disk"), ("PIDPressure", "pid"), ("NetworkUnavailable", "network")];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawNode {
    #[serde(default)]
    metadata: Meta,
    spec: Option<Spec>,
    status: Option<Status>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Spec {
    #[serde(deserialize_with = "nullable")]
    unschedulable: bool,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Status {
    #[serde(deserialize_with = "nullable")]
    conditions: Vec<Condition>,
    node_info: Option<NodeInfo>,
    #[serde(deserialize_with = "nullable")]
    allocatable: super::quantity::Quantities,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Condition {
    #[serde(rename = "type", deserialize_with = "nullable")]
    pub kind: String,
    #[serde(deserialize_with = "nullable")]
    pub status: String,
    pub reason: Option<String>,
    pub message: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct NodeInfo {
    #[serde(deserialize_with = "nullable")]
    kubelet_version: String,
}

impl From<RawNode> for Node {
    fn from(raw: RawNode) -> Node {
        let status = raw.status.unwrap_or_default();
        let ready = status.conditions.iter().find(|c| c.kind == "Ready");
        let ready_detail = ready.filter(|c| c.status != "True").and_then(|c| {
            match (c.reason.as_deref().filter(|r| !r.is_empty()), c.message.as_deref().filter(|m| !m.is_empty())) {
                (Some(r), Some(m)) => Some(format!("{r}: {m}")),
                (Some(x), None) | (None, Some(x)) => Some(x.to_string()),
                (None, None) => None,
            }
        });
        Node {
            name: raw.metadata.name,
            ready: ready.map(|c| c.status.clone()),
            ready_detail,
            conditions: status
                .conditions
                .iter()
                .filter(|c| PRESSURE_CONDITIONS.iter().any(|(t, _)| *t == c.kind))
                .map(|c| (c.kind.clone(), c.status.clone()))
                .collect(),
            unschedulable: raw.spec.is_some_and(|s| s.unschedulable),
            kubelet_version: status.node_info.map(|i| i.kubelet_version).unwrap_or_default(),
            allocatable_cpu: status.allocatable.cpu_millicores(),
            allocatable_memory: status.allocatable.memory_bytes(),
        }
    }
}

impl super::FromApi for Node {
    type Raw = RawNode;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_a_sparse_node() {
        let n: Node = crate::collect::from_api(r#"{"metadata":{"name":"n1"},"status":null}"#).unwrap();
        assert_eq!(n.name, "n1");
        assert_eq!(n.ready, None);
        assert!(!n.unschedulable);
        let n: Node = crate::collect::from_api(
            r#"{"metadata":{"name":"n2"},"spec":{"unschedulable":true},"status":{"conditions":[
                {"type":"Ready","status":"Unknown","reason":"NodeStatusUnknown","message":"Kubelet stopped posting node status."},
                {"type":"DiskPressure","status":"True"},{"type":"FrequentKubeletRestart","status":"False"}],
                "nodeInfo":{"kubeletVersion":"v1.33.4"}}}"#,
        )
        .unwrap();
        assert_eq!(n.ready.as_deref(), Some("Unknown"));
        assert_eq!(n.ready_detail.as_deref(), Some("NodeStatusUnknown: Kubelet stopped posting node status."));
        assert_eq!(n.conditions, vec![("DiskPressure".to_string(), "True".to_string())]);
        assert!(n.unschedulable);
        assert_eq!(n.kubelet_version, "v1.33.4");
    }
}
