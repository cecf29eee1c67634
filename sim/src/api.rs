//! The API server's contract, without a network: routes, List objects, field selectors,
//! limit/continue paging and `Status` error bodies, as kube-apiserver serves them.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Value, json};

/// The resources the simulator serves as Lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    Nodes,
    Pods,
    Deployments,
    StatefulSets,
    DaemonSets,
    PersistentVolumeClaims,
    Events,
    /// `apiregistration.k8s.io/v1`: the APIServices (local and aggregated).
    ApiServices,
    /// `metrics.k8s.io/v1beta1`, served through the aggregator by metrics-server.
    NodeMetrics,
    PodMetrics,
    /// `autoscaling/v2`.
    HorizontalPodAutoscalers,
    /// `batch/v1`.
    Jobs,
    CronJobs,
    /// `policy/v1`.
    PodDisruptionBudgets,
    /// `v1`: namespaces' quotas, and the cluster's volumes.
    ResourceQuotas,
    PersistentVolumes,
    /// `coordination.k8s.io/v1`: leader leases.
    Leases,
    /// `admissionregistration.k8s.io/v1`: admission webhooks.
    ValidatingWebhookConfigurations,
    MutatingWebhookConfigurations,
    /// `v1` and `discovery.k8s.io/v1`: the webhooks' Services and their endpoints.
    Services,
    EndpointSlices,
    /// `v1`: the namespaces and their labels.
    Namespaces,
}

impl Resource {
    pub const ALL: [Resource; 22] = [
        Resource::Nodes,
        Resource::Pods,
        Resource::Deployments,
        Resource::StatefulSets,
        Resource::DaemonSets,
        Resource::PersistentVolumeClaims,
        Resource::Events,
        Resource::ApiServices,
        Resource::NodeMetrics,
        Resource::PodMetrics,
        Resource::HorizontalPodAutoscalers,
        Resource::Jobs,
        Resource::CronJobs,
        Resource::PodDisruptionBudgets,
        Resource::ResourceQuotas,
        Resource::PersistentVolumes,
        Resource::Leases,
        Resource::ValidatingWebhookConfigurations,
        Resource::MutatingWebhookConfigurations,
        Resource::Services,
        Resource::EndpointSlices,
        Resource::Namespaces,
    ];

    /// The plural resource name used in paths and in RBAC.
    pub fn plural(self) -> &'static str {
        match self {
            Resource::Nodes => "nodes",
            Resource::Pods => "pods",
            Resource::Deployments => "deployments",
            Resource::StatefulSets => "statefulsets",
            Resource::DaemonSets => "daemonsets",
            Resource::PersistentVolumeClaims => "persistentvolumeclaims",
            Resource::Events => "events",
            Resource::ApiServices => "apiservices",
            Resource::NodeMetrics => "nodes",
            Resource::PodMetrics => "pods",
            Resource::HorizontalPodAutoscalers => "horizontalpodautoscalers",
            Resource::Jobs => "jobs",
            Resource::CronJobs => "cronjobs",
            Resource::PodDisruptionBudgets => "poddisruptionbudgets",
            Resource::ResourceQuotas => "resourcequotas",
            Resource::PersistentVolumes => "persistentvolumes",
            Resource::Leases => "leases",
            Resource::ValidatingWebhookConfigurations => "validatingwebhookconfigurations",
            Resource::MutatingWebhookConfigurations => "mutatingwebhookconfigurations",
            Resource::Services => "services",
            Resource::EndpointSlices => "endpointslices",
            Resource::Namespaces => "namespaces",
        }
    }

    pub fn group(self) -> &'static str {
        match self {
            Resource::Deployments | Resource::StatefulSets | Resource::DaemonSets => "apps",
            Resource::ApiServices => "apiregistration.k8s.io",
            Resource::NodeMetrics | Resource::PodMetrics => "metrics.k8s.io",
            Resource::HorizontalPodAutoscalers => "autoscaling",
            Resource::Jobs | Resource::CronJobs => "batch",
            Resource::PodDisruptionBudgets => "policy",
            Resource::Leases => "coordination.k8s.io",
            Resource::ValidatingWebhookConfigurations | Resource::MutatingWebhookConfigurations => {
                "admissionregistration.k8s.io"
            }
            Resource::EndpointSlices => "discovery.k8s.io",
            _ => "",
        }
    }

    pub fn api_version(self) -> &'static str {
        match self.group() {
            "apps" => "apps/v1",
            "apiregistration.k8s.io" => "apiregistration.k8s.io/v1",
            "metrics.k8s.io" => "metrics.k8s.io/v1beta1",
            "autoscaling" => "autoscaling/v2",
            "batch" => "batch/v1",
            "policy" => "policy/v1",
            "coordination.k8s.io" => "coordination.k8s.io/v1",
            "admissionregistration.k8s.io" => "admissionregistration.k8s.io/v1",
            "discovery.k8s.io" => "discovery.k8s.io/v1",
            _ => "v1",
        }
    }

    /// Where its lists are: `/api/v1/` or `/apis/GROUP/VERSION/`.
    pub fn prefix(self) -> String {
        match self.group() {
            "" => "/api/v1/".to_string(),
            _ => format!("/apis/{}/", self.api_version()),
        }
    }

    pub fn kind(self) -> &'static str {
        match self {
            Resource::Nodes => "Node",
            Resource::Pods => "Pod",
            Resource::Deployments => "Deployment",
            Resource::StatefulSets => "StatefulSet",
            Resource::DaemonSets => "DaemonSet",
            Resource::PersistentVolumeClaims => "PersistentVolumeClaim",
            Resource::Events => "Event",
            Resource::ApiServices => "APIService",
            Resource::NodeMetrics => "NodeMetrics",
            Resource::PodMetrics => "PodMetrics",
            Resource::HorizontalPodAutoscalers => "HorizontalPodAutoscaler",
            Resource::Jobs => "Job",
            Resource::CronJobs => "CronJob",
            Resource::PodDisruptionBudgets => "PodDisruptionBudget",
            Resource::ResourceQuotas => "ResourceQuota",
            Resource::PersistentVolumes => "PersistentVolume",
            Resource::Leases => "Lease",
            Resource::ValidatingWebhookConfigurations => "ValidatingWebhookConfiguration",
            Resource::MutatingWebhookConfigurations => "MutatingWebhookConfiguration",
            Resource::Services => "Service",
            Resource::EndpointSlices => "EndpointSlice",
            Resource::Namespaces => "Namespace",
        }
    }

    pub fn namespaced(self) -> bool {
        !matches!(
            self,
            Resource::Nodes
                | Resource::ApiServices
                | Resource::NodeMetrics
                | Resource::PersistentVolumes
                | Resource::ValidatingWebhookConfigurations
                | Resource::MutatingWebhookConfigurations
                | Resource::Namespaces
        )
    }

    /// `pods`, or `deployments.apps` for a named group, as the API server writes it in messages.
    pub fn qualified(self) -> String {
        match self.group() {
            "" => self.plural().to_string(),
            g => format!("{}.{g}", self.plural()),
        }
    }

    /// Fields the API server accepts in a field selector for this resource, besides
    /// `metadata.name` and `metadata.namespace`.
    fn selectable_fields(self) -> &'static [&'static str] {
        match self {
            Resource::Pods => &[
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "status.phase",
                "status.podIP",
                "status.nominatedNodeName",
            ],
            Resource::Nodes => &["spec.unschedulable"],
            Resource::Events => &[
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source",
                "type",
            ],
            _ => &[],
        }
    }
}

/// What a request path asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    Version,
    /// `/api`, `/apis`, `/api/v1`, `/apis/apps/v1`: what kubectl asks before it lists.
    Discovery(&'static str),
    List {
        resource: Resource,
        namespace: Option<String>,
    },
    /// `/api/v1/namespaces/NAME`: one Namespace.
    Namespace(String),
}

/// Maps a request path to a route, or `None` (404) when the API server would not serve it.
pub fn route(path: &str) -> Option<Route> {
    if path == "/version" || path == "/version/" {
        return Some(Route::Version);
    }
    for doc in [
        "/api",
        "/apis",
        "/api/v1",
        "/apis/apps/v1",
        "/apis/apiregistration.k8s.io/v1",
        "/apis/autoscaling/v2",
        "/apis/batch/v1",
        "/apis/policy/v1",
        "/apis/coordination.k8s.io/v1",
        "/apis/metrics.k8s.io/v1beta1",
    ] {
        if path.trim_end_matches('/') == doc {
            return Some(Route::Discovery(doc));
        }
    }
    if let Some(name) = path.strip_prefix("/api/v1/namespaces/")
        && !name.is_empty()
        && !name.contains('/')
    {
        return Some(Route::Namespace(name.to_string()));
    }
    let (resource, namespace) = Resource::ALL.into_iter().find_map(|r| {
        let rest = path.strip_prefix(r.prefix().as_str())?;
        let parts: Vec<&str> = rest.split('/').collect();
        match parts.as_slice() {
            [plural] if *plural == r.plural() => Some((r, None)),
            ["namespaces", ns, plural] if !ns.is_empty() && *plural == r.plural() => Some((r, Some(ns.to_string()))),
            _ => None,
        }
    })?;
    if namespace.is_some() && !resource.namespaced() {
        return None;
    }
    Some(Route::List { resource, namespace })
}

/// The discovery documents, as kube-apiserver answers them (legacy, unaggregated form). An
/// aggregated group is listed only while its APIService is Available, as the aggregator does.
pub fn discovery(doc: &str, metrics_available: bool) -> String {
    let resources = |group_version: &str, list: &[(Resource, &str)]| {
        let resources: Vec<Value> = list
            .iter()
            .map(|(r, short)| {
                json!({
                    "name": r.plural(),
                    "singularName": r.kind().to_lowercase(),
                    "namespaced": r.namespaced(),
                    "kind": r.kind(),
                    "verbs": if r.group() == "metrics.k8s.io" { json!(["get", "list"]) } else { json!(["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]) },
                    "shortNames": if short.is_empty() { json!([]) } else { json!([short]) },
                })
            })
            .collect();
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources})
            .to_string()
    };
    match doc {
        "/api" => json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.11:6443"}]}).to_string(),
        "/apis" => {
            let group = |name: &str, version: &str| {
                let gv = format!("{name}/{version}");
                json!({"name": name, "versions": [{"groupVersion": gv, "version": version}], "preferredVersion": {"groupVersion": gv, "version": version}})
            };
            let mut groups = vec![
                group("apps", "v1"),
                group("apiregistration.k8s.io", "v1"),
                group("autoscaling", "v2"),
                group("batch", "v1"),
                group("policy", "v1"),
                group("coordination.k8s.io", "v1"),
                group("admissionregistration.k8s.io", "v1"),
                group("discovery.k8s.io", "v1"),
            ];
            if metrics_available {
                groups.push(group("metrics.k8s.io", "v1beta1"));
            }
            json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}).to_string()
        }
        "/api/v1" => resources("v1", &[(Resource::Nodes, "no"), (Resource::Pods, "po"), (Resource::PersistentVolumeClaims, "pvc"), (Resource::Events, "ev"), (Resource::ResourceQuotas, "quota"), (Resource::PersistentVolumes, "pv"), (Resource::Services, "svc"), (Resource::Namespaces, "ns")]),
        "/apis/policy/v1" => resources("policy/v1", &[(Resource::PodDisruptionBudgets, "pdb")]),
        "/apis/coordination.k8s.io/v1" => resources("coordination.k8s.io/v1", &[(Resource::Leases, "")]),
        "/apis/admissionregistration.k8s.io/v1" => resources("admissionregistration.k8s.io/v1", &[(Resource::ValidatingWebhookConfigurations, ""), (Resource::MutatingWebhookConfigurations, "")]),
        "/apis/discovery.k8s.io/v1" => resources("discovery.k8s.io/v1", &[(Resource::EndpointSlices, "")]),
        "/apis/apiregistration.k8s.io/v1" => resources("apiregistration.k8s.io/v1", &[(Resource::ApiServices, "")]),
        "/apis/autoscaling/v2" => resources("autoscaling/v2", &[(Resource::HorizontalPodAutoscalers, "hpa")]),
        "/apis/batch/v1" => resources("batch/v1", &[(Resource::Jobs, ""), (Resource::CronJobs, "cj")]),
        "/apis/metrics.k8s.io/v1beta1" => resources("metrics.k8s.io/v1beta1", &[(Resource::NodeMetrics, ""), (Resource::PodMetrics, "")]),
        _ => resources("apps/v1", &[(Resource::Deployments, "deploy"), (Resource::StatefulSets, "sts"), (Resource::DaemonSets, "ds")]),
    }
}

/// One stored object: its sort key, the values of its selectable fields, and its JSON as a
/// List item (without `kind` and `apiVersion`, as the API server writes List items). Cloning
/// one shares its JSON.
#[derive(Clone, Debug)]
pub struct StoredObject {
    pub key: String,
    pub namespace: String,
    pub resource_version: u64,
    fields: Vec<(&'static str, String)>,
    pub json: std::sync::Arc<str>,
}

impl StoredObject {
    /// Prepares `object` for serving. `resource_version` is stamped into its metadata.
    pub fn new(resource: Resource, mut object: Value, resource_version: u64) -> StoredObject {
        if let Some(map) = object.as_object_mut() {
            map.remove("kind");
            map.remove("apiVersion");
        }
        if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), Value::String(resource_version.to_string()));
        }
        let name = field_value(&object, "metadata.name");
        let namespace = field_value(&object, "metadata.namespace");
        let mut fields = vec![("metadata.name", name.clone()), ("metadata.namespace", namespace.clone())];
        for f in resource.selectable_fields() {
            fields.push((f, field_value(&object, f)));
        }
        let key = object_key(resource, &namespace, &name);
        StoredObject { key, namespace, resource_version, fields, json: object.to_string().into() }
    }

    /// The same object at another resourceVersion (a deletion's last state, say).
    pub fn restamped(&self, resource: Resource, resource_version: u64) -> StoredObject {
        let object: Value = serde_json::from_str(&self.json).expect("stored objects are JSON");
        StoredObject::new(resource, object, resource_version)
    }

    /// Its JSON as the API server writes a single object (a watch event's): `kind` and
    /// `apiVersion` first.
    pub fn with_kind(&self, resource: Resource) -> String {
        let rest = self.json.strip_prefix('{').unwrap_or("}");
        let sep = if rest.starts_with('}') { "" } else { "," };
        format!(r#"{{"kind":"{}","apiVersion":"{}"{sep}{rest}"#, resource.kind(), resource.api_version())
    }

    fn field(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(f, _)| *f == name).map(|(_, v)| v.as_str())
    }
}

/// The string value of a dotted field path, as the API server's field selectors see it
/// (absent fields are the empty string, booleans `true`/`false`).
fn field_value(object: &Value, path: &str) -> String {
    let mut cur = object;
    for part in path.split('.') {
        match cur.get(part) {
            Some(v) => cur = v,
            None => return String::new(),
        }
    }
    match cur {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// One requirement of a field selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub field: String,
    pub equal: bool,
    pub value: String,
}

/// Parses `type=Warning,metadata.namespace!=ci` and checks every field is selectable.
pub fn parse_field_selector(resource: Resource, selector: &str) -> Result<Vec<Requirement>, ApiError> {
    let mut out = Vec::new();
    for term in selector.split(',').filter(|t| !t.is_empty()) {
        let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
            (f, false, v)
        } else if let Some((f, v)) = term.split_once("==") {
            (f, true, v)
        } else if let Some((f, v)) = term.split_once('=') {
            (f, true, v)
        } else {
            return Err(ApiError::bad_request(format!("invalid selector: '{selector}'; can't understand '{term}'")));
        };
        let field = field.trim();
        let known =
            field == "metadata.name" || field == "metadata.namespace" || resource.selectable_fields().contains(&field);
        if !known {
            return Err(ApiError::bad_request(format!("field label not supported: {field}")));
        }
        out.push(Requirement { field: field.to_string(), equal, value: value.trim().to_string() });
    }
    Ok(out)
}

/// The key objects are stored and sorted by: `namespace/name`, or the name of a cluster-scoped one.
pub fn object_key(resource: Resource, namespace: &str, name: &str) -> String {
    if resource.namespaced() { format!("{namespace}/{name}") } else { name.to_string() }
}

/// The sort key of an object not yet stored.
pub fn key_of(resource: Resource, object: &Value) -> String {
    object_key(resource, &field_value(object, "metadata.namespace"), &field_value(object, "metadata.name"))
}

pub(crate) fn matches(object: &StoredObject, requirements: &[Requirement]) -> bool {
    requirements.iter().all(|r| (object.field(&r.field).unwrap_or("") == r.value) == r.equal)
}

/// The parameters of a list request that the simulator honours.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListParams {
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
    pub field_selector: Option<String>,
}

impl ListParams {
    pub fn from_query(query: &str) -> Result<ListParams, ApiError> {
        let mut p = ListParams::default();
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            match k.as_ref() {
                "limit" => {
                    let n: i64 = v.parse().map_err(|_| ApiError::bad_request(format!("invalid limit: {v:?}")))?;
                    p.limit = if n > 0 { Some(n as usize) } else { None };
                }
                "continue" if !v.is_empty() => p.continue_token = Some(v.into_owned()),
                "fieldSelector" if !v.is_empty() => p.field_selector = Some(v.into_owned()),
                _ => {}
            }
        }
        Ok(p)
    }
}

/// A boolean query parameter as the API server reads it: only `0` and `false` (in any case)
/// are false; any other value, the empty one too, is true.
pub fn query_bool(value: &str) -> bool {
    !(value == "0" || value.eq_ignore_ascii_case("false"))
}

/// Whether a request is a watch: `watch` present and not false (the first one counts).
pub fn is_watch(query: &str) -> bool {
    form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "watch").is_some_and(|(_, v)| query_bool(&v))
}

/// One error of a ListOptions validation, as a `Status` cause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: &'static str,
    /// `FieldValueForbidden`, `FieldValueNotSupported`.
    pub reason: &'static str,
    /// `Forbidden: …`, `Unsupported value: …`.
    pub detail: String,
}

impl FieldError {
    fn forbidden(field: &'static str, why: &str) -> FieldError {
        FieldError { field, reason: "FieldValueForbidden", detail: format!("Forbidden: {why}") }
    }

    fn not_supported(field: &'static str, value: &str, supported: &[&str]) -> FieldError {
        let supported: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        FieldError {
            field,
            reason: "FieldValueNotSupported",
            detail: format!("Unsupported value: {value:?}: supported values: {}", supported.join(", ")),
        }
    }
}

/// What a watch request asks for, once defaulted and validated as kube-apiserver does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WatchParams {
    /// `resourceVersion` as sent (empty when absent).
    pub resource_version: String,
    pub allow_bookmarks: bool,
    /// `timeoutSeconds`, when sent and not 0.
    pub timeout_seconds: Option<i64>,
    pub field_selector: Option<String>,
    /// `sendInitialEvents`, after defaulting: with the WatchList feature (on by default since
    /// 1.34) a watch from `""` or `"0"` that names neither it nor `resourceVersionMatch` is
    /// taken as `sendInitialEvents=true&resourceVersionMatch=NotOlderThan`.
    pub send_initial_events: Option<bool>,
    pub resource_version_match: Option<String>,
}

impl WatchParams {
    /// Parses, defaults and validates a watch's query. `watch_list` says whether the server
    /// has the WatchList feature.
    pub fn from_query(query: &str, watch_list: bool) -> Result<WatchParams, ApiError> {
        let mut p = WatchParams::default();
        let mut continue_token = String::new();
        let mut seen = std::collections::HashSet::new();
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            // Like the API server, the first value of a parameter counts.
            if !seen.insert(k.clone().into_owned()) {
                continue;
            }
            match k.as_ref() {
                "resourceVersion" => p.resource_version = v.into_owned(),
                "allowWatchBookmarks" => p.allow_bookmarks = query_bool(&v),
                "timeoutSeconds" if !v.is_empty() => {
                    p.timeout_seconds = Some(parse_int(&v)?).filter(|t| *t != 0);
                }
                "limit" if !v.is_empty() => {
                    parse_int(&v)?;
                }
                "fieldSelector" if !v.is_empty() => p.field_selector = Some(v.into_owned()),
                "sendInitialEvents" => p.send_initial_events = Some(query_bool(&v)),
                "resourceVersionMatch" if !v.is_empty() => p.resource_version_match = Some(v.into_owned()),
                "continue" => continue_token = v.into_owned(),
                _ => {}
            }
        }
        let legacy = p.resource_version.is_empty() || p.resource_version == "0";
        if watch_list && p.send_initial_events.is_none() && p.resource_version_match.is_none() && legacy {
            p.send_initial_events = Some(true);
            p.resource_version_match = Some("NotOlderThan".into());
        }
        let mut errors = Vec::new();
        let not_older = p.resource_version_match.as_deref() == Some("NotOlderThan");
        if p.send_initial_events.is_some() {
            if !not_older {
                errors.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ));
            }
            if !watch_list {
                errors.push(FieldError::forbidden(
                    "sendInitialEvents",
                    "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
                ));
            }
        }
        if let Some(m) = &p.resource_version_match {
            if p.send_initial_events.is_none() {
                errors.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if !not_older {
                errors.push(FieldError::not_supported("resourceVersionMatch", m, &["NotOlderThan"]));
            }
            if !continue_token.is_empty() {
                errors.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid_list_options(&errors));
        }
        Ok(p)
    }

    /// Whether the stream starts with the current objects (a streaming list, or a legacy watch
    /// from `""`/`"0"`).
    pub fn initial_events(&self) -> bool {
        match self.send_initial_events {
            Some(send) => send,
            None => self.resource_version.is_empty() || self.resource_version == "0",
        }
    }

    /// A streaming list in the sense of KEP-3157: initial events, and the bookmark that ends
    /// them (only with `allowWatchBookmarks`). The API server gzips only these streams.
    pub fn watch_list(&self) -> bool {
        self.send_initial_events == Some(true) && self.allow_bookmarks
    }

    /// The resourceVersion as a number (`""` is 0), or the API server's error for it: a 500
    /// without a reason.
    pub fn parsed_resource_version(&self) -> Result<u64, ApiError> {
        if self.resource_version.is_empty() {
            return Ok(0);
        }
        let rv = &self.resource_version;
        let why = if !rv.bytes().all(|b| b.is_ascii_digit()) {
            "invalid syntax"
        } else if rv.parse::<u64>().is_err() {
            "value out of range"
        } else {
            return Ok(rv.parse().expect("checked"));
        };
        Err(ApiError {
            code: 500,
            reason: "",
            message: format!("resourceVersion: Invalid value: {rv:?}: strconv.ParseUint: parsing {rv:?}: {why}"),
            details: None,
            continue_token: None,
        })
    }
}

/// The API server's validation of a list's (not a watch's) ListOptions: `sendInitialEvents`
/// is for watches only, and `resourceVersionMatch` needs a `resourceVersion`.
pub fn validate_list_query(query: &str) -> Result<(), ApiError> {
    let first =
        |key: &str| form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == key).map(|(_, v)| v.into_owned());
    let mut errors = Vec::new();
    if let Some(m) = first("resourceVersionMatch").filter(|m| !m.is_empty()) {
        let rv = first("resourceVersion").unwrap_or_default();
        if rv.is_empty() {
            errors.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if first("continue").is_some_and(|c| !c.is_empty()) {
            errors.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if m != "Exact" && m != "NotOlderThan" {
            errors.push(FieldError::not_supported("resourceVersionMatch", &m, &["Exact", "NotOlderThan", ""]));
        }
        if m == "Exact" && rv == "0" {
            errors.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if first("sendInitialEvents").is_some() {
        errors.push(FieldError::forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"));
    }
    if errors.is_empty() { Ok(()) } else { Err(ApiError::invalid_list_options(&errors)) }
}

/// An integer query parameter, or the API server's 400 for it.
fn parse_int(value: &str) -> Result<i64, ApiError> {
    value.parse::<i64>().map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => "value out of range",
            _ => "invalid syntax",
        };
        ApiError::bad_request(format!("strconv.ParseInt: parsing {value:?}: {why}"))
    })
}

/// The continue token of the real API server: base64 of `{"v":"meta.k8s.io/v1","rv":N,"start":"KEY\u0000"}`.
pub fn encode_continue(resource_version: u64, start_after_key: &str) -> String {
    let body = json!({"v": "meta.k8s.io/v1", "rv": resource_version, "start": format!("{start_after_key}\u{0}")});
    B64.encode(body.to_string())
}

/// The resource version and the start key of a continue token.
pub fn decode_continue(token: &str) -> Result<(u64, String), ApiError> {
    let invalid = || {
        ApiError::bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".to_string(),
        )
    };
    let raw = B64.decode(token).map_err(|_| invalid())?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| invalid())?;
    if v.get("v").and_then(Value::as_str) != Some("meta.k8s.io/v1") {
        return Err(invalid());
    }
    let rv = v.get("rv").and_then(Value::as_u64).ok_or_else(invalid)?;
    let start = v.get("start").and_then(Value::as_str).ok_or_else(invalid)?.to_string();
    Ok((rv, start))
}

/// One page of a List, as JSON text.
pub fn list_page(
    resource: Resource,
    objects: &[StoredObject],
    namespace: Option<&str>,
    params: &ListParams,
    resource_version: u64,
) -> Result<String, ApiError> {
    let requirements = match &params.field_selector {
        Some(s) => parse_field_selector(resource, s)?,
        None => Vec::new(),
    };
    let start = match &params.continue_token {
        Some(t) => Some(decode_continue(t)?.1),
        None => None,
    };
    let first = match &start {
        Some(key) => objects.partition_point(|o| o.key.as_str() < key.as_str()),
        None => 0,
    };
    let limit = params.limit.unwrap_or(usize::MAX);
    let mut selected =
        objects[first..].iter().filter(|o| namespace.is_none_or(|ns| o.namespace == ns) && matches(o, &requirements));
    let mut items = String::new();
    let mut count = 0usize;
    let mut last_key = "";
    for o in selected.by_ref().take(limit) {
        if count > 0 {
            items.push(',');
        }
        items.push_str(&o.json);
        last_key = o.key.as_str();
        count += 1;
    }
    // Whether anything follows, and how much when the API server would say so.
    let remaining = if requirements.is_empty() && namespace.is_none() {
        objects.len() - first - count
    } else if requirements.is_empty() {
        selected.count()
    } else {
        usize::from(selected.next().is_some())
    };
    let mut metadata = serde_json::Map::new();
    metadata.insert("resourceVersion".into(), Value::String(resource_version.to_string()));
    if remaining > 0 {
        metadata.insert("continue".into(), Value::String(encode_continue(resource_version, last_key)));
        // kube-apiserver leaves remainingItemCount out when the request has a selector.
        if requirements.is_empty() {
            metadata.insert("remainingItemCount".into(), Value::from(remaining as u64));
        }
    }
    let mut body = String::with_capacity(items.len() + 256);
    body.push_str(&format!(
        r#"{{"kind":"{}List","apiVersion":"{}","metadata":{},"items":["#,
        resource.kind(),
        resource.api_version(),
        Value::Object(metadata)
    ));
    body.push_str(&items);
    body.push_str("]}");
    Ok(body)
}

/// An API failure, rendered as the API server's `Status` object.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
    pub continue_token: Option<String>,
}

impl ApiError {
    pub fn bad_request(message: String) -> ApiError {
        ApiError { code: 400, reason: "BadRequest", message, details: None, continue_token: None }
    }

    pub fn unauthorized() -> ApiError {
        ApiError {
            code: 401,
            reason: "Unauthorized",
            message: "Unauthorized".into(),
            details: None,
            continue_token: None,
        }
    }

    pub fn forbidden(resource: Resource, user: &str, namespace: Option<&str>) -> ApiError {
        ApiError::forbidden_to("list", resource, user, namespace)
    }

    /// 403 for `verb` (`list`, `watch`) as RBAC words it.
    pub fn forbidden_to(verb: &str, resource: Resource, user: &str, namespace: Option<&str>) -> ApiError {
        let scope = match namespace {
            Some(ns) => format!("in the namespace \"{ns}\""),
            None => "at the cluster scope".to_string(),
        };
        let mut details = json!({"kind": resource.plural()});
        if !resource.group().is_empty() {
            details["group"] = json!(resource.group());
        }
        ApiError {
            code: 403,
            reason: "Forbidden",
            message: format!(
                "{} is forbidden: User \"{user}\" cannot {verb} resource \"{}\" in API group \"{}\" {scope}",
                resource.qualified(),
                resource.plural(),
                resource.group()
            ),
            details: Some(details),
            continue_token: None,
        }
    }

    /// 403 on a GET of a Namespace, as RBAC words it (a Namespace's request is in its own
    /// namespace).
    pub fn namespace_forbidden(name: &str, user: &str) -> ApiError {
        ApiError {
            code: 403,
            reason: "Forbidden",
            message: format!(
                "namespaces \"{name}\" is forbidden: User \"{user}\" cannot get resource \"namespaces\" in API group \"\" in the namespace \"{name}\""
            ),
            details: Some(json!({"name": name, "kind": "namespaces"})),
            continue_token: None,
        }
    }

    /// 404 on a GET of a Namespace that does not exist.
    pub fn namespace_not_found(name: &str) -> ApiError {
        ApiError {
            code: 404,
            reason: "NotFound",
            message: format!("namespaces \"{name}\" not found"),
            details: Some(json!({"name": name, "kind": "namespaces"})),
            continue_token: None,
        }
    }

    /// 422 for ListOptions that fail validation, one cause per error.
    pub fn invalid_list_options(errors: &[FieldError]) -> ApiError {
        let described: Vec<String> = errors.iter().map(|e| format!("{}: {}", e.field, e.detail)).collect();
        let summary = match described.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let causes: Vec<Value> =
            errors.iter().map(|e| json!({"reason": e.reason, "message": e.detail, "field": e.field})).collect();
        ApiError {
            code: 422,
            reason: "Invalid",
            message: format!("ListOptions.meta.k8s.io \"\" is invalid: {summary}"),
            details: Some(json!({"group": "meta.k8s.io", "kind": "ListOptions", "causes": causes})),
            continue_token: None,
        }
    }

    /// 405 for a verb the resource's storage does not serve (watch on the Metrics API).
    pub fn method_not_supported(resource: Resource, verb: &str) -> ApiError {
        ApiError {
            code: 405,
            reason: "MethodNotAllowed",
            message: format!("{verb} is not supported on resources of kind \"{}\"", resource.qualified()),
            details: Some(json!({"group": resource.group(), "kind": resource.plural()})),
            continue_token: None,
        }
    }

    /// 410 in a watch's ERROR event: the watch cache no longer has the events after `requested`
    /// (`oldest` is the resourceVersion its history starts after).
    pub fn too_old_resource_version(requested: u64, oldest: u64) -> ApiError {
        ApiError {
            code: 410,
            reason: "Expired",
            message: format!("too old resource version: {requested} ({oldest})"),
            details: None,
            continue_token: None,
        }
    }

    /// 410 in a watch's ERROR event as the API server words it when etcd compacted past the
    /// revision a watch it serves had reached.
    pub fn watch_compacted() -> ApiError {
        ApiError {
            code: 410,
            reason: "Expired",
            message: "The resourceVersion for the provided watch is too old.".into(),
            details: None,
            continue_token: None,
        }
    }

    /// 504 in a watch's ERROR event: a streaming list asked for a resourceVersion the store did
    /// not reach within 3 s.
    pub fn too_large_resource_version(requested: u64, current: u64) -> ApiError {
        ApiError {
            code: 504,
            reason: "Timeout",
            message: format!("Timeout: Too large resource version: {requested}, current: {current}"),
            details: Some(json!({
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1,
            })),
            continue_token: None,
        }
    }

    pub fn not_found() -> ApiError {
        ApiError {
            code: 404,
            reason: "NotFound",
            message: "the server could not find the requested resource".into(),
            details: Some(json!({})),
            continue_token: None,
        }
    }

    pub fn method_not_allowed() -> ApiError {
        ApiError {
            code: 405,
            reason: "MethodNotAllowed",
            message: "the server does not allow this method on the requested resource".into(),
            details: Some(json!({})),
            continue_token: None,
        }
    }

    /// 410 for a continue token whose snapshot was compacted away.
    pub fn expired(fresh_continue: String) -> ApiError {
        ApiError {
            code: 410,
            reason: "Expired",
            message: "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.".into(),
            details: None,
            continue_token: Some(fresh_continue),
        }
    }

    pub fn internal(message: &str) -> ApiError {
        ApiError {
            code: 500,
            reason: "InternalError",
            message: format!("Internal error occurred: {message}"),
            details: None,
            continue_token: None,
        }
    }

    pub fn service_unavailable() -> ApiError {
        ApiError {
            code: 503,
            reason: "ServiceUnavailable",
            message: "the server is currently unable to handle the request".into(),
            details: None,
            continue_token: None,
        }
    }

    pub fn too_many_requests() -> ApiError {
        ApiError {
            code: 429,
            reason: "TooManyRequests",
            message: "the server has received too many requests and has asked us to try again later".into(),
            details: None,
            continue_token: None,
        }
    }

    /// The `Status` body.
    pub fn body(&self) -> String {
        let mut metadata = json!({});
        if let Some(c) = &self.continue_token {
            metadata["continue"] = json!(c);
        }
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": metadata,
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        // An error the API server does not classify has no reason at all.
        if self.reason.is_empty() {
            status.as_object_mut().expect("an object").remove("reason");
        }
        if let Some(d) = &self.details {
            status["details"] = d.clone();
        }
        status.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(resource: Resource, names: &[(&str, &str, &str)]) -> Vec<StoredObject> {
        let mut v: Vec<StoredObject> = names
            .iter()
            .enumerate()
            .map(|(i, (ns, name, ty))| {
                StoredObject::new(
                    resource,
                    json!({"kind": "X", "apiVersion": "v1", "metadata": {"namespace": ns, "name": name}, "type": ty}),
                    i as u64 + 1,
                )
            })
            .collect();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        v
    }

    fn names(page: &str) -> Vec<String> {
        let v: Value = serde_json::from_str(page).unwrap();
        v["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap().to_string()).collect()
    }

    #[test]
    fn routes_follow_the_api_paths() {
        assert_eq!(route("/version"), Some(Route::Version));
        assert_eq!(route("/api/v1/namespaces/shop"), Some(Route::Namespace("shop".into())));
        assert_eq!(route("/api/v1/pods"), Some(Route::List { resource: Resource::Pods, namespace: None }));
        assert_eq!(
            route("/api/v1/namespaces/shop/pods"),
            Some(Route::List { resource: Resource::Pods, namespace: Some("shop".into()) })
        );
        assert_eq!(
            route("/apis/apps/v1/deployments"),
            Some(Route::List { resource: Resource::Deployments, namespace: None })
        );
        assert_eq!(route("/api/v1/deployments"), None, "deployments live in the apps group");
        assert_eq!(route("/apis/apps/v1/pods"), None);
        assert_eq!(route("/api/v1/namespaces/x/nodes"), None, "nodes are cluster-scoped");
        assert_eq!(route("/api/v1/secrets"), None);
        assert_eq!(route("/apis/apps/v1"), Some(Route::Discovery("/apis/apps/v1")));
        let v: Value = serde_json::from_str(&discovery("/api/v1", false)).unwrap();
        assert_eq!(v["resources"][1]["name"], "pods");
    }

    #[test]
    fn pages_follow_continue_until_empty() {
        let objs = store(
            Resource::Pods,
            &[("a", "p1", ""), ("a", "p2", ""), ("b", "p3", ""), ("b", "p4", ""), ("c", "p5", "")],
        );
        let mut params = ListParams { limit: Some(2), ..Default::default() };
        let mut seen = Vec::new();
        let mut remaining_counts = Vec::new();
        loop {
            let page = list_page(Resource::Pods, &objs, None, &params, 9).unwrap();
            let v: Value = serde_json::from_str(&page).unwrap();
            assert_eq!(v["kind"], "PodList");
            assert!(v["items"][0].get("kind").is_none(), "List items carry no kind");
            seen.extend(names(&page));
            remaining_counts.push(v["metadata"]["remainingItemCount"].as_u64());
            match v["metadata"]["continue"].as_str() {
                Some(c) => params.continue_token = Some(c.to_string()),
                None => break,
            }
        }
        assert_eq!(seen, ["p1", "p2", "p3", "p4", "p5"]);
        assert_eq!(remaining_counts, [Some(3), Some(1), None]);
    }

    #[test]
    fn field_selectors_filter_and_drop_remaining_count() {
        let objs = store(
            Resource::Events,
            &[("a", "e1", "Warning"), ("a", "e2", "Normal"), ("b", "e3", "Warning"), ("c", "e4", "Warning")],
        );
        let params = ListParams {
            limit: Some(1),
            field_selector: Some("type=Warning,metadata.namespace!=b".into()),
            ..Default::default()
        };
        let page = list_page(Resource::Events, &objs, None, &params, 3).unwrap();
        let v: Value = serde_json::from_str(&page).unwrap();
        assert_eq!(names(&page), ["e1"]);
        assert!(v["metadata"]["continue"].is_string());
        assert!(v["metadata"].get("remainingItemCount").is_none());
        let next = ListParams { continue_token: v["metadata"]["continue"].as_str().map(String::from), ..params };
        assert_eq!(names(&list_page(Resource::Events, &objs, None, &next, 3).unwrap()), ["e4"]);
    }

    #[test]
    fn unknown_field_is_a_bad_request() {
        let err = parse_field_selector(Resource::Deployments, "type=Warning").unwrap_err();
        assert_eq!(err.code, 400);
        assert_eq!(err.message, "field label not supported: type");
    }

    #[test]
    fn continue_tokens_round_trip_and_reject_garbage() {
        let t = encode_continue(42, "ns/name");
        assert_eq!(decode_continue(&t).unwrap(), (42, "ns/name\u{0}".to_string()));
        assert_eq!(decode_continue("not-a-token").unwrap_err().code, 400);
    }

    #[test]
    fn list_options_are_validated_as_the_api_server_does() {
        assert!(validate_list_query("limit=500&resourceVersion=0&resourceVersionMatch=NotOlderThan").is_ok());
        let e = validate_list_query("limit=500&sendInitialEvents=true").unwrap_err();
        assert_eq!((e.code, e.reason), (422, "Invalid"));
        assert_eq!(
            e.message,
            "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"
        );
        let e = validate_list_query("resourceVersionMatch=Foo&resourceVersion=1").unwrap_err();
        assert_eq!(
            e.message,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: \"Foo\": supported values: \"Exact\", \"NotOlderThan\", \"\""
        );
        let e = validate_list_query("resourceVersionMatch=Exact&resourceVersion=0").unwrap_err();
        assert_eq!(
            e.message,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""
        );
    }

    #[test]
    fn forbidden_status_reads_like_the_api_server() {
        let e = ApiError::forbidden(Resource::Deployments, "system:serviceaccount:kube-system:dumbmonit", None);
        let v: Value = serde_json::from_str(&e.body()).unwrap();
        assert_eq!(v["code"], 403);
        assert_eq!(v["reason"], "Forbidden");
        assert_eq!(
            v["message"],
            "deployments.apps is forbidden: User \"system:serviceaccount:kube-system:dumbmonit\" cannot list resource \"deployments\" in API group \"apps\" at the cluster scope"
        );
        assert_eq!(v["details"], json!({"group": "apps", "kind": "deployments"}));
    }
}
