//! PodDisruptionBudgets (`policy/v1`, optional): whether each has the healthy pods it asks
//! for, without which a node drain hangs.

use serde::{Deserialize, Serialize};

use super::Kind;
use crate::collect::{FromApi, GenerationMeta, nullable};
use crate::collection::{About, Collection, Follow};

const ABOUT: About = About {
    name: "poddisruptionbudgets",
    resource: "poddisruptionbudgets.policy",
    list_kind: "PodDisruptionBudgetList",
    api_version: "policy/v1",
    path: "/apis/policy/v1/poddisruptionbudgets",
    namespaced: true,
    optional: true,
    follow: Follow::Whole,
};

impl Kind for Pdb {
    const COLLECTION: Collection = Collection::of(&ABOUT);
    fn namespace(&self) -> &str {
        &self.namespace
    }
}

impl FromApi for Pdb {
    type Raw = RawPdb;
}

/// The compact record of a PodDisruptionBudget: its status as the disruption controller
/// writes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pdb {
    pub namespace: String,
    pub name: String,
    pub current_healthy: i64,
    pub desired_healthy: i64,
    pub disruptions_allowed: i64,
    /// The pods it covers.
    pub expected_pods: i64,
    /// The controller has written a status since the spec's last change (`observedGeneration`
    /// is the generation): a budget it has not seen yet is not judged.
    pub observed: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawPdb {
    #[serde(default)]
    metadata: GenerationMeta,
    #[serde(default, deserialize_with = "nullable")]
    status: PdbStatus,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct PdbStatus {
    #[serde(deserialize_with = "nullable")]
    current_healthy: i64,
    #[serde(deserialize_with = "nullable")]
    desired_healthy: i64,
    #[serde(deserialize_with = "nullable")]
    disruptions_allowed: i64,
    #[serde(deserialize_with = "nullable")]
    expected_pods: i64,
    observed_generation: Option<i64>,
}

impl From<RawPdb> for Pdb {
    fn from(raw: RawPdb) -> Pdb {
        let s = raw.status;
        Pdb {
            observed: s.observed_generation.is_some_and(|g| g >= raw.metadata.generation),
            namespace: raw.metadata.meta.namespace,
            name: raw.metadata.meta.name,
            current_healthy: s.current_healthy,
            desired_healthy: s.desired_healthy,
            disruptions_allowed: s.disruptions_allowed,
            expected_pods: s.expected_pods,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_short_of_healthy_pods_and_one_not_yet_observed() {
        let p: Pdb = crate::collect::from_api(
            r#"{"metadata":{"name":"db","namespace":"shop","generation":2},
                "status":{"currentHealthy":1,"desiredHealthy":2,"disruptionsAllowed":0,"expectedPods":3,
                          "observedGeneration":2}}"#,
        )
        .unwrap();
        assert_eq!((p.current_healthy, p.desired_healthy, p.disruptions_allowed, p.expected_pods), (1, 2, 0, 3));
        assert!(p.observed);
        let new: Pdb = crate::collect::from_api(r#"{"metadata":{"name":"web","generation":1},"status":null}"#).unwrap();
        assert!(!new.observed);
    }
}
