//! The real Kubernetes control plane of `testenv/` (kube-apiserver on etcd, the controllers,
//! the scheduler and fake kubelets), started through `scripts/control-plane.sh`, and the
//! guide's ServiceAccount on it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A running control plane, stopped when dropped (and, should the test process die first,
/// by itself: it is tied to this process).
pub struct Plane {
    pub dir: tempfile::TempDir,
    /// `https://k8s.test:PORT`: a name the serving certificate carries.
    pub address: String,
    pub port: u16,
    pub ca_file: PathBuf,
    pub kubeconfig: PathBuf,
}

impl Drop for Plane {
    fn drop(&mut self) {
        let _ = script(&["down", &path(self.dir.path())]);
    }
}

fn path(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

fn script(args: &[&str]) -> Output {
    Command::new(Path::new(ROOT).join("scripts/control-plane.sh"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("scripts/control-plane.sh runs")
}

impl Plane {
    /// `scripts/control-plane.sh up DIR ARGS` (`--controllers LIST`, `--no-kubelets`, `--nodes N`).
    pub fn up(args: &[&str]) -> Plane {
        let dir = tempfile::Builder::new().prefix("control-plane-").tempdir().unwrap();
        let pid = std::process::id().to_string();
        let mut all = vec!["up", dir.path().to_str().unwrap(), "--while-pid", &pid];
        all.extend_from_slice(args);
        let started = Instant::now();
        let out = script(&all);
        assert!(
            out.status.success(),
            "the control plane did not start:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("control plane up in {:.1} s", started.elapsed().as_secs_f64());
        let address = std::fs::read_to_string(dir.path().join("address")).unwrap().trim().to_string();
        let port = address.rsplit(':').next().unwrap().parse().unwrap();
        let token = std::fs::read_to_string(dir.path().join("admin.token")).unwrap();
        super::register_secret(token.trim());
        Plane {
            ca_file: dir.path().join("ca.crt"),
            kubeconfig: dir.path().join("kubeconfig"),
            address,
            port,
            dir,
        }
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// kubectl as the cluster's admin, `stdin` fed to it.
    pub fn kubectl_in(&self, args: &[&str], stdin: &str) -> Output {
        use std::io::Write;
        let mut child = Command::new("kubectl")
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    }

    /// kubectl as the admin; it must succeed; its standard output.
    pub fn kubectl(&self, args: &[&str]) -> String {
        self.kubectl_ok(args, "")
    }

    pub fn kubectl_ok(&self, args: &[&str], stdin: &str) -> String {
        let out = self.kubectl_in(args, stdin);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// `kubectl apply -f -` of a YAML or JSON stream.
    pub fn apply(&self, manifest: &str) -> String {
        self.kubectl_ok(&["apply", "-f", "-"], manifest)
    }

    /// An object (or list) as JSON.
    pub fn get(&self, args: &[&str]) -> Value {
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", "json"]);
        serde_json::from_str(&self.kubectl(&all)).unwrap()
    }

    /// Polls the API until `ok` holds of what `kubectl get ARGS -o json` says (a controller's or
    /// a kubelet's work, which takes real time: nothing here waits for a duration of ours).
    pub fn wait_for(&self, what: &str, args: &[&str], ok: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let mut all = vec!["get"];
            all.extend_from_slice(args);
            all.extend_from_slice(&["-o", "json"]);
            let out = self.kubectl_in(&all, "");
            if out.status.success() {
                let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                if ok(&v) {
                    return v;
                }
            }
            assert!(Instant::now() < deadline, "waited in vain for {what}: {}", String::from_utf8_lossy(&out.stdout));
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Creates a List's objects and then writes their statuses through the status subresource.
    pub fn load(&self, list: &Value) {
        let file = self.dir.path().join(format!("load-{}.json", rand_suffix()));
        std::fs::write(&file, serde_json::to_vec(list).unwrap()).unwrap();
        let out = script(&["load", &path(self.dir.path()), &path(&file)]);
        assert!(out.status.success(), "load failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Compacts etcd at its current revision: every continue token handed out before is too old.
    pub fn compact(&self) {
        let out = script(&["compact", &path(self.dir.path())]);
        assert!(out.status.success(), "compact failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Stops the API server (etcd and the rest keep running), or starts it again on its port.
    pub fn apiserver(&self, action: &str) {
        let out = script(&["apiserver", &path(self.dir.path()), action]);
        assert!(out.status.success(), "apiserver {action} failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// The API server's audit log: one event per request, as the server saw it.
    pub fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(self.file("logs/audit.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The guide's step "Créer un compte de service en lecture seule", command by command, then
    /// the token and the CA read back with its two `kubectl get secret` lines into files.
    pub fn guide_service_account(&self) -> Credentials {
        self.kubectl(&["create", "serviceaccount", "dumbmonit", "-n", "kube-system"]);
        self.kubectl(&[
            "create",
            "clusterrole",
            "dumbmonit-read",
            "--verb=get,list",
            "--resource=nodes,pods,persistentvolumeclaims,events,deployments.apps,statefulsets.apps,daemonsets.apps",
        ]);
        self.kubectl(&[
            "create",
            "clusterrolebinding",
            "dumbmonit-read",
            "--clusterrole=dumbmonit-read",
            "--serviceaccount=kube-system:dumbmonit",
        ]);
        self.apply(GUIDE_SECRET);
        self.read_credentials("kube-system", "dumbmonit-token")
    }

    /// The guide's two lines: the token (base64-decoded) and the CA (left in base64).
    pub fn read_credentials(&self, namespace: &str, secret: &str) -> Credentials {
        let data = self
            .wait_for("the token controller to fill the Secret", &["-n", namespace, "secret", secret], |s| {
                s["data"]["token"].is_string() && s["data"]["ca.crt"].is_string()
            });
        let _ = data;
        let token_b64 = self.kubectl(&["-n", namespace, "get", "secret", secret, "-o", "jsonpath={.data.token}"]);
        let ca_b64 = self.kubectl(&["-n", namespace, "get", "secret", secret, "-o", r"jsonpath={.data.ca\.crt}"]);
        use base64::Engine;
        let token = String::from_utf8(base64::engine::general_purpose::STANDARD.decode(token_b64.trim()).unwrap()).unwrap();
        super::register_secret(&token);
        let token_file = self.dir.path().join(format!("{namespace}.{secret}.token"));
        std::fs::write(&token_file, &token).unwrap();
        let ca_file = self.dir.path().join(format!("{namespace}.{secret}.ca.b64"));
        std::fs::write(&ca_file, ca_b64.trim()).unwrap();
        Credentials { token, token_file, ca_file }
    }

    /// `dumbmonit check ADDRESS --token-file … --ca-file … ARGS`.
    pub async fn check(&self, address: &str, creds: &Credentials, args: &[&str]) -> super::Run {
        let mut all: Vec<String> = vec!["check".into(), address.into()];
        all.extend(["--token-file".into(), path(&creds.token_file), "--ca-file".into(), path(&creds.ca_file)]);
        all.extend(args.iter().map(|s| s.to_string()));
        let run = super::dumbmonit(&all, &[], self.dir.path()).await;
        assert!(!run.stdout.contains(&creds.token) && !run.stderr.contains(&creds.token), "the token leaked");
        run
    }

    /// Every request the API server saw from `user`: (verb, requestURI).
    pub fn requests_of(&self, user: &str) -> Vec<(String, String)> {
        self.audit()
            .iter()
            .filter(|e| e["stage"] == "ResponseComplete" && e["user"]["username"] == user)
            .map(|e| (e["verb"].as_str().unwrap_or("").to_string(), e["requestURI"].as_str().unwrap_or("").to_string()))
            .collect()
    }
}

/// The guide's token Secret, as its step 4 echoes it into `kubectl apply -f -`.
pub const GUIDE_SECRET: &str = r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"dumbmonit-token","namespace":"kube-system","annotations":{"kubernetes.io/service-account.name":"dumbmonit"}},"type":"kubernetes.io/service-account-token"}"#;

/// A service account's token and the cluster's CA as the guide reads them back.
pub struct Credentials {
    pub token: String,
    pub token_file: PathBuf,
    pub ca_file: PathBuf,
}

fn rand_suffix() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

/// Only GET (get, list, and watch) from DumbMonit's service account, in everything the API
/// server's audit log saw.
pub fn assert_only_reads(plane: &Plane, user: &str) {
    let seen = plane.requests_of(user);
    assert!(!seen.is_empty(), "the audit log saw no request from {user}");
    for (verb, uri) in seen {
        assert!(matches!(verb.as_str(), "get" | "list" | "watch"), "{user} sent {verb} {uri}");
    }
}
