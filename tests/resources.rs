//! The optional reads: aggregated APIServices, the Metrics API (available or not, and why),
//! HPAs; what a 403 on each does; `dumbmonit top`; `rbac --optional`; replayed recordings.

mod common;

use common::web::{Served, write_config};
use common::{Harness, dumbmonit, path, samples};
use dumbmonit_sim::api::Resource;
use dumbmonit_sim::{Faults, scenario};
use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

const FAILING: &str = "FailedDiscoveryCheck: failing or missing response from https://10.96.0.12:4443/apis/metrics.k8s.io/v1beta1: Get \"https://10.96.0.12:4443/apis/metrics.k8s.io/v1beta1\": context deadline exceeded";

fn top_args(h: &Harness, what: &str) -> Vec<String> {
    ["top", what, &h.sim.url(), "--token-file", &path(&h.token_file), "--ca-file", &path(&h.ca_file)]
        .map(String::from)
        .into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unavailable_metrics_api_is_diagnosed_everywhere() {
    let now = Timestamp::now();
    let h = Harness::start(scenario::with_metrics_server(scenario::healthy(now), false, now)).await;

    // The metrics: the APIService's availability, the HPA that cannot scale; no usage.
    let run = h.check(&["--output", "prometheus"]).await;
    let m = samples(&run.stdout);
    assert_eq!(
        m["dumbmonit_k8s_apiservice_available{apiservice=\"v1beta1.metrics.k8s.io\",service=\"kube-system/metrics-server\"}"],
        0.0
    );
    assert_eq!(
        m.keys().filter(|k| k.starts_with("dumbmonit_k8s_apiservice_available")).count(),
        1,
        "local APIServices are left out"
    );
    assert_eq!(m["dumbmonit_k8s_hpa_scaling_active{namespace=\"shop\",hpa=\"web\"}"], 0.0);
    assert_eq!(m["dumbmonit_k8s_hpa_at_max{namespace=\"shop\",hpa=\"web\"}"], 0.0);
    assert!(!m.keys().any(|k| k.starts_with("dumbmonit_k8s_node_cpu_usage_cores")));
    assert_eq!(m["dumbmonit_k8s_up"], 1.0, "the cycle succeeds");
    // metrics.k8s.io is not even asked while its APIService is down.
    assert!(h.sim.requests().iter().all(|r| !r.path.starts_with("/apis/metrics.k8s.io/")));

    // The report says it, with the reason, the message and what to check.
    let text = h.check(&[]).await;
    assert!(
        text.stdout.contains(&format!(
            "APIService v1beta1.metrics.k8s.io (kube-system/metrics-server) is not Available: {FAILING}"
        )),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains(&format!(
        "Metrics API not available: APIService v1beta1.metrics.k8s.io is not Available ({FAILING}). It points to service kube-system/metrics-server: check that the service has endpoints (kubectl -n kube-system get endpoints metrics-server)"
    )), "{}", text.stdout);
    assert!(text.stdout.contains(
        "HPA shop/web cannot scale: FailedGetResourceMetric: the HPA was unable to compute the replica count"
    ));

    // `dumbmonit top`: the diagnosis, then requests and limits; exit status 1.
    let top = dumbmonit(&top_args(&h, "nodes"), &[], h.dir.path()).await;
    assert_eq!(top.code, 1, "{}{}", top.stdout, top.stderr);
    let first = top.stdout.lines().next().unwrap();
    assert!(
        first.starts_with(
            "Metrics API not available: APIService v1beta1.metrics.k8s.io is not Available (FailedDiscoveryCheck"
        ),
        "{first}"
    );
    assert!(top.stdout.contains("What the pods request and limit, per node"), "{}", top.stdout);
    let node1 = top.stdout.lines().find(|l| l.starts_with("node-1 ")).unwrap();
    let cells: Vec<&str> = node1.split("   ").map(str::trim).filter(|c| !c.is_empty()).collect();
    assert_eq!(cells, ["node-1", "800m (20%)", "0m (0%)", "1024Mi (13%)", "2048Mi (26%)", "4000m, 7841Mi"], "{node1}");
    assert_eq!(dumbmonit(&top_args(&h, "pods"), &[], h.dir.path()).await.code, 1);

    // The page: the APIService, the diagnosis, the HPA.
    let cfg = write_config(h.dir.path(), "", &[("lab", &h, "0.2s")]);
    let s = Served::start(&cfg, &[]);
    let page = s.wait_for("/clusters/lab", "the diagnosis", |r| r.body.contains("Aggregated APIs not available"));
    assert!(
        page.body.contains(
            "<div class=\"error\">Metrics API not available: APIService v1beta1.metrics.k8s.io is not Available"
        ),
        "{}",
        page.body
    );
    assert!(page.body.contains("<td>kube-system/metrics-server</td><td class=\"critical\">FailedDiscoveryCheck</td>"));
    assert!(page.body.contains("cannot scale: FailedGetResourceMetric"));
    assert!(!page.body.contains("Not granted"), "everything is granted here");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_available_metrics_api_gives_the_fixture_usage() {
    let now = Timestamp::now();
    let h = Harness::start(scenario::with_metrics_server(scenario::healthy(now), true, now)).await;
    let run = h.check(&["--output", "prometheus"]).await;
    let m = samples(&run.stdout);
    // The fixture: node i (from 0) uses (i+1) × 250m and (i+2) × 512 MiB.
    for (i, node) in ["node-1", "node-2", "node-3"].iter().enumerate() {
        let i = i as f64;
        assert_eq!(m[&format!("dumbmonit_k8s_node_cpu_usage_cores{{node=\"{node}\"}}")], (i + 1.0) * 0.25);
        assert_eq!(
            m[&format!("dumbmonit_k8s_node_memory_usage_bytes{{node=\"{node}\"}}")],
            (i + 2.0) * 512.0 * 1024.0 * 1024.0
        );
    }
    assert_eq!(
        m["dumbmonit_k8s_apiservice_available{apiservice=\"v1beta1.metrics.k8s.io\",service=\"kube-system/metrics-server\"}"],
        1.0
    );
    assert_eq!(m["dumbmonit_k8s_hpa_scaling_active{namespace=\"shop\",hpa=\"web\"}"], 1.0);

    let top = dumbmonit(&top_args(&h, "nodes"), &[], h.dir.path()).await;
    assert_eq!(top.code, 0, "{}", top.stderr);
    let lines: Vec<Vec<&str>> = top.stdout.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(lines[0], ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]);
    assert_eq!(lines[1], ["node-1", "250m", "6%", "1024Mi", "13%"]);
    assert_eq!(lines[3], ["node-3", "750m", "18%", "2048Mi", "26%"]);

    let top = dumbmonit(&top_args(&h, "pods"), &[], h.dir.path()).await;
    assert_eq!(top.code, 0);
    let lines: Vec<Vec<&str>> = top.stdout.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(lines[0], ["NAMESPACE", "NAME", "CPU(cores)", "MEMORY(bytes)"]);
    assert_eq!(lines.len(), 1 + 10, "every running pod");
    assert!(lines.contains(&vec!["shop", "db-0", "3m", "24Mi"]), "2.5m rounded up, as kubectl does: {lines:?}");

    // The page shows usage beside requests and limits.
    let cfg = write_config(h.dir.path(), "", &[("lab", &h, "0.2s")]);
    let s = Served::start(&cfg, &[]);
    let page = s.wait_for("/clusters/lab", "usage", |r| r.body.contains("<th>CPU used</th>"));
    assert!(page.body.contains("aria-label=\"CPU used: 6% of allocatable\""), "{}", page.body);
    assert!(!page.body.contains("Metrics API not available"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_optional_read_that_is_not_granted_leaves_the_cycle_whole() {
    let now = Timestamp::now();
    let h = Harness::start(scenario::with_metrics_server(scenario::healthy(now), true, now)).await;
    let cfg = write_config(h.dir.path(), "", &[("lab", &h, "0.2s")]);
    let s = Served::start(&cfg, &[]);
    for (forbidden, shown) in [
        (Resource::ApiServices, "apiservices.apiregistration.k8s.io"),
        (Resource::NodeMetrics, "nodes.metrics.k8s.io"),
        (Resource::PodMetrics, "pods.metrics.k8s.io"),
        (Resource::HorizontalPodAutoscalers, "horizontalpodautoscalers.autoscaling"),
        (Resource::Jobs, "jobs.batch"),
        (Resource::CronJobs, "cronjobs.batch"),
    ] {
        h.sim.set_faults(Faults { forbidden: vec![forbidden], ..Default::default() });
        let run = h.check(&["--output", "prometheus"]).await;
        assert_eq!(run.code, 0, "{shown}: {}", run.stderr);
        assert_eq!(run.stderr, "");
        assert_eq!(samples(&run.stdout)["dumbmonit_k8s_up"], 1.0, "{shown}");
        let page = s.wait_for("/clusters/lab", shown, |r| r.body.contains(shown));
        assert_eq!(page.body.matches("Not granted to this service account").count(), 1, "said once: {shown}");
        assert_eq!(page.body.matches(shown).count(), 1, "{shown} named once");
        assert_eq!(s.get("/api/v1/clusters/lab").json()["status"], "ok", "{shown}");
    }
    // A 403 on the APIServices resolves nothing: no alert about them either way.
    assert!(s.get("/api/v1/alerts").json().as_array().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_optional_read_has_its_success_and_duration() {
    let now = Timestamp::now();
    let optional = ["apiservices", "node_metrics", "pod_metrics", "hpas", "jobs", "cronjobs"];
    let success = |m: &std::collections::BTreeMap<String, f64>, c: &str| {
        m.get(&format!("dumbmonit_k8s_collection_success{{collection=\"{c}\"}}")).copied()
    };
    let timed = |m: &std::collections::BTreeMap<String, f64>, c: &str| {
        m.get(&format!("dumbmonit_k8s_collection_duration_seconds{{collection=\"{c}\"}}")).is_some_and(|d| *d >= 0.0)
    };

    // Everything read.
    let h = Harness::start(scenario::with_metrics_server(scenario::healthy(now), true, now)).await;
    let m = samples(&h.check(&["--output", "prometheus"]).await.stdout);
    for c in optional {
        assert_eq!(success(&m, c), Some(1.0), "{c}");
        assert!(timed(&m, c), "{c}");
    }
    // A read refused (403) or failing (500) is a failed read; the others stay read.
    h.sim.set_faults(Faults {
        forbidden: vec![Resource::Jobs],
        body: Some((
            Resource::CronJobs,
            dumbmonit_sim::BodyFault::Replace {
                status: 500,
                content_type: "text/plain",
                body: bytes::Bytes::from_static(b"oops"),
            },
        )),
        ..Default::default()
    });
    let m = samples(&h.check(&["--output", "prometheus"]).await.stdout);
    assert_eq!((success(&m, "jobs"), success(&m, "cronjobs")), (Some(0.0), Some(0.0)));
    assert!(timed(&m, "jobs") && timed(&m, "cronjobs"));
    assert_eq!(success(&m, "hpas"), Some(1.0));
    assert_eq!(m["dumbmonit_k8s_up"], 1.0);

    // The Metrics API not asked while its APIService is down: no series for it.
    let down = Harness::start(scenario::with_metrics_server(scenario::healthy(now), false, now)).await;
    let m = samples(&down.check(&["--output", "prometheus"]).await.stdout);
    for c in ["node_metrics", "pod_metrics"] {
        assert_eq!(success(&m, c), None, "{c}");
        assert!(!timed(&m, c), "{c}");
    }
    assert_eq!(success(&m, "apiservices"), Some(1.0));

    // No metrics-server at all: the API is not served (404), which is not a failure.
    let none = Harness::start(scenario::healthy(now)).await;
    let m = samples(&none.check(&["--output", "prometheus"]).await.stdout);
    for c in ["node_metrics", "pod_metrics"] {
        assert_eq!(success(&m, c), None, "{c}");
        assert!(!timed(&m, c), "{c}");
    }
    assert!(none.sim.requests().iter().any(|r| r.path == "/apis/metrics.k8s.io/v1beta1/nodes"), "it was asked");
    for c in ["apiservices", "hpas", "jobs", "cronjobs"] {
        assert_eq!(success(&m, c), Some(1.0), "{c}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hpa_conditions() {
    let now = Timestamp::now();
    let mut c = scenario::with_metrics_server(scenario::healthy(now), true, now);
    c.hpas.push(dumbmonit_sim::fixtures::hpa("shop", "api", "api", 2, 4, 4, None, now));
    c.hpas.push(dumbmonit_sim::fixtures::hpa(
        "shop",
        "batch",
        "batch",
        1,
        3,
        1,
        Some(("FailedGetScale", "deployments/scale.apps \"batch\" not found")),
        now,
    ));
    let h = Harness::start(c).await;
    let m = samples(&h.check(&["--output", "prometheus"]).await.stdout);
    let get = |f: &str, hpa: &str| m[&format!("dumbmonit_k8s_{f}{{namespace=\"shop\",hpa=\"{hpa}\"}}")];
    assert_eq!((get("hpa_scaling_active", "api"), get("hpa_at_max", "api")), (1.0, 1.0));
    assert_eq!((get("hpa_scaling_active", "batch"), get("hpa_at_max", "batch")), (0.0, 0.0));
    assert_eq!((get("hpa_scaling_active", "web"), get("hpa_at_max", "web")), (1.0, 0.0));
    let json: Value = serde_json::from_str(&h.check(&["--output", "json"]).await.stdout).unwrap();
    let hpas = json["optional"]["hpas"].as_array().unwrap();
    let batch = hpas.iter().find(|x| x["name"] == "batch").unwrap();
    assert_eq!(batch["reason"], "FailedGetScale");
    assert_eq!(json["optional"]["metrics_api"]["state"], "available");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_optional_adds_exactly_the_optional_reads() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dumbmonit(&["rbac".into()], &[], dir.path()).await.stdout;
    let optional = dumbmonit(&["rbac".into(), "--optional".into()], &[], dir.path()).await.stdout;
    let added: Vec<&str> = optional.lines().filter(|l| !plain.lines().any(|p| p == *l)).collect();
    assert_eq!(
        added,
        [
            "  - apiGroups: [\"apiregistration.k8s.io\"]",
            "    resources: [\"apiservices\"]",
            "  - apiGroups: [\"metrics.k8s.io\"]",
            "    resources: [\"nodes\", \"pods\"]",
            "  - apiGroups: [\"autoscaling\"]",
            "    resources: [\"horizontalpodautoscalers\"]",
            "  - apiGroups: [\"batch\"]",
            "    resources: [\"jobs\", \"cronjobs\"]",
            "  - apiGroups: [\"policy\"]",
            "    resources: [\"poddisruptionbudgets\"]",
            // A second rule of the core group (its `apiGroups` line is the guide's rule's too).
            "    resources: [\"resourcequotas\", \"persistentvolumes\", \"namespaces\"]",
            "  - apiGroups: [\"coordination.k8s.io\"]",
            "    resources: [\"leases\"]",
            "  - apiGroups: [\"admissionregistration.k8s.io\"]",
            "    resources: [\"validatingwebhookconfigurations\", \"mutatingwebhookconfigurations\"]",
            // A third rule of the core group: the webhooks' Services, never watched.
            "    resources: [\"services\"]",
            "  - apiGroups: [\"discovery.k8s.io\"]",
            "    resources: [\"endpointslices\"]",
        ]
    );
    assert!(!optional.contains("proxy") && !optional.contains("secrets") && !optional.contains("configmaps"));
    assert_eq!(optional.matches("verbs: [\"get\", \"list\"]").count(), 12);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_optional_reads_replay_through_the_new_rules() {
    let start: Timestamp = "2026-11-30T00:00:00Z".parse().unwrap();
    let h = Harness::start(scenario::with_metrics_server(scenario::healthy(start), false, start)).await;
    let dir = tempfile::tempdir().unwrap();
    let cycles = dir.path().join("lab");
    std::fs::create_dir(&cycles).unwrap();
    // One live recording, replayed as twelve cycles a minute apart (only its time changes).
    let first = cycles.join("first.json");
    assert_eq!(h.check(&["--record", &path(&first)]).await.code, 0);
    let text = std::fs::read_to_string(&first).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["apiservices"]["kind"], "APIServiceList");
    assert_eq!(doc["hpas"]["kind"], "HorizontalPodAutoscalerList");
    assert!(doc.get("node_metrics").is_none(), "not asked for while the APIService is down");
    std::fs::remove_file(&first).unwrap();
    for m in 0..12 {
        doc["time"] = Value::String((start + SignedDuration::from_mins(m)).to_string());
        std::fs::write(cycles.join(format!("c-{m:02}.json")), doc.to_string()).unwrap();
    }
    let run = dumbmonit(&["replay".into(), path(&cycles)], &[], dir.path()).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let got: Vec<(String, String)> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|l| (l["time"].as_str().unwrap().to_string(), l["alertname"].as_str().unwrap().to_string()))
        .collect();
    let at = |m: i64, name: &str| ((start + SignedDuration::from_mins(m)).to_string(), name.to_string());
    assert_eq!(got, [at(5, "KubernetesAggregatedAPIUnavailable"), at(10, "KubernetesHPAMetricsUnavailable")]);
}
