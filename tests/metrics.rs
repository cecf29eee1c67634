//! Every metric and label of the core, on a cluster that exercises each rule.

mod common;

use common::fixture::{self, BULK_PODS, REASONS, reason_count};
use common::{Harness, family, samples};

const P: &str = "dumbmonit_k8s_";

fn pod(ns: &str, name: &str, workload: &str) -> String {
    format!("namespace=\"{ns}\",pod=\"{name}\",workload=\"{workload}\"")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_on_the_fixture_cluster() {
    let h = Harness::start(fixture::cluster(jiff::Timestamp::now())).await;
    let run = h.check(&["--output", "prometheus", "--ignore-namespace", "ci"]).await;
    assert_eq!(run.code, 2, "a node not ready and a crash loop are critical; stderr: {}", run.stderr);
    assert_eq!(run.stderr, "");
    let m = samples(&run.stdout);
    let get = |series: &str| -> f64 {
        *m.get(&format!("{P}{series}")).unwrap_or_else(|| panic!("missing series {P}{series}"))
    };
    let absent = |series: &str| assert!(!m.contains_key(&format!("{P}{series}")), "unexpected series {P}{series}");

    // The cluster.
    assert_eq!(get("version_info{version=\"v1.33.4+k3s1\"}"), 1.0);
    assert_eq!(get("up"), 1.0);
    assert!(get("cycle_duration_seconds") > 0.0);
    for c in
        ["version", "nodes", "pods", "deployments", "statefulsets", "daemonsets", "persistentvolumeclaims", "events"]
    {
        assert!(get(&format!("collection_duration_seconds{{collection=\"{c}\"}}")) >= 0.0);
        assert_eq!(get(&format!("collection_success{{collection=\"{c}\"}}")), 1.0);
    }

    // Nodes: True, False with disk pressure, Unknown, missing Ready, cordoned with PID pressure.
    assert_eq!(get("nodes"), 5.0);
    assert_eq!(get("nodes_ready"), 2.0);
    for (node, ready) in [("node-a", 1.0), ("node-b", 0.0), ("node-c", 0.0), ("node-d", 0.0), ("node-e", 1.0)] {
        assert_eq!(get(&format!("node_ready{{node=\"{node}\"}}")), ready, "{node}");
        let cordoned = if node == "node-e" { 1.0 } else { 0.0 };
        assert_eq!(get(&format!("node_unschedulable{{node=\"{node}\"}}")), cordoned, "{node}");
    }
    assert_eq!(get("node_pressure{node=\"node-b\",condition=\"disk\"}"), 1.0);
    assert_eq!(get("node_pressure{node=\"node-b\",condition=\"memory\"}"), 0.0);
    assert_eq!(get("node_pressure{node=\"node-e\",condition=\"pid\"}"), 1.0);
    assert_eq!(get("node_pressure{node=\"node-e\",condition=\"network\"}"), 0.0);
    absent("node_pressure{node=\"node-a\",condition=\"network\"}");
    assert_eq!(family(&m, &format!("{P}node_pressure")).len(), 5 * 3 + 1, "only the conditions each node lists");
    assert_eq!(get("node_info{node=\"node-b\",kubelet_version=\"v1.32.1+k3s1\"}"), 1.0);
    assert_eq!(get("node_info{node=\"node-a\",kubelet_version=\"v1.33.4+k3s1\"}"), 1.0);

    // Pod counters cover every pod (Succeeded and ignored ones left out).
    let pods = 13.0 + BULK_PODS as f64;
    assert_eq!(get("pods"), pods);
    assert_eq!(get("pods_running"), 7.0 + BULK_PODS as f64);
    assert_eq!(get("pods_pending"), 5.0);
    assert_eq!(get("pods_failed"), 1.0);
    assert_eq!(get("pods_crashlooping"), 2.0);
    assert_eq!(get("pods_not_ready"), 2.0);

    // Per-pod families: 500 pods, the eight with problems first.
    for fam in ["pod_ready", "pod_crashlooping", "pod_pending", "pod_restarts"] {
        assert_eq!(family(&m, &format!("{P}{fam}")).len(), 500, "{fam} describes 500 pods");
    }
    let crash = pod("shop", "api-7c9696d669-8tpp6", "api");
    assert_eq!(get(&format!("pod_crashlooping{{{crash}}}")), 1.0);
    assert_eq!(get(&format!("pod_ready{{{crash}}}")), 0.0);
    assert_eq!(get(&format!("pod_restarts{{{crash}}}")), 14.0);
    assert_eq!(get(&format!("pod_pending{{{crash}}}")), 0.0);
    let init = pod("shop", "init-crash", "");
    assert_eq!(get(&format!("pod_crashlooping{{{init}}}")), 1.0, "an init container's crash loop counts");
    assert_eq!(get(&format!("pod_pending{{{init}}}")), 1.0);
    assert_eq!(get(&format!("pod_restarts{{{init}}}")), 6.0, "init containers' restarts count");
    assert_eq!(get(&format!("pod_ready{{{}}}", pod("shop", "notready", ""))), 0.0);
    assert_eq!(get(&format!("pod_pending{{{}}}", pod("shop", "creating", ""))), 1.0);
    assert_eq!(get(&format!("pod_pending{{{}}}", pod("shop", "unsched", ""))), 1.0);
    assert_eq!(get(&format!("pod_ready{{{}}}", pod("shop", "evicted", ""))), 0.0);
    absent(&format!("pod_restarts{{{}}}", pod("shop", "api-7c9696d669-k2v9x", "api")));
    assert_eq!(get(&format!("pod_ready{{{}}}", pod("aaa-bulk", "bulk-6f7c8d9e5b-00000", "bulk"))), 1.0);
    assert_eq!(get(&format!("pod_ready{{{}}}", pod("aaa-bulk", "bulk-6f7c8d9e5b-00491", "bulk"))), 1.0);
    absent(&format!("pod_ready{{{}}}", pod("aaa-bulk", "bulk-6f7c8d9e5b-00492", "bulk")));
    absent(&format!("pod_ready{{{}}}", pod("shop", "bare", "")));
    absent(&format!("pod_ready{{{}}}", pod("shop", "done", "nightly-29391840")));
    absent(&format!("pod_ready{{{}}}", pod("ci", "runner", "")));

    // Blocked: one series per waiting reason; starting and crash-looping are not blocked.
    let blocked = family(&m, &format!("{P}pod_blocked"));
    let mut blocked: Vec<&str> = blocked.iter().map(|(k, _)| *k).collect();
    blocked.sort();
    assert_eq!(
        blocked,
        [
            format!("{P}pod_blocked{{{},reason=\"CreateContainerConfigError\"}}", pod("shop", "two-blocks", "")),
            format!("{P}pod_blocked{{{},reason=\"ErrImagePull\"}}", pod("shop", "two-blocks", "")),
            format!("{P}pod_blocked{{{},reason=\"ImagePullBackOff\"}}", pod("shop", "web-5d4f8b7c9b-m2n4b", "web")),
        ]
    );

    // Workloads.
    let w = |kind: &str, ns: &str, name: &str| format!("kind=\"{kind}\",namespace=\"{ns}\",workload=\"{name}\"");
    for (labels, desired, ready, unavailable) in [
        (w("Deployment", "shop", "api"), 3.0, 2.0, 1.0),
        (w("Deployment", "shop", "web"), 1.0, 0.0, 1.0),
        (w("Deployment", "aaa-bulk", "bulk"), BULK_PODS as f64, BULK_PODS as f64, 0.0),
        (w("StatefulSet", "shop", "db"), 1.0, 1.0, 0.0),
        (w("DaemonSet", "kube-system", "svclb"), 5.0, 4.0, 2.0),
    ] {
        assert_eq!(get(&format!("workload_desired{{{labels}}}")), desired, "{labels}");
        assert_eq!(get(&format!("workload_ready{{{labels}}}")), ready, "{labels}");
        assert_eq!(get(&format!("workload_unavailable{{{labels}}}")), unavailable, "{labels}");
    }
    assert_eq!(family(&m, &format!("{P}workload_desired")).len(), 5, "the ignored namespace's Deployment is left out");

    // Claims: stuck by a pod, stuck by an event; merely waiting; used only by finished pods.
    let c = |name: &str| format!("namespace=\"shop\",pvc=\"{name}\"");
    for (name, pending, bound) in [
        ("data-db-0", 0.0, 1.0),
        ("wffc", 0.0, 0.0),
        ("used", 1.0, 0.0),
        ("provfail", 1.0, 0.0),
        ("used-by-done", 0.0, 0.0),
        ("used-by-failed", 0.0, 0.0),
    ] {
        assert_eq!(get(&format!("pvc_pending{{{}}}", c(name))), pending, "{name}");
        assert_eq!(get(&format!("pvc_bound{{{}}}", c(name))), bound, "{name}");
    }
    absent("pvc_pending{namespace=\"ci\",pvc=\"ci-claim\"}");
    assert_eq!(get("pvcs"), 6.0);
    assert_eq!(get("pvcs_pending"), 2.0);

    // Events: the last hour only, Node events kept from the ignored namespace, top 20 reasons.
    let counted: usize = (0..REASONS).map(reason_count).sum();
    // FailedScheduling, Unhealthy ×2, ProvisioningFailed, BackOff, NodeNotReady, Recent.
    assert_eq!(get("warning_events"), (counted + 7) as f64);
    let reasons = family(&m, &format!("{P}warning_events_by_reason"));
    assert_eq!(reasons.len(), 20);
    assert_eq!(get("warning_events_by_reason{reason=\"Reason24\"}"), 13.0);
    assert_eq!(get("warning_events_by_reason{reason=\"Reason22\"}"), 12.0);
    assert_eq!(get("warning_events_by_reason{reason=\"Reason04\"}"), 3.0, "ties keep the reason first in order");
    absent("warning_events_by_reason{reason=\"Reason05\"}");
    absent("warning_events_by_reason{reason=\"Unhealthy\"}");
    absent("warning_events_by_reason{reason=\"OldNews\"}");
    h.assert_only_reads();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_and_events_without_ignored_namespaces() {
    let h = Harness::start(fixture::cluster(jiff::Timestamp::now())).await;
    let run = h.check(&["--output", "prometheus"]).await;
    let m = samples(&run.stdout);
    assert_eq!(m[&format!("{P}pods")], 14.0 + BULK_PODS as f64, "the ci runner counts when not ignored");
    assert_eq!(m[&format!("{P}pods_crashlooping")], 3.0);
    assert_eq!(m[&format!("{P}pvcs_pending")], 3.0);
    let counted: usize = (0..REASONS).map(reason_count).sum();
    assert_eq!(m[&format!("{P}warning_events")], (counted + 8) as f64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_exposition_passes_promtool() {
    let h = Harness::start(fixture::cluster(jiff::Timestamp::now())).await;
    let mut cluster = fixture::cluster(jiff::Timestamp::now());
    // Hostile names and reasons: quotes, backslashes, line breaks.
    cluster.pods.push(
        dumbmonit_sim::fixtures::Pod::new("shop", "hostile")
            .container(dumbmonit_sim::fixtures::Container::waiting("app", "Evil\"Reason\\\nX", Some("<script>")))
            .build(jiff::Timestamp::now()),
    );
    h.sim.set_cluster(cluster);
    let run = h.check(&["--output", "prometheus"]).await;
    assert!(run.stdout.contains("reason=\"Evil\\\"Reason\\\\\\nX\""), "label values are escaped");
    let promtool = which("promtool")
        .expect("promtool is needed for this test: install the Debian package `prometheus` (scripts/test.sh does)");
    let mut child = std::process::Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(run.stdout.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let problems: Vec<&str> = report
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| !(l.contains("dumbmonit_k8s_pod_restarts") && l.contains("_total")))
        .collect();
    assert!(problems.is_empty(), "promtool found problems:\n{report}");
    assert!(
        report.contains("dumbmonit_k8s_pod_restarts") || out.status.success(),
        "promtool either passes or only lints the fixed counter name:\n{report}"
    );
}

fn which(cmd: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| std::path::Path::new(d).join(cmd)).find(|p| p.is_file())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_and_limits_per_node() {
    let now = jiff::Timestamp::now();
    let mut cluster = dumbmonit_sim::scenario::healthy(now);
    // On node-2, beside its svclb pod (100m and 128Mi requested, 256Mi memory limit), a pod with
    // a migration init container, a sidecar, two app containers and an overhead; a Failed pod,
    // which asks nothing any more.
    let mut pod = serde_json::json!({
        "metadata": {"name": "worker-0", "namespace": "shop"},
        "spec": {
            "nodeName": "node-2",
            "overhead": {"cpu": "20m", "memory": "16Mi"},
            "initContainers": [
                {"name": "migrate", "image": "m", "resources": {"requests": {"cpu": "2", "memory": "64Mi"}, "limits": {"cpu": "2"}}},
                {"name": "proxy", "image": "p", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}}
            ],
            "containers": [
                {"name": "app", "image": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "3", "memory": "2Gi"}}},
                {"name": "log", "image": "l", "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}}}
            ]
        },
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    });
    cluster.pods.push(pod.clone());
    pod["metadata"]["name"] = serde_json::json!("worker-old");
    pod["status"]["phase"] = serde_json::json!("Failed");
    cluster.pods.push(pod);
    let h = Harness::start(cluster).await;
    let run = h.check(&["--output", "prometheus"]).await;
    let m = samples(&run.stdout);
    let get = |name: &str, node: &str| m[&format!("{P}{name}{{node=\"{node}\"}}")];
    let mi = 1024.0 * 1024.0;
    // node-1: the six Deployment pods, db-0 and an svclb pod (the fixture schedules pods there
    // unless told otherwise), each with one container of 100m and 128Mi, limited to 256Mi.
    assert_eq!(get("node_cpu_requests_cores", "node-1"), 0.8);
    assert_eq!(get("node_cpu_limits_cores", "node-1"), 0.0);
    assert_eq!(get("node_memory_requests_bytes", "node-1"), 8.0 * 128.0 * mi);
    assert_eq!(get("node_memory_limits_bytes", "node-1"), 8.0 * 256.0 * mi);
    assert_eq!(get("node_cpu_allocatable_cores", "node-1"), 4.0);
    assert_eq!(get("node_memory_allocatable_bytes", "node-1"), 8_029_404.0 * 1024.0);
    // node-2: svclb + worker-0. CPU requests: the migration (2 cores, before the sidecar starts)
    // beats app + log + proxy (650m); + 20m overhead. Memory requests: app + log + proxy
    // (1120Mi) beat the migration (64Mi); + 16Mi. Limits are counted the same way.
    assert_eq!(get("node_cpu_requests_cores", "node-2"), 0.1 + 2.02);
    assert_eq!(get("node_memory_requests_bytes", "node-2"), (128.0 + 1120.0 + 16.0) * mi);
    assert_eq!(get("node_cpu_limits_cores", "node-2"), 3.02);
    assert_eq!(get("node_memory_limits_bytes", "node-2"), (256.0 + 2048.0 + 128.0 + 16.0) * mi);
}
