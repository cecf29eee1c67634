//! The generator tables: one per kind of object.

use super::exposition::{MetricType, Sample};
use super::{EVENT_REASONS_LIMIT, Generator};
use crate::health::admission::WebhookHealth;
use crate::health::batch::{CronJobHealth, RunningJob};
use crate::health::extras::{ApiServiceHealth, HpaHealth};
use crate::health::plane::ComponentHealth;
use crate::health::policy::{PdbHealth, PvHealth, QuotaHealth};
use crate::health::{Health, NodeHealth, PodHealth, PvcHealth, WorkloadHealth};

fn flag(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

fn one(out: &mut Vec<Sample>, value: u64) {
    out.push(Sample::new(vec![], value as f64));
}

/// A count of nodes: absent, not zero, when namespaced access may not list them.
fn seen_nodes(h: &Health, out: &mut Vec<Sample>, value: u64) {
    if h.nodes_visible() {
        one(out, value);
    }
}

pub(super) const CLUSTER: &[Generator<Health>] = &[
    Generator {
        name: "version_info",
        help: "1, labelled with the gitVersion of the API server's /version.",
        kind: MetricType::Gauge,
        samples: |h, out| out.push(Sample::new(vec![("version", h.version.clone())], 1.0)),
    },
    Generator {
        name: "nodes",
        help: "Nodes.",
        kind: MetricType::Gauge,
        samples: |h, out| seen_nodes(h, out, h.counts.nodes),
    },
    Generator {
        name: "nodes_ready",
        help: "Nodes whose Ready condition is True.",
        kind: MetricType::Gauge,
        samples: |h, out| seen_nodes(h, out, h.counts.nodes_ready),
    },
    Generator {
        name: "pods",
        help: "Pods whose phase is not Succeeded.",
        kind: MetricType::Gauge,
        samples: |h, out| one(out, h.counts.pods),
    },
    Generator {
        name: "pods_running",
        help: "Pods in phase Running.",
        kind: MetricType::Gauge,
        samples: |h, out| one(out, h.counts.pods_running),
    },
    Generator {
        name: "pods_pending",
        help: "Pods in phase Pending.",
        kind: MetricType::Gauge,
        samples: |h, out| one(out, h.counts.pods_pending),
    },
    Generator {
        name: "pods_failed",
        help: "Pods in phase Failed.",
        kind: MetricType::Gauge,
        samples: |h, out| one(out, h.counts.pods_failed),
    },
    Generator {
        name: "pods_crashlooping",
        help: "Pods with a container or init container waiting in CrashLoopBackOff.",
        kind: MetricType::Gauge,
        samples: |h, out| one(out, h.counts.pods_crashlooping),
    },
    Generator {
        name: "pods_not_ready",
        help: "Running pods whose Ready condition is not True.",
        kind: MetricType::Gauge,
        samples: |h, out| one(out, h.counts.pods_not_ready),
    },
    Generator {
        name: "pvcs",
        help: "PersistentVolumeClaims.",
        kind: MetricType::Gauge,
        samples: |h, out| one(out, h.counts.pvcs),
    },
    Generator {
        name: "pvcs_pending",
        help: "PersistentVolumeClaims stuck in Pending: used by a live pod or named by a Warning event.",
        kind: MetricType::Gauge,
        samples: |h, out| one(out, h.counts.pvcs_pending),
    },
    Generator {
        name: "pods_stuck_terminating",
        help: "Pods being deleted and still there past the end of their grace period.",
        kind: MetricType::Gauge,
        samples: |h, out| one(out, h.counts.pods_stuck_terminating),
    },
    Generator {
        name: "apiserver_certificate_expiry_timestamp_seconds",
        help: "notAfter of the API server's serving certificate, from the last TLS handshake (also when its verification is skipped), in Unix seconds.",
        kind: MetricType::Gauge,
        samples: |h, out| {
            if let Some(t) = h.certificates.serving {
                out.push(Sample::new(vec![], t.as_second() as f64));
            }
        },
    },
    Generator {
        name: "client_certificate_expiry_timestamp_seconds",
        help: "notAfter of the client certificate DumbMonit authenticates with (kubeconfig client-certificate), in Unix seconds.",
        kind: MetricType::Gauge,
        samples: |h, out| {
            if let Some(t) = h.certificates.client {
                out.push(Sample::new(vec![], t.as_second() as f64));
            }
        },
    },
    Generator {
        name: "job_failed",
        help: "1 when the Job's Failed condition is True, else 0 (optional read of batch/v1 jobs); owner is its CronJob.",
        kind: MetricType::Gauge,
        samples: |h, out| {
            for (namespace, job, owner, failed) in &h.extras.all_jobs {
                let labels = vec![("namespace", namespace.clone()), ("job", job.clone()), ("owner", owner.clone())];
                out.push(Sample::new(labels, flag(*failed)));
            }
        },
    },
    Generator {
        name: "warning_events",
        help: "Warning events whose last occurrence is within the hour before the cycle.",
        kind: MetricType::Gauge,
        samples: |h, out| one(out, h.counts.warning_events),
    },
    Generator {
        name: "warning_events_by_reason",
        help: "Warning events of the last hour per reason, for the 20 reasons with the highest counts.",
        kind: MetricType::Gauge,
        samples: |h, out| {
            for (reason, n) in h.events_by_reason.iter().take(EVENT_REASONS_LIMIT) {
                out.push(Sample::new(vec![("reason", reason.clone())], *n as f64));
            }
        },
    },
    Generator {
        name: "cluster_requests",
        help: "What the pods that are neither Succeeded nor Failed request, scheduled or not: resource=\"cpu\" in cores, \"memory\" in bytes.",
        kind: MetricType::Gauge,
        samples: |h, out| {
            if h.nodes_visible() {
                let c = &h.capacity;
                out.push(Sample::new(vec![("resource", "cpu".into())], c.cpu_requests as f64 / 1000.0));
                out.push(Sample::new(vec![("resource", "memory".into())], c.memory_requests as f64));
            }
        },
    },
    Generator {
        name: "cluster_allocatable",
        help: "The allocatable of the Ready, schedulable nodes: resource=\"cpu\" in cores, \"memory\" in bytes.",
        kind: MetricType::Gauge,
        samples: |h, out| {
            if h.nodes_visible() {
                let c = &h.capacity;
                out.push(Sample::new(vec![("resource", "cpu".into())], c.cpu_allocatable as f64 / 1000.0));
                out.push(Sample::new(vec![("resource", "memory".into())], c.memory_allocatable as f64));
            }
        },
    },
];

fn node(n: &NodeHealth) -> Vec<(&'static str, String)> {
    vec![("node", n.name.clone())]
}

pub(super) const NODES: &[Generator<NodeHealth>] = &[
    Generator {
        name: "node_ready",
        help: "1 when the node's Ready condition is True, else 0 (False, Unknown or missing).",
        kind: MetricType::Gauge,
        samples: |n, out| out.push(Sample::new(node(n), flag(n.ready))),
    },
    Generator {
        name: "node_pressure",
        help: "1 when the node's pressure condition (memory, disk, pid, network) is True, else 0; only conditions the node lists.",
        kind: MetricType::Gauge,
        samples: |n, out| {
            for (condition, on) in &n.pressure {
                out.push(Sample::new(vec![("node", n.name.clone()), ("condition", condition.clone())], flag(*on)));
            }
        },
    },
    Generator {
        name: "node_unschedulable",
        help: "1 when the node is cordoned (spec.unschedulable), else 0.",
        kind: MetricType::Gauge,
        samples: |n, out| out.push(Sample::new(node(n), flag(n.unschedulable))),
    },
    Generator {
        name: "node_info",
        help: "1, labelled with the node's kubelet version.",
        kind: MetricType::Gauge,
        samples: |n, out| {
            out.push(Sample::new(vec![("node", n.name.clone()), ("kubelet_version", n.kubelet_version.clone())], 1.0))
        },
    },
    Generator {
        name: "node_kubelet_skew",
        help: "1 when the node's kubelet is outside the supported version skew from the API server (newer than it, or more than 3 minor versions older), else 0.",
        kind: MetricType::Gauge,
        samples: |n, out| out.push(Sample::new(node(n), flag(n.kubelet_skew))),
    },
    Generator {
        name: "node_ready_transitions",
        help: "Times the node's Ready condition changed in the last 15 minutes, across cycles.",
        kind: MetricType::Gauge,
        samples: |n, out| out.push(Sample::new(node(n), n.ready_transitions as f64)),
    },
    Generator {
        name: "node_cpu_requests_cores",
        help: "CPU requested by the node's pods that are neither Succeeded nor Failed, counted as the scheduler does (init containers, sidecars, overhead), in cores.",
        kind: MetricType::Gauge,
        samples: |n, out| out.push(Sample::new(node(n), n.requested.cpu_requests as f64 / 1000.0)),
    },
    Generator {
        name: "node_cpu_limits_cores",
        help: "CPU limits of the node's pods that are neither Succeeded nor Failed, in cores (a container without a limit adds nothing).",
        kind: MetricType::Gauge,
        samples: |n, out| out.push(Sample::new(node(n), n.requested.cpu_limits as f64 / 1000.0)),
    },
    Generator {
        name: "node_cpu_allocatable_cores",
        help: "The node's allocatable CPU (status.allocatable), in cores.",
        kind: MetricType::Gauge,
        samples: |n, out| {
            if let Some(cpu) = n.allocatable_cpu {
                out.push(Sample::new(node(n), cpu as f64 / 1000.0));
            }
        },
    },
    Generator {
        name: "node_memory_requests_bytes",
        help: "Memory requested by the node's pods that are neither Succeeded nor Failed, counted as the scheduler does, in bytes.",
        kind: MetricType::Gauge,
        samples: |n, out| out.push(Sample::new(node(n), n.requested.memory_requests as f64)),
    },
    Generator {
        name: "node_memory_limits_bytes",
        help: "Memory limits of the node's pods that are neither Succeeded nor Failed, in bytes (a container without a limit adds nothing).",
        kind: MetricType::Gauge,
        samples: |n, out| out.push(Sample::new(node(n), n.requested.memory_limits as f64)),
    },
    Generator {
        name: "node_cpu_usage_cores",
        help: "CPU the node uses now, from the Metrics API (metrics.k8s.io), in cores; absent when that API cannot be read.",
        kind: MetricType::Gauge,
        samples: |n, out| {
            if let Some(cpu) = n.usage_cpu {
                out.push(Sample::new(node(n), cpu as f64 / 1000.0));
            }
        },
    },
    Generator {
        name: "node_memory_usage_bytes",
        help: "Memory the node uses now (working set), from the Metrics API (metrics.k8s.io), in bytes; absent when that API cannot be read.",
        kind: MetricType::Gauge,
        samples: |n, out| {
            if let Some(memory) = n.usage_memory {
                out.push(Sample::new(node(n), memory as f64));
            }
        },
    },
    Generator {
        name: "node_pods",
        help: "The node's pods that are neither Succeeded nor Failed.",
        kind: MetricType::Gauge,
        samples: |n, out| out.push(Sample::new(node(n), n.pods as f64)),
    },
    Generator {
        name: "node_pods_capacity",
        help: "How many pods the node may run (status.allocatable.pods).",
        kind: MetricType::Gauge,
        samples: |n, out| {
            if let Some(pods) = n.pods_capacity {
                out.push(Sample::new(node(n), pods as f64));
            }
        },
    },
    Generator {
        name: "node_taint",
        help: "1 for each of the node's taints that keeps pods off (NoSchedule) or evicts them (NoExecute).",
        kind: MetricType::Gauge,
        samples: |n, out| {
            for t in &n.taints {
                let mut labels = node(n);
                labels.extend([("key", t.key.clone()), ("effect", t.effect.clone())]);
                out.push(Sample::new(labels, 1.0));
            }
        },
    },
    Generator {
        name: "node_memory_allocatable_bytes",
        help: "The node's allocatable memory (status.allocatable), in bytes.",
        kind: MetricType::Gauge,
        samples: |n, out| {
            if let Some(memory) = n.allocatable_memory {
                out.push(Sample::new(node(n), memory as f64));
            }
        },
    },
];

fn pod(p: &PodHealth) -> Vec<(&'static str, String)> {
    vec![("namespace", p.namespace.to_string()), ("pod", p.name.to_string()), ("workload", p.workload.to_string())]
}

pub(super) const PODS: &[Generator<PodHealth>] = &[
    Generator {
        name: "pod_ready",
        help: "1 when the pod's Ready condition is True, else 0.",
        kind: MetricType::Gauge,
        samples: |p, out| out.push(Sample::new(pod(p), flag(p.ready))),
    },
    Generator {
        name: "pod_crashlooping",
        help: "1 when a container or init container of the pod waits in CrashLoopBackOff, else 0.",
        kind: MetricType::Gauge,
        samples: |p, out| out.push(Sample::new(pod(p), flag(p.crashlooping))),
    },
    Generator {
        name: "pod_pending",
        help: "1 when the pod is in phase Pending, else 0.",
        kind: MetricType::Gauge,
        samples: |p, out| out.push(Sample::new(pod(p), flag(p.pending))),
    },
    Generator {
        name: "pod_restarts",
        help: "Restarts of the pod's containers and init containers (sum of restartCount).",
        kind: MetricType::Counter,
        samples: |p, out| out.push(Sample::new(pod(p), p.restarts as f64)),
    },
    Generator {
        name: "pod_terminating_seconds",
        help: "Seconds since the pod's deletionTimestamp (the end of its grace period), for pods still there past it.",
        kind: MetricType::Gauge,
        samples: |p, out| {
            if let Some(seconds) = p.terminating {
                out.push(Sample::new(pod(p), seconds as f64));
            }
        },
    },
    Generator {
        name: "pod_blocked",
        help: "1 while a container waits for a reason other than starting or CrashLoopBackOff; reason is that waiting reason.",
        kind: MetricType::Gauge,
        samples: |p, out| {
            for reason in &p.blocked {
                let mut labels = pod(p);
                labels.push(("reason", reason.clone()));
                out.push(Sample::new(labels, 1.0));
            }
        },
    },
];

fn workload(w: &WorkloadHealth) -> Vec<(&'static str, String)> {
    vec![("kind", w.kind.as_str().into()), ("namespace", w.namespace.clone()), ("workload", w.name.clone())]
}

pub(super) const WORKLOADS: &[Generator<WorkloadHealth>] = &[
    Generator {
        name: "workload_desired",
        help: "Desired replicas: spec.replicas (absent: 1), or desiredNumberScheduled for a DaemonSet.",
        kind: MetricType::Gauge,
        samples: |w, out| out.push(Sample::new(workload(w), w.desired as f64)),
    },
    Generator {
        name: "workload_ready",
        help: "Ready replicas: status.readyReplicas, or numberReady for a DaemonSet.",
        kind: MetricType::Gauge,
        samples: |w, out| out.push(Sample::new(workload(w), w.ready as f64)),
    },
    Generator {
        name: "workload_unavailable",
        help: "max(desired - available, 0).",
        kind: MetricType::Gauge,
        samples: |w, out| out.push(Sample::new(workload(w), w.unavailable as f64)),
    },
    Generator {
        name: "workload_generation_lag",
        help: "metadata.generation - status.observedGeneration: changes to the spec its controller has not acted on (0 when it has).",
        kind: MetricType::Gauge,
        samples: |w, out| out.push(Sample::new(workload(w), w.generation_lag as f64)),
    },
    Generator {
        name: "workload_misscheduled",
        help: "A DaemonSet's pods on nodes it should not run on (status.numberMisscheduled).",
        kind: MetricType::Gauge,
        samples: |w, out| {
            if w.kind == crate::collect::WorkloadKind::DaemonSet {
                out.push(Sample::new(workload(w), w.misscheduled as f64));
            }
        },
    },
    Generator {
        name: "workload_rollout_stuck",
        help: "1 when the rollout is stuck: a Deployment's Progressing condition is False with reason ProgressDeadlineExceeded, or a StatefulSet's or DaemonSet's update has not progressed for 15 minutes; else 0.",
        kind: MetricType::Gauge,
        samples: |w, out| out.push(Sample::new(workload(w), flag(w.rollout_stuck))),
    },
];

fn cronjob(c: &CronJobHealth) -> Vec<(&'static str, String)> {
    vec![("namespace", c.namespace.clone()), ("cronjob", c.name.clone())]
}

pub(super) const CRONJOBS: &[Generator<CronJobHealth>] = &[
    Generator {
        name: "cronjob_last_schedule_age_seconds",
        help: "Seconds since the CronJob's status.lastScheduleTime, for CronJobs not suspended (optional read of batch/v1 cronjobs).",
        kind: MetricType::Gauge,
        samples: |c, out| {
            if let Some(age) = c.last_schedule_age {
                out.push(Sample::new(cronjob(c), age as f64));
            }
        },
    },
    Generator {
        name: "cronjob_schedule_interval_seconds",
        help: "The CronJob's schedule period (and time zone) after its last schedule, or after its creation when never scheduled: from the run due next to the one after it. KubernetesCronJobMissed fires when the run due is older than this.",
        kind: MetricType::Gauge,
        samples: |c, out| {
            if let Some(interval) = c.interval {
                out.push(Sample::new(cronjob(c), interval as f64));
            }
        },
    },
];

pub(super) const RUNNING_JOBS: &[Generator<RunningJob>] = &[Generator {
    name: "job_active_seconds",
    help: "Seconds since a running Job's status.startTime, for Jobs with active pods that are neither Complete nor Failed (optional read of batch/v1 jobs); owner is its CronJob.",
    kind: MetricType::Gauge,
    samples: |j, out| {
        let labels = vec![("namespace", j.namespace.clone()), ("job", j.name.clone()), ("owner", j.owner.clone())];
        out.push(Sample::new(labels, j.seconds as f64));
    },
}];

fn pvc(c: &PvcHealth) -> Vec<(&'static str, String)> {
    vec![("namespace", c.namespace.clone()), ("pvc", c.name.clone())]
}

pub(super) const PVCS: &[Generator<PvcHealth>] = &[
    Generator {
        name: "pvc_pending",
        help: "1 when the claim is Pending and used by a live pod or named by a Warning event (stuck), else 0.",
        kind: MetricType::Gauge,
        samples: |c, out| out.push(Sample::new(pvc(c), flag(c.stuck))),
    },
    Generator {
        name: "pvc_bound",
        help: "1 when the claim is Bound, else 0.",
        kind: MetricType::Gauge,
        samples: |c, out| out.push(Sample::new(pvc(c), flag(c.bound))),
    },
];

pub(super) const APISERVICES: &[Generator<ApiServiceHealth>] = &[Generator {
    name: "apiservice_available",
    help: "1 when the aggregated APIService's Available condition is True, else 0; `service` is the namespace/name it points to.",
    kind: MetricType::Gauge,
    samples: |a, out| {
        out.push(Sample::new(vec![("apiservice", a.name.clone()), ("service", a.service.clone())], flag(a.available)))
    },
}];

fn hpa(h: &HpaHealth) -> Vec<(&'static str, String)> {
    vec![("namespace", h.namespace.clone()), ("hpa", h.name.clone())]
}

pub(super) const HPAS: &[Generator<HpaHealth>] = &[
    Generator {
        name: "hpa_scaling_active",
        help: "1 when the HorizontalPodAutoscaler's ScalingActive condition is True (it can compute a replica count), else 0.",
        kind: MetricType::Gauge,
        samples: |h, out| out.push(Sample::new(hpa(h), flag(h.scaling_active))),
    },
    Generator {
        name: "hpa_at_max",
        help: "1 when the HorizontalPodAutoscaler runs at its maxReplicas and cannot scale out further, else 0.",
        kind: MetricType::Gauge,
        samples: |h, out| out.push(Sample::new(hpa(h), flag(h.at_max))),
    },
    Generator {
        name: "hpa_replicas",
        help: "The HorizontalPodAutoscaler's replicas: kind=\"current\" and \"desired\" from its status, \"min\" and \"max\" from its spec.",
        kind: MetricType::Gauge,
        samples: |h, out| {
            for (kind, n) in [
                ("current", h.current_replicas),
                ("desired", h.desired_replicas),
                ("min", h.min_replicas),
                ("max", h.max_replicas),
            ] {
                let mut labels = hpa(h);
                labels.push(("kind", kind.into()));
                out.push(Sample::new(labels, n as f64));
            }
        },
    },
];

fn pdb(p: &PdbHealth) -> Vec<(&'static str, String)> {
    vec![("namespace", p.namespace.clone()), ("pdb", p.name.clone())]
}

pub(super) const PDBS: &[Generator<PdbHealth>] = &[
    Generator {
        name: "pdb_healthy",
        help: "The PodDisruptionBudget's healthy pods: kind=\"current\" (status.currentHealthy) and \"desired\" (status.desiredHealthy).",
        kind: MetricType::Gauge,
        samples: |p, out| {
            for (kind, n) in [("current", p.current_healthy), ("desired", p.desired_healthy)] {
                let mut labels = pdb(p);
                labels.push(("kind", kind.into()));
                out.push(Sample::new(labels, n as f64));
            }
        },
    },
    Generator {
        name: "pdb_disruptions_allowed",
        help: "Pods the PodDisruptionBudget lets be evicted now (status.disruptionsAllowed).",
        kind: MetricType::Gauge,
        samples: |p, out| out.push(Sample::new(pdb(p), p.disruptions_allowed as f64)),
    },
];

pub(super) const QUOTAS: &[Generator<QuotaHealth>] = &[Generator {
    name: "resourcequota",
    help: "Each resource of a ResourceQuota, type=\"hard\" (its limit) and \"used\", in base units: cores, bytes, counts.",
    kind: MetricType::Gauge,
    samples: |q, out| {
        for (kind, n) in [("hard", q.hard), ("used", q.used)] {
            let labels = vec![
                ("namespace", q.namespace.clone()),
                ("resourcequota", q.quota.clone()),
                ("resource", q.resource.clone()),
                ("type", kind.into()),
            ];
            out.push(Sample::new(labels, n));
        }
    },
}];

/// The phases a PersistentVolume can be in, as kube-state-metrics lists them.
const PV_PHASES: [&str; 5] = ["Pending", "Available", "Bound", "Released", "Failed"];

pub(super) const PVS: &[Generator<PvHealth>] = &[Generator {
    name: "pv_phase",
    help: "1 for the PersistentVolume's status.phase, 0 for the other four (Pending, Available, Bound, Released, Failed).",
    kind: MetricType::Gauge,
    samples: |v, out| {
        let v = &v.volume;
        if PV_PHASES.contains(&v.phase.as_str()) {
            for phase in PV_PHASES {
                out.push(Sample::new(vec![("pv", v.name.clone()), ("phase", phase.into())], flag(v.phase == phase)));
            }
        }
    },
}];

pub(super) const CONTROL_PLANE: &[Generator<ComponentHealth>] = &[Generator {
    name: "control_plane_lease_age_seconds",
    help: "Seconds since the component (kube-controller-manager, kube-scheduler) last renewed its leader lease in kube-system, as DumbMonit saw the renewals; no series when the lease does not exist.",
    kind: MetricType::Gauge,
    samples: |c, out| out.push(Sample::new(vec![("component", c.component.into())], c.age_seconds as f64)),
}];

pub(super) const WEBHOOKS: &[Generator<WebhookHealth>] = &[Generator {
    name: "webhook_backend_ready",
    help: "1 when the admission webhook's Service exists and has at least one ready endpoint on the webhook's port, 0 otherwise; no series for a webhook called by URL or through an ExternalName Service (not judged).",
    kind: MetricType::Gauge,
    samples: |w, out| {
        if let Some(ready) = w.ready {
            let labels = vec![
                ("kind", w.kind.into()),
                ("configuration", w.configuration.clone()),
                ("webhook", w.webhook.clone()),
                ("failure_policy", w.failure_policy.clone()),
            ];
            out.push(Sample::new(labels, flag(ready)));
        }
    },
}];
