//! Real controllers, real object shapes: what goes wrong in a cluster, made by kube-apiserver,
//! kube-controller-manager and kube-scheduler from ordinary objects (testenv/), found by
//! `check` and by `serve` with its rules on the stepped clock.

mod common;

use common::dumbmonit;
use common::plane::{Credentials, Plane, assert_only_reads};
use serde_json::Value;

const WORKLOADS: &str = include_str!("control_plane_fixtures/workloads.yaml");
const METRICS_PIPELINE: &str = include_str!("control_plane_fixtures/metrics-pipeline.yaml");

fn conditions(v: &Value) -> &[Value] {
    v["status"]["conditions"].as_array().map(Vec::as_slice).unwrap_or(&[])
}

fn has_condition(v: &Value, kind: &str, status: &str, reason: &str) -> bool {
    conditions(v)
        .iter()
        .any(|c| c["type"] == kind && c["status"] == status && (reason.is_empty() || c["reason"] == reason))
}

/// The cluster of the fixture, once every controller has done its part.
async fn troubled_cluster() -> (Plane, Credentials) {
    let p = Plane::up(&["--nodes", "3"]);
    let dir = tempfile::tempdir().unwrap();
    let rbac = dumbmonit(&["rbac".into(), "--optional".into()], &[], dir.path()).await;
    p.apply(&rbac.stdout);
    let creds = p.read_credentials("kube-system", "dumbmonit-token");
    p.apply(WORKLOADS);
    p.apply(METRICS_PIPELINE);
    p.kubectl(&["-n", "shop", "create", "job", "nightly-report-29400000", "--from=cronjob/nightly-report"]);
    p.kubectl(&["-n", "shop", "delete", "pod", "draining", "--wait=false"]);
    p.kubectl(&["annotate", "node", "node-2", "testenv.dumbmonit.io/ready=false"]);

    p.wait_for("the crash loops", &["-n", "shop", "pods", "-l", "app=checkout"], |l| {
        let items = l["items"].as_array().unwrap();
        items.len() == 2
            && items
                .iter()
                .all(|p| p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff")
    });
    p.wait_for("the image pull back-off", &["-n", "shop", "pods", "-l", "app=search"], |l| {
        l["items"][0]["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ImagePullBackOff"
    });
    p.wait_for("the rollout past its deadline", &["-n", "shop", "deployment", "payments"], |d| {
        has_condition(d, "Progressing", "False", "ProgressDeadlineExceeded")
    });
    p.wait_for("the failed Job", &["-n", "shop", "job", "nightly-report-29400000"], |j| {
        has_condition(j, "Failed", "True", "")
    });
    p.wait_for("the DaemonSet missing a node", &["-n", "shop", "daemonset", "log-shipper"], |d| {
        d["status"]["desiredNumberScheduled"].as_i64() >= Some(2)
            && d["status"]["numberUnavailable"].as_i64() >= Some(1)
    });
    p.wait_for("the not-ready taint", &["node", "node-2"], |n| {
        n["spec"]["taints"].as_array().is_some_and(|t| t.iter().any(|t| t["key"] == "node.kubernetes.io/not-ready"))
    });
    p.wait_for("the pod held by its finalizer", &["-n", "shop", "pod", "draining"], |p| {
        p["metadata"]["deletionTimestamp"].is_string()
    });
    p.wait_for("the HPA without metrics", &["-n", "shop", "hpa", "payments"], |h| {
        has_condition(h, "ScalingActive", "False", "FailedGetResourceMetric")
    });
    p.wait_for("the claim of a missing class", &["-n", "shop", "pvc", "data-cache-0"], |c| {
        c["status"]["phase"] == "Pending"
    });
    // The StatefulSet's controller makes the claim and the pod together, and the scheduler's
    // first try can miss the claim ("persistentvolumeclaim ... not found"); the claim's coming
    // sends the pod back to the scheduler, whose verdict is then the one the test reads.
    p.wait_for(
        "the scheduler's verdict on the unbound claim",
        &["-n", "shop", "events", "--field-selector", "involvedObject.name=cache-0,reason=FailedScheduling"],
        |l| newest_message(l).contains("pod has unbound immediate PersistentVolumeClaims"),
    );
    p.wait_for("the Metrics API's real diagnosis", &["apiservice", "v1beta1.metrics.k8s.io"], |a| {
        has_condition(a, "Available", "False", "")
    });
    (p, creds)
}

/// The message of the newest event of a list, by the times `check` reads in the same order (the
/// scheduler's events carry microseconds, so two of them do not tie).
fn newest_message(list: &Value) -> String {
    let when = |e: &Value| {
        [&e["series"]["lastObservedTime"], &e["lastTimestamp"], &e["eventTime"], &e["metadata"]["creationTimestamp"]]
            .into_iter()
            .find_map(|t| t.as_str())
            .unwrap_or("")
            .to_owned()
    };
    let items = list["items"].as_array().cloned().unwrap_or_default();
    items.iter().max_by_key(|e| when(e)).map(|e| e["message"].as_str().unwrap_or("").to_owned()).unwrap_or_default()
}

fn find<'a>(list: &'a Value, key: &str, name: &str) -> &'a Value {
    list.as_array().and_then(|a| a.iter().find(|v| v[key] == name)).unwrap_or_else(|| panic!("no {name} in {list:#}"))
}

fn why(v: &Value) -> String {
    v["why"]
        .as_array()
        .map(|w| w.iter().map(|s| s.as_str().unwrap_or("")).collect::<Vec<_>>().join(" | "))
        .unwrap_or_default()
}

fn pod<'a>(doc: &'a Value, prefix: &str) -> Vec<&'a Value> {
    doc["pods"].as_array().unwrap().iter().filter(|p| p["name"].as_str().unwrap().starts_with(prefix)).collect()
}

/// One test: the cluster takes the controllers a minute to shape, and check and serve read the
/// same one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_controllers_trouble_found_by_check_and_by_serve() {
    let (p, creds) = troubled_cluster().await;
    let run = p.check(&p.address, &creds, &["--output", "json"]).await;
    assert_eq!(run.code, 2, "{}", run.stdout);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["cluster"]["version"], "v1.37.2");

    // The node made NotReady, with the kubelet's reason.
    let node = find(&doc["nodes"], "name", "node-2");
    assert_eq!(node["ready"], false);
    assert!(why(node).starts_with("KubeletNotReady: "), "{node:#}");

    // The crash loop, attributed to its Deployment through the real ReplicaSet's hash.
    let crashing = pod(&doc, "checkout-");
    assert_eq!(crashing.len(), 2, "{:#}", doc["pods"]);
    for c in &crashing {
        assert_eq!(c["workload"], "checkout");
        assert_eq!(c["crashlooping"], true);
        assert!(why(c).contains("last exit code 137 (Error)"), "{c:#}");
        assert!(why(c).contains("BackOff: Back-off restarting failed container app"), "{c:#}");
    }
    let pulling = pod(&doc, "search-")[0];
    assert_eq!(pulling["blocked"], serde_json::json!(["ImagePullBackOff"]));
    assert!(
        why(pulling).contains("Failed to pull image \"registry.example/shop/search:does-not-exist\""),
        "{pulling:#}"
    );
    let unready = pod(&doc, "payments-")[0];
    assert_eq!((unready["not_ready"].as_bool(), unready["workload"].as_str()), (Some(true), Some("payments")));
    let held = pod(&doc, "draining")[0];
    assert!(held["terminating"].is_i64(), "{held:#}");
    assert!(why(held).contains("waits for its finalizers: example.com/drain-connections"), "{held:#}");
    let unscheduled = pod(&doc, "cache-0")[0];
    assert!(
        why(unscheduled)
            .starts_with("FailedScheduling: 0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims"),
        "{unscheduled:#}"
    );
    assert_eq!(pod(&doc, "nightly-report-29400000-")[0]["failed"], true);

    // Workloads: the real ProgressDeadlineExceeded condition, the DaemonSet short of a node.
    let workload = |kind: &str, name: &str| {
        doc["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["kind"] == kind && w["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{kind} {name} in {:#}", doc["workloads"]))
    };
    let payments = workload("Deployment", "payments");
    assert_eq!(payments["rollout_stuck"], true);
    assert!(why(&payments).contains("ProgressDeadlineExceeded: ReplicaSet \"payments-"), "{payments:#}");
    assert!(why(&payments).contains("has timed out progressing."), "{payments:#}");
    let shipper = workload("DaemonSet", "log-shipper");
    assert_eq!((shipper["desired"].as_i64(), shipper["unavailable"].as_i64()), (Some(3), Some(1)), "{shipper:#}");
    for sts in ["orders-db", "cache"] {
        assert_eq!(workload("StatefulSet", sts)["ready"], 0);
    }

    // Claims: the class that does not exist (the real PV controller's event), and the one
    // waiting for its first consumer.
    let missing = find(&doc["claims"], "name", "data-cache-0");
    assert_eq!(missing["stuck"], true);
    assert!(
        why(missing).contains("ProvisioningFailed: storageclass.storage.k8s.io \"no-such-class\" not found"),
        "{missing:#}"
    );
    let waiting = find(&doc["claims"], "name", "data-orders-db-0");
    assert_eq!(waiting["phase"], "Pending");
    // The real PersistentVolume controller's Normal event: its pod is not scheduled yet (or, once
    // the scheduler picked a node, the class's provisioner never answers: both were seen).
    let waits = ["waiting for its first consumer", "waiting for the external provisioner example.com/never-provisions"];
    assert!(waits.iter().any(|w| why(waiting).starts_with(&format!("{w} | used by pod orders-db-0"))), "{waiting:#}");
    let fr = p.check(&p.address, &creds, &["--lang", "fr"]).await.stdout;
    let said = ["attend son premier consommateur", "attend le provisionneur externe example.com/never-provisions"];
    assert!(said.iter().any(|w| fr.contains(&format!("shop/data-orders-db-0  Pending  {w}"))), "{fr}");
    assert!(fr.contains("utilisé par le pod orders-db-0"), "{fr}");
    // Our words inside a why are said in French, the cluster's as they are.
    for line in [
        "attend ses finalizers\u{a0}: example.com/drain-connections",
        "app\u{a0}: dernier code de sortie 137 (Error)\u{a0}: SIGKILL\u{a0}: tué",
        "BackOff: Back-off restarting failed container app",
    ] {
        assert!(fr.contains(line), "{line:?} in\n{fr}");
    }
    assert!(!fr.contains("waits for its finalizers") && !fr.contains("last exit code"), "{fr}");

    // The optional reads: the Job controller's Failed condition, the HPA controller's and the
    // aggregator's own words.
    let optional = &doc["optional"];
    let job = find(&optional["jobs"], "name", "nightly-report-29400000");
    assert_eq!(job["owner"], "nightly-report");
    assert_eq!(job["why"], "BackoffLimitExceeded: Job has reached the specified backoff limit");
    let hpa = find(&optional["hpas"], "name", "payments");
    assert_eq!(
        (hpa["scaling_active"].as_bool(), hpa["reason"].as_str()),
        (Some(false), Some("FailedGetResourceMetric"))
    );
    let api = find(&optional["apiservices"], "name", "v1beta1.metrics.k8s.io");
    assert_eq!(api["available"], false);
    assert_eq!(api["reason"], "MissingEndpoints");
    assert_eq!(
        api["message"],
        "endpointslices for service/metrics-server in \"kube-system\" have no addresses with port name \"https\""
    );
    assert_eq!(optional["metrics_api"]["state"], "unavailable");
    assert_eq!(optional["not_granted"], serde_json::json!([]));

    // The text report says it in its first line.
    let text = p.check(&p.address, &creds, &[]).await;
    let first = text.stdout.lines().next().unwrap();
    for part in [
        "1 node not ready",
        "2 pods crash-looping",
        "1 pod stuck terminating",
        "1 rollout stuck",
        "1 job failed",
        "2 claims stuck",
    ] {
        assert!(first.contains(part), "{part} in {first}");
    }

    // The metrics pipeline: `dumbmonit top` explains what `kubectl top` only refuses.
    let top = dumbmonit(
        &[
            "top".into(),
            "pods".into(),
            p.address.clone(),
            "--token-file".into(),
            common::path(&creds.token_file),
            "--ca-file".into(),
            common::path(&creds.ca_file),
        ],
        &[],
        p.dir.path(),
    )
    .await;
    assert!(
        top.stdout.contains("APIService v1beta1.metrics.k8s.io is not Available (MissingEndpoints: endpointslices for service/metrics-server")
            || top.stderr.contains("APIService v1beta1.metrics.k8s.io is not Available (MissingEndpoints: endpointslices for service/metrics-server"),
        "stdout: {}\nstderr: {}",
        top.stdout,
        top.stderr
    );
    let kubectl_top = p.kubectl_in(&["top", "pods", "-A"], "");
    assert!(!kubectl_top.status.success());
    assert!(String::from_utf8_lossy(&kubectl_top.stderr).contains("Metrics API not available"), "{kubectl_top:?}");

    serve_fires_the_rules(&p, &creds).await;
    assert_only_reads(&p, "system:serviceaccount:kube-system:dumbmonit");
}

/// serve over the same cluster, a minute of rule time per cycle: each rule fires when its
/// duration has passed, from what the real API server answers.
async fn serve_fires_the_rules(p: &Plane, creds: &Credentials) {
    let dir = tempfile::tempdir().unwrap();
    let s = p.serve(dir.path(), creds, "");
    let expected = [
        "KubernetesNodeNotReady",
        "KubernetesPodCrashLooping",
        "KubernetesRolloutStuck",
        "KubernetesPodStuckTerminating",
        "KubernetesJobFailed",
        "KubernetesPVCPending",
        "KubernetesHPAMetricsUnavailable",
        "KubernetesAggregatedAPIUnavailable",
        "KubernetesWorkloadReplicasMissing",
    ];
    let alerts = s.wait_for("/api/v1/alerts", "every rule of the real cluster's trouble", |r| {
        expected.iter().all(|name| r.body.contains(&format!("\"{name}\"")))
    });
    assert!(!alerts.body.contains("KubernetesMonitorUnreachable"), "{}", alerts.body);
    let page = s.get("/clusters/real");
    assert_eq!(page.status, 200);
    for text in
        ["ProgressDeadlineExceeded", "waits for its finalizers: example.com/drain-connections", "MissingEndpoints"]
    {
        assert!(page.body.contains(text), "{text} on the page");
    }
    let m = common::samples(&s.get("/metrics").body);
    assert_eq!(m["dumbmonit_k8s_pods_stuck_terminating{cluster=\"real\"}"], 1.0);
    assert_eq!(
        m["dumbmonit_k8s_workload_rollout_stuck{cluster=\"real\",kind=\"Deployment\",namespace=\"shop\",workload=\"payments\"}"],
        1.0
    );
}
