//! ResourceQuotas (`v1`, optional): how much of each namespace's quota is used, as the quota
//! controller counts it.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Kind;
use crate::collect::{FromApi, Meta, nullable};
use crate::collection::{About, Collection, Follow};

const ABOUT: About = About {
    name: "resourcequotas",
    resource: "resourcequotas",
    list_kind: "ResourceQuotaList",
    api_version: "v1",
    path: "/api/v1/resourcequotas",
    namespaced: true,
    optional: true,
    follow: Follow::Whole,
};

/// Held shared (an `Arc`), as the registry in `kinds/mod.rs` says.
impl Kind for Arc<Quota> {
    const COLLECTION: Collection = Collection::of(&ABOUT);
    fn namespace(&self) -> &str {
        &self.namespace
    }
}

impl FromApi for Quota {
    type Raw = RawQuota;
}

impl FromApi for Arc<Quota> {
    type Raw = RawQuota;
}

impl From<RawQuota> for Arc<Quota> {
    fn from(raw: RawQuota) -> Arc<Quota> {
        Arc::new(Quota::from(raw))
    }
}

/// The compact record of a ResourceQuota: each resource of its status, hard and used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Quota {
    pub namespace: String,
    pub name: String,
    pub resources: Vec<QuotaResource>,
}

/// One resource of a quota (`requests.cpu`, `pods`, `count/deployments.apps`), its quantities
/// in base units (cores, bytes, counts). A quantity that does not parse is kept as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuotaResource {
    pub resource: String,
    pub hard: Result<f64, String>,
    /// None: the controller has not counted it yet.
    pub used: Option<Result<f64, String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawQuota {
    #[serde(default)]
    metadata: Meta,
    #[serde(default, deserialize_with = "nullable")]
    status: QuotaStatus,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct QuotaStatus {
    #[serde(deserialize_with = "nullable")]
    hard: BTreeMap<String, String>,
    #[serde(deserialize_with = "nullable")]
    used: BTreeMap<String, String>,
}

fn quantity(q: &str) -> Result<f64, String> {
    crate::collect::quantity::parse(q).ok_or_else(|| q.to_string())
}

impl From<RawQuota> for Quota {
    fn from(raw: RawQuota) -> Quota {
        let QuotaStatus { hard, used } = raw.status;
        let resources = hard
            .iter()
            .map(|(resource, h)| QuotaResource {
                resource: resource.clone(),
                hard: quantity(h),
                used: used.get(resource).map(|u| quantity(u)),
            })
            .collect();
        Quota { namespace: raw.metadata.namespace, name: raw.metadata.name, resources }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quota_in_base_units_with_one_quantity_that_does_not_parse() {
        let q: Quota = crate::collect::from_api(
            r#"{"metadata":{"name":"team","namespace":"shop"},
                "status":{"hard":{"requests.cpu":"2","requests.memory":"4Gi","pods":"10","limits.cpu":"lots"},
                          "used":{"requests.cpu":"1500m","requests.memory":"4Gi","pods":"11"}}}"#,
        )
        .unwrap();
        let r = |name: &str| q.resources.iter().find(|r| r.resource == name).unwrap().clone();
        assert_eq!((r("requests.cpu").hard, r("requests.cpu").used), (Ok(2.0), Some(Ok(1.5))));
        assert_eq!(r("requests.memory").used, Some(Ok(4.0 * 1024f64.powi(3))));
        assert_eq!(r("pods").used, Some(Ok(11.0)));
        assert_eq!((r("limits.cpu").hard, r("limits.cpu").used), (Err("lots".into()), None));
    }
}
