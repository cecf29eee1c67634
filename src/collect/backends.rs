//! The backends of the admission webhooks (optional): the Services their configurations name,
//! and those Services' EndpointSlices, listed in the namespaces the Services live in once the
//! configurations are read, and in no other. A cluster's webhooks name a handful of Services
//! (cert-manager's, a policy engine's), so this costs two Lists per such namespace, where
//! listing every EndpointSlice of the cluster would cost as much as its pods.
//!
//! Read at every cycle, watch mode's too (they are not followed): what they answer is whether
//! a webhook can be reached now.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::kinds::webhook::{Configuration, Target};
use super::{FromApi, Meta, nullable};
use crate::collection::{Collection, Follow, row};

/// The label an EndpointSlice names its Service with.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

pub const SERVICES: Collection =
    Collection::of(&row("services", "services", ("ServiceList", "v1"), "/api/v1/services", true, true, Follow::No));

pub const ENDPOINTSLICES: Collection = Collection::of(&row(
    "endpointslices",
    "endpointslices.discovery.k8s.io",
    ("EndpointSliceList", "discovery.k8s.io/v1"),
    "/apis/discovery.k8s.io/v1/endpointslices",
    true,
    true,
    Follow::No,
));

/// The two reads, in the order they are said.
pub const GROUP: [Collection; 2] = [SERVICES, ENDPOINTSLICES];

/// A Service, as far as a webhook's call goes through it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Service {
    pub namespace: String,
    pub name: String,
    /// `type: ExternalName`: the API server calls the name it gives, not endpoints (not judged).
    pub external: bool,
    /// Its ports: (name, port).
    pub ports: Vec<(String, i32)>,
}

/// An EndpointSlice of a Service: the names of its ports and how many of its endpoints are
/// ready.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EndpointSlice {
    pub namespace: String,
    /// Its Service (the `kubernetes.io/service-name` label).
    pub service: String,
    /// The names of its ports (a Service's port name; empty for its one unnamed port).
    pub ports: Vec<String>,
    /// Its endpoints whose `ready` condition is not false (absent means ready).
    pub ready: u32,
}

impl FromApi for Service {
    type Raw = RawService;
}

impl FromApi for EndpointSlice {
    type Raw = RawSlice;
}

#[derive(Deserialize)]
pub struct RawService {
    #[serde(default)]
    metadata: Meta,
    #[serde(default, deserialize_with = "nullable")]
    spec: ServiceSpec,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ServiceSpec {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(deserialize_with = "nullable")]
    ports: Vec<ServicePort>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ServicePort {
    #[serde(deserialize_with = "nullable")]
    name: String,
    port: i32,
}

impl From<RawService> for Service {
    fn from(raw: RawService) -> Service {
        Service {
            namespace: raw.metadata.namespace,
            name: raw.metadata.name,
            external: raw.spec.kind.as_deref() == Some("ExternalName"),
            ports: raw.spec.ports.into_iter().map(|p| (p.name, p.port)).collect(),
        }
    }
}

#[derive(Deserialize)]
pub struct RawSlice {
    #[serde(default)]
    metadata: SliceMeta,
    #[serde(default, deserialize_with = "nullable")]
    ports: Vec<SlicePort>,
    #[serde(default, deserialize_with = "nullable")]
    endpoints: Vec<Endpoint>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct SliceMeta {
    #[serde(deserialize_with = "nullable")]
    namespace: String,
    #[serde(deserialize_with = "nullable")]
    labels: BTreeMap<String, String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct SlicePort {
    #[serde(deserialize_with = "nullable")]
    name: String,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Endpoint {
    #[serde(deserialize_with = "nullable")]
    conditions: Conditions,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Conditions {
    ready: Option<bool>,
}

impl From<RawSlice> for EndpointSlice {
    fn from(raw: RawSlice) -> EndpointSlice {
        EndpointSlice {
            namespace: raw.metadata.namespace,
            service: raw.metadata.labels.get(SERVICE_NAME_LABEL).cloned().unwrap_or_default(),
            ports: raw.ports.into_iter().map(|p| p.name).collect(),
            ready: raw.endpoints.iter().filter(|e| e.conditions.ready != Some(false)).count() as u32,
        }
    }
}

/// The namespaces the webhooks' Services live in, each once, in order.
pub fn namespaces<'a>(configurations: impl IntoIterator<Item = &'a Configuration>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in configurations.into_iter().flat_map(|c| &c.webhooks) {
        if let Target::Service { namespace, .. } = &w.target
            && !out.contains(namespace)
        {
            out.push(namespace.clone());
        }
    }
    out
}

/// Whether a webhook's Service can take its calls on `port`: None when it cannot be judged (an
/// ExternalName Service), else Ok, or Err with what is missing.
pub fn judge(services: &[Service], slices: &[EndpointSlice], namespace: &str, name: &str, port: i32) -> Reach {
    let Some(s) = services.iter().find(|s| s.namespace == namespace && s.name == name) else {
        return Reach::NoService;
    };
    if s.external {
        return Reach::External;
    }
    let Some((port_name, _)) = s.ports.iter().find(|(_, p)| *p == port) else {
        return Reach::NoPort;
    };
    let ready = slices
        .iter()
        .filter(|e| e.namespace == namespace && e.service == name && e.ports.contains(port_name))
        .any(|e| e.ready > 0);
    if ready { Reach::Ready } else { Reach::NoEndpoint }
}

/// What a webhook's call finds at its Service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    Ready,
    /// The Service does not exist.
    NoService,
    /// The Service has no port the webhook names.
    NoPort,
    /// No ready endpoint serves that port.
    NoEndpoint,
    /// An ExternalName Service: not judged.
    External,
}

impl Reach {
    /// The word the messages select on.
    pub fn as_str(self) -> &'static str {
        match self {
            Reach::Ready => "ready",
            Reach::NoService => "no-service",
            Reach::NoPort => "no-port",
            Reach::NoEndpoint => "no-endpoint",
            Reach::External => "external",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_is_ready_on_a_port_when_a_slice_of_it_has_a_ready_endpoint_there() {
        let s: Service = crate::collect::from_api(
            r#"{"metadata":{"name":"hook","namespace":"policy"},
                "spec":{"type":"ClusterIP","ports":[{"name":"https","port":443,"targetPort":9443},{"name":"metrics","port":8080}]}}"#,
        )
        .unwrap();
        assert_eq!(s.ports, [("https".to_string(), 443), ("metrics".to_string(), 8080)]);
        let slice = |json: &str| -> EndpointSlice { crate::collect::from_api(json).unwrap() };
        let unready = slice(
            r#"{"metadata":{"namespace":"policy","labels":{"kubernetes.io/service-name":"hook"}},
                "ports":[{"name":"https","port":9443}],"endpoints":[{"addresses":["10.0.0.9"],"conditions":{"ready":false}}]}"#,
        );
        let other_port = slice(
            r#"{"metadata":{"namespace":"policy","labels":{"kubernetes.io/service-name":"hook"}},
                "ports":[{"name":"metrics","port":8080}],"endpoints":[{"addresses":["10.0.0.9"]}]}"#,
        );
        let ready = slice(
            r#"{"metadata":{"namespace":"policy","labels":{"kubernetes.io/service-name":"hook"}},
                "ports":[{"name":"https","port":9443}],"endpoints":[{"addresses":["10.0.0.8"],"conditions":{}}]}"#,
        );
        let services = [s];
        assert_eq!(judge(&services, &[], "policy", "gone", 443), Reach::NoService);
        assert_eq!(judge(&services, &[], "policy", "hook", 8443), Reach::NoPort);
        assert_eq!(judge(&services, &[unready.clone(), other_port.clone()], "policy", "hook", 443), Reach::NoEndpoint);
        assert_eq!(judge(&services, &[unready, ready], "policy", "hook", 443), Reach::Ready);
        assert_eq!(judge(&services, &[other_port], "policy", "hook", 8080), Reach::Ready);
        let external: Service = crate::collect::from_api(
            r#"{"metadata":{"name":"far","namespace":"policy"},"spec":{"type":"ExternalName","externalName":"x.example.com"}}"#,
        )
        .unwrap();
        assert_eq!(judge(&[external], &[], "policy", "far", 443), Reach::External);
    }
}
