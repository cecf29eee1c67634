//! A cluster that exercises every rule of the core: each pod state, each claim case, each
//! event time field, ignored namespaces, more than 20 reasons, more than 500 pods.

use dumbmonit_sim::Cluster;
use dumbmonit_sim::fixtures::{Container, Event, EventTime, Node, Pod, daemonset, deployment, pvc, statefulset};
use jiff::Timestamp;

/// Healthy pods in a namespace that sorts before every other, so that "problems first" matters.
pub const BULK_PODS: usize = 600;
/// Reasons of the reason-counting events: `Reason00` … `Reason24`.
pub const REASONS: usize = 25;

/// Count of events for `Reason{i:02}`: 1 + i/2, so that pairs tie.
pub fn reason_count(i: usize) -> usize {
    1 + i / 2
}

pub fn cluster(now: Timestamp) -> Cluster {
    let nodes = vec![
        Node::new("node-a").control_plane().build(now),
        Node::new("node-b").ready(Some("False")).condition("DiskPressure", "True").kubelet("v1.32.1+k3s1").build(now),
        Node::new("node-c").ready(Some("Unknown")).build(now),
        Node::new("node-d").ready(None).build(now),
        Node::new("node-e")
            .cordoned()
            .condition("PIDPressure", "True")
            .condition("NetworkUnavailable", "False")
            .build(now),
    ];
    let mut c = Cluster { nodes, ..Cluster::default() };

    let p = |pod: Pod| pod.build(now);
    c.pods = vec![
        // Crash loop of a Deployment's pod, OOM-killed.
        p(Pod::of_deployment("shop", "api", "7c9696d669", "8tpp6").container(Container::crashlooping(
            "app",
            "OOMKilled",
            137,
            14,
        ))),
        p(Pod::of_deployment("shop", "api", "7c9696d669", "k2v9x").container(Container::running("app").restarts(2))),
        // Crash loop of an init container; the app container waits to initialize (not blocked).
        p(Pod::new("shop", "init-crash")
            .phase("Pending")
            .init_container(Container::crashlooping("migrate", "Error", 1, 6))
            .container(Container::waiting("app", "PodInitializing", None))),
        // Blocked by an image that cannot be pulled.
        p(Pod::of_deployment("shop", "web", "5d4f8b7c9b", "m2n4b").phase("Pending").container(Container::waiting(
            "web",
            "ImagePullBackOff",
            Some("Back-off pulling image \"registry.example.com/web:typo\""),
        ))),
        // Blocked twice over, by two reasons.
        p(Pod::new("shop", "two-blocks")
            .phase("Pending")
            .container(Container::waiting("a", "ErrImagePull", Some("rpc error: code = NotFound")))
            .container(Container::waiting(
                "b",
                "CreateContainerConfigError",
                Some("secret \"db-password\" not found"),
            ))),
        // Starting: pending, not blocked.
        p(Pod::new("shop", "creating").phase("Pending").container(Container::waiting(
            "app",
            "ContainerCreating",
            None,
        ))),
        // Cannot be scheduled; uses a claim that is therefore stuck.
        p(Pod::new("shop", "unsched").unschedulable("0/5 nodes are available: 5 Insufficient cpu.").claim("used")),
        // Running, not ready.
        p(Pod::new("shop", "notready").container(Container::running("app").not_ready())),
        // Failed: evicted. Its claim does not make the claim stuck.
        p(Pod::new("shop", "evicted")
            .evicted("The node was low on resource: memory. Threshold quantity: 100Mi, available: 42Mi.")
            .claim("used-by-failed")),
        // Succeeded: left out of everything, its claim too.
        p(Pod::new("shop", "done")
            .owned_by("Job", "nightly-29391840")
            .phase("Succeeded")
            .container(Container::terminated("app", "Completed", 0))
            .claim("used-by-done")),
        // Healthy pods of each owner kind.
        p(Pod::new("shop", "db-0").owned_by("StatefulSet", "db").claim("data-db-0")),
        p(Pod::new("kube-system", "svclb-x1").owned_by("DaemonSet", "svclb")),
        p(Pod::new("shop", "nightly-29391900-abcde").owned_by("Job", "nightly-29391900")),
        p(Pod::new("shop", "bare")),
        // In the namespace that checks ignore.
        p(Pod::new("ci", "runner").container(Container::crashlooping("app", "Error", 1, 3)).claim("ci-claim")),
    ];
    for i in 0..BULK_PODS {
        c.pods.push(Pod::of_deployment("aaa-bulk", "bulk", "6f7c8d9e5b", &format!("{i:05}")).build(now));
    }

    c.deployments = vec![
        deployment("shop", "api", Some(3), 2, 2, now),
        deployment("shop", "web", None, 0, 0, now),
        deployment("aaa-bulk", "bulk", Some(BULK_PODS as i64), BULK_PODS as i64, BULK_PODS as i64, now),
        deployment("ci", "ci-deploy", Some(2), 0, 0, now),
    ];
    c.statefulsets = vec![statefulset("shop", "db", Some(1), 1, 1, now)];
    c.daemonsets = vec![daemonset("kube-system", "svclb", 5, 4, 3, now)];
    c.pvcs = vec![
        pvc("shop", "data-db-0", "Bound", "local-path", false, now),
        pvc("shop", "wffc", "Pending", "local-path", true, now),
        pvc("shop", "used", "Pending", "local-path", false, now),
        pvc("shop", "provfail", "Pending", "fast-ssd", false, now),
        pvc("shop", "used-by-done", "Pending", "local-path", false, now),
        pvc("shop", "used-by-failed", "Pending", "local-path", false, now),
        pvc("ci", "ci-claim", "Pending", "local-path", false, now),
    ];

    let e = |ev: Event| ev.build(now);
    c.events = vec![
        e(Event::warning("Pod", "shop", "unsched", "FailedScheduling", "0/5 nodes are available: 5 Insufficient cpu.")
            .time(EventTime::Series)
            .count(7)),
        e(Event::warning(
            "Pod",
            "shop",
            "notready",
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
        )
        .time(EventTime::EventTime)),
        e(Event::warning(
            "PersistentVolumeClaim",
            "shop",
            "provfail",
            "ProvisioningFailed",
            "storageclass.storage.k8s.io \"fast-ssd\" not found",
        )),
        // A newer and an older event about the same pod: the newer explains.
        e(Event::warning("Pod", "shop", "api-7c9696d669-8tpp6", "BackOff", "Back-off restarting failed container app")
            .minutes_ago(1)),
        e(Event::warning("Pod", "shop", "api-7c9696d669-8tpp6", "Unhealthy", "Liveness probe failed").minutes_ago(20)),
        // A node's event recorded in the ignored namespace: kept.
        e(Event::warning("Node", "", "node-c", "NodeNotReady", "Node node-c status is now: NodeNotReady")
            .recorded_in("ci")),
        // About a pod of the ignored namespace: left out.
        e(Event::warning("Pod", "ci", "runner", "BackOff", "Back-off restarting failed container app")),
        // Older than an hour: not counted.
        e(Event::warning("Pod", "shop", "bare", "OldNews", "this happened long ago").minutes_ago(90)),
        e(Event::warning("Pod", "shop", "bare", "OldNews", "this happened long ago too")
            .time(EventTime::CreationOnly)
            .minutes_ago(75)
            .seq(1)),
        // Within the hour by creationTimestamp alone.
        e(Event::warning("Pod", "shop", "bare", "Recent", "only a creation time")
            .time(EventTime::CreationOnly)
            .minutes_ago(30)),
        // Normal events never arrive: the server filters on type=Warning.
        e(Event::warning("Pod", "shop", "bare", "Pulled", "Successfully pulled image").normal()),
    ];
    for i in 0..REASONS {
        for j in 0..reason_count(i) {
            c.events.push(e(Event::warning("Pod", "shop", "bare", &format!("Reason{i:02}"), "counted").seq(j as u32)));
        }
    }
    c
}

/// Markup where a cluster puts its words: `shop/evil` waiting with a hostile reason and message,
/// and a Warning event of a hostile reason about it. Every page must show them inert.
pub const EVIL: &str = "<script>alert(\"pwned\")</script>";

pub fn add_hostile_pod(cluster: &mut Cluster, now: Timestamp) {
    cluster.pods.push(
        Pod::new("shop", "evil")
            .container(Container::waiting("app", "Evil\"<b>", Some(&format!("{EVIL} 'quoted' & more"))))
            .build(now),
    );
    cluster.events.push(Event::warning("Pod", "shop", "evil", "Bad<Reason>", EVIL).build(now));
}
