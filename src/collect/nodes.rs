//! Nodes: readiness, pressure, cordon, kubelet version.

use serde::{Deserialize, Serialize};

use super::{Meta, nullable};

/// The compact record of a Node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// `status.allocatable.pods`: how many pods it may run.
    #[serde(default)]
    pub allocatable_pods: Option<i64>,
    /// Its taints that keep pods off (`NoSchedule`) or evict them (`NoExecute`): (key, effect).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<(String, String)>,
}

/// The taint effects shown: those that keep pods off a node or evict them.
pub const SHOWN_TAINT_EFFECTS: [&str; 2] = ["NoSchedule", "NoExecute"];

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
    #[serde(deserialize_with = "nullable")]
    taints: Vec<Taint>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Taint {
    #[serde(deserialize_with = "nullable")]
    key: String,
    #[serde(deserialize_with = "nullable")]
    effect: String,
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

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
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
            unschedulable: raw.spec.as_ref().is_some_and(|s| s.unschedulable),
            kubelet_version: status.node_info.map(|i| i.kubelet_version).unwrap_or_default(),
            allocatable_cpu: status.allocatable.cpu_millicores(),
            allocatable_memory: status.allocatable.memory_bytes(),
            allocatable_pods: status.allocatable.pods(),
            taints: raw
                .spec
                .into_iter()
                .flat_map(|s| s.taints)
                .filter(|t| SHOWN_TAINT_EFFECTS.contains(&t.effect.as_str()))
                .map(|t| (t.key, t.effect))
                .collect(),
        }
    }
}

impl super::FromApi for Node {
    type Raw = RawNode;
    const PROTOBUF: Option<super::Decoder<Node>> = Some(Node::from_protobuf);
}

/// Cycles hold nodes shared, as they do pods: a cycle taken from a watch's store points at the
/// records the store keeps rather than copying them, and a node whose record is the very one of
/// the last cycle is unchanged.
impl From<RawNode> for std::sync::Arc<Node> {
    fn from(raw: RawNode) -> std::sync::Arc<Node> {
        std::sync::Arc::new(Node::from(raw))
    }
}

impl super::FromApi for std::sync::Arc<Node> {
    type Raw = RawNode;
    const PROTOBUF: Option<super::Decoder<std::sync::Arc<Node>>> = Some(Node::shared_from_protobuf);
}

impl Node {
    /// [`Node::from_protobuf`], shared.
    fn shared_from_protobuf(message: &[u8]) -> Result<std::sync::Arc<Node>, super::Undecoded> {
        Node::from_protobuf(message).map(std::sync::Arc::new)
    }

    /// Decodes its protobuf message into the compact record.
    pub fn from_protobuf(message: &[u8]) -> Result<Node, super::Undecoded> {
        use prost::Message;
        let node = wire::Node::decode(message).map_err(|e| super::Undecoded(format!("invalid protobuf Node: {e}")))?;
        Ok(Node::from(RawNode::from(node)))
    }
}

/// A Node in protobuf: the fields [`RawNode`] reads, with the field numbers of `k8s.io/api`'s
/// `core/v1/generated.proto` (a node's status, its images above all, is the largest object a
/// kubelet keeps writing).
pub(super) mod wire {
    use std::collections::HashMap;

    use crate::kube::proto::{ObjectMeta, Quantity};

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Node {
        #[prost(message, optional, tag = "1")]
        pub metadata: Option<ObjectMeta>,
        #[prost(message, optional, tag = "2")]
        pub spec: Option<Spec>,
        #[prost(message, optional, tag = "3")]
        pub status: Option<Status>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Spec {
        #[prost(bool, tag = "4")]
        pub unschedulable: bool,
        #[prost(message, repeated, tag = "5")]
        pub taints: Vec<Taint>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Taint {
        #[prost(string, tag = "1")]
        pub key: String,
        #[prost(string, tag = "3")]
        pub effect: String,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Status {
        #[prost(map = "string, message", tag = "2")]
        pub allocatable: HashMap<String, Quantity>,
        #[prost(message, repeated, tag = "4")]
        pub conditions: Vec<Condition>,
        #[prost(message, optional, tag = "7")]
        pub node_info: Option<NodeInfo>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NodeInfo {
        #[prost(string, tag = "7")]
        pub kubelet_version: String,
    }

    /// A NodeCondition, or a PodCondition: the fields read have the same numbers in both.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Condition {
        #[prost(string, tag = "1")]
        pub kind: String,
        #[prost(string, tag = "2")]
        pub status: String,
        #[prost(string, tag = "5")]
        pub reason: String,
        #[prost(string, tag = "6")]
        pub message: String,
    }
}

impl From<wire::Condition> for Condition {
    fn from(c: wire::Condition) -> Condition {
        use crate::kube::proto::text;
        Condition { kind: c.kind, status: c.status, reason: text(c.reason), message: text(c.message) }
    }
}

impl From<wire::Node> for RawNode {
    fn from(n: wire::Node) -> RawNode {
        let m = n.metadata.unwrap_or_default();
        RawNode {
            metadata: Meta {
                name: m.name,
                namespace: m.namespace,
                creation_timestamp: m.creation_timestamp.and_then(|t| t.to_rfc3339()),
            },
            spec: n.spec.map(|s| Spec {
                unschedulable: s.unschedulable,
                taints: s.taints.into_iter().map(|t| Taint { key: t.key, effect: t.effect }).collect(),
            }),
            status: n.status.map(|s| Status {
                conditions: s.conditions.into_iter().map(Condition::from).collect(),
                node_info: s.node_info.map(|i| NodeInfo { kubelet_version: i.kubelet_version }),
                allocatable: super::quantity::Quantities::from_protobuf(s.allocatable),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_in_protobuf_is_the_same_record_as_in_json() {
        use crate::kube::proto::{ObjectMeta, Quantity};
        use prost::Message;
        let json = r#"{"metadata":{"name":"n2"},"spec":{"unschedulable":true},"status":{
            "allocatable":{"cpu":"7910m","memory":"31611904Ki","pods":"110"},
            "conditions":[{"type":"Ready","status":"False","reason":"KubeletNotReady","message":"PLEG is not healthy"},
              {"type":"DiskPressure","status":"True"},{"type":"MemoryPressure","status":"False","reason":"KubeletHasSufficientMemory"}],
            "nodeInfo":{"kubeletVersion":"v1.33.4"}}}"#;
        let condition = |kind: &str, status: &str, reason: &str, message: &str| wire::Condition {
            kind: kind.into(),
            status: status.into(),
            reason: reason.into(),
            message: message.into(),
        };
        let q = |s: &str| Quantity { string: s.into() };
        let message = wire::Node {
            metadata: Some(ObjectMeta { name: "n2".into(), ..Default::default() }),
            spec: Some(wire::Spec { taints: vec![], unschedulable: true }),
            status: Some(wire::Status {
                allocatable: [("cpu", q("7910m")), ("memory", q("31611904Ki")), ("pods", q("110"))]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
                conditions: vec![
                    condition("Ready", "False", "KubeletNotReady", "PLEG is not healthy"),
                    condition("DiskPressure", "True", "", ""),
                    condition("MemoryPressure", "False", "KubeletHasSufficientMemory", ""),
                ],
                node_info: Some(wire::NodeInfo { kubelet_version: "v1.33.4".into() }),
            }),
        };
        let from_protobuf = Node::from_protobuf(&message.encode_to_vec()).unwrap();
        let from_json: Node = crate::collect::from_api(json).unwrap();
        assert_eq!(from_protobuf, from_json);
        assert_eq!(from_json.ready_detail.as_deref(), Some("KubeletNotReady: PLEG is not healthy"));
        assert_eq!((from_json.allocatable_cpu, from_json.unschedulable), (Some(7910), true));
    }

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
