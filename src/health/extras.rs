//! What the optional reads say: aggregated APIServices, the Metrics API (and why it is not
//! there), usage per node and pod, HPAs that cannot scale.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::NodeHealth;
use crate::collect::Collection;
use crate::collect::optional::{Extras, METRICS_APISERVICE, Namespaced, Optional, Usage};
use crate::lang::Lang;

/// An aggregated APIService (one served by a Service in the cluster).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApiServiceHealth {
    pub name: String,
    /// `namespace/name` of the Service it points to.
    pub service: String,
    pub available: bool,
    pub reason: String,
    pub message: String,
}

/// An HPA.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HpaHealth {
    pub namespace: String,
    pub name: String,
    /// The ScalingActive condition is True (an HPA that lists none counts as active).
    pub scaling_active: bool,
    pub reason: String,
    pub message: String,
    pub at_max: bool,
    pub min_replicas: i64,
    pub current_replicas: i64,
    pub desired_replicas: i64,
    pub max_replicas: i64,
    /// At its maximum, which is above its minimum: it would scale out further if it could.
    pub maxed_out: bool,
    /// It wants another count than it has, between its bounds, and its count did not change
    /// since the last cycle: something stops it from getting there.
    pub mismatch: bool,
}

/// The optional reads, derived.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ExtrasHealth {
    /// Aggregated APIServices; None when the APIServices were not read.
    pub apiservices: Option<Vec<ApiServiceHealth>>,
    /// HPAs; None when they were not read.
    pub hpas: Option<Vec<HpaHealth>>,
    /// Jobs with a Failed condition; None when Jobs were not read.
    pub jobs: Option<Vec<super::batch::JobHealth>>,
    /// Jobs still running, with how long; None when Jobs were not read.
    pub running_jobs: Option<Vec<super::batch::RunningJob>>,
    /// Every Job read: (namespace, name, owner, failed), for `job_failed`.
    #[serde(skip)]
    pub all_jobs: Vec<(String, String, String, bool)>,
    /// CronJobs not suspended; None when CronJobs were not read.
    pub cronjobs: Option<Vec<super::batch::CronJobHealth>>,
    /// PodDisruptionBudgets; None when they were not read.
    pub pdbs: Option<Vec<super::policy::PdbHealth>>,
    /// Each resource of each ResourceQuota; None when they were not read.
    pub quotas: Option<Vec<super::policy::QuotaHealth>>,
    /// What the quotas promise of CPU and memory against the nodes; None when the quotas were
    /// not read, or the nodes not visible.
    pub quota_commitments: Option<Vec<super::policy::QuotaCommitment>>,
    /// PersistentVolumes; None when they were not read.
    pub pvs: Option<Vec<super::policy::PvHealth>>,
    /// The control plane's components whose leader lease exists; None when the leases were not
    /// read.
    pub control_plane: Option<Vec<super::plane::ComponentHealth>>,
    /// The admission webhooks, judged against their backends; None when either kind of
    /// configuration was not read.
    pub webhooks: Option<Vec<super::admission::WebhookHealth>>,
    /// The webhooks' backends were read (or none was needed): their alerts may fire and
    /// resolve. Not so when the Services or EndpointSlices could not be read (a replay, a
    /// refusal, a failure): a read that failed resolves nothing.
    #[serde(skip)]
    pub webhooks_judged: bool,
    /// Objects read that could not be judged (a lease with no renewTime, a quota's quantity
    /// that does not parse), one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
    /// Whether usage could be read, and if not, why.
    pub metrics_api: MetricsApi,
    /// Pods' usage (the ignored namespaces left out), for `dumbmonit top pods`.
    #[serde(skip)]
    pub pod_usage: Vec<Usage>,
    /// The optional reads this service account may not do, each once (`apiservices.apiregistration.k8s.io`…).
    pub not_granted: Vec<&'static str>,
    /// Optional reads that failed otherwise, in one line each.
    pub failed: Vec<String>,
    /// Watch mode: the collections whose watch is not granted, read every interval instead.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub watch_not_granted: Vec<String>,
    /// Namespaced access: the namespaces read and what could not be seen; absent when the
    /// whole cluster is read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespaced: Option<Namespaced>,
    /// Namespaced access: the cluster-wide optional reads refused (a namespaced token cannot be
    /// granted them: not said as "not granted", which `--optional` would mend).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_visible: Vec<&'static str>,
}

/// The Metrics API, as this cycle found it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(tag = "state", content = "detail", rename_all = "snake_case")]
pub enum MetricsApi {
    Available,
    /// No APIService registers it: metrics-server is not deployed (a choice, not a fault).
    NotInstalled,
    /// The service account may not read it.
    NotGranted,
    /// Registered but not answering: `Metrics API not available: …` and what to check.
    Unavailable(String),
    /// Not read (a recorded cycle from before these reads).
    #[default]
    NotRead,
}

impl MetricsApi {
    /// One line for reports and pages.
    pub fn sentence(&self) -> String {
        self.sentence_in(Lang::En)
    }

    /// The sentence in `lang` (a diagnosis of the pipeline quotes the cluster: as it is).
    pub fn sentence_in(&self, lang: Lang) -> String {
        match self {
            MetricsApi::Available => lang.t("metrics-api-available"),
            MetricsApi::NotInstalled => {
                lang.tr("metrics-api-not-installed", &[("apiservice", METRICS_APISERVICE.into())])
            }
            MetricsApi::NotGranted => {
                lang.tr("metrics-api-not-granted", &[("resource", Collection::NODE_METRICS.resource().into())])
            }
            MetricsApi::Unavailable(d) => d.clone(),
            MetricsApi::NotRead => lang.t("metrics-api-not-read"),
        }
    }
}

impl ExtrasHealth {
    /// Namespaced access, in lines for the report and the page: the namespaces read, each one
    /// not read (or in part), and what cluster-wide this token does not see. Empty when the
    /// whole cluster is read.
    pub fn access_lines(&self) -> Vec<String> {
        self.access_lines_in(Lang::En)
    }

    /// The lines in `lang` (what the API server said of a namespace stays as it said it).
    pub fn access_lines_in(&self, lang: Lang) -> Vec<String> {
        let Some(n) = &self.namespaced else { return Vec::new() };
        let read = if n.read.is_empty() { lang.t("access-none") } else { n.read.join(", ") };
        let mut lines = vec![lang.tr("access-watched-in", &[("count", n.read.len().into()), ("read", read.into())])];
        lines.extend(n.problems.iter().cloned());
        if n.nodes_hidden {
            lines.push(lang.t("access-nodes-hidden"));
        }
        if n.node_events_hidden {
            lines.push(lang.t("access-node-events-hidden"));
        }
        if !self.not_visible.is_empty() {
            lines.push(lang.tr("access-not-visible", &[("kinds", self.not_visible.join(", ").into())]));
        }
        lines
    }

    /// Whether the Metrics API answered.
    pub fn metrics_available(&self) -> bool {
        self.metrics_api == MetricsApi::Available
    }
}

impl ApiServiceHealth {
    /// `Reason: message` of its Available condition.
    pub fn why(&self) -> String {
        match (self.reason.as_str(), self.message.as_str()) {
            ("", "") => "it has no Available condition".to_string(),
            (r, "") => r.to_string(),
            ("", m) => m.to_string(),
            (r, m) => format!("{r}: {m}"),
        }
    }
}

/// What to check when the Metrics API's APIService is down.
fn unavailable_diagnosis(a: &ApiServiceHealth) -> String {
    let why = a.why();
    let (namespace, service) = a.service.split_once('/').unwrap_or(("", a.service.as_str()));
    format!(
        "Metrics API not available: APIService {} is not Available ({why}). It points to service {}: check \
         that the service has endpoints (kubectl -n {namespace} get endpoints {service}), that its pods are \
         ready, and that the control plane can reach them: the API server calls them directly, so a control \
         plane outside the cluster's network (k0smotron, a KubeVirt-nested cluster), a NetworkPolicy or a \
         firewall stops it.",
        a.name, a.service
    )
}

/// Derives the optional reads, and adds the nodes' usage to `nodes`.
///
/// `time` is the cycle's, `now` the rules' (they differ on the stepped clock of the tests and
/// in a replay); `memory` carries the leases' renewals and the HPAs' counts across cycles.
pub fn assess(
    mut extras: Extras,
    nodes: &mut [Arc<NodeHealth>],
    time: jiff::Timestamp,
    now: jiff::Timestamp,
    memory: &mut super::Memory,
) -> ExtrasHealth {
    let mut out = ExtrasHealth {
        watch_not_granted: extras.watch_not_granted.clone(),
        namespaced: extras.namespaced.clone(),
        ..ExtrasHealth::default()
    };
    // The Metrics API says why it is missing in its own diagnosis.
    let metrics = [Collection::NODE_METRICS, Collection::POD_METRICS];
    for (c, read) in extras.outcomes().into_iter().filter(|(c, _)| !metrics.contains(c)) {
        match read {
            Optional::NotGranted => out.not_granted.push(c.resource()),
            Optional::Failed(m) => out.failed.push(m),
            Optional::Read(()) | Optional::Skipped => {}
        }
    }

    let aggregated: Option<Vec<ApiServiceHealth>> = extras.apiservices.read().map(|list| {
        list.iter()
            .filter(|a| !a.service.is_empty())
            .map(|a| ApiServiceHealth {
                name: a.name.clone(),
                service: a.service.clone(),
                available: a.available == Some(true),
                reason: a.reason.clone(),
                message: a.message.clone(),
            })
            .collect()
    });
    let metrics_service = aggregated.as_ref().and_then(|l| l.iter().find(|a| a.name == METRICS_APISERVICE).cloned());
    let registered = extras.apiservices.read().map(|l| l.iter().any(|a| a.name == METRICS_APISERVICE));

    let namespaced = extras.namespaced.is_some();
    out.metrics_api = match (&extras.node_metrics, &metrics_service) {
        (Optional::Read(_), _) => MetricsApi::Available,
        // Namespaced access: the pods' usage is read in each namespace, the nodes' not visible.
        (Optional::NotGranted, _) if namespaced && matches!(extras.pod_metrics, Optional::Read(_)) => {
            MetricsApi::Available
        }
        (_, Some(a)) if !a.available => MetricsApi::Unavailable(unavailable_diagnosis(a)),
        (Optional::NotGranted, _) => MetricsApi::NotGranted,
        (Optional::Failed(_), _) if registered == Some(false) => MetricsApi::NotInstalled,
        (Optional::Failed(m), _) => {
            let hint = if registered.is_none() {
                " Grant get and list on apiservices (`dumbmonit rbac --optional`) to see why."
            } else {
                ""
            };
            MetricsApi::Unavailable(format!("Metrics API not available: {m}.{hint}"))
        }
        (Optional::Skipped, _) => MetricsApi::NotRead,
    };
    if out.metrics_api == MetricsApi::NotGranted {
        out.not_granted.push(Collection::NODE_METRICS.resource());
    }
    if let Optional::NotGranted = extras.pod_metrics {
        out.not_granted.push(Collection::POD_METRICS.resource());
    }
    if namespaced {
        // What lives outside namespaces (APIServices, the nodes' usage, volumes, the control
        // plane's leases) a namespaced token cannot be granted.
        let cluster_wide: Vec<Collection> =
            crate::collect::kinds::every().into_iter().filter(|c| c.optional() && !c.namespaced()).collect();
        let (hidden, granted) = out.not_granted.iter().partition(|r| cluster_wide.iter().any(|c| c.resource() == **r));
        (out.not_visible, out.not_granted) = (hidden, granted);
        let node_usage = Collection::NODE_METRICS.resource();
        if matches!(extras.node_metrics, Optional::NotGranted) && !out.not_visible.contains(&node_usage) {
            out.not_visible.push(node_usage);
        }
    }

    // Each node's usage, or none (a node taken again from the last cycle may hold one): set
    // on a copy of a node shared with the last cycle, and only where it differs.
    let mut usage: HashMap<&str, &Usage> = HashMap::new();
    if let Optional::Read(read) = &extras.node_metrics {
        // The first of a name, should the API give it twice.
        read.iter().for_each(|u| {
            usage.entry(u.name.as_str()).or_insert(u);
        });
    }
    for n in nodes.iter_mut() {
        let (cpu, memory) = usage.get(n.name.as_str()).map_or((None, None), |u| (Some(u.cpu), Some(u.memory)));
        if (n.usage_cpu, n.usage_memory) != (cpu, memory) {
            let n = Arc::make_mut(n);
            (n.usage_cpu, n.usage_memory) = (cpu, memory);
        }
    }
    if let Optional::Read(pods) = extras.pod_metrics {
        out.pod_usage = pods;
    }
    out.apiservices = aggregated;
    if let Optional::Read(jobs) = &extras.jobs {
        out.jobs = Some(super::batch::failed_jobs(jobs));
        out.running_jobs = Some(super::batch::running_jobs(jobs, time));
        out.all_jobs =
            jobs.iter().map(|j| (j.namespace.clone(), j.name.clone(), j.owner.clone(), j.failed.is_some())).collect();
    }
    out.cronjobs = extras.cronjobs.read().map(|list| super::batch::cronjobs(list, time));
    out.hpas = extras.hpas.read().map(|list| hpas(list, &mut memory.hpas));
    out.pdbs = extras.poddisruptionbudgets.read().map(|list| super::policy::pdbs(list));
    out.quotas = extras.resourcequotas.read().map(|list| super::policy::quotas(list, &mut out.unreadable));
    out.pvs = match std::mem::take(&mut extras.persistentvolumes) {
        Optional::Read(list) => Some(super::policy::pvs(list)),
        _ => None,
    };
    out.control_plane =
        extras.leases.read().map(|list| super::plane::components(list, now, &mut memory.leases, &mut out.unreadable));
    if let (Some(validating), Some(mutating)) =
        (extras.validatingwebhookconfigurations.read(), extras.mutatingwebhookconfigurations.read())
    {
        let backends = match (extras.services.read(), extras.endpointslices.read()) {
            (Some(s), Some(e)) => Some((s.as_slice(), e.as_slice())),
            _ => None,
        };
        let validating: Vec<_> = validating.iter().map(|v| &v.0).collect();
        let mutating: Vec<_> = mutating.iter().map(|m| &m.0).collect();
        let needed = crate::collect::backends::namespaces(validating.iter().copied().chain(mutating.iter().copied()));
        out.webhooks_judged = backends.is_some() || needed.is_empty();
        out.webhooks = Some(super::admission::webhooks(&validating, &mutating, backends, &mut out.unreadable));
    }
    out
}

/// Each HPA, with what its count did since the last cycle (`counts`, updated).
fn hpas(list: &[crate::collect::kinds::hpa::Hpa], counts: &mut HashMap<(String, String), i64>) -> Vec<HpaHealth> {
    let mut kept = HashMap::with_capacity(list.len());
    let out = list
        .iter()
        .map(|h| {
            let key = (h.namespace.clone(), h.name.clone());
            // A first sight counts as unchanged: the hold then asks for it to stay so.
            let unchanged = counts.get(&key).is_none_or(|before| *before == h.current_replicas);
            kept.insert(key, h.current_replicas);
            let (active, reason, message) = h.scaling_active.clone().unwrap_or((true, String::new(), String::new()));
            let (min, current, desired, max) = (h.min_replicas, h.current_replicas, h.desired_replicas, h.max_replicas);
            HpaHealth {
                namespace: h.namespace.clone(),
                name: h.name.clone(),
                scaling_active: active,
                reason,
                message,
                at_max: h.at_max(),
                min_replicas: min,
                current_replicas: current,
                desired_replicas: desired,
                max_replicas: max,
                maxed_out: max > 0 && current == max && max != min,
                mismatch: desired != current && min < current && current < max && unchanged,
            }
        })
        .collect();
    *counts = kept;
    out
}
