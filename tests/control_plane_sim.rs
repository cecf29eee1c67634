//! The simulator held to the real thing: one fixture loaded into both (into the real API server
//! through the API, statuses through the status subresource, with no controller or kubelet to
//! change them), and DumbMonit's reports of the two compared; then the raw answers to the same
//! requests compared in shape.

mod common;

use common::plane::{Plane, raw};
use common::{Harness, dumbmonit};
use dumbmonit_sim::api::Resource;
use dumbmonit_sim::{Cluster, Faults, scenario};
use serde_json::{Value, json};

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
    p.load(&common::api_list(&fixture));
    // kube-apiserver taints every node it admits not-ready until the node controller sees it
    // Ready; with no node controller here, the test does it, as it would.
    p.kubectl(&["taint", "nodes", "--all", "node.kubernetes.io/not-ready:NoSchedule-"]);
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
    // The real API server records a Warning event of its own when it starts under load (its
    // repair of the kubernetes Service's ClusterIP, once): not the fixture's, which the
    // simulator has. CI failed on it once.
    p.kubectl(&["delete", "events", "-A", "--field-selector", "reason=ClusterIPNotAllocated", "--ignore-not-found"]);

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
    [
        "terminating",
        "last_schedule_age",
        "cronjob_last_schedule_age_seconds",
        "pod_terminating_seconds",
        "age_seconds",
        "control_plane_lease_age_seconds",
        "seconds",
        "job_active_seconds",
    ]
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

/// The kinds of the mixin's coverage (budgets, quotas, volumes, leases, autoscalers), each in
/// trouble beside a healthy twin, read the same from both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_coverage_kinds_read_the_same_from_both() {
    same_from_both(scenario::coverage(jiff::Timestamp::now())).await;
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
    p.load(&common::api_list(&fixture));
    // kube-apiserver taints every node it admits not-ready until the node controller sees it
    // Ready; with no node controller here, the test does it, as it would.
    p.kubectl(&["taint", "nodes", "--all", "node.kubernetes.io/not-ready:NoSchedule-"]);
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
    // The same Warning events of the fixture's: the real API server may have recorded one of
    // its own by then (CI once saw a sixth), which the simulator cannot have.
    let names = |list: &Value| -> std::collections::BTreeSet<String> {
        list["items"].as_array().unwrap().iter().map(|e| e["metadata"]["name"].as_str().unwrap().to_string()).collect()
    };
    let loaded = names(&simulated("/api/v1/events?limit=500").body);
    let (real_warnings, sim_warnings) = (names(&selected.body), names(&sim_selected.body));
    assert_eq!(
        real_warnings.intersection(&loaded).collect::<Vec<_>>(),
        sim_warnings.iter().collect::<Vec<_>>(),
        "the real server's own: {:?}",
        real_warnings.difference(&loaded).collect::<Vec<_>>()
    );
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

/// A watch's answer, read until the server ends it (every watch here has a timeoutSeconds).
struct Watched {
    status: u16,
    headers: Vec<(String, String)>,
    /// The events of a 200; the Status of an error, alone.
    events: Vec<Value>,
}

impl Watched {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn types(&self) -> Vec<String> {
        self.events.iter().map(|e| e["type"].as_str().unwrap_or("").to_string()).collect()
    }

    fn names(&self) -> Vec<String> {
        self.events.iter().map(|e| e["object"]["metadata"]["name"].as_str().unwrap_or("").to_string()).collect()
    }
}

/// An HTTP/1.1 watch over TLS (the server verified as `localhost`), its chunked body decoded,
/// then gunzipped when the answer says so.
fn watch(addr: std::net::SocketAddr, ca: &str, token: &str, path: &str, extra: &[(&str, &str)]) -> Watched {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    use std::io::{BufRead, Read, Write};
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let conn = rustls::ClientConnection::new(std::sync::Arc::new(config), "localhost".try_into().unwrap()).unwrap();
    let tcp = std::net::TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut head = format!(
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAccept: application/json\r\nAuthorization: Bearer {token}\r\n"
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    tls.write_all(head.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = tls.read_to_end(&mut raw);
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or_else(|| panic!("{path}: no answer"));
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut rest = &raw[split + 4..];
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|s| s.parse().ok()).unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let has = |k: &str, v: &str| headers.iter().any(|(hk, hv)| hk == k && hv.eq_ignore_ascii_case(v));
    let mut body = Vec::new();
    if has("transfer-encoding", "chunked") {
        loop {
            let mut size = String::new();
            rest.read_line(&mut size).unwrap();
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or_else(|_| panic!("{path}: chunk size {size:?}"));
            if n == 0 {
                break;
            }
            body.extend_from_slice(&rest[..n]);
            rest = &rest[n + 2..];
        }
    } else {
        body = rest.to_vec();
    }
    if has("content-encoding", "gzip") {
        let mut plain = Vec::new();
        flate2::read::MultiGzDecoder::new(body.as_slice()).read_to_end(&mut plain).unwrap();
        body = plain;
    }
    let text = String::from_utf8(body).unwrap();
    common::assert_no_secret(&text, path);
    let events = serde_json::Deserializer::from_str(&text).into_iter::<Value>().map(Result::unwrap).collect();
    Watched { status, headers, events }
}

/// What differs by nature between the two servers' objects: uids, resourceVersions, times, the
/// field managers, and the defaults the real server's admission and defaulting add.
fn normalized_object(object: &Value) -> Value {
    let mut o = shape(object);
    if let Some(meta) = o["metadata"].as_object_mut() {
        for k in ["uid", "creationTimestamp", "managedFields", "generation"] {
            meta.remove(k);
        }
    }
    for k in ["spec", "status"] {
        if o.get(k).is_some() {
            o[k] = json!("object");
        }
    }
    o
}

/// An event with its resourceVersion (and any message's numbers) masked.
fn masked(event: &Value) -> Value {
    let mut e = event.clone();
    if e["object"]["metadata"]["resourceVersion"].is_string() {
        e["object"]["metadata"]["resourceVersion"] = json!("RV");
    }
    if let Some(m) = e["object"]["message"].as_str() {
        let mut out = String::new();
        for c in m.chars() {
            if !c.is_ascii_digit() {
                out.push(c);
            } else if !out.ends_with('N') {
                out.push('N');
            }
        }
        e["object"]["message"] = json!(out);
    }
    e
}

fn rv_of(event: &Value) -> u64 {
    event["object"]["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap()
}

fn watched_pod(name: &str, phase: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "labels": {"app": "shop"}},
        "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "registry.example/shop:1"}]},
        "status": {"phase": phase},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_agree_with_the_real_server() {
    let p = Plane::up(&["--no-kubelets", "--controllers", "serviceaccount-token"]);
    // A ServiceAccount that may get and list pods, not watch them.
    p.kubectl(&["-n", "kube-system", "create", "serviceaccount", "lister"]);
    p.kubectl(&["create", "clusterrole", "lister", "--verb=get,list", "--resource=pods"]);
    p.kubectl(&[
        "create",
        "clusterrolebinding",
        "lister",
        "--clusterrole=lister",
        "--serviceaccount=kube-system:lister",
    ]);
    p.apply(
        &common::plane::GUIDE_SECRET.replace("dumbmonit-token", "lister-token").replace("\"dumbmonit\"", "\"lister\""),
    );
    let lister = p.read_credentials("kube-system", "lister-token");
    let admin = std::fs::read_to_string(p.file("admin.token")).unwrap().trim().to_string();
    let mut pods = vec![watched_pod("a", "Running"), watched_pod("b", "Running"), watched_pod("c", "Pending")];
    p.load(&json!({"apiVersion": "v1", "kind": "List", "items": pods}));
    let mut fixture = scenario::healthy(jiff::Timestamp::now());
    fixture.pods = pods.clone();
    let sim = dumbmonit_sim::Sim::start(dumbmonit_sim::SimOptions::default(), fixture).await.unwrap();
    let real_ca = std::fs::read_to_string(&p.ca_file).unwrap();
    let real_addr: std::net::SocketAddr = format!("127.0.0.1:{}", p.port).parse().unwrap();
    let real = |token: &str, path: &str, extra: &[(&str, &str)]| watch(real_addr, &real_ca, token, path, extra);
    let simulated = |path: &str, extra: &[(&str, &str)]| watch(sim.addr(), sim.ca_pem(), sim.token(), path, extra);
    let both = |path: &str, extra: &[(&str, &str)]| {
        let (r, s) = (real(&admin, path, extra), simulated(path, extra));
        assert_eq!((r.status, s.status), (200, 200), "{path}: real {:?}\nsimulated {:?}", r.events, s.events);
        for h in ["content-type", "transfer-encoding", "content-encoding"] {
            assert_eq!(r.header(h), s.header(h), "{path}: {h}");
        }
        (r, s)
    };
    let list_rv = |token: &str, real_server: bool| -> u64 {
        let r = if real_server {
            raw(real_addr, &real_ca, token, "/api/v1/namespaces/shop/pods")
        } else {
            raw(sim.addr(), sim.ca_pem(), sim.token(), "/api/v1/namespaces/shop/pods")
        };
        r.body["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap()
    };

    // A streaming list: every object ADDED in key order, then the bookmark that ends them
    // (the zero Pod with only its resourceVersion and the annotation); gzip, one member per
    // flush, when asked.
    for (query, gzip) in [
        ("sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", false),
        ("sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", true),
        // A watch from "" or "0" is defaulted into one.
        ("allowWatchBookmarks=true", false),
        ("allowWatchBookmarks=true&resourceVersion=0", true),
    ] {
        let path = format!("/api/v1/namespaces/shop/pods?watch=1&{query}&timeoutSeconds=2");
        let extra: &[(&str, &str)] = if gzip { &[("Accept-Encoding", "gzip")] } else { &[] };
        let (r, s) = both(&path, extra);
        assert_eq!(r.header("content-encoding"), if gzip { Some("gzip") } else { None }, "{path}");
        assert_eq!(r.types(), ["ADDED", "ADDED", "ADDED", "BOOKMARK"], "{path}");
        assert_eq!(r.types(), s.types(), "{path}");
        assert_eq!(r.names(), s.names(), "{path}");
        assert_eq!(masked(&r.events[3]), masked(&s.events[3]), "{path}");
        assert_eq!(r.events[3]["object"]["metadata"]["annotations"], json!({"k8s.io/initial-events-end": "true"}));
        for (a, b) in r.events[..3].iter().zip(&s.events[..3]) {
            assert_eq!(normalized_object(&a["object"]), normalized_object(&b["object"]), "{path}");
        }
    }
    // Without allowWatchBookmarks: the objects, no bookmark.
    let (r, s) = both(
        "/api/v1/namespaces/shop/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
        &[],
    );
    assert_eq!(r.types(), ["ADDED", "ADDED", "ADDED"]);
    assert_eq!(r.types(), s.types());

    // A watch from a resourceVersion, after an update and a (forced) deletion: the pod is
    // marked (MODIFIED, grace period 0) before it is DELETED with that last state.
    let (real_from, sim_from) = (list_rv(&admin, true), list_rv("", false));
    p.kubectl(&["-n", "shop", "label", "pod", "a", "tier=web"]);
    p.kubectl(&["-n", "shop", "delete", "pod", "b", "--grace-period=0", "--force"]);
    pods[0]["metadata"]["labels"]["tier"] = json!("web");
    sim.upsert(Resource::Pods, pods[0].clone());
    sim.delete(Resource::Pods, "shop", "b");
    let r = real(
        &admin,
        &format!("/api/v1/namespaces/shop/pods?watch=1&resourceVersion={real_from}&timeoutSeconds=2"),
        &[],
    );
    let s =
        simulated(&format!("/api/v1/namespaces/shop/pods?watch=1&resourceVersion={sim_from}&timeoutSeconds=2"), &[]);
    assert_eq!(r.types(), ["MODIFIED", "MODIFIED", "DELETED"], "{:?}", r.names());
    assert_eq!((r.types(), r.names()), (s.types(), s.names()));
    for w in [&r, &s] {
        assert_eq!(w.events[0]["object"]["metadata"]["labels"]["tier"], "web");
        let (marked, deleted) = (&w.events[1]["object"]["metadata"], &w.events[2]["object"]["metadata"]);
        assert_eq!(marked["deletionGracePeriodSeconds"], 0);
        assert!(marked["deletionTimestamp"].is_string());
        assert_eq!(deleted["deletionTimestamp"], marked["deletionTimestamp"]);
        assert!(rv_of(&w.events[2]) > rv_of(&w.events[1]), "the deletion has a version of its own");
        assert!(rv_of(&w.events[0]) > if std::ptr::eq(w, &r) { real_from } else { sim_from });
    }
    for (a, b) in r.events.iter().zip(&s.events) {
        assert_eq!(normalized_object(&a["object"]), normalized_object(&b["object"]));
    }

    // A field selector: a pod that stops matching is DELETED (as it was, at the change's
    // version), one that starts to match is ADDED.
    let (real_from, sim_from) = (list_rv(&admin, true), list_rv("", false));
    p.kubectl(&[
        "-n",
        "shop",
        "patch",
        "pod",
        "a",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Failed"}}"#,
    ]);
    p.kubectl(&[
        "-n",
        "shop",
        "patch",
        "pod",
        "c",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Running"}}"#,
    ]);
    pods[0]["status"]["phase"] = json!("Failed");
    pods[2]["status"]["phase"] = json!("Running");
    let failed_at = sim.upsert(Resource::Pods, pods[0].clone());
    sim.upsert(Resource::Pods, pods[2].clone());
    let selected = "fieldSelector=status.phase%3DRunning&timeoutSeconds=2";
    let r = real(&admin, &format!("/api/v1/namespaces/shop/pods?watch=1&resourceVersion={real_from}&{selected}"), &[]);
    let s = simulated(&format!("/api/v1/namespaces/shop/pods?watch=1&resourceVersion={sim_from}&{selected}"), &[]);
    assert_eq!(
        (r.types(), r.names()),
        (vec!["DELETED".to_string(), "ADDED".into()], vec!["a".to_string(), "c".into()])
    );
    assert_eq!((r.types(), r.names()), (s.types(), s.names()));
    assert_eq!(r.events[0]["object"]["status"]["phase"], "Running");
    assert_eq!(s.events[0]["object"]["status"]["phase"], "Running");
    assert_eq!(rv_of(&s.events[0]), failed_at);
    assert!(rv_of(&r.events[0]) > real_from);
    let (r, s) = both(
        "/api/v1/namespaces/shop/pods?watch=1&fieldSelector=status.phase%3DRunning&allowWatchBookmarks=true&timeoutSeconds=1",
        &[],
    );
    assert_eq!((r.types(), r.names()), (s.types(), s.names()));

    // A bookmark: due 2 s before the deadline, sent once the server's version passed the
    // watch's (on the real one, once its watch cache heard of a newer revision: a write
    // elsewhere, then a consistent list that asks etcd for progress).
    let (real_from, sim_from) = (list_rv(&admin, true), list_rv("", false));
    let bookmarks = "allowWatchBookmarks=true&timeoutSeconds=5";
    let (r, s) = std::thread::scope(|scope| {
        let admin = admin.as_str();
        let r = scope.spawn(move || {
            real(admin, &format!("/api/v1/namespaces/shop/pods?watch=1&resourceVersion={real_from}&{bookmarks}"), &[])
        });
        let s = scope.spawn(move || {
            simulated(&format!("/api/v1/namespaces/shop/pods?watch=1&resourceVersion={sim_from}&{bookmarks}"), &[])
        });
        std::thread::sleep(std::time::Duration::from_secs(1));
        p.kubectl(&["-n", "shop", "create", "configmap", "elsewhere"]);
        p.kubectl(&["-n", "shop", "get", "pods"]);
        sim.upsert(Resource::Nodes, json!({"metadata": {"name": "elsewhere"}}));
        (r.join().unwrap(), s.join().unwrap())
    });
    // The watch cache's bookmark buckets are whole seconds: near the deadline it may send the
    // same bookmark twice.
    for w in [&r, &s] {
        assert!(!w.events.is_empty() && w.types().iter().all(|t| t == "BOOKMARK"), "{:?}", w.events);
    }
    assert_eq!(masked(&r.events[0]), masked(&s.events[0]));
    assert_eq!(
        masked(&r.events[0]),
        json!({"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "RV"}, "spec": {"containers": null}, "status": {}}})
    );
    assert!(rv_of(&r.events[0]) > real_from);

    // 403 for a role with get and list, not watch; lists still allowed.
    let forbidden = real(&lister.token, "/api/v1/namespaces/shop/pods?watch=1", &[]);
    sim.set_faults(Faults { watch_forbidden: vec![Resource::Pods], ..Default::default() });
    let sim_forbidden = simulated("/api/v1/namespaces/shop/pods?watch=1", &[]);
    assert_eq!((forbidden.status, sim_forbidden.status), (403, 403));
    assert_eq!(shape(&forbidden.events[0]), shape(&sim_forbidden.events[0]));
    assert_eq!(
        forbidden.events[0]["message"].as_str().unwrap().replace("kube-system:lister", "USER"),
        sim_forbidden.events[0]["message"].as_str().unwrap().replace("kube-system:dumbmonit", "USER")
    );
    assert!(forbidden.events[0]["message"].as_str().unwrap().contains("cannot watch resource \"pods\""));
    assert_eq!(raw(real_addr, &real_ca, &lister.token, "/api/v1/namespaces/shop/pods").status, 200);
    assert_eq!(raw(sim.addr(), sim.ca_pem(), sim.token(), "/api/v1/namespaces/shop/pods").status, 200);
    sim.set_faults(Faults::default());

    // Invalid combinations, and a resourceVersion that is no number: the same Status bodies
    // (and a list's own rules for the watch-list parameters).
    for query in [
        "watch=1&sendInitialEvents=true",
        "watch=1&sendInitialEvents=false",
        "watch=1&resourceVersionMatch=NotOlderThan",
        "watch=1&resourceVersionMatch=Exact&sendInitialEvents=true",
        "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&continue=abc",
        "watch=1&resourceVersion=abc",
        "watch=1&timeoutSeconds=abc",
        "watch=1&fieldSelector=spec.nothing%3Dx",
        "limit=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
        "limit=1&resourceVersionMatch=NotOlderThan",
    ] {
        let path = format!("/api/v1/namespaces/shop/pods?{query}");
        let (r, s) = (real(&admin, &path, &[]), simulated(&path, &[]));
        assert_eq!(r.status, s.status, "{query}: real {:?}", r.events);
        assert_eq!(r.events, s.events, "{query}");
    }

    // 410: a version older than the watch cache's history. Compacting etcd is not enough: the
    // watch cache keeps serving its history; the API server's restart starts it over from a
    // list (Sim::compact).
    let (real_from, sim_from) = (list_rv(&admin, true), list_rv("", false));
    p.kubectl(&["-n", "shop", "create", "configmap", "before-the-restart"]);
    p.compact();
    p.apiserver("stop");
    p.apiserver("start");
    sim.upsert(Resource::Nodes, json!({"metadata": {"name": "before-the-compaction"}}));
    sim.compact();
    let path = |from: u64| format!("/api/v1/namespaces/shop/pods?watch=1&resourceVersion={from}&timeoutSeconds=5");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let gone = loop {
        // Until its watch cache is ready the restarted server answers 429.
        let r = real(&admin, &path(real_from), &[]);
        if r.status == 200 || std::time::Instant::now() > deadline {
            break r;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    let sim_gone = simulated(&path(sim_from), &[]);
    assert_eq!((gone.status, sim_gone.status), (200, 200), "{:?}", gone.events);
    assert_eq!(gone.types(), ["ERROR"], "{:?}", gone.events);
    assert_eq!(
        masked(&gone.events[0]),
        masked(&sim_gone.events[0]),
        "real {:?}\nsimulated {:?}",
        gone.events,
        sim_gone.events
    );
    for (w, from) in [(&gone, real_from), (&sim_gone, sim_from)] {
        let message = w.events[0]["object"]["message"].as_str().unwrap();
        let rest =
            message.strip_prefix(&format!("too old resource version: {from} (")).unwrap_or_else(|| panic!("{message}"));
        let oldest: u64 = rest.trim_end_matches(')').parse().unwrap();
        assert!(oldest > from, "{message}");
    }
}
