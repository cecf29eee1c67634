//! The container image, run as Kubernetes runs a pod under the restricted Pod Security profile:
//! read-only root, user 65532, every capability dropped, no privilege escalation, the
//! service-account token, CA and namespace mounted where kubelet mounts them, and
//! KUBERNETES_SERVICE_HOST/PORT set. Host names resolve through the mounted /etc/hosts. Docker
//! runs with the host's network (loopback only), never a bridge.

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use common::agent::{Site, wait_until};
use common::pod::{docker, image, mounts, restricted};
use common::{Harness, register_secret};
use dumbmonit_sim::scenario;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_image_is_minimal_and_checks_in_cluster_under_the_restricted_flags() {
    let image = image();
    let user = docker(&["image", "inspect", "-f", "{{.Config.User}}", image]);
    assert_eq!(String::from_utf8_lossy(&user.stdout).trim(), "65532:65532");
    let shell = docker(&["run", "--rm", "--network", "host", "--entrypoint", "/bin/sh", image, "-c", "true"]);
    assert!(!shell.status.success(), "no shell in the image");

    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let m = mounts(h.sim.token(), h.sim.ca_pem());
    let mut args = restricted(&format!("dumbmonit-check-{}", std::process::id()), &m, h.sim.addr().port(), &[]);
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
    let m = mounts(h.sim.token(), h.sim.ca_pem());
    let site = Site::new("interval = \"0.5s\"", "");
    let s = site.serve(&[]);
    let name = format!("dumbmonit-agent-{}", std::process::id());
    let config = site.dir.path();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(config, std::fs::Permissions::from_mode(0o755)).unwrap();
    for f in ["edge.token", "ca.crt"] {
        std::fs::set_permissions(config.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let mut args = restricted(&name, &m, h.sim.addr().port(), &[(config, "/config")]);
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
