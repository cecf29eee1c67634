//! The simulator held to the real thing: one fixture loaded into both (into the real API server
//! through the API, statuses through the status subresource, with no controller or kubelet to
//! change them), and DumbMonit's reports of the two compared; then the raw answers to the same
//! requests compared in shape.

mod common;

use common::plane::Plane;
use common::{Harness, dumbmonit};
use dumbmonit_sim::api::Resource;
use dumbmonit_sim::{Cluster, Faults, scenario};
use serde_json::{Value, json};

/// The fixture as one List for the API (items with their kind; the API server's own local
/// APIServices are there already, only aggregated ones are created; the Metrics API's objects
/// are served by metrics-server, not stored, so there is nothing to create).
fn as_list(c: &Cluster) -> Value {
    let mut all = Vec::new();
    for (r, items) in c.clone().lists() {
        if matches!(r, Resource::NodeMetrics | Resource::PodMetrics) {
            continue;
        }
        for mut item in items {
            if r == Resource::ApiServices && item["spec"]["service"].is_null() {
                continue;
            }
            item["kind"] = json!(r.kind());
            item["apiVersion"] = json!(r.api_version());
            all.push(item);
        }
    }
    json!({"apiVersion": "v1", "kind": "List", "items": all})
}

/// What differs by nature between the two servers: where they are, their release, what the
/// server sets (uids, resourceVersions, creation times), the connection's certificates, timings.
fn normalized(mut report: Value) -> Value {
    for key in ["cluster", "collections", "certificates", "time"] {
        report.as_object_mut().unwrap().remove(key);
    }
    report
}

/// The exposition's samples, but for what differs by nature (timings, the serving certificate
/// each server made at its start).
fn series(exposition: &str) -> std::collections::BTreeMap<String, String> {
    const BY_NATURE: [&str; 3] = [
        "dumbmonit_k8s_collection_duration_seconds",
        "dumbmonit_k8s_cycle_duration_seconds",
        "dumbmonit_k8s_apiserver_certificate_expiry_timestamp_seconds",
    ];
    exposition
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter(|l| !BY_NATURE.iter().any(|f| l.starts_with(f)))
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Loads `fixture` into a real API server and into the simulator, and compares check's JSON and
/// Prometheus reports of the two.
async fn same_from_both(fixture: Cluster) {
    let p = Plane::up(&["--no-kubelets", "--controllers", "serviceaccount-token"]);
    let dir = tempfile::tempdir().unwrap();
    p.apply(&dumbmonit(&["rbac".into(), "--optional".into()], &[], dir.path()).await.stdout);
    let creds = p.read_credentials("kube-system", "dumbmonit-token");
    p.load(&as_list(&fixture));
    // The simulator answers /version as the real server does, so that the kubelets' skew is
    // measured from the same release.
    let mut fixture = fixture;
    fixture.version = serde_json::from_str(&p.kubectl(&["get", "--raw", "/version"])).unwrap();
    // A deletion's time is the server's (the moment of the DELETE plus the grace period): the
    // simulator is given the one the real server set.
    for pod in fixture.pods.iter_mut().filter(|p| p["metadata"]["deletionTimestamp"].is_string()) {
        let (ns, name) = (pod["metadata"]["namespace"].as_str().unwrap(), pod["metadata"]["name"].as_str().unwrap());
        let real = p.get(&["-n", ns, "pod", name]);
        pod["metadata"]["deletionTimestamp"] = real["metadata"]["deletionTimestamp"].clone();
        pod["metadata"]["deletionGracePeriodSeconds"] = real["metadata"]["deletionGracePeriodSeconds"].clone();
    }
    let sim = Harness::start(fixture).await;

    let real = p.check(&p.address, &creds, &["--output", "json"]).await;
    let simulated = sim.check(&["--output", "json"]).await;
    assert_eq!(real.code, simulated.code, "real {}\nsimulated {}", real.stdout, simulated.stdout);
    let real: Value = serde_json::from_str(&real.stdout).unwrap();
    let simulated: Value = serde_json::from_str(&simulated.stdout).unwrap();
    let differences = differences("", &normalized(real), &normalized(simulated));
    assert!(differences.is_empty(), "real != simulated:\n{}", differences.join("\n"));

    let real = series(&p.check(&p.address, &creds, &["--output", "prometheus"]).await.stdout);
    let simulated = series(&sim.check(&["--output", "prometheus"]).await.stdout);
    assert!(real.len() > 20, "{real:?}");
    let keys: std::collections::BTreeSet<&String> = real.keys().chain(simulated.keys()).collect();
    let differ: Vec<String> = keys
        .into_iter()
        .filter(|k| match (real.get(*k), simulated.get(*k)) {
            (Some(a), Some(b)) if a == b => false,
            (Some(a), Some(b)) => !(ages(k) && close(a.parse().ok(), b.parse().ok())),
            _ => true,
        })
        .map(|k| format!("{k}: real {:?} / simulated {:?}", real.get(k), simulated.get(k)))
        .collect();
    assert!(differ.is_empty(), "real != simulated:\n{}", differ.join("\n"));
}

/// Ages, counted from the moment each check runs: the two checks run a moment apart.
fn ages(at: &str) -> bool {
    ["terminating", "last_schedule_age", "cronjob_last_schedule_age_seconds", "pod_terminating_seconds"]
        .iter()
        .any(|name| at.ends_with(&format!(".{name}")) || at.starts_with(&format!("dumbmonit_k8s_{name}")))
}

/// Within the few seconds between the two checks.
fn close(a: Option<f64>, b: Option<f64>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if (a - b).abs() <= 5.0)
}

/// Where two JSON values differ, by path.
fn differences(at: &str, a: &Value, b: &Value) -> Vec<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter()
                .flat_map(|k| {
                    differences(
                        &format!("{at}.{k}"),
                        x.get(k).unwrap_or(&Value::Null),
                        y.get(k).unwrap_or(&Value::Null),
                    )
                })
                .collect()
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().flat_map(|(i, (a, b))| differences(&format!("{at}[{i}]"), a, b)).collect()
        }
        _ if a == b => vec![],
        (Value::Number(x), Value::Number(y)) if ages(at) && close(x.as_f64(), y.as_f64()) => vec![],
        _ => vec![format!("{at}: real {a} / simulated {b}")],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_in_trouble_reads_the_same_from_both() {
    same_from_both(scenario::trouble(jiff::Timestamp::now())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outages_read_the_same_from_both() {
    let now = jiff::Timestamp::now();
    let mut c = scenario::with_metrics_server(scenario::outages(now), false, now);
    // The real aggregator writes an APIService's status itself: without the Service in the
    // fixture, it says ServiceNotFound, as the simulator's fixture of that case does.
    c.apiservices.retain(|a| a["spec"]["service"].is_null());
    c.apiservices.push(dumbmonit_sim::fixtures::apiservice_unreachable(
        "metrics.k8s.io",
        "v1beta1",
        "kube-system",
        "metrics-server",
        false,
        now,
    ));
    same_from_both(c).await;
}

/// A JSON value's shape: its keys (recursively) and the kinds of its values.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(a) => Value::Array(a.first().map(shape).into_iter().collect()),
        Value::String(_) => json!("string"),
        Value::Number(_) => json!("number"),
        Value::Bool(_) => json!("bool"),
        Value::Null => json!("null"),
    }
}

struct Raw {
    status: u16,
    body: Value,
}

fn raw(addr: std::net::SocketAddr, ca: &str, token: &str, path: &str) -> Raw {
    let auth = format!("Bearer {token}");
    let r = common::web::request_tls(
        addr,
        "GET",
        path,
        &[("Authorization", &auth), ("Accept", "application/json")],
        b"",
        ca,
    );
    let body = serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{path}: {e}: {}", r.body));
    Raw { status: r.status, body }
}

/// The envelope of a List: everything but its items.
fn envelope(list: &Value) -> Value {
    let mut v = shape(list);
    v.as_object_mut().unwrap().remove("items");
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_raw_answers_agree_in_shape() {
    let now = jiff::Timestamp::now();
    let fixture = scenario::trouble(now);
    let p = Plane::up(&["--no-kubelets", "--controllers", "serviceaccount-token"]);
    let dir = tempfile::tempdir().unwrap();
    p.apply(&dumbmonit(&["rbac".into()], &[], dir.path()).await.stdout);
    let creds = p.read_credentials("kube-system", "dumbmonit-token");
    // A ServiceAccount bound to nothing, for the real 403.
    p.kubectl(&["-n", "kube-system", "create", "serviceaccount", "nobody"]);
    p.apply(
        &common::plane::GUIDE_SECRET.replace("dumbmonit-token", "nobody-token").replace("\"dumbmonit\"", "\"nobody\""),
    );
    let nobody = p.read_credentials("kube-system", "nobody-token");
    p.load(&as_list(&fixture));
    let sim = Harness::start(fixture).await;
    let real_ca = std::fs::read_to_string(&p.ca_file).unwrap();
    let real_addr: std::net::SocketAddr = format!("127.0.0.1:{}", p.port).parse().unwrap();
    let real = |token: &str, path: &str| raw(real_addr, &real_ca, token, path);
    let simulated = |path: &str| raw(sim.sim.addr(), sim.sim.ca_pem(), sim.sim.token(), path);

    // A first page and the next, with the real continue token.
    let first = real(&creds.token, "/api/v1/pods?limit=2");
    let sim_first = simulated("/api/v1/pods?limit=2");
    assert_eq!((first.status, sim_first.status), (200, 200));
    assert_eq!(envelope(&first.body), envelope(&sim_first.body));
    assert_eq!(first.body["items"].as_array().unwrap().len(), 2);
    assert!(first.body["metadata"]["remainingItemCount"].as_i64() > Some(0));
    let token = first.body["metadata"]["continue"].as_str().unwrap();
    let next = real(&creds.token, &format!("/api/v1/pods?limit=2&continue={token}"));
    let sim_token = sim_first.body["metadata"]["continue"].as_str().unwrap().to_string();
    let sim_next = simulated(&format!("/api/v1/pods?limit=2&continue={sim_token}"));
    assert_eq!(envelope(&next.body), envelope(&sim_next.body));

    // A field selector the server supports, and one it does not.
    let selected = real(&creds.token, "/api/v1/events?limit=500&fieldSelector=type%3DWarning");
    let sim_selected = simulated("/api/v1/events?limit=500&fieldSelector=type%3DWarning");
    assert_eq!(envelope(&selected.body), envelope(&sim_selected.body));
    assert_eq!(selected.body["items"].as_array().unwrap().len(), sim_selected.body["items"].as_array().unwrap().len());
    let unsupported = real(&creds.token, "/api/v1/pods?fieldSelector=spec.nothing%3Dx");
    let sim_unsupported = simulated("/api/v1/pods?fieldSelector=spec.nothing%3Dx");
    assert_eq!((unsupported.status, sim_unsupported.status), (400, 400));
    assert_eq!(shape(&unsupported.body), shape(&sim_unsupported.body));
    assert_eq!(unsupported.body["message"], sim_unsupported.body["message"]);

    // 403: the same Status, the same words but for the user's name.
    let forbidden = real(&nobody.token, "/api/v1/pods?limit=500");
    sim.sim.set_faults(Faults { forbidden: vec![Resource::Pods], ..Default::default() });
    let sim_forbidden = simulated("/api/v1/pods?limit=500");
    assert_eq!((forbidden.status, sim_forbidden.status), (403, 403));
    assert_eq!(shape(&forbidden.body), shape(&sim_forbidden.body));
    assert_eq!(
        forbidden.body["message"].as_str().unwrap().replace("kube-system:nobody", "USER"),
        sim_forbidden.body["message"].as_str().unwrap().replace("kube-system:dumbmonit", "USER")
    );
    sim.sim.set_faults(Faults::default());

    // 401.
    let refused = real("not-a-token-of-this-cluster", "/api/v1/pods?limit=500");
    let sim_refused = raw(sim.sim.addr(), sim.sim.ca_pem(), "not-a-token-of-this-cluster", "/api/v1/pods?limit=500");
    assert_eq!((refused.status, sim_refused.status), (401, 401));
    assert_eq!(shape(&refused.body), shape(&sim_refused.body));
    assert_eq!(refused.body["message"], sim_refused.body["message"]);

    // 410: a continue token older than etcd's compaction.
    let first = real(&creds.token, "/api/v1/pods?limit=2");
    let token = first.body["metadata"]["continue"].as_str().unwrap().to_string();
    // A write, so that there is a revision to compact past.
    p.kubectl(&["create", "namespace", "after-the-first-page"]);
    p.compact();
    // The watch cache drops its older snapshots when it sees the compaction (it looks every
    // 15 s); until then it may still serve the page from its snapshot.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let gone = loop {
        let r = real(&creds.token, &format!("/api/v1/pods?limit=2&continue={token}"));
        if r.status != 200 || std::time::Instant::now() > deadline {
            break r;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    sim.sim.set_faults(Faults { expire_continue: 1, ..Default::default() });
    let sim_first = simulated("/api/v1/pods?limit=2");
    let sim_token = sim_first.body["metadata"]["continue"].as_str().unwrap().to_string();
    let sim_gone = simulated(&format!("/api/v1/pods?limit=2&continue={sim_token}"));
    assert_eq!((gone.status, sim_gone.status), (410, 410), "real: {:#}\nsimulated: {:#}", gone.body, sim_gone.body);
    assert_eq!(shape(&gone.body), shape(&sim_gone.body));
    assert_eq!(gone.body["reason"], "Expired");
    assert_eq!(gone.body["message"], sim_gone.body["message"]);
}
