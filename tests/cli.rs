//! `check`'s reports and exit statuses, `rbac`, `demo`.

mod common;

use common::fixture;
use common::{Harness, dumbmonit};
use dumbmonit_sim::fixtures::{Container, Pod};
use dumbmonit_sim::scenario;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_statuses_follow_the_monitoring_plugin_convention() {
    let now = jiff::Timestamp::now();
    let h = Harness::start(scenario::healthy(now)).await;
    assert_eq!(h.check(&[]).await.code, 0, "healthy");

    let mut notice = scenario::healthy(now);
    notice
        .pods
        .push(Pod::new("shop", "waiting").unschedulable("0/3 nodes are available: 3 Insufficient cpu.").build(now));
    h.sim.set_cluster(notice);
    let run = h.check(&[]).await;
    assert_eq!(run.code, 1, "a pending pod is a notice: {}", run.stdout);
    assert!(run.stdout.starts_with("1 pod pending\n"), "{}", run.stdout);

    let mut critical = scenario::healthy(now);
    critical.pods.push(Pod::new("shop", "crashy").container(Container::crashlooping("app", "Error", 1, 4)).build(now));
    h.sim.set_cluster(critical);
    assert_eq!(h.check(&[]).await.code, 2, "a crash loop is critical");

    h.sim.set_cluster(scenario::trouble(now));
    assert_eq!(h.check(&[]).await.code, 2);
    h.sim.set_faults(dumbmonit_sim::Faults { fail_status: Some(503), ..Default::default() });
    assert_eq!(h.check(&[]).await.code, 3, "unreadable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_cluster_prints_its_counters_and_nothing_else() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let run = h.check(&[]).await;
    assert_eq!(run.code, 0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    assert_eq!(lines[0], "Healthy: 3 nodes ready, 10 pods");
    assert_eq!(
        lines[1],
        format!(
            "Cluster {} (v1.33.4+k3s1): 3 nodes (3 ready), 10 pods (10 running, 0 pending, 0 failed), 5 workloads, 1 claim, 0 warning events in the last hour",
            h.sim.url()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_text_report_says_what_is_wrong_and_why() {
    let h = Harness::start(fixture::cluster(jiff::Timestamp::now())).await;
    let run = h.check(&["--ignore-namespace", "ci"]).await;
    assert_eq!(run.code, 2);
    let out = &run.stdout;
    assert!(
        out.starts_with(
            "3 nodes not ready, 2 pods crash-looping, 2 nodes under pressure, 2 pods blocked, 5 pods pending, \
             1 pod failed, 1 pod not ready, 3 workloads missing replicas, 2 claims stuck, CPU and memory requests past \
             what the cluster holds without its largest node\n"
        ),
        "{out}"
    );
    for expected in [
        // Nodes with the reason they are not ready, and a node event recorded in the ignored namespace.
        "NodeStatusUnknown: Kubelet stopped posting node status.",
        "NodeNotReady: Node node-c status is now: NodeNotReady",
        "the node lists no Ready condition",
        "cordoned",
        // Pods and why.
        "Pods needing attention (8)",
        "shop/api-7c9696d669-8tpp6",
        "app: last exit code 137 (OOMKilled): SIGKILL: out of memory, the container went over its memory limit",
        "BackOff: Back-off restarting failed container app",
        "migrate: last exit code 1 (Error): application error",
        "web: ImagePullBackOff: Back-off pulling image \"registry.example.com/web:typo\"",
        "b: CreateContainerConfigError: secret \"db-password\" not found",
        "FailedScheduling: 0/5 nodes are available: 5 Insufficient cpu.",
        "Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 503",
        "Evicted: The node was low on resource: memory.",
        // Workloads, claims, events by reason.
        "Workloads missing replicas (3)",
        "DaemonSet kube-system/svclb  4/5",
        "Stuck claims (2)",
        "ProvisioningFailed: storageclass.storage.k8s.io \"fast-ssd\" not found",
        "used by pod unsched",
        "Warning events in the last hour, by reason",
        "13  Reason24",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    assert!(!out.contains("runner"), "the ignored namespace is left out");
    assert!(!out.contains("Liveness probe failed"), "the newest event about a pod explains it, not an older one");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_json_document() {
    let h = Harness::start(fixture::cluster(jiff::Timestamp::now())).await;
    let run = h.check(&["--output", "json", "--ignore-namespace", "ci"]).await;
    assert_eq!(run.code, 2);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("valid JSON");
    assert_eq!(doc["status"], "critical");
    assert_eq!(doc["exit_code"], 2);
    assert_eq!(doc["cluster"]["address"], h.sim.url());
    assert_eq!(doc["cluster"]["version"], "v1.33.4+k3s1");
    assert_eq!(doc["counts"]["pods_crashlooping"], 2);
    assert_eq!(doc["counts"]["pvcs_pending"], 2);
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 5);
    let pods = doc["pods"].as_array().unwrap();
    assert_eq!(pods.len(), 8, "only pods that need attention");
    let crash = pods.iter().find(|p| p["name"] == "api-7c9696d669-8tpp6").unwrap();
    assert_eq!(crash["workload"], "api");
    assert_eq!(crash["restarts"], 14);
    assert_eq!(crash["problems"], serde_json::json!(["crash-looping"]));
    assert_eq!(doc["workloads"].as_array().unwrap().len(), 3);
    assert_eq!(doc["claims"].as_array().unwrap().len(), 2);
    assert_eq!(doc["warning_events_by_reason"][0], serde_json::json!({"reason": "Reason24", "count": 13}));
    assert_eq!(doc["collections"].as_array().unwrap().len(), 8);
    assert!(doc["error"].is_null());

    h.sim.set_faults(dumbmonit_sim::Faults {
        forbidden: vec![dumbmonit_sim::api::Resource::Events],
        ..Default::default()
    });
    let run = h.check(&["--output", "json"]).await;
    assert_eq!(run.code, 3);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("valid JSON on failure too");
    assert_eq!(doc["status"], "unreachable");
    assert_eq!(doc["error"]["collection"], "events");
    assert!(doc["error"]["message"].as_str().unwrap().starts_with("The service account may not read events (403)"));
    assert!(doc.get("pods").is_none(), "no object data from a failed cycle");
    assert_eq!(run.stderr.trim(), doc["error"]["message"].as_str().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_prints_a_read_only_role() {
    let dir = tempfile::tempdir().unwrap();
    let run = dumbmonit(&["rbac".into()], &[], dir.path()).await;
    assert_eq!(run.code, 0);
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&run.stdout).expect("valid YAML");
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Secret"]);
    assert_eq!(docs[0]["metadata"], serde_json::json!({"name": "dumbmonit", "namespace": "kube-system"}));
    assert_eq!(
        docs[1]["rules"],
        serde_json::json!([
            {"apiGroups": [""], "resources": ["nodes", "pods", "persistentvolumeclaims", "events"], "verbs": ["get", "list"]},
            {"apiGroups": ["apps"], "resources": ["deployments", "statefulsets", "daemonsets"], "verbs": ["get", "list"]}
        ])
    );
    assert_eq!(docs[2]["subjects"][0]["name"], "dumbmonit");
    // The guide's names: a user who followed it and then applies this updates the same objects.
    assert_eq!(docs[1]["metadata"]["name"], "dumbmonit-read");
    assert_eq!(docs[2]["metadata"]["name"], "dumbmonit-read");
    assert_eq!(docs[2]["roleRef"]["name"], "dumbmonit-read");
    assert_eq!(docs[3]["metadata"]["name"], "dumbmonit-token");
    assert_eq!(docs[3]["type"], "kubernetes.io/service-account-token");
    assert_eq!(docs[3]["metadata"]["annotations"]["kubernetes.io/service-account.name"], "dumbmonit");
    assert!(!run.stdout.contains("secrets\""), "no access to Secrets");

    let run = dumbmonit(
        &["rbac".into(), "--service-account-namespace".into(), "monitoring".into(), "--name".into(), "dm".into()],
        &[],
        dir.path(),
    )
    .await;
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&run.stdout).unwrap();
    assert_eq!(
        docs[2]["subjects"][0],
        serde_json::json!({"kind": "ServiceAccount", "name": "dm", "namespace": "monitoring"})
    );
    let run = dumbmonit(&["rbac".into(), "--name".into(), "Bad Name".into()], &[], dir.path()).await;
    assert_eq!(run.code, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_watch_adds_the_watch_verb_to_the_same_rules() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dumbmonit(&["rbac".into()], &[], dir.path()).await;
    let watched = dumbmonit(&["rbac".into(), "--watch".into()], &[], dir.path()).await;
    assert_eq!(watched.code, 0, "{}", watched.stderr);
    assert!(!plain.stdout.contains("watch"));
    let added: Vec<&str> = watched.stdout.lines().filter(|l| !plain.stdout.lines().any(|p| p == *l)).collect();
    assert_eq!(
        added,
        [
            "# Also the watch verb, for watch mode (watch = true): list-then-watch instead of a list every interval.",
            "    verbs: [\"get\", \"list\", \"watch\"]",
            "    verbs: [\"get\", \"list\", \"watch\"]",
        ]
    );
    let both = dumbmonit(&["rbac".into(), "--watch".into(), "--optional".into()], &[], dir.path()).await;
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&both.stdout).unwrap();
    let verbs: Vec<(&str, &serde_json::Value)> = docs[1]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["apiGroups"][0].as_str().unwrap(), &r["verbs"]))
        .collect();
    let watch = serde_json::json!(["get", "list", "watch"]);
    let read = serde_json::json!(["get", "list"]);
    assert_eq!(
        verbs,
        [
            ("", &watch),
            ("apps", &watch),
            ("apiregistration.k8s.io", &watch),
            ("metrics.k8s.io", &read),
            ("autoscaling", &watch),
            ("batch", &watch),
            ("policy", &watch),
            ("", &watch),
            ("coordination.k8s.io", &watch),
            ("admissionregistration.k8s.io", &watch),
            ("", &read),
            ("discovery.k8s.io", &read),
        ]
    );
    assert!(both.stdout.contains(
        "# Not on the Metrics API (metrics.k8s.io), nor on services and endpointslices (the admission webhooks' backends): they are read at each cycle, never watched."
    ));
    let help = dumbmonit(&["rbac".into(), "--help".into()], &[], dir.path()).await;
    assert!(help.stdout.contains("--watch") && help.stdout.contains("for watch mode"), "{}", help.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_tells_its_story_on_pages_that_say_it_is_simulated() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
        .args(["demo", "--listen", "127.0.0.1:0", "--pace", "0.3", "--interval", "0.2"])
        .env("HOME", dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut printed = Vec::new();
    let addr: std::net::SocketAddr = loop {
        let line = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("the demo prints its address");
        printed.push(line.clone());
        if let Some(url) = line.trim().strip_prefix("Open http://") {
            break url.trim_end_matches('/').parse().unwrap();
        }
    };
    assert!(printed[0].contains("SIMULATED cluster"), "{printed:?}");
    let get = |p: &str| common::web::get(addr, "GET", p, None);
    // The story ends with every problem on the page.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let list = get("/api/v1/clusters").json();
        let summary = list[0]["summary"].as_str().unwrap_or("").to_string();
        if summary.contains("pod blocked") && summary.contains("node not ready") && summary.contains("claim stuck") {
            assert!(summary.contains("pod crash-looping"), "{summary}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the story did not unfold: {summary}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for p in ["/", "/clusters/demo"] {
        let page = get(p);
        assert_eq!(page.status, 200);
        assert!(page.body.contains("Simulated cluster: this is DumbMonit's demo, no real cluster is watched."), "{p}");
    }
    assert!(get("/clusters/demo").body.contains("shop/api-7c9696d669-8tpp6"));
    // And in French, for a French browser.
    let french = common::web::request(addr, "GET", "/clusters/demo", &[("Accept-Language", "fr")], b"");
    assert!(french.body.contains("Cluster simulé\u{a0}: ceci est la démo de DumbMonit"), "{}", french.body);
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_tables_show_fifty_rows_and_count_the_rest() {
    let now = jiff::Timestamp::now();
    let mut cluster = scenario::healthy(now);
    for i in 0..60 {
        cluster.pods.push(
            Pod::new("load", &format!("crash-{i:02}"))
                .container(Container::crashlooping("app", "Error", 1, 3))
                .build(now),
        );
    }
    let h = Harness::start(cluster).await;
    let run = h.check(&[]).await;
    assert!(run.stdout.starts_with("60 pods crash-looping\n"), "{}", run.stdout);
    assert!(run.stdout.contains("Pods needing attention (60)"));
    assert!(run.stdout.contains("load/crash-49"));
    assert!(!run.stdout.contains("load/crash-50"));
    assert!(run.stdout.contains("\n  and 10 more\n"), "{}", run.stdout);
}
