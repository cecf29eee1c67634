//! The real control plane for the benchmarks that measure DumbMonit against the real API
//! server (`scripts/control-plane.sh`, without kubelets, scheduler or controllers): the plane
//! itself, the API as its admin, the objects a benchmark loads (nodes, and pods as a kubelet
//! writes their status), DumbMonit's ServiceAccount, and a relay that counts the bytes the API
//! server sends.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use jiff::Timestamp;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::Measured;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// RFC 3339 to the second, as the API server writes times.
pub fn rfc3339(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// 64 hex digits derived from `n` and `salt`: an image digest, a container ID.
pub fn hex64(n: usize, salt: u64) -> String {
    let mut x = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt;
    (0..4)
        .map(|_| {
            x ^= x >> 33;
            x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
            x ^= x >> 29;
            format!("{x:016x}")
        })
        .collect()
}

/// The pods, as a Deployment's ReplicaSets would make them: 20 pods per workload.
pub struct Fleet {
    pub pods: usize,
    /// Spread over this many namespaces, `team-00`…, pod `i` in `team-{i % namespaces}`.
    pub namespaces: usize,
    pub nodes: usize,
    /// When the pods started (a day before the benchmark).
    pub started: String,
}

impl Fleet {
    pub fn namespace(&self, i: usize) -> String {
        format!("team-{:02}", i % self.namespaces)
    }

    pub fn workload(&self, i: usize) -> usize {
        i / 20
    }

    pub fn name(&self, i: usize) -> String {
        let w = self.workload(i);
        format!("app-{w:03}-{}-{:05}", &hex64(w, 1)[..10], i)
    }

    pub fn node_name(n: usize) -> String {
        format!("node-{n:03}")
    }

    pub fn node(&self, n: usize) -> Value {
        let name = Fleet::node_name(n);
        let condition = |kind: &str, status: &str, reason: &str, message: &str| {
            json!({"type": kind, "status": status, "reason": reason, "message": message,
                   "lastHeartbeatTime": self.started, "lastTransitionTime": self.started})
        };
        json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {
                    "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                    "node.kubernetes.io/instance-type": "m6i.2xlarge",
                    "topology.kubernetes.io/zone": format!("zone-{}", ["a", "b", "c"][n % 3]),
                },
                "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            },
            "spec": {"podCIDR": format!("10.244.{n}.0/24"), "podCIDRs": [format!("10.244.{n}.0/24")], "providerID": format!("bench://{name}")},
            "status": {
                "capacity": {"cpu": "8", "memory": "32761856Ki", "pods": "110", "ephemeral-storage": "101430960Ki", "hugepages-2Mi": "0"},
                "allocatable": {"cpu": "7910m", "memory": "31611904Ki", "pods": "110", "ephemeral-storage": "93478772582", "hugepages-2Mi": "0"},
                "conditions": [
                    condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                    condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                    condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                    condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
                ],
                "addresses": [{"type": "InternalIP", "address": format!("10.0.{}.{}", n / 250, n % 250 + 2)}, {"type": "Hostname", "address": name}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {
                    "machineID": &hex64(n, 2)[..32], "systemUUID": &hex64(n, 3)[..32], "bootID": &hex64(n, 4)[..32],
                    "kernelVersion": "6.8.0-1021-aws", "osImage": "Ubuntu 24.04.2 LTS", "containerRuntimeVersion": "containerd://2.1.3",
                    "kubeletVersion": "v1.37.2", "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64",
                },
                "images": [{"names": ["registry.example/team/app@sha256:".to_string() + &hex64(0, 5), "registry.example/team/app:1.4.2"], "sizeBytes": 48_211_377}],
            },
        })
    }

    pub fn node_of(&self, i: usize) -> usize {
        i % self.nodes
    }

    pub fn pod(&self, i: usize, ready: bool) -> Value {
        let w = self.workload(i);
        let hash = &hex64(w, 1)[..10];
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": self.name(i),
                "namespace": self.namespace(i),
                "labels": {"app": format!("app-{w:03}"), "pod-template-hash": hash, "tier": "backend"},
                "annotations": {"kubectl.kubernetes.io/default-container": "app"},
                "ownerReferences": [{
                    "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("app-{w:03}-{hash}"),
                    "uid": format!("{}-{}-4{}-8{}-{}", &hex64(w, 6)[..8], &hex64(w, 6)[8..12], &hex64(w, 6)[13..16], &hex64(w, 6)[17..20], &hex64(w, 6)[20..32]),
                    "controller": true, "blockOwnerDeletion": true,
                }],
            },
            "spec": {
                "nodeName": Fleet::node_name(self.node_of(i)),
                "containers": [
                    {
                        "name": "app",
                        "image": "registry.example/team/app:1.4.2",
                        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                        "env": [
                            {"name": "LOG_LEVEL", "value": "info"},
                            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                        ],
                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 10},
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 20},
                        "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
                    },
                    {
                        "name": "proxy",
                        "image": "registry.example/mesh/proxy:1.22.0",
                        "ports": [{"containerPort": 15001, "protocol": "TCP"}],
                        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
                    },
                ],
                "volumes": [{"name": "config", "configMap": {"name": format!("app-{w:03}-config")}}],
                "restartPolicy": "Always",
                "terminationGracePeriodSeconds": 30,
                "dnsPolicy": "ClusterFirst",
            },
            "status": self.status(i, ready, &self.started),
        })
    }

    /// The status a kubelet writes of a Running pod; not ready: its `app` container fails its
    /// readiness probe since `since`.
    pub fn status(&self, i: usize, ready: bool, since: &str) -> Value {
        let (flag, transition) = if ready { ("True", self.started.as_str()) } else { ("False", since) };
        let readiness = |kind: &str| {
            let mut c = json!({"type": kind, "status": flag, "lastTransitionTime": transition});
            if !ready {
                c["reason"] = json!("ContainersNotReady");
                c["message"] = json!("containers with unready status: [app]");
            }
            c
        };
        let started = |kind: &str| json!({"type": kind, "status": "True", "lastTransitionTime": self.started});
        let container = |name: &str, image: &str, salt: u64, ready: bool| {
            json!({
                "name": name,
                "state": {"running": {"startedAt": self.started}},
                "lastState": {},
                "ready": ready,
                "restartCount": 0,
                "image": image,
                "imageID": format!("{}@sha256:{}", image.split(':').next().unwrap_or(image), hex64(salt as usize, 7)),
                "containerID": format!("containerd://{}", hex64(i, salt)),
                "started": true,
            })
        };
        let n = self.node_of(i);
        let ip = format!("10.244.{n}.{}", i / self.nodes % 250 + 2);
        let host = format!("10.0.{}.{}", n / 250, n % 250 + 2);
        json!({
            "phase": "Running",
            "conditions": [
                started("PodReadyToStartContainers"),
                started("Initialized"),
                readiness("Ready"),
                readiness("ContainersReady"),
                started("PodScheduled"),
            ],
            "hostIP": host, "hostIPs": [{"ip": host}],
            "podIP": ip, "podIPs": [{"ip": ip}],
            "startTime": self.started,
            "containerStatuses": [
                container("app", "registry.example/team/app:1.4.2", 11, ready),
                container("proxy", "registry.example/mesh/proxy:1.22.0", 12, true),
            ],
            "qosClass": "Burstable",
        })
    }
}

/// `scripts/control-plane.sh ARGS`, which must succeed: its standard output.
pub fn script(args: &[&str]) -> Measured<String> {
    let out = Command::new(Path::new(ROOT).join("scripts/control-plane.sh"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("scripts/control-plane.sh {}: {e}", args[0]))?;
    if !out.status.success() {
        return Err(format!(
            "scripts/control-plane.sh {} failed ({}): {}{}",
            args[0],
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The control plane, stopped when dropped (and by itself should this process end first).
pub struct Plane {
    pub dir: tempfile::TempDir,
    /// `https://k8s.test:PORT`.
    pub address: String,
    pub port: u16,
    /// The supervisor: etcd runs inside it.
    pub supervisor: u32,
    pub apiserver: u32,
}

impl Drop for Plane {
    fn drop(&mut self) {
        let _ = script(&["down", self.dir.path().to_str().unwrap_or("")]);
    }
}

/// The processes whose parent is `parent`, with their command lines.
pub fn children(parent: u32) -> Vec<(u32, Vec<String>)> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let ppid: u32 = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let args = cmdline.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
            (ppid == parent).then_some((pid, args))
        })
        .collect()
}

impl Plane {
    /// Starts it in a temporary directory named after the benchmark.
    pub fn up(bench: &str) -> Measured<Plane> {
        let dir = tempfile::Builder::new().prefix(&format!("bench-{bench}-")).tempdir().map_err(|e| e.to_string())?;
        let d = dir.path().to_str().ok_or("the temporary directory's path is not text")?.to_string();
        let me = std::process::id().to_string();
        script(&["up", &d, "--no-kubelets", "--controllers", "none", "--while-pid", &me])?;
        let read = |name: &str| {
            std::fs::read_to_string(dir.path().join(name))
                .map(|s| s.trim().to_string())
                .map_err(|e| format!("the control plane's {name}: {e}"))
        };
        let address = read("address")?;
        let port = address.rsplit(':').next().and_then(|p| p.parse().ok()).ok_or(format!("address {address:?}"))?;
        let supervisor: u32 = read("pid")?.parse().map_err(|_| "the control plane's pid file".to_string())?;
        let mut plane = Plane { dir, address, port, supervisor, apiserver: 0 };
        let kids = children(supervisor);
        let mut apiservers = kids.iter().filter(|(_, args)| args.get(1).is_some_and(|a| a == "apiserver"));
        plane.apiserver =
            apiservers.next().map(|(pid, _)| *pid).ok_or("no kube-apiserver process under the control plane's")?;
        if let Some((pid, args)) = kids.iter().find(|(pid, _)| *pid != plane.apiserver) {
            return Err(format!(
                "the control plane runs more than etcd and kube-apiserver: process {pid} ({}) would go unmeasured",
                args.get(1).map_or("", String::as_str)
            ));
        }
        Ok(plane)
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

pub type Https = hyper_rustls::HttpsConnector<HttpConnector>;

/// The API as the admin.
pub struct Api {
    pub client: Client<Https, Full<Bytes>>,
    pub base: String,
    pub token: String,
}

impl Api {
    pub fn new(plane: &Plane) -> Measured<Api> {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_file_iter(plane.file("ca.crt")).map_err(|e| format!("ca.crt: {e}"))? {
            roots.add(c.map_err(|e| format!("ca.crt: {e}"))?).map_err(|e| format!("ca.crt: {e}"))?;
        }
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let https = hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls).https_only().enable_http1().build();
        let client = Client::builder(hyper_util::rt::TokioExecutor::new()).build(https);
        let token = std::fs::read_to_string(plane.file("admin.token")).map_err(|e| format!("admin.token: {e}"))?;
        Ok(Api { client, base: plane.address.clone(), token: token.trim().to_string() })
    }

    /// A request that must answer 2xx; its body.
    pub async fn call(&self, method: http::Method, path: &str, content_type: &str, body: Vec<u8>) -> Measured<Vec<u8>> {
        let what = format!("{method} {path}");
        let request = http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("authorization", format!("Bearer {}", self.token))
            .header("accept", "application/json")
            .header("content-type", content_type)
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("{what}: {e}"))?;
        let answer = tokio::time::timeout(Duration::from_secs(60), self.client.request(request))
            .await
            .map_err(|_| format!("{what}: no answer in 60 s"))?
            .map_err(|e| format!("{what}: {e}"))?;
        let status = answer.status();
        let body = answer.into_body().collect().await.map_err(|e| format!("{what}: {e}"))?.to_bytes().to_vec();
        if !status.is_success() {
            return Err(format!("{what} answered {status}: {}", String::from_utf8_lossy(&body[..body.len().min(300)])));
        }
        Ok(body)
    }

    pub async fn create(&self, path: &str, object: Value) -> Measured<Value> {
        let body = self.call(http::Method::POST, path, "application/json", object.to_string().into_bytes()).await?;
        serde_json::from_slice(&body).map_err(|e| format!("POST {path}: the answer is not JSON ({e})"))
    }

    pub async fn metrics(&self) -> Measured<String> {
        let body = self.call(http::Method::GET, "/metrics", "text/plain", Vec::new()).await?;
        String::from_utf8(body).map_err(|_| "the API server's /metrics is not text".into())
    }
}

/// The ServiceAccount DumbMonit reads with: the role of `dumbmonit rbac --optional --watch` (get,
/// list and watch on what it reads, but the Metrics API, never watched); its token from the
/// TokenRequest API.
pub async fn service_account(api: &Api, dir: &Path) -> Measured<PathBuf> {
    api.create(
        "/api/v1/namespaces/kube-system/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "dumbmonit"}}),
    )
    .await?;
    let rules: Vec<Value> = dumbmonit::rbac::rules()
        .iter()
        .chain(&dumbmonit::rbac::optional_rules())
        .map(|(group, resources)| {
            let verbs: &[&str] = if dumbmonit::rbac::watched(group, resources[0]) {
                &["get", "list", "watch"]
            } else {
                &["get", "list"]
            };
            json!({"apiGroups": [group], "resources": resources, "verbs": verbs})
        })
        .collect();
    api.create(
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "dumbmonit-watch"}, "rules": rules}),
    )
    .await?;
    api.create(
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "dumbmonit-watch"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "dumbmonit-watch"},
            "subjects": [{"kind": "ServiceAccount", "name": "dumbmonit", "namespace": "kube-system"}],
        }),
    )
    .await?;
    let answer = api
        .create(
            "/api/v1/namespaces/kube-system/serviceaccounts/dumbmonit/token",
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 86400}}),
        )
        .await?;
    let token = answer["status"]["token"].as_str().ok_or("the TokenRequest answer has no status.token")?;
    let file = dir.join("dumbmonit.token");
    std::fs::write(&file, token).map_err(|e| e.to_string())?;
    Ok(file)
}

/// Creates the nodes and pods through `control-plane.sh load`, a few thousand objects at a time.
pub fn load(plane: &Plane, fleet: &Fleet, hold: usize) -> Measured<Duration> {
    let started = Instant::now();
    let mut items: Vec<Value> = (0..fleet.nodes).map(|n| fleet.node(n)).collect();
    let mut part = 0;
    let mut flush = |items: &mut Vec<Value>| -> Measured<()> {
        let file = plane.file(&format!("load-{part}.json"));
        part += 1;
        let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
        std::fs::write(&file, serde_json::to_vec(&list).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
        script(&["load", plane.dir.path().to_str().unwrap_or(""), file.to_str().unwrap_or("")])?;
        let _ = std::fs::remove_file(&file);
        items.clear();
        Ok(())
    };
    for i in 0..fleet.pods {
        // The first `hold` pods are the ones not ready when the changes start.
        items.push(fleet.pod(i, i >= hold));
        if items.len() >= 2500 {
            flush(&mut items)?;
        }
    }
    if !items.is_empty() {
        flush(&mut items)?;
    }
    Ok(started.elapsed())
}

/// A TCP relay in front of the API server, counting the bytes it passes from the server.
pub struct Relay {
    pub port: u16,
    pub sent: Arc<AtomicU64>,
    pub task: tokio::task::JoinHandle<()>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn relay(upstream: u16) -> Measured<Relay> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|e| format!("the relay: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let sent = Arc::new(AtomicU64::new(0));
    let counter = sent.clone();
    let task = tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let counter = counter.clone();
            tokio::spawn(async move {
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await else { return };
                let _ = (client.set_nodelay(true), server.set_nodelay(true));
                let (mut client_read, mut client_write) = client.into_split();
                let (mut server_read, mut server_write) = server.into_split();
                let up = async {
                    let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
                    let _ = server_write.shutdown().await;
                };
                let down = async {
                    let mut buf = vec![0u8; 64 * 1024];
                    while let Ok(n @ 1..) = server_read.read(&mut buf).await {
                        if client_write.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                        counter.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    let _ = client_write.shutdown().await;
                };
                tokio::join!(up, down);
            });
        }
    });
    Ok(Relay { port, sent, task })
}

/// The requests of `user` the API server's audit log has between `from` and `to`, each once: a
/// watch when it opened, any other request when it was answered.
pub fn audit_events(plane: &Plane, user: &str, from: Timestamp, to: Timestamp) -> Measured<Vec<Value>> {
    use std::io::BufRead;
    let file = std::fs::File::open(plane.file("logs/audit.log")).map_err(|e| format!("the audit log: {e}"))?;
    let mut out = Vec::new();
    for line in std::io::BufReader::new(file).lines() {
        let line = line.map_err(|e| format!("the audit log: {e}"))?;
        if !line.contains(user) {
            continue;
        }
        let Ok(e) = serde_json::from_str::<Value>(&line) else { continue };
        if e["user"]["username"] != user {
            continue;
        }
        let stage = if e["verb"] == "watch" { "ResponseStarted" } else { "ResponseComplete" };
        if e["stage"] != stage {
            continue;
        }
        let at: Timestamp = e["stageTimestamp"]
            .as_str()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| format!("an audit event without a stageTimestamp: {line}"))?;
        if at >= from && at <= to {
            out.push(e);
        }
    }
    Ok(out)
}
