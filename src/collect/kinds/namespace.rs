//! Namespaces (`v1`, optional, the cluster's), with their labels: the owners a cluster's
//! `namespace_labels` copy onto the alerts of each namespace (`team="payments"`), so that a
//! notifier's matchers reach the team that owns it.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Kind;
use crate::collect::{FromApi, nullable};
use crate::collection::{About, Collection, Follow};

const ABOUT: About = About {
    name: "namespaces",
    resource: "namespaces",
    list_kind: "NamespaceList",
    api_version: "v1",
    path: "/api/v1/namespaces",
    namespaced: false,
    optional: true,
    follow: Follow::Whole,
};

/// Held shared (an `Arc`), as the registry in `kinds/mod.rs` says.
impl Kind for Arc<Namespace> {
    const COLLECTION: Collection = Collection::of(&ABOUT);
    /// A namespace is its own: an ignored one is left out.
    fn namespace(&self) -> &str {
        &self.name
    }
}

impl FromApi for Namespace {
    type Raw = RawNamespace;
}

impl FromApi for Arc<Namespace> {
    type Raw = RawNamespace;
}

impl From<RawNamespace> for Arc<Namespace> {
    fn from(raw: RawNamespace) -> Arc<Namespace> {
        Arc::new(Namespace::from(raw))
    }
}

/// The most labels kept of one namespace, and the longest value: what the cluster says is
/// bounded before it becomes an alert's labels.
const LABELS_MOST: usize = 64;
const VALUE_MOST: usize = 256;

/// The compact record of a Namespace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Namespace {
    pub name: String,
    /// `metadata.labels`, at most 64, each value at most 256 bytes (longer ones are left out).
    pub labels: BTreeMap<String, String>,
}

#[derive(Deserialize)]
pub struct RawNamespace {
    #[serde(default)]
    metadata: NamespaceMeta,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct NamespaceMeta {
    #[serde(deserialize_with = "nullable")]
    name: String,
    #[serde(deserialize_with = "nullable")]
    labels: BTreeMap<String, String>,
}

impl From<RawNamespace> for Namespace {
    fn from(raw: RawNamespace) -> Namespace {
        let labels = raw.metadata.labels.into_iter().filter(|(_, v)| v.len() <= VALUE_MOST).take(LABELS_MOST).collect();
        Namespace { name: raw.metadata.name, labels }
    }
}

/// Each namespace's values of `wanted` (those it has): what its alerts are given.
pub fn owners(namespaces: &[Arc<Namespace>], wanted: &[String]) -> BTreeMap<String, BTreeMap<String, String>> {
    namespaces
        .iter()
        .filter_map(|n| {
            let mine: BTreeMap<String, String> =
                wanted.iter().filter_map(|w| n.labels.get(w).map(|v| (w.clone(), v.clone()))).collect();
            (!mine.is_empty()).then(|| (n.name.clone(), mine))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_keeps_its_labels_within_bounds_and_gives_those_asked_for() {
        let long = "x".repeat(VALUE_MOST + 1);
        let n: Namespace = crate::collect::from_api(&format!(
            r#"{{"metadata":{{"name":"payments","labels":{{"team":"payments","owner":"ana","big":"{long}"}}}}}}"#
        ))
        .unwrap();
        assert_eq!(n.labels.len(), 2, "{:?}", n.labels.keys());
        let bare: Namespace = crate::collect::from_api(r#"{"metadata":{"name":"dev","labels":null}}"#).unwrap();
        assert!(bare.labels.is_empty());
        let owners = owners(&[Arc::new(n), Arc::new(bare)], &["team".into(), "cost-center".into()]);
        assert_eq!(owners.len(), 1, "a namespace without any of them gives nothing");
        assert_eq!(owners["payments"], BTreeMap::from([("team".to_string(), "payments".to_string())]));
    }
}
