//! HorizontalPodAutoscalers (`autoscaling/v2`, optional): whether each can scale.

use serde::{Deserialize, Serialize};

use super::Kind;
use crate::collect::{FromApi, Meta, nullable};
use crate::collection::{About, Collection, Follow};

const ABOUT: About = About {
    name: "hpas",
    resource: "horizontalpodautoscalers.autoscaling",
    list_kind: "HorizontalPodAutoscalerList",
    api_version: "autoscaling/v2",
    path: "/apis/autoscaling/v2/horizontalpodautoscalers",
    namespaced: true,
    optional: true,
    follow: Follow::Whole,
};

impl Kind for Hpa {
    const COLLECTION: Collection = Collection::of(&ABOUT);
    fn namespace(&self) -> &str {
        &self.namespace
    }
}

impl FromApi for Hpa {
    type Raw = RawHpa;
}

/// The compact record of an HPA.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hpa {
    pub namespace: String,
    pub name: String,
    /// `spec.minReplicas` (1 when not set, as the API server defaults it).
    #[serde(default = "one")]
    pub min_replicas: i64,
    pub max_replicas: i64,
    pub current_replicas: i64,
    /// `status.desiredReplicas`: what it last computed.
    #[serde(default)]
    pub desired_replicas: i64,
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
    min_replicas: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    max_replicas: i64,
}

fn one() -> i64 {
    1
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct HpaStatus {
    #[serde(deserialize_with = "nullable")]
    current_replicas: i64,
    #[serde(deserialize_with = "nullable")]
    desired_replicas: i64,
    #[serde(deserialize_with = "nullable")]
    conditions: Vec<crate::collect::nodes::Condition>,
}

impl From<RawHpa> for Hpa {
    fn from(raw: RawHpa) -> Hpa {
        let active = raw.status.conditions.into_iter().find(|c| c.kind == "ScalingActive");
        Hpa {
            namespace: raw.metadata.namespace,
            name: raw.metadata.name,
            min_replicas: raw.spec.min_replicas.unwrap_or(1),
            max_replicas: raw.spec.max_replicas,
            current_replicas: raw.status.current_replicas,
            desired_replicas: raw.status.desired_replicas,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_hpa_that_cannot_get_metrics() {
        let h: Hpa = crate::collect::from_api(
            r#"{"metadata":{"name":"web","namespace":"shop"},"spec":{"maxReplicas":10},
                "status":{"currentReplicas":10,"desiredReplicas":12,"conditions":[{"type":"ScalingActive","status":"False",
                  "reason":"FailedGetResourceMetric","message":"unable to get metrics"}]}}"#,
        )
        .unwrap();
        assert_eq!(h.scaling_active, Some((false, "FailedGetResourceMetric".into(), "unable to get metrics".into())));
        assert!(h.at_max());
        assert_eq!((h.min_replicas, h.desired_replicas), (1, 12));
    }
}
