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
        Plane { ca_file: dir.path().join("ca.crt"), kubeconfig: dir.path().join("kubeconfig"), address, port, dir }
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// kubectl as the cluster's admin, `stdin` fed to it.
    pub fn kubectl_in(&self, args: &[&str], stdin: &str) -> Output {
        use std::io::Write;
        let mut child = Command::new("kubectl")
            .arg("--request-timeout=60s")
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
        let file = self.dir.path().join(format!("load-{}.json", next_number()));
        std::fs::write(&file, serde_json::to_vec(list).unwrap()).unwrap();
        let out = script(&["load", &path(self.dir.path()), &path(&file)]);
        assert!(out.status.success(), "load failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Compacts etcd at its current revision, as the API server's own compactor does: every
    /// continue token handed out before is too old (once its watch cache has seen it).
    pub fn compact(&self) {
        compact(self.dir.path());
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
        self.wait_for("the token controller to fill the Secret", &["-n", namespace, "secret", secret], |s| {
            s["data"]["token"].is_string() && s["data"]["ca.crt"].is_string()
        });
        let token_b64 = self.kubectl(&["-n", namespace, "get", "secret", secret, "-o", "jsonpath={.data.token}"]);
        let ca_b64 = self.kubectl(&["-n", namespace, "get", "secret", secret, "-o", r"jsonpath={.data.ca\.crt}"]);
        use base64::Engine;
        let token =
            String::from_utf8(base64::engine::general_purpose::STANDARD.decode(token_b64.trim()).unwrap()).unwrap();
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

    /// `serve` watching this cluster as `real` with `creds`, a cycle every 200 ms and a minute
    /// of rule time per cycle (the stepped clock, from now); `extra` goes into its `[[cluster]]`.
    pub fn serve(&self, dir: &Path, creds: &Credentials, extra: &str) -> super::web::Served {
        self.serve_stepped(dir, creds, extra, 60)
    }

    /// [`Plane::serve`] with `step` seconds of rule time per cycle.
    pub fn serve_stepped(&self, dir: &Path, creds: &Credentials, extra: &str, step: u32) -> super::web::Served {
        let cfg = dir.join("dumbmonit.toml");
        let text = format!(
            "listen = \"127.0.0.1:0\"\nstate_dir = {:?}\n\n[[cluster]]\nname = \"real\"\naddress = {:?}\n\
             token_file = {:?}\nca_file = {:?}\ninterval = \"200ms\"\n{extra}",
            path(&dir.join("state")),
            self.address,
            path(&creds.token_file),
            path(&creds.ca_file),
        );
        std::fs::write(&cfg, text).unwrap();
        let clock = format!("{}/{step}", jiff::Timestamp::now());
        super::web::Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &clock)])
    }

    /// Every request the API server saw from `user`: (verb, requestURI).
    pub fn requests_of(&self, user: &str) -> Vec<(String, String)> {
        self.answers_to(user).into_iter().map(|(verb, uri, _)| (verb, uri)).collect()
    }

    /// Every request the API server saw from `user`, with its answer's status code.
    pub fn answers_to(&self, user: &str) -> Vec<(String, String, i64)> {
        self.audit()
            .iter()
            .filter(|e| e["stage"] == "ResponseComplete" && e["user"]["username"] == user)
            .map(|e| {
                (
                    e["verb"].as_str().unwrap_or("").to_string(),
                    e["requestURI"].as_str().unwrap_or("").to_string(),
                    e["responseStatus"]["code"].as_i64().unwrap_or(0),
                )
            })
            .collect()
    }
}

pub fn compact(dir: &Path) {
    let out = script(&["compact", &path(dir)]);
    assert!(out.status.success(), "compact failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// A TLS proxy in front of the real API server, with the server's own certificate, that calls
/// `before(path and query)` before it forwards each request: a test's way to act between two
/// pages of a list.
pub struct Interposer {
    pub port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Interposer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Hook = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

impl Interposer {
    pub async fn start(plane: &Plane, before: Hook) -> Interposer {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(plane.file("pki/apiserver.crt")).unwrap().map(Result::unwrap).collect();
        let key = PrivateKeyDer::from_pem_file(plane.file("pki/apiserver.key")).unwrap();
        let server = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_file_iter(&plane.ca_file).unwrap() {
            roots.add(c.unwrap()).unwrap();
        }
        let client_tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let https =
            hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(client_tls).https_only().enable_http1().build();
        let client: hyper_util::client::legacy::Client<_, http_body_util::Empty<bytes::Bytes>> =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build(https);
        let upstream = format!("https://127.0.0.1:{}", plane.port);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(server));
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { return };
                let (acceptor, client, upstream, before) =
                    (acceptor.clone(), client.clone(), upstream.clone(), before.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let (client, upstream, before) = (client.clone(), upstream.clone(), before.clone());
                        async move {
                            let target = req.uri().path_and_query().map(|p| p.as_str().to_string()).unwrap_or_default();
                            let hook = before.clone();
                            let seen = target.clone();
                            tokio::task::spawn_blocking(move || hook(&seen)).await.unwrap();
                            let mut forward =
                                hyper::Request::builder().method(req.method()).uri(format!("{upstream}{target}"));
                            for (k, v) in req.headers() {
                                if k != hyper::header::HOST {
                                    forward = forward.header(k, v);
                                }
                            }
                            let answer = client.request(forward.body(http_body_util::Empty::new()).unwrap()).await;
                            answer.map_err(|e| e.to_string())
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        Interposer { port, task }
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

fn next_number() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

/// Only GET (get, list, and watch in watch mode) from DumbMonit's service account, in
/// everything the API server's audit log saw.
pub fn assert_only_reads(plane: &Plane, user: &str) {
    let seen = plane.requests_of(user);
    assert!(!seen.is_empty(), "the audit log saw no request from {user}");
    for (verb, uri) in seen {
        assert!(matches!(verb.as_str(), "get" | "list" | "watch"), "{user} sent {verb} {uri}");
    }
}

/// An API server's answer to a GET, as JSON.
pub struct Raw {
    pub status: u16,
    pub body: Value,
}

/// A GET over TLS with a bearer token (the server verified as `localhost`).
pub fn raw(addr: std::net::SocketAddr, ca: &str, token: &str, path: &str) -> Raw {
    let auth = format!("Bearer {token}");
    let r = super::web::request_tls(
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
