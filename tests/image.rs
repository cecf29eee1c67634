//! The container image, run as Kubernetes runs a pod under the restricted Pod Security profile:
//! read-only root, user 65532, every capability dropped, no privilege escalation, the
//! service-account token, CA and namespace mounted where kubelet mounts them, and
//! KUBERNETES_SERVICE_HOST/PORT set. Host names resolve through the mounted /etc/hosts. Docker
//! runs with the host's network (loopback only), never a bridge.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use common::agent::{Site, wait_until};
use common::{Harness, path, register_secret};
use dumbmonit_sim::scenario;

const IMAGE: &str = "dumbmonit:test";

fn docker(args: &[&str]) -> Output {
    Command::new("docker").args(args).output().expect("the docker client runs")
}

/// The test image, built by `scripts/image.sh` when it is not there yet (once for all tests).
fn image() -> &'static str {
    static READY: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    READY.get_or_init(build);
    IMAGE
}

fn build() {
    let running = Command::new("docker").arg("info").output().is_ok_and(|o| o.status.success());
    assert!(
        running,
        "a running Docker engine is needed: scripts/test.sh installs Debian's docker.io and starts \
         `dockerd --bridge=none --iptables=false`"
    );
    if !docker(&["image", "inspect", IMAGE]).status.success() {
        let built = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/image.sh")).arg(IMAGE).status().unwrap();
        assert!(built.success(), "scripts/image.sh {IMAGE} failed");
    }
}

/// A directory as kubelet mounts a pod's service account, and an /etc/hosts.
struct Mounts {
    _dir: tempfile::TempDir,
    account: PathBuf,
    hosts: PathBuf,
}

fn mounts(h: &Harness) -> Mounts {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let account = dir.path().join("serviceaccount");
    std::fs::create_dir(&account).unwrap();
    std::fs::write(account.join("token"), h.sim.token()).unwrap();
    std::fs::write(account.join("ca.crt"), h.sim.ca_pem()).unwrap();
    std::fs::write(account.join("namespace"), "dumbmonit").unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, "127.0.0.1 localhost\n127.0.0.1 kubernetes.default.svc dumbmonit.test\n").unwrap();
    for p in [dir.path(), account.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for f in ["token", "ca.crt", "namespace"] {
        std::fs::set_permissions(account.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::set_permissions(&hosts, std::fs::Permissions::from_mode(0o644)).unwrap();
    Mounts { _dir: dir, account, hosts }
}

/// `docker run` with the restricted profile's flags, the mounts and the in-cluster variables.
fn restricted(name: &str, m: &Mounts, h: &Harness, extra_mounts: &[(&Path, &str)]) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "--rm",
        "--name",
        name,
        "--read-only",
        "--user",
        "65532",
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        "--network",
        "host",
        "--tmpfs",
        "/buffer:rw,mode=1777,size=64m",
    ]
    .map(String::from)
    .into();
    args.extend(["-v".into(), format!("{}:/var/run/secrets/kubernetes.io/serviceaccount:ro", path(&m.account))]);
    args.extend(["-v".into(), format!("{}:/etc/hosts:ro", path(&m.hosts))]);
    for (from, to) in extra_mounts {
        args.extend(["-v".into(), format!("{}:{to}:ro", path(from))]);
    }
    args.extend(["-e".into(), "KUBERNETES_SERVICE_HOST=kubernetes.default.svc".into()]);
    args.extend(["-e".into(), format!("KUBERNETES_SERVICE_PORT={}", h.sim.addr().port())]);
    args.push(image().into());
    args
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_image_is_minimal_and_checks_in_cluster_under_the_restricted_flags() {
    let image = image();
    let user = docker(&["image", "inspect", "-f", "{{.Config.User}}", image]);
    assert_eq!(String::from_utf8_lossy(&user.stdout).trim(), "65532:65532");
    let shell = docker(&["run", "--rm", "--network", "host", "--entrypoint", "/bin/sh", image, "-c", "true"]);
    assert!(!shell.status.success(), "no shell in the image");

    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let m = mounts(&h);
    let mut args = restricted(&format!("dumbmonit-check-{}", std::process::id()), &m, &h, &[]);
    args.extend(["check".into(), "--in-cluster".into()]);
    let out = Command::new("docker").args(&args).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    common::assert_no_secret(&stdout, "check's output in the image");
    common::assert_no_secret(&stderr, "check's errors in the image");
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.starts_with("Healthy: 3 nodes ready"), "{stdout}");
    // The name came from the mounted /etc/hosts: a static binary resolves without NSS modules.
    let url = format!("https://kubernetes.default.svc:{}", h.sim.addr().port());
    assert!(stdout.contains(&format!("Cluster {url} ")), "{stdout}");
    h.assert_only_reads();
}

/// A container, removed when dropped.
struct Container {
    name: String,
    child: Child,
    log: PathBuf,
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = docker(&["rm", "-f", &self.name]);
        let _ = self.child.wait();
        if !std::thread::panicking() {
            common::assert_no_secret(&std::fs::read_to_string(&self.log).unwrap_or_default(), "the agent's log");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_runs_in_cluster_in_the_image_and_follows_a_rotated_token() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let m = mounts(&h);
    let site = Site::new("interval = \"0.5s\"", "");
    let s = site.serve(&[]);
    let name = format!("dumbmonit-agent-{}", std::process::id());
    let config = site.dir.path();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(config, std::fs::Permissions::from_mode(0o755)).unwrap();
    for f in ["edge.token", "ca.crt"] {
        std::fs::set_permissions(config.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let mut args = restricted(&name, &m, &h, &[(config, "/config")]);
    let server = format!("https://dumbmonit.test:{}", s.addr.port());
    args.extend(
        [
            "agent",
            "--in-cluster",
            "--server",
            &server,
            "--server-ca-file",
            "/config/ca.crt",
            "--agent-token-file",
            "/config/edge.token",
            "--buffer-dir",
            "/buffer",
        ]
        .map(String::from),
    );
    let log = h.dir.path().join("agent-in-image.log");
    let child = Command::new("docker")
        .args(&args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let agent = Container { name, child, log };
    let agent_log = || std::fs::read_to_string(&agent.log).unwrap_or_default();
    let status = || s.get("/api/v1/clusters/edge").json();
    wait_until("the agent's first cycle", || status()["status"] == "ok", || format!("{}\n{}", agent_log(), s.log()));
    assert_eq!(status()["address"], format!("https://kubernetes.default.svc:{}", h.sim.addr().port()));
    assert!(agent_log().contains(&format!("reporting to {server}")), "{}", agent_log());
    assert!(!agent_log().contains("cannot be written"), "the emptyDir-like buffer is writable: {}", agent_log());

    // kubelet replaces the projected token: the next cycle uses the new one, no restart.
    let rotated = "sim-token-rotated-in-image-9b8a7c6d";
    register_secret(rotated);
    h.sim.rotate_token(rotated);
    wait_until("the old token refused", || status()["error"].as_str().is_some_and(|e| e.contains("401")), agent_log);
    std::fs::write(m.account.join("token"), rotated).unwrap();
    wait_until("the new token used", || status()["status"] == "ok", agent_log);
}
