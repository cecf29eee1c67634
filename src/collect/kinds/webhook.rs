//! Admission webhooks (`admissionregistration.k8s.io/v1`, optional): the validating and the
//! mutating configurations, two kinds of one record. Each webhook's backend is a Service (or a
//! URL, not judged): whether that Service has a ready endpoint is read after them, in the
//! namespaces their Services live in (`collect::backends`).
//!
//! Watch mode follows them whole: they change when something is installed or removed, rarely.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Kind;
use crate::collect::{FromApi, Meta, nullable};
use crate::collection::{About, Collection, Follow};

const VALIDATING: About = About {
    name: "validatingwebhookconfigurations",
    resource: "validatingwebhookconfigurations.admissionregistration.k8s.io",
    list_kind: "ValidatingWebhookConfigurationList",
    api_version: "admissionregistration.k8s.io/v1",
    path: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    namespaced: false,
    optional: true,
    follow: Follow::Whole,
};

const MUTATING: About = About {
    name: "mutatingwebhookconfigurations",
    resource: "mutatingwebhookconfigurations.admissionregistration.k8s.io",
    list_kind: "MutatingWebhookConfigurationList",
    api_version: "admissionregistration.k8s.io/v1",
    path: "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    namespaced: false,
    optional: true,
    follow: Follow::Whole,
};

/// A ValidatingWebhookConfiguration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Validating(pub Configuration);

/// A MutatingWebhookConfiguration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Mutating(pub Configuration);

/// Held shared (an `Arc`), as the registry in `kinds/mod.rs` says.
impl Kind for Arc<Validating> {
    const COLLECTION: Collection = Collection::of(&VALIDATING);
    fn namespace(&self) -> &str {
        ""
    }
}

impl Kind for Arc<Mutating> {
    const COLLECTION: Collection = Collection::of(&MUTATING);
    fn namespace(&self) -> &str {
        ""
    }
}

impl FromApi for Validating {
    type Raw = RawConfiguration;
}

impl FromApi for Mutating {
    type Raw = RawConfiguration;
}

impl FromApi for Arc<Validating> {
    type Raw = RawConfiguration;
}

impl FromApi for Arc<Mutating> {
    type Raw = RawConfiguration;
}

impl From<RawConfiguration> for Arc<Validating> {
    fn from(raw: RawConfiguration) -> Arc<Validating> {
        Arc::new(Validating(raw.into()))
    }
}

impl From<RawConfiguration> for Arc<Mutating> {
    fn from(raw: RawConfiguration) -> Arc<Mutating> {
        Arc::new(Mutating(raw.into()))
    }
}

impl From<RawConfiguration> for Validating {
    fn from(raw: RawConfiguration) -> Validating {
        Validating(raw.into())
    }
}

impl From<RawConfiguration> for Mutating {
    fn from(raw: RawConfiguration) -> Mutating {
        Mutating(raw.into())
    }
}

/// The compact record of a webhook configuration: its webhooks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Configuration {
    pub name: String,
    pub webhooks: Vec<AdmissionWebhook>,
}

/// One webhook: where the API server sends what it intercepts, and what it does when that
/// fails.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdmissionWebhook {
    pub name: String,
    /// `Fail` (the API server's default) or `Ignore`.
    pub failure_policy: String,
    pub target: Target,
    /// The operations of its rules (`CREATE`, `UPDATE`…), each once, in order.
    pub operations: Vec<String>,
    /// The resources of its rules, each once: `pods`, `deployments.apps`, `*`.
    pub resources: Vec<String>,
    /// Its namespace selector in the selector syntax (`env=prod,team in (a,b)`); empty: every
    /// namespace.
    pub namespaces: String,
}

/// Where a webhook's requests go.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// A Service of the cluster, on this port (443 when not said).
    Service { namespace: String, name: String, port: i32 },
    /// A URL outside the cluster's Services: not judged.
    Url,
    /// Neither a Service nor a URL: the object cannot be judged.
    Neither,
}

/// The port the API server calls a webhook's Service on when it does not say.
const DEFAULT_PORT: i32 = 443;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawConfiguration {
    #[serde(default)]
    metadata: Meta,
    #[serde(default, deserialize_with = "nullable")]
    webhooks: Vec<RawWebhook>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RawWebhook {
    name: String,
    #[serde(deserialize_with = "nullable")]
    client_config: ClientConfig,
    failure_policy: Option<String>,
    #[serde(deserialize_with = "nullable")]
    rules: Vec<RawRule>,
    namespace_selector: Option<Selector>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ClientConfig {
    service: Option<ServiceReference>,
    url: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ServiceReference {
    namespace: String,
    name: String,
    port: Option<i32>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RawRule {
    #[serde(deserialize_with = "nullable")]
    operations: Vec<String>,
    #[serde(deserialize_with = "nullable")]
    api_groups: Vec<String>,
    #[serde(deserialize_with = "nullable")]
    resources: Vec<String>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Selector {
    #[serde(deserialize_with = "nullable")]
    match_labels: std::collections::BTreeMap<String, String>,
    #[serde(deserialize_with = "nullable")]
    match_expressions: Vec<Requirement>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Requirement {
    key: String,
    operator: String,
    #[serde(deserialize_with = "nullable")]
    values: Vec<String>,
}

impl Selector {
    /// In the syntax of `kubectl get -l`: `env=prod,team in (a,b),!legacy`.
    fn said(&self) -> String {
        let mut parts: Vec<String> = self.match_labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for r in &self.match_expressions {
            parts.push(match r.operator.as_str() {
                "In" => format!("{} in ({})", r.key, r.values.join(",")),
                "NotIn" => format!("{} notin ({})", r.key, r.values.join(",")),
                "Exists" => r.key.clone(),
                "DoesNotExist" => format!("!{}", r.key),
                other => format!("{} {other} ({})", r.key, r.values.join(",")),
            });
        }
        parts.join(",")
    }
}

fn push_new(out: &mut Vec<String>, s: String) {
    if !out.contains(&s) {
        out.push(s);
    }
}

impl From<RawConfiguration> for Configuration {
    fn from(raw: RawConfiguration) -> Configuration {
        let webhooks = raw
            .webhooks
            .into_iter()
            .map(|w| {
                let target = match (w.client_config.service, w.client_config.url) {
                    (Some(s), _) => {
                        Target::Service { namespace: s.namespace, name: s.name, port: s.port.unwrap_or(DEFAULT_PORT) }
                    }
                    (None, Some(_)) => Target::Url,
                    (None, None) => Target::Neither,
                };
                let (mut operations, mut resources) = (Vec::new(), Vec::new());
                for r in &w.rules {
                    for op in &r.operations {
                        push_new(&mut operations, op.clone());
                    }
                    for res in &r.resources {
                        // A rule's groups times its resources, as RBAC writes them.
                        let groups: Vec<&str> = if r.api_groups.is_empty() {
                            vec![""]
                        } else {
                            r.api_groups.iter().map(|g| g.as_str()).collect()
                        };
                        for g in groups {
                            let said = match g {
                                "" => res.clone(),
                                "*" if res == "*" => "*".to_string(),
                                g => format!("{res}.{g}"),
                            };
                            push_new(&mut resources, said);
                        }
                    }
                }
                AdmissionWebhook {
                    name: w.name,
                    failure_policy: w.failure_policy.unwrap_or_else(|| "Fail".into()),
                    target,
                    operations,
                    resources,
                    namespaces: w.namespace_selector.map(|s| s.said()).unwrap_or_default(),
                }
            })
            .collect();
        Configuration { name: raw.metadata.name, webhooks }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configuration_says_where_each_webhook_goes_and_what_it_intercepts() {
        let v: Validating = crate::collect::from_api(
            r#"{"metadata":{"name":"policy"},"webhooks":[
                {"name":"validate.policy.example.com","failurePolicy":"Fail",
                 "clientConfig":{"service":{"namespace":"policy","name":"policy-webhook","path":"/validate"}},
                 "rules":[{"operations":["CREATE","UPDATE"],"apiGroups":["","apps"],"apiVersions":["v1"],"resources":["pods","deployments"]},
                          {"operations":["CREATE"],"apiGroups":["*"],"resources":["*"]}],
                 "namespaceSelector":{"matchLabels":{"env":"prod"},"matchExpressions":[{"key":"team","operator":"In","values":["a","b"]},{"key":"legacy","operator":"DoesNotExist"}]}},
                {"name":"outside.example.com","failurePolicy":"Ignore","clientConfig":{"url":"https://policy.example.com/v"}},
                {"name":"broken.example.com","clientConfig":{}}]}"#,
        )
        .unwrap();
        let c = v.0;
        assert_eq!(c.name, "policy");
        let w = &c.webhooks[0];
        assert_eq!(w.target, Target::Service { namespace: "policy".into(), name: "policy-webhook".into(), port: 443 });
        assert_eq!(w.operations, ["CREATE", "UPDATE"]);
        assert_eq!(w.resources, ["pods", "pods.apps", "deployments", "deployments.apps", "*"]);
        assert_eq!(w.namespaces, "env=prod,team in (a,b),!legacy");
        assert_eq!((c.webhooks[1].target.clone(), c.webhooks[1].failure_policy.as_str()), (Target::Url, "Ignore"));
        assert_eq!((c.webhooks[2].target.clone(), c.webhooks[2].failure_policy.as_str()), (Target::Neither, "Fail"));
        let m: Mutating = crate::collect::from_api(r#"{"metadata":{"name":"inject"},"webhooks":null}"#).unwrap();
        assert!(m.0.webhooks.is_empty());
    }
}
