//! Ready-made clusters: a healthy one, and one in the kinds of trouble DumbMonit reports.

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use crate::api::Resource;

use crate::fixtures::{
    Cluster, Container, Event, Node, Pod, cronjob, daemonset, deleting, deployment, job, pvc, statefulset,
};

/// Three Ready nodes, a few healthy workloads, bound claims, no warnings.
pub fn healthy(now: Timestamp) -> Cluster {
    let mut c = Cluster {
        nodes: ["node-1", "node-2", "node-3"]
            .iter()
            .enumerate()
            .map(|(i, n)| if i == 0 { Node::new(n).control_plane() } else { Node::new(n) }.build(now))
            .collect(),
        ..Cluster::default()
    };
    for (ns, name, hash) in
        [("shop", "api", "7c9696d669"), ("shop", "web", "5d4f8b7c9b"), ("kube-system", "coredns", "ccb96694c")]
    {
        c.deployments.push(deployment(ns, name, Some(2), 2, 2, now));
        for s in ["x2k9p", "q8w7e"] {
            c.pods.push(Pod::of_deployment(ns, name, hash, s).build(now));
        }
    }
    c.statefulsets.push(statefulset("shop", "db", Some(1), 1, 1, now));
    c.pods.push(Pod::new("shop", "db-0").owned_by("StatefulSet", "db").claim("data-db-0").build(now));
    c.daemonsets.push(daemonset("kube-system", "svclb-traefik", 3, 3, 3, now));
    for n in 1..=3 {
        c.pods.push(
            Pod::new("kube-system", &format!("svclb-traefik-{n}x7qz"))
                .owned_by("DaemonSet", "svclb-traefik")
                .on_node(&format!("node-{n}"))
                .build(now),
        );
    }
    c.pvcs.push(pvc("shop", "data-db-0", "Bound", "local-path", false, now));
    c
}

/// A cluster in trouble: a node gone, a crash loop, an image that cannot be pulled, a pod that
/// cannot be scheduled, a workload short of replicas, a claim that never binds.
pub fn trouble(now: Timestamp) -> Cluster {
    let mut c = healthy(now);
    memory_pressure(&mut c, now);
    crash_loop(&mut c, now);
    image_pull(&mut c, now);
    unschedulable(&mut c, now);
    stuck_claim(&mut c, now);
    node_lost(&mut c, now);
    finished_job(&mut c, now);
    c
}

/// What the kubernetes-mixin alerts on beyond the core, each beside a healthy twin: a
/// disruption budget short of healthy pods, quotas almost full, full and over, volumes Failed
/// and Pending, a controller manager that stopped renewing its lease (the scheduler renews), an
/// autoscaler at its ceiling and one short of its desired count. The quotas live in a namespace
/// of their own (`quotas`): in a real API server, a quota refuses what it has not counted yet.
pub fn coverage(now: Timestamp) -> Cluster {
    use crate::fixtures::{hpa, lease, pdb, pv, quota};
    let mut c = healthy(now);
    c.pdbs.push(pdb("shop", "db", 2, 3, 1, now));
    c.pdbs.push(pdb("shop", "web", 1, 2, 2, now));
    c.quotas.push(quota(
        "quotas",
        "team",
        &[
            ("count/configmaps", "10", "9"),
            ("requests.storage", "10Gi", "10Gi"),
            ("services", "2", "3"),
            ("secrets", "10", "2"),
        ],
        now,
    ));
    // Promises 20 cores, of the 8 two Ready nodes give (past 1.5 times); its memory, a twin,
    // a gibibyte.
    c.quotas.push(quota("quotas", "compute", &[("requests.cpu", "20", "1"), ("requests.memory", "1Gi", "0")], now));
    c.pvs.push(pv(
        "pv-failed",
        "Failed",
        Some("shop/data-old-0"),
        Some("host path /srv/pv-failed does not exist"),
        now,
    ));
    c.pvs.push(pv("pv-pending", "Pending", None, None, now));
    c.pvs.push(pv("pv-bound", "Bound", Some("shop/data-db-0"), None, now));
    c.leases.push(lease("kube-controller-manager", "cp-1_0c7e", SignedDuration::from_mins(10), now));
    c.leases.push(lease("kube-scheduler", "cp-1_5f2c", SignedDuration::from_secs(1), now));
    c.hpas.push(hpa("shop", "web", "web", 2, 6, 6, None, now));
    let mut short = hpa("shop", "api", "api", 2, 10, 4, None, now);
    short["status"]["desiredReplicas"] = serde_json::json!(7);
    c.hpas.push(short);
    webhook_coverage(&mut c, now);
    core_coverage(&mut c, now);
    c
}

/// The admission webhooks of [`coverage`]: a validating one that fails closed on a Service with
/// no ready endpoint, a mutating one that fails open on a Service that does not exist, and a
/// healthy twin whose Service has one.
pub fn webhook_coverage(c: &mut Cluster, now: Timestamp) {
    use crate::fixtures::{endpointslice, service, webhook_configuration};
    let (v, m) = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration");
    c.validating_webhooks.push(webhook_configuration(v, "policy", "policy/policy-webhook", "Fail", now));
    c.mutating_webhooks.push(webhook_configuration(m, "inject", "mesh/injector", "Ignore", now));
    c.validating_webhooks.push(webhook_configuration(v, "certs", "certs/certs-webhook", "Fail", now));
    c.services.push(service("policy", "policy-webhook", now));
    c.endpointslices.push(endpointslice("policy", "policy-webhook", false, now));
    c.services.push(service("certs", "certs-webhook", now));
    c.endpointslices.push(endpointslice("certs", "certs-webhook", true, now));
}

/// The core reads' part of [`coverage`]: node-3 full of pods; the node controller's taint on
/// node-2, which it has lost; more CPU requested than two of the three nodes hold; the svclb
/// DaemonSet on a node it should not be on; a Deployment whose controller has not seen its
/// change (and one that has); a Job running for 13 hours (and one for an hour); a sidecar that
/// cannot pull its image in a running pod.
fn core_coverage(c: &mut Cluster, now: Timestamp) {
    let on_node_3 = c.pods.iter().filter(|p| p["spec"]["nodeName"] == "node-3").count();
    c.nodes[2]["status"]["allocatable"]["pods"] = json!(on_node_3.to_string());
    c.nodes[1] = Node::new("node-2").ready(Some("Unknown")).build(now);
    c.nodes[1]["spec"]["taints"] = json!([
        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": crate::fixtures::time(now - SignedDuration::from_mins(20))},
        {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": crate::fixtures::time(now - SignedDuration::from_mins(20))}
    ]);
    let mut render = Pod::new("shop", "render-0").owned_by("StatefulSet", "render").on_node("node-1").build(now);
    render["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("9");
    c.pods.push(render);
    if let Some(ds) = c.daemonsets.iter_mut().find(|d| d["metadata"]["name"] == "svclb-traefik") {
        ds["status"]["numberMisscheduled"] = json!(1);
    }
    let mut unseen = deployment("shop", "checkout", Some(1), 1, 1, now);
    unseen["metadata"]["generation"] = json!(1);
    unseen["status"].as_object_mut().expect("a status").remove("observedGeneration");
    c.deployments.push(unseen);
    c.pods.push(Pod::of_deployment("shop", "checkout", "6f7c8d9b5", "z7x8c").build(now));
    c.jobs.push(job("batch", "backfill", None, None, now - SignedDuration::from_hours(13)));
    c.jobs.push(job("batch", "reindex", None, None, now - SignedDuration::from_hours(1)));
    c.pods.push(
        Pod::new("shop", "mailer-0")
            .owned_by("StatefulSet", "mailer")
            .phase("Running")
            .container(Container::running("app"))
            .container(Container::waiting(
                "log-forwarder",
                "ImagePullBackOff",
                Some("Back-off pulling image \"registry.example.com/ops/forwarder:9.9\""),
            ))
            .build(now),
    );
    // A bare pod whose readiness probe fails: no workload rule speaks for it. Its twin, Ready.
    c.pods.push(
        Pod::new("shop", "debug-shell").on_node("node-1").container(Container::running("sh").not_ready()).build(now),
    );
    c.pods.push(Pod::new("shop", "toolbox").on_node("node-1").container(Container::running("sh")).build(now));
    claim_waits(c, now);
}

/// Two Pending claims, and what the PersistentVolume controller said of each in a Normal
/// event: one no pod uses yet waits for its first consumer (not stuck), the other for its
/// provisioner while its pod cannot be scheduled without it (stuck).
pub fn claim_waits(c: &mut Cluster, now: Timestamp) {
    c.pods.push(
        Pod::new("shop", "uploader-0")
            .owned_by("StatefulSet", "uploader")
            .claim("uploads")
            .unschedulable("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
            .build(now),
    );
    c.pvcs.push(crate::fixtures::pvc("shop", "scratch-1", "Pending", "local-path", true, now));
    c.pvcs.push(crate::fixtures::pvc("shop", "uploads", "Pending", "csi-disks", false, now));
    let waits = Event::warning(
        "PersistentVolumeClaim",
        "shop",
        "scratch-1",
        "WaitForFirstConsumer",
        "waiting for first consumer to be created before binding",
    )
    .normal();
    c.events.push(waits.build(now));
    let provisioning = Event::warning(
        "PersistentVolumeClaim",
        "shop",
        "uploads",
        "ExternalProvisioning",
        "Waiting for a volume to be created either by the external provisioner 'disk.csi.example.com' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
    )
    .normal();
    c.events.push(provisioning.build(now));
}

/// The demo's story, one step at a time (0: healthy; 6 and after: all the trouble).
pub fn tour(step: u32, now: Timestamp) -> Cluster {
    let mut c = healthy(now);
    if step == 1 {
        rolling_update(&mut c, now);
    }
    let parts: [fn(&mut Cluster, Timestamp); 6] =
        [crash_loop, node_lost, stuck_claim, image_pull, unschedulable, memory_pressure];
    for part in parts.iter().take(step.saturating_sub(1) as usize) {
        part(&mut c, now);
    }
    finished_job(&mut c, now);
    c
}

/// shop/web rolls out: one new pod starting, one replica short for a moment.
pub fn rolling_update(c: &mut Cluster, now: Timestamp) {
    c.deployments.retain(|d| d["metadata"]["name"] != "web");
    c.deployments.push(deployment("shop", "web", Some(2), 1, 1, now));
    c.pods.retain(|p| p["metadata"]["name"] != "web-5d4f8b7c9b-q8w7e");
    c.pods.push(
        Pod::of_deployment("shop", "web", "6c8d7e9f4a", "r5t7y")
            .phase("Pending")
            .container(Container::waiting("app", "ContainerCreating", None))
            .build(now),
    );
}

pub fn memory_pressure(c: &mut Cluster, now: Timestamp) {
    c.nodes[1] = Node::new("node-2").condition("MemoryPressure", "True").build(now);
}

/// A crash loop: the container is OOM-killed over and over.
pub fn crash_loop(c: &mut Cluster, now: Timestamp) {
    c.deployments.retain(|d| d["metadata"]["name"] != "api");
    c.deployments.push(deployment("shop", "api", Some(3), 2, 2, now));
    c.pods.push(
        Pod::of_deployment("shop", "api", "7c9696d669", "8tpp6")
            .container(Container::crashlooping("app", "OOMKilled", 137, 14))
            .build(now),
    );
    c.events.push(Event::warning("Pod", "shop", "api-7c9696d669-8tpp6", "BackOff", "Back-off restarting failed container app in pod api-7c9696d669-8tpp6_shop(4f1c2d9e-0b7a-4a51-9d1e-3c6f2b8a7e10)").count(63).build(now));
}

/// An image that does not exist.
pub fn image_pull(c: &mut Cluster, now: Timestamp) {
    c.deployments.push(deployment("web", "frontend", Some(1), 0, 0, now));
    c.pods.push(
        Pod::of_deployment("web", "frontend", "6b7d9c8f5", "m2n4b")
            .phase("Pending")
            .container(Container::waiting("web", "ImagePullBackOff", Some("Back-off pulling image \"registry.example.com/web/frontend:2.0.1-typo\": ErrImagePull: failed to pull and unpack image: not found")).image("registry.example.com/web/frontend:2.0.1-typo"))
            .build(now),
    );
    c.events.push(
        Event::warning(
            "Pod",
            "web",
            "frontend-6b7d9c8f5-m2n4b",
            "Failed",
            "Failed to pull image \"registry.example.com/web/frontend:2.0.1-typo\": not found",
        )
        .count(9)
        .build(now),
    );
}

/// A pod that asks for more than any node has.
pub fn unschedulable(c: &mut Cluster, now: Timestamp) {
    let message = "0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 2 Insufficient memory. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.";
    c.deployments.push(deployment("batch", "reporter", Some(1), 0, 0, now));
    c.pods.push(Pod::of_deployment("batch", "reporter", "84c6b5f7d9", "zz7rt").unschedulable(message).build(now));
    c.events.push(
        Event::warning("Pod", "batch", "reporter-84c6b5f7d9-zz7rt", "FailedScheduling", message)
            .time(crate::fixtures::EventTime::Series)
            .count(12)
            .build(now),
    );
}

/// A claim whose class has no provisioner that works.
pub fn stuck_claim(c: &mut Cluster, now: Timestamp) {
    c.statefulsets.push(statefulset("shop", "search", Some(1), 0, 0, now));
    c.pods.push(Pod::new("shop", "search-0").owned_by("StatefulSet", "search").claim("data-search-0").unschedulable("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.").build(now));
    c.pvcs.push(pvc("shop", "data-search-0", "Pending", "fast-ssd", false, now));
    c.events.push(
        Event::warning(
            "PersistentVolumeClaim",
            "shop",
            "data-search-0",
            "ProvisioningFailed",
            "storageclass.storage.k8s.io \"fast-ssd\" not found",
        )
        .count(31)
        .build(now),
    );
    // Waits for its first consumer: not stuck.
    c.pvcs.push(pvc("shop", "scratch", "Pending", "local-path", true, now));
}

/// node-3 stops answering; its event is recorded in `default`.
pub fn node_lost(c: &mut Cluster, now: Timestamp) {
    c.nodes[2] = Node::new("node-3").ready(Some("Unknown")).build(now);
    c.events.push(
        Event::warning("Node", "", "node-3", "NodeNotReady", "Node node-3 status is now: NodeNotReady").build(now),
    );
}

/// A finished job: left out of everything.
pub fn finished_job(c: &mut Cluster, now: Timestamp) {
    c.pods.push(
        Pod::new("batch", "nightly-29391840-tq5vd")
            .owned_by("Job", "nightly-29391840")
            .phase("Succeeded")
            .container(Container::terminated("app", "Completed", 0))
            .build(now),
    );
}

/// What else takes clusters down, each case once: a kubelet four minor versions behind the API
/// server (node-3), a Deployment past its progress deadline (shop/checkout), a StatefulSet whose
/// update stopped at one replica of three (shop/queue), a pod held by a finalizer 30 minutes past
/// its grace period (shop/legacy-0), a failed Job of the CronJob ops/report, and the CronJob
/// ops/backup, hourly, last scheduled three runs ago. (The certificate expiring in five days is
/// the simulator's option `certificate_lifetime`; a flapping node is a test changing node-2.)
pub fn outages(now: Timestamp) -> Cluster {
    let mut c = healthy(now);
    c.nodes[2] = Node::new("node-3").kubelet("v1.29.15+k3s1").build(now);

    let mut checkout = deployment("shop", "checkout", Some(3), 1, 1, now);
    checkout["status"]["updatedReplicas"] = json!(1);
    checkout["status"]["conditions"][1] = json!({
        "type": "Progressing", "status": "False",
        "lastUpdateTime": crate::fixtures::time(now - SignedDuration::from_mins(5)),
        "lastTransitionTime": crate::fixtures::time(now - SignedDuration::from_mins(5)),
        "reason": "ProgressDeadlineExceeded",
        "message": "ReplicaSet \"checkout-6d5f7c8b9a\" has timed out progressing."
    });
    c.deployments.push(checkout);
    c.statefulsets.push(mid_update(statefulset("shop", "queue", Some(3), 3, 3, now), 1));

    let legacy = Pod::new("shop", "legacy-0").owned_by("StatefulSet", "legacy").build(now);
    c.pods.push(deleting(legacy, 30, SignedDuration::from_mins(30), &["example.com/drain-connections"], now));

    let hour = SignedDuration::from_hours(1);
    // The controller schedules on the hour (lastScheduleTime is a time the schedule gives).
    let on_the_hour = on_the_hour(now);
    c.cronjobs.push(cronjob("ops", "report", "0 * * * *", Some(on_the_hour), now));
    // The older run first: a real API server dates each Job when it is created, so the runs are
    // created in the order of their times (the failed run created a second after the one that
    // succeeded would look superseded by it).
    c.jobs.push(job("ops", "report-29399940", Some("report"), Some(true), on_the_hour - hour));
    c.jobs.push(job("ops", "report-29400000", Some("report"), Some(false), on_the_hour));
    // backup's last run was three runs before the one due now.
    c.cronjobs.push(cronjob("ops", "backup", "0 * * * *", Some(on_the_hour - 3 * hour), now));
    c.jobs.push(job("ops", "backup-29399820", Some("backup"), Some(true), on_the_hour - 3 * hour));
    c
}

/// A StatefulSet whose update to a new revision reached `updated` replicas.
pub fn mid_update(mut sts: serde_json::Value, updated: i64) -> serde_json::Value {
    let name = sts["metadata"]["name"].as_str().unwrap_or("sts").to_string();
    let desired = sts["status"]["replicas"].as_i64().unwrap_or(1);
    sts["status"]["updatedReplicas"] = json!(updated);
    sts["status"]["currentReplicas"] = json!(desired - updated);
    sts["status"]["updateRevision"] = json!(format!("{name}-7f8e9d0c1b"));
    sts
}

/// A healthy cluster that is busy, with what must raise no alarm: a StatefulSet update that
/// progresses (one more replica every `step`, done at 3), a Job of a CronJob that succeeded
/// after a failed attempt, a failed Job whose newer run succeeded, a pod deleted a minute ago
/// with a grace period of two minutes, and a CronJob that runs on time.
pub fn busy(step: i64, now: Timestamp) -> Cluster {
    let mut c = healthy(now);
    let db = statefulset("shop", "queue", Some(3), 3, 3, now);
    c.statefulsets.push(if step < 3 { mid_update(db, step) } else { db });
    let leaving = Pod::new("shop", "web-old-1").owned_by("ReplicaSet", "web-old").build(now);
    c.pods.push(deleting(leaving, 120, SignedDuration::from_secs(-60), &[], now));
    let hour = SignedDuration::from_hours(1);
    let last = on_the_hour(now);
    c.cronjobs.push(cronjob("ops", "report", "0 * * * *", Some(last), now));
    c.jobs.push(job("ops", "report-29400000", Some("report"), Some(true), last));
    c.jobs.push(job("ops", "report-29399940", Some("report"), Some(false), last - hour));
    c.jobs.push(job("ops", "report-29399880", Some("report"), Some(true), last - 2 * hour));
    c
}

/// The start of the hour `now` is in.
fn on_the_hour(now: Timestamp) -> Timestamp {
    Timestamp::from_second(now.as_second() - now.as_second().rem_euclid(3600)).expect("in range")
}

/// A cluster at scale, in the proportions of Kubernetes' published envelope (150,000 pods on
/// 5,000 nodes, with 10,000 Deployments, 1,000 StatefulSets, 50 DaemonSets, 20,000 claims and
/// 50,000 Warning events), scaled to `pods`. About 5% of the pods are in trouble: crash loops,
/// unschedulable, images that cannot be pulled, not ready.
pub fn envelope(pods: usize, now: Timestamp) -> Cluster {
    let mut c = Cluster::default();
    envelope_into(pods, now, &mut |resource, items| match resource {
        Resource::Nodes => c.nodes.extend(items),
        Resource::Pods => c.pods.extend(items),
        Resource::Deployments => c.deployments.extend(items),
        Resource::StatefulSets => c.statefulsets.extend(items),
        Resource::DaemonSets => c.daemonsets.extend(items),
        Resource::PersistentVolumeClaims => c.pvcs.extend(items),
        Resource::Events => c.events.extend(items),
        Resource::ApiServices => c.apiservices.extend(items),
        Resource::NodeMetrics => c.node_metrics.extend(items),
        Resource::PodMetrics => c.pod_metrics.extend(items),
        Resource::HorizontalPodAutoscalers => c.hpas.extend(items),
        Resource::Jobs => c.jobs.extend(items),
        Resource::CronJobs => c.cronjobs.extend(items),
        Resource::PodDisruptionBudgets => c.pdbs.extend(items),
        Resource::ResourceQuotas => c.quotas.extend(items),
        Resource::PersistentVolumes => c.pvs.extend(items),
        Resource::Leases => c.leases.extend(items),
        Resource::ValidatingWebhookConfigurations => c.validating_webhooks.extend(items),
        Resource::MutatingWebhookConfigurations => c.mutating_webhooks.extend(items),
        Resource::Services => c.services.extend(items),
        Resource::EndpointSlices => c.endpointslices.extend(items),
        Resource::Namespaces => c.namespaces.extend(items),
    });
    c
}

/// Adds metrics-server to `c` as the aggregator sees it: the local APIServices, the aggregated
/// `v1beta1.metrics.k8s.io` (Available, or failing its discovery check as when the control
/// plane cannot reach the cluster's network), usage for every node and pod when available, and
/// an HPA on the `web` Deployment of `shop` (unable to scale while the Metrics API is down).
pub fn with_metrics_server(mut c: Cluster, available: bool, now: Timestamp) -> Cluster {
    use crate::fixtures::{apiservice_aggregated, apiservice_local, hpa, node_metrics, pod_metrics};
    for (group, version) in [("", "v1"), ("apps", "v1"), ("autoscaling", "v2"), ("apiregistration.k8s.io", "v1")] {
        c.apiservices.push(apiservice_local(group, version, now));
    }
    c.apiservices.push(apiservice_aggregated(
        "metrics.k8s.io",
        "v1beta1",
        "kube-system",
        "metrics-server",
        available,
        now,
    ));
    if available {
        for (i, n) in c.nodes.iter().enumerate() {
            let name = n["metadata"]["name"].as_str().unwrap_or_default().to_string();
            // 250m, 500m, 750m… and 1, 1.5, 2… GiB.
            c.node_metrics.push(node_metrics(
                &name,
                &format!("{}n", (i as u64 + 1) * 250_000_000),
                &format!("{}Ki", (i as u64 + 2) * 512 * 1024),
                now,
            ));
        }
        for p in &c.pods {
            let (ns, name) = (
                p["metadata"]["namespace"].as_str().unwrap_or_default(),
                p["metadata"]["name"].as_str().unwrap_or_default(),
            );
            if p["status"]["phase"] == "Running" {
                c.pod_metrics.push(pod_metrics(ns, name, &[("app", "2500000n", "24Mi")], now));
            }
        }
    }
    let failing = (!available).then_some((
        "FailedGetResourceMetric",
        "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server is currently unable to handle the request (get pods.metrics.k8s.io)",
    ));
    c.hpas.push(hpa("shop", "web", "web", 2, 10, 2, failing, now));
    c
}

/// The same cluster, handed to `sink` in chunks of at most 5,000 objects.
pub fn envelope_into(pods: usize, now: Timestamp, sink: &mut dyn FnMut(Resource, Vec<serde_json::Value>)) {
    const CHUNK: usize = 5000;
    let nodes = (pods / 30).max(3);
    let deployments = (pods / 15).max(1);
    let statefulsets = (pods / 150).max(1);
    let daemonsets = 50.min(pods.max(1));
    let claims = pods * 2 / 15;
    let events = pods / 3;
    let ns = |i: usize| format!("team-{:03}", i % 300);
    let mut chunk = Vec::with_capacity(CHUNK);
    let mut flush = |resource: Resource, chunk: &mut Vec<serde_json::Value>, force: bool| {
        if force || chunk.len() >= CHUNK {
            sink(resource, std::mem::take(chunk));
        }
    };
    for i in 0..nodes {
        chunk.push(Node::new(&format!("node-{i:05}")).build(now));
        flush(Resource::Nodes, &mut chunk, false);
    }
    flush(Resource::Nodes, &mut chunk, true);
    for i in 0..pods {
        let d = i % deployments;
        let name = format!("app-{d:05}");
        let mut pod = Pod::of_deployment(&ns(d), &name, "7c9696d669", &format!("{i:07}"))
            .on_node(&format!("node-{:05}", i % nodes))
            .production();
        if i % 40 == 1 {
            pod = pod.container(Container::crashlooping("app", "OOMKilled", 137, (i % 30) as i64 + 5));
        } else if i % 97 == 2 {
            pod = pod.unschedulable("0/5000 nodes are available: 5000 Insufficient memory.");
        } else if i % 151 == 3 {
            pod = pod.phase("Pending").container(Container::waiting(
                "app",
                "ImagePullBackOff",
                Some("Back-off pulling image \"registry.example.com/app:missing\""),
            ));
        } else if i % 211 == 4 {
            pod = pod.container(Container::running("app").not_ready());
        }
        chunk.push(pod.build(now));
        flush(Resource::Pods, &mut chunk, false);
    }
    flush(Resource::Pods, &mut chunk, true);
    for d in 0..deployments {
        let replicas = (pods / deployments) as i64;
        let short = i64::from(d % 20 == 0);
        chunk.push(deployment(&ns(d), &format!("app-{d:05}"), Some(replicas), replicas - short, replicas - short, now));
        flush(Resource::Deployments, &mut chunk, false);
    }
    flush(Resource::Deployments, &mut chunk, true);
    for s in 0..statefulsets {
        chunk.push(statefulset(&ns(s), &format!("db-{s:04}"), Some(3), 3, 3, now));
        flush(Resource::StatefulSets, &mut chunk, false);
    }
    flush(Resource::StatefulSets, &mut chunk, true);
    for d in 0..daemonsets {
        chunk.push(daemonset("kube-system", &format!("agent-{d:02}"), nodes as i64, nodes as i64, nodes as i64, now));
    }
    flush(Resource::DaemonSets, &mut chunk, true);
    for k in 0..claims {
        let phase = if k % 50 == 0 { "Pending" } else { "Bound" };
        chunk.push(pvc(&ns(k), &format!("data-{k:06}"), phase, "local-path", false, now));
        flush(Resource::PersistentVolumeClaims, &mut chunk, false);
    }
    flush(Resource::PersistentVolumeClaims, &mut chunk, true);
    const REASONS: [&str; 12] = [
        "BackOff",
        "Unhealthy",
        "FailedScheduling",
        "Failed",
        "FailedMount",
        "FailedCreatePodSandBox",
        "ProvisioningFailed",
        "NodeNotReady",
        "Evicted",
        "FailedAttachVolume",
        "DNSConfigForming",
        "FailedKillPod",
    ];
    for e in 0..events {
        let i = (e * 3) % pods.max(1);
        let d = i % deployments;
        let pod = format!("app-{d:05}-7c9696d669-{i:07}");
        chunk.push(
            Event::warning(
                "Pod",
                &ns(d),
                &pod,
                REASONS[e % REASONS.len()],
                "Readiness probe failed: HTTP probe failed with statuscode: 503",
            )
            .minutes_ago((e % 120) as i64)
            .seq(e as u32)
            .build(now),
        );
        flush(Resource::Events, &mut chunk, false);
    }
    // What each Pending claim waits for, as the PersistentVolume controller says it.
    for k in (0..claims).filter(|k| k % 50 == 0) {
        let waits = Event::warning(
            "PersistentVolumeClaim",
            &ns(k),
            &format!("data-{k:06}"),
            "WaitForFirstConsumer",
            "waiting for first consumer to be created before binding",
        )
        .seq(k as u32)
        .normal();
        chunk.push(waits.build(now));
        flush(Resource::Events, &mut chunk, false);
    }
    flush(Resource::Events, &mut chunk, true);
    envelope_coverage(pods, deployments, claims, now, sink);
}

/// The objects of the optional kinds in an envelope cluster, as a cluster of that size has
/// them: a disruption budget for one Deployment in ten, a quota per namespace, a volume per
/// bound claim, the control plane's two leases, fifteen admission webhooks and their Services.
fn envelope_coverage(
    pods: usize,
    deployments: usize,
    claims: usize,
    now: Timestamp,
    sink: &mut dyn FnMut(Resource, Vec<serde_json::Value>),
) {
    use crate::fixtures::{endpointslice, lease, namespace, pdb, pv, quota, service, webhook_configuration};
    let ns = |i: usize| format!("team-{:03}", i % 300);
    let per = (pods / deployments.max(1)) as i64;
    sink(
        Resource::PodDisruptionBudgets,
        (0..deployments).step_by(10).map(|d| pdb(&ns(d), &format!("app-{d:05}"), per - 1, per, per, now)).collect(),
    );
    let namespaces = 300.min(deployments.max(1));
    sink(
        Resource::ResourceQuotas,
        (0..namespaces)
            .map(|n| {
                let limits =
                    [("requests.cpu", "200", "41"), ("requests.memory", "400Gi", "83Gi"), ("pods", "1000", "500")];
                quota(&ns(n), "compute", &limits, now)
            })
            .collect(),
    );
    sink(
        Resource::Namespaces,
        (0..namespaces).map(|n| namespace(&ns(n), &[("team", &format!("team-{}", n % 20))], now)).collect(),
    );
    for start in (0..claims).step_by(5000) {
        let volumes = (start..(start + 5000).min(claims))
            .filter(|k| k % 50 != 0)
            .map(|k| pv(&format!("pvc-{k:06}"), "Bound", Some(&format!("{}/data-{k:06}", ns(k))), None, now))
            .collect();
        sink(Resource::PersistentVolumes, volumes);
    }
    sink(
        Resource::Leases,
        vec![
            lease("kube-controller-manager", "cp-1_0c7e", SignedDuration::from_secs(1), now),
            lease("kube-scheduler", "cp-1_5f2c", SignedDuration::from_secs(1), now),
        ],
    );
    let (mut validating, mut mutating, mut services, mut slices) = (vec![], vec![], vec![], vec![]);
    for w in 0..15 {
        let namespace = format!("webhooks-{}", w % 5);
        let name = format!("hook-{w:02}");
        let target = format!("{namespace}/{name}");
        if w < 10 {
            validating.push(webhook_configuration("ValidatingWebhookConfiguration", &name, &target, "Fail", now));
        } else {
            mutating.push(webhook_configuration("MutatingWebhookConfiguration", &name, &target, "Ignore", now));
        }
        services.push(service(&namespace, &name, now));
        slices.push(endpointslice(&namespace, &name, true, now));
    }
    sink(Resource::ValidatingWebhookConfigurations, validating);
    sink(Resource::MutatingWebhookConfigurations, mutating);
    sink(Resource::Services, services);
    sink(Resource::EndpointSlices, slices);
}
