//! The optional reads: each needs one permission more than the core's. Without it, or when it
//! fails, the cycle still succeeds; what the read would have shown is said to be missing, and why.
//!
//! - APIServices (`apiregistration.k8s.io`): whether each aggregated API is Available, and why not.
//! - The Metrics API (`metrics.k8s.io`, served by metrics-server through the aggregator): CPU and
//!   memory used per node and per pod. Read only when its APIService is not known to be down.
//! - The kinds of the registry (`collect::kinds`): HorizontalPodAutoscalers, Jobs, CronJobs…
//! - The admission webhooks' Services and EndpointSlices (`collect::backends`), after them.

use serde::{Deserialize, Serialize};

use super::kinds::Kind;
use super::quantity::Quantities;
use super::{Meta, nullable};
use crate::collection::Collection;
use crate::error::{ReadError, ReadErrorKind};

/// The APIService that serves the Metrics API.
pub const METRICS_APISERVICE: &str = "v1beta1.metrics.k8s.io";

/// An optional read's outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Optional<T> {
    Read(T),
    /// 403: the service account may not read it.
    NotGranted,
    /// Not asked for: the Metrics API's APIService is not Available.
    #[default]
    Skipped,
    /// Another failure, in one line.
    Failed(String),
}

impl<T> Optional<T> {
    pub fn from_result(r: Result<T, ReadError>) -> Optional<T> {
        match r {
            Ok(v) => Optional::Read(v),
            Err(ReadError { kind: ReadErrorKind::Forbidden { .. }, .. }) => Optional::NotGranted,
            Err(e) => Optional::Failed(e.to_string()),
        }
    }

    /// The outcome alone, without what was read.
    pub fn outcome(&self) -> Optional<()> {
        match self {
            Optional::Read(_) => Optional::Read(()),
            Optional::NotGranted => Optional::NotGranted,
            Optional::Skipped => Optional::Skipped,
            Optional::Failed(m) => Optional::Failed(m.clone()),
        }
    }

    pub fn read(&self) -> Option<&T> {
        match self {
            Optional::Read(v) => Some(v),
            _ => None,
        }
    }
}

/// Takes a kind's outcome out of the optional reads, and puts it there (see [`Extras`]).
pub trait InExtras: Sized {
    fn slot(extras: &mut Extras) -> &mut Optional<Vec<Self>>;
}

macro_rules! extras {
    ($($(#[$m:meta])* $field:ident: $ty:ty),* $(,)?) => {
        /// What the optional reads found: the Metrics API's group, then one field for each
        /// kind of the registry (`collect::kinds`), named after its collection.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        pub struct Extras {
            pub apiservices: Optional<Vec<ApiService>>,
            pub node_metrics: Optional<Vec<Usage>>,
            pub pod_metrics: Optional<Vec<Usage>>,
            $(
                $(#[$m])*
                #[serde(default)]
                pub $field: Optional<Vec<$ty>>,
            )*
            /// The webhooks' Services and their EndpointSlices, in the namespaces those
            /// Services live in (`collect::backends`); not asked when no webhook names a Service.
            #[serde(default)]
            pub services: Optional<Vec<super::backends::Service>>,
            #[serde(default)]
            pub endpointslices: Optional<Vec<super::backends::EndpointSlice>>,
            /// The PersistentVolume controller's Normal events saying what a Pending claim
            /// waits for (`WaitForFirstConsumer`, `ExternalProvisioning`): read with the core's
            /// permission, only in a cycle that has a Pending claim (`collect::claims`).
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub claim_events: Vec<super::Event>,
            /// Watch mode: the resources whose watch is not granted, read every interval instead.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub watch_not_granted: Vec<String>,
            /// Namespaced access (`namespaces`): what the cycle could and could not see. None:
            /// the whole cluster was read. Left out then, so that other reports stay what
            /// servers before namespaced access read.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub namespaced: Option<Namespaced>,
        }

        $( $(#[$m])* impl InExtras for $ty {
            fn slot(extras: &mut Extras) -> &mut Optional<Vec<$ty>> {
                &mut extras.$field
            }
        } )*

        impl Extras {
            /// How each optional read went (its items left out), in the order of
            /// `kinds::every`.
            pub fn outcomes(&self) -> Vec<(Collection, Optional<()>)> {
                let mut out = vec![
                    (Collection::APISERVICES, self.apiservices.outcome()),
                    (Collection::NODE_METRICS, self.node_metrics.outcome()),
                    (Collection::POD_METRICS, self.pod_metrics.outcome()),
                ];
                $( $(#[$m])* out.push((<$ty as Kind>::COLLECTION, self.$field.outcome())); )*
                out.push((super::backends::SERVICES, self.services.outcome()));
                out.push((super::backends::ENDPOINTSLICES, self.endpointslices.outcome()));
                out
            }

            /// Leaves out what the registry's kinds found in the ignored namespaces.
            fn leave_out_kinds(&mut self, ignored: &dyn Fn(&str) -> bool) {
                $( $(#[$m])* if let Optional::Read(items) = &mut self.$field {
                    items.retain(|o| !ignored(Kind::namespace(o)));
                } )*
            }
        }
    };
}
super::kinds::registry!(extras);

impl Extras {
    /// Leaves out what is in the ignored namespaces: the pods' usage and the registry's kinds.
    pub fn leave_out(&mut self, ignored: &dyn Fn(&str) -> bool) {
        if let Optional::Read(pods) = &mut self.pod_metrics {
            pods.retain(|p| !ignored(&p.namespace));
        }
        self.leave_out_kinds(ignored);
    }
}

/// What a cycle read with namespaced access could and could not see.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Namespaced {
    /// How many namespaces were asked for (the ignored ones left out).
    pub asked: usize,
    /// The namespaces read, in the order given.
    pub read: Vec<String>,
    /// Those not read (not found, or a core read refused): their alerts neither fire nor
    /// resolve while so (a failed read resolves nothing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<String>,
    /// One line for each namespace not read, or read but in part: `team-c: not found`,
    /// `team-c: the service account may not list pods (403)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// The cluster-wide List of nodes was refused: node health is not watched (no node
    /// series, no node rule fires or resolves).
    #[serde(default)]
    pub nodes_hidden: bool,
    /// Events about nodes, recorded in `default`, are not among the namespaces read.
    #[serde(default)]
    pub node_events_hidden: bool,
}

/// The compact record of an APIService.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApiService {
    pub name: String,
    /// `namespace/name` of `spec.service`: set for an aggregated API, empty for a local one.
    pub service: String,
    /// The Available condition: None when the APIService lists none.
    pub available: Option<bool>,
    /// That condition's reason and message.
    pub reason: String,
    pub message: String,
}

#[derive(Deserialize)]
pub struct RawApiService {
    #[serde(default)]
    metadata: Meta,
    #[serde(default, deserialize_with = "nullable")]
    spec: ApiServiceSpec,
    #[serde(default, deserialize_with = "nullable")]
    status: ConditionsOnly,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ApiServiceSpec {
    service: Option<ServiceRef>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ServiceRef {
    #[serde(deserialize_with = "nullable")]
    namespace: String,
    #[serde(deserialize_with = "nullable")]
    name: String,
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct ConditionsOnly {
    #[serde(deserialize_with = "nullable")]
    pub(crate) conditions: Vec<super::nodes::Condition>,
}

impl From<RawApiService> for ApiService {
    fn from(raw: RawApiService) -> ApiService {
        let available = raw.status.conditions.into_iter().find(|c| c.kind == "Available");
        ApiService {
            name: raw.metadata.name,
            service: raw.spec.service.map(|s| format!("{}/{}", s.namespace, s.name)).unwrap_or_default(),
            available: available.as_ref().map(|c| c.status == "True"),
            reason: available.as_ref().and_then(|c| c.reason.clone()).unwrap_or_default(),
            message: available.and_then(|c| c.message).unwrap_or_default(),
        }
    }
}

/// CPU (millicores) and memory (bytes) used by a node, or by a pod (its containers summed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub namespace: String,
    pub name: String,
    pub cpu: i64,
    pub memory: i64,
}

#[derive(Deserialize)]
pub struct RawUsage {
    #[serde(default)]
    metadata: Meta,
    /// NodeMetrics.
    #[serde(default, deserialize_with = "nullable")]
    usage: Quantities,
    /// PodMetrics.
    #[serde(default, deserialize_with = "nullable")]
    containers: Vec<ContainerUsage>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ContainerUsage {
    #[serde(deserialize_with = "nullable")]
    usage: Quantities,
}

impl From<RawUsage> for Usage {
    fn from(raw: RawUsage) -> Usage {
        let all = std::iter::once(&raw.usage).chain(raw.containers.iter().map(|c| &c.usage));
        let (cpu, memory) =
            all.fold((0, 0), |(c, m), q| (c + q.cpu_millicores().unwrap_or(0), m + q.memory_bytes().unwrap_or(0)));
        Usage { namespace: raw.metadata.namespace, name: raw.metadata.name, cpu, memory }
    }
}

impl super::FromApi for ApiService {
    type Raw = RawApiService;
}

impl super::FromApi for Usage {
    type Raw = RawUsage;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aggregated_apiservice_that_fails_its_check() {
        let a: ApiService = crate::collect::from_api(
            r#"{"metadata":{"name":"v1beta1.metrics.k8s.io"},
                "spec":{"service":{"namespace":"kube-system","name":"metrics-server","port":443}},
                "status":{"conditions":[{"type":"Available","status":"False","reason":"FailedDiscoveryCheck",
                  "message":"failing or missing response from https://10.96.0.12:4443/apis/metrics.k8s.io/v1beta1"}]}}"#,
        )
        .unwrap();
        assert_eq!(a.service, "kube-system/metrics-server");
        assert_eq!(a.available, Some(false));
        assert_eq!(a.reason, "FailedDiscoveryCheck");
        let local: ApiService =
            crate::collect::from_api(r#"{"metadata":{"name":"v1.apps"},"spec":{},"status":null}"#).unwrap();
        assert_eq!((local.service.as_str(), local.available), ("", None));
    }

    #[test]
    fn usage_of_a_node_and_of_a_pod() {
        let n: Usage =
            crate::collect::from_api(r#"{"metadata":{"name":"n1"},"usage":{"cpu":"250000000n","memory":"1048576Ki"}}"#)
                .unwrap();
        assert_eq!((n.cpu, n.memory), (250, 1 << 30));
        let p: Usage = crate::collect::from_api(
            r#"{"metadata":{"name":"p","namespace":"a"},"containers":[
                {"name":"app","usage":{"cpu":"2500000n","memory":"24Mi"}},{"name":"side","usage":{"cpu":"1m","memory":"8Mi"}}]}"#,
        )
        .unwrap();
        assert_eq!((p.namespace.as_str(), p.cpu, p.memory), ("a", 4, 32 << 20));
    }
}
