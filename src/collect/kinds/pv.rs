//! PersistentVolumes (`v1`, optional, the cluster's): which are Failed or Pending, and why.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Kind;
use crate::collect::{FromApi, Meta, nullable};
use crate::collection::{About, Collection, Follow};

const ABOUT: About = About {
    name: "persistentvolumes",
    resource: "persistentvolumes",
    list_kind: "PersistentVolumeList",
    api_version: "v1",
    path: "/api/v1/persistentvolumes",
    namespaced: false,
    optional: true,
    follow: Follow::Whole,
};

/// Cycles hold volumes shared, as they do pods: a large cluster has one for each bound claim
/// (20,000 at 150,000 simulated pods), and a cycle taken from a watch's store points at the
/// records the store keeps rather than copying four texts of each, which its health then holds
/// as they are.
impl Kind for Arc<Pv> {
    const COLLECTION: Collection = Collection::of(&ABOUT);
    fn namespace(&self) -> &str {
        ""
    }
}

impl FromApi for Pv {
    type Raw = RawPv;
}

impl FromApi for Arc<Pv> {
    type Raw = RawPv;
}

impl From<RawPv> for Arc<Pv> {
    fn from(raw: RawPv) -> Arc<Pv> {
        Arc::new(Pv::from(raw))
    }
}

/// The compact record of a PersistentVolume (in the order its health is written in).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pv {
    pub name: String,
    /// `status.phase`: Pending, Available, Bound, Released, Failed (empty when not set).
    pub phase: String,
    /// The claim it is bound to, `namespace/name` (empty when none).
    pub claim: String,
    /// `status.reason` and `status.message`, joined.
    pub why: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawPv {
    #[serde(default)]
    metadata: Meta,
    #[serde(default, deserialize_with = "nullable")]
    spec: PvSpec,
    #[serde(default, deserialize_with = "nullable")]
    status: PvStatus,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct PvSpec {
    #[serde(deserialize_with = "nullable")]
    claim_ref: ClaimRef,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ClaimRef {
    #[serde(deserialize_with = "nullable")]
    namespace: String,
    #[serde(deserialize_with = "nullable")]
    name: String,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct PvStatus {
    #[serde(deserialize_with = "nullable")]
    phase: String,
    #[serde(deserialize_with = "nullable")]
    reason: String,
    #[serde(deserialize_with = "nullable")]
    message: String,
}

impl From<RawPv> for Pv {
    fn from(raw: RawPv) -> Pv {
        let s = raw.status;
        let why = match (s.reason.is_empty(), s.message.is_empty()) {
            (true, true) => String::new(),
            (false, true) => s.reason,
            (true, false) => s.message,
            (false, false) => format!("{}: {}", s.reason, s.message),
        };
        let c = raw.spec.claim_ref;
        let claim = if c.name.is_empty() { String::new() } else { format!("{}/{}", c.namespace, c.name) };
        Pv { name: raw.metadata.name, phase: s.phase, why, claim }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_volume_says_why() {
        let v: Pv = crate::collect::from_api(
            r#"{"metadata":{"name":"pvc-3f1"},"spec":{"claimRef":{"namespace":"shop","name":"data-db-0"}},
                "status":{"phase":"Failed","message":"host path /srv/db does not exist"}}"#,
        )
        .unwrap();
        assert_eq!(
            v,
            Pv {
                name: "pvc-3f1".into(),
                phase: "Failed".into(),
                why: "host path /srv/db does not exist".into(),
                claim: "shop/data-db-0".into()
            }
        );
    }
}
