//! Runs the real `dumbmonit` binary against the simulated API server over TLS.

#![allow(dead_code)]

pub mod agent;
pub mod alertmanager;
pub mod fixture;
pub mod helm;
pub mod manifests;
pub mod plane;
pub mod pod;
pub mod postgres;
pub mod receiver;
pub mod watch;
pub mod web;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dumbmonit_sim::{Cluster, Sim, SimOptions};

/// A simulated cluster, and the files a user would hold for it.
///
/// Across the whole suite, every harness checks when it is dropped that only GETs reached its
/// simulator, and only at the eight collections' paths (`peer_paths` lets kubectl and the Python
/// client read discovery documents too); and every output the tests see goes through
/// [`assert_no_secret`].
pub struct Harness {
    pub sim: Sim,
    pub dir: tempfile::TempDir,
    pub token_file: PathBuf,
    pub ca_file: PathBuf,
    /// Other clients than DumbMonit read this simulator: any read path is allowed.
    pub peer_paths: bool,
}

impl Drop for Harness {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        for r in self.sim.requests() {
            assert_eq!(r.method, "GET", "only GET may ever be sent to an API server: {r:?}");
            assert!(self.peer_paths || may_read(&r.path), "unexpected path: {r:?}");
        }
    }
}

/// A path DumbMonit may read: one of [`COLLECTION_PATHS`], one of them in a namespace
/// (namespaced access: `/api/v1/namespaces/NS/pods`), or a Namespace (`/api/v1/namespaces/NS`).
pub fn may_read(path: &str) -> bool {
    if COLLECTION_PATHS.contains(&path) {
        return true;
    }
    let parts: Vec<&str> = path.split('/').collect();
    match parts.iter().position(|p| *p == "namespaces") {
        Some(i) if i + 2 == parts.len() => path.starts_with("/api/v1/namespaces/") && !parts[i + 1].is_empty(),
        Some(i) if i + 3 == parts.len() => {
            let cluster_wide = [&parts[..i], &parts[i + 2..]].concat().join("/");
            COLLECTION_PATHS.contains(&cluster_wide.as_str())
        }
        _ => false,
    }
}

/// What DumbMonit may read: the eight collections, then the fifteen optional reads (the leases
/// in kube-system only; the webhooks' Services and EndpointSlices in their namespaces only).
pub const COLLECTION_PATHS: [&str; 23] = [
    "/version",
    "/api/v1/nodes",
    "/api/v1/pods",
    "/apis/apps/v1/deployments",
    "/apis/apps/v1/statefulsets",
    "/apis/apps/v1/daemonsets",
    "/api/v1/persistentvolumeclaims",
    "/api/v1/events",
    "/apis/apiregistration.k8s.io/v1/apiservices",
    "/apis/metrics.k8s.io/v1beta1/nodes",
    "/apis/metrics.k8s.io/v1beta1/pods",
    "/apis/autoscaling/v2/horizontalpodautoscalers",
    "/apis/batch/v1/jobs",
    "/apis/batch/v1/cronjobs",
    "/apis/policy/v1/poddisruptionbudgets",
    "/api/v1/resourcequotas",
    "/api/v1/persistentvolumes",
    "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    "/api/v1/services",
    "/apis/discovery.k8s.io/v1/endpointslices",
    "/api/v1/namespaces",
];

/// A simulator's fixture as one List for a real API server (items with their kind; the API
/// server's own local APIServices are there already, only aggregated ones are created; the
/// Metrics API's objects are served by metrics-server, not stored, so there is nothing to
/// create), for `Plane::load`.
pub fn api_list(c: &Cluster) -> serde_json::Value {
    use dumbmonit_sim::api::Resource;
    let mut all = Vec::new();
    for (r, items) in c.clone().lists() {
        // The loader makes the namespaces of the objects it loads; labelled ones are applied.
        if matches!(r, Resource::NodeMetrics | Resource::PodMetrics | Resource::Namespaces) {
            continue;
        }
        for mut item in items {
            if r == Resource::ApiServices && item["spec"]["service"].is_null() {
                continue;
            }
            item["kind"] = serde_json::json!(r.kind());
            item["apiVersion"] = serde_json::json!(r.api_version());
            all.push(item);
        }
    }
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": all})
}

/// Every secret the tests handed out: the simulators' tokens, and others registered.
fn secrets() -> &'static std::sync::Mutex<Vec<String>> {
    static SECRETS: std::sync::OnceLock<std::sync::Mutex<Vec<String>>> = std::sync::OnceLock::new();
    SECRETS.get_or_init(|| std::sync::Mutex::new(vec![SimOptions::default().token]))
}

/// Remembers a secret that must never come out of the binary.
pub fn register_secret(secret: &str) {
    secrets().lock().unwrap().push(secret.to_string());
}

/// No secret the tests know appears in `text` (an output, a page, a log, a recorded cycle).
pub fn assert_no_secret(text: &str, what: &str) {
    for s in secrets().lock().unwrap().iter() {
        assert!(!text.contains(s.as_str()), "a secret leaked into {what}");
    }
}

/// What one run of the binary printed and how it ended.
#[derive(Debug)]
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl Harness {
    pub async fn start(cluster: Cluster) -> Harness {
        Harness::start_with(SimOptions::default(), cluster).await
    }

    pub async fn start_with(options: SimOptions, cluster: Cluster) -> Harness {
        register_secret(&options.token);
        let sim = Sim::start(options, cluster).await.expect("the simulator starts");
        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("token");
        std::fs::write(&token_file, format!("{}\n", sim.token())).unwrap();
        let ca_file = dir.path().join("ca.crt");
        std::fs::write(&ca_file, sim.ca_pem()).unwrap();
        Harness { sim, dir, token_file, ca_file, peer_paths: false }
    }

    /// `dumbmonit check URL --token-file … --ca-file … ARGS`.
    pub async fn check(&self, args: &[&str]) -> Run {
        let mut all: Vec<String> = vec!["check".into(), self.sim.url()];
        all.extend(["--token-file".into(), path(&self.token_file), "--ca-file".into(), path(&self.ca_file)]);
        all.extend(args.iter().map(|s| s.to_string()));
        let run = dumbmonit(&all, &[], self.dir.path()).await;
        self.assert_clean(&run);
        run
    }

    /// The token never appears in what the binary prints.
    pub fn assert_clean(&self, run: &Run) {
        let token = self.sim.token();
        assert!(!run.stdout.contains(token), "the token leaked on stdout");
        assert!(!run.stderr.contains(token), "the token leaked on stderr");
    }

    /// Only GETs, only to the collections' paths (or one of them in a namespace: the webhooks'
    /// Services and EndpointSlices are listed where they live), and at least one.
    pub fn assert_only_reads(&self) {
        let requests = self.sim.requests();
        assert!(!requests.is_empty(), "no request reached the simulator");
        for r in requests {
            assert_eq!(r.method, "GET", "only GET may be sent: {r:?}");
            assert!(may_read(&r.path), "unexpected path: {r:?}");
        }
    }
}

/// A child process (a peer such as Alertmanager), killed when dropped.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A kustomize overlay of `deploy/BASE` with the component `deploy/rbac/watch`, as a user adds
/// it (inside the repository: kustomize takes bases and components by relative path only).
pub fn watch_overlay(base: &str) -> tempfile::TempDir {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let dir = tempfile::Builder::new().prefix("deploy-watch-").tempdir_in(target).unwrap();
    std::fs::write(
        dir.path().join("kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../../deploy/{base}\n\
             components:\n  - ../../deploy/rbac/watch\n"
        ),
    )
    .unwrap();
    dir
}

/// A loopback port free now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub fn path(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// Runs the binary with a clean environment (no token variable, no kubeconfig, HOME in `home`).
pub async fn dumbmonit(args: &[String], env: &[(&str, &str)], home: &Path) -> Run {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_dumbmonit"));
    cmd.args(args).env_remove("DUMBMONIT_TOKEN").env_remove("KUBECONFIG").env("HOME", home).kill_on_drop(true);
    // The text outputs follow the locale: the machine's is not the test's.
    cmd.env_remove("LC_ALL").env_remove("LC_MESSAGES").env_remove("LANG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    // A bound against a run that hangs, not a measure of speed: the longest run (4,000 pages of
    // an endless list, tests/faults.rs) takes about a minute of a debug build on a loaded machine.
    let out = tokio::time::timeout(std::time::Duration::from_secs(180), cmd.output())
        .await
        .expect("dumbmonit finishes within three minutes")
        .expect("dumbmonit runs");
    let run = Run {
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
        code: out.status.code().expect("exited, not killed"),
    };
    assert!(!run.stderr.contains("panicked"), "dumbmonit panicked: {}", run.stderr);
    assert_no_secret(&run.stdout, "stdout");
    assert_no_secret(&run.stderr, "stderr");
    run
}

/// The exposition as `name{labels}` → value, labels in the order written.
pub fn samples(exposition: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for line in exposition.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (series, value) = line.rsplit_once(' ').expect("a sample line has a value");
        let value = match value {
            "NaN" => f64::NAN,
            v => v.parse().unwrap_or_else(|_| panic!("bad value in {line}")),
        };
        assert!(out.insert(series.to_string(), value).is_none(), "duplicate series {series}");
    }
    out
}

/// The samples of cluster `cluster` labelled with one of `namespaces`, the cluster's label left
/// out, values as written.
pub fn series_of(exposition: &str, cluster: &str, namespaces: &[&str]) -> BTreeMap<String, String> {
    let mark = format!("cluster=\"{cluster}\"");
    samples(exposition)
        .into_iter()
        .filter(|(k, _)| k.contains(&mark))
        .filter(|(k, _)| namespaces.iter().any(|ns| k.contains(&format!("namespace=\"{ns}\""))))
        .map(|(k, v)| (k.replace(&mark, "").replace("{,", "{").replace(",}", "}"), v.to_string()))
        .collect()
}

/// The series of one family.
pub fn family<'a>(samples: &'a BTreeMap<String, f64>, name: &str) -> Vec<(&'a str, f64)> {
    samples
        .iter()
        .filter(|(k, _)| k.as_str() == name || k.starts_with(&format!("{name}{{")))
        .map(|(k, v)| (k.as_str(), *v))
        .collect()
}

/// A recorded cycle in the documented format, from a simulated cluster's eight collections,
/// with `extra` fields (the optional reads, the certificates) beside them.
pub fn recorded_cycle(t: jiff::Timestamp, c: &Cluster, extra: serde_json::Value) -> String {
    use serde_json::{Value, json};
    let list = |kind: &str, api: &str, items: &[Value]| json!({"kind": kind, "apiVersion": api, "metadata": {"resourceVersion": "1"}, "items": items});
    let mut cycle = json!({
        "time": t.to_string(),
        "version": c.version,
        "nodes": list("NodeList", "v1", &c.nodes),
        "pods": list("PodList", "v1", &c.pods),
        "deployments": list("DeploymentList", "apps/v1", &c.deployments),
        "statefulsets": list("StatefulSetList", "apps/v1", &c.statefulsets),
        "daemonsets": list("DaemonSetList", "apps/v1", &c.daemonsets),
        "persistentvolumeclaims": list("PersistentVolumeClaimList", "v1", &c.pvcs),
        "events": list("EventList", "v1", &c.events),
    });
    if let (Some(cycle), Value::Object(extra)) = (cycle.as_object_mut(), extra) {
        cycle.extend(extra);
    }
    cycle.to_string()
}
