//! The container image run as Kubernetes runs a pod under the restricted Pod Security profile:
//! read-only root, user 65532, every capability dropped, no privilege escalation, the
//! service-account token, CA and namespace mounted where kubelet mounts them, and
//! KUBERNETES_SERVICE_HOST/PORT set. Docker runs with the host's network (loopback only).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const IMAGE: &str = "dumbmonit:test";

pub fn docker(args: &[&str]) -> Output {
    Command::new("docker").args(args).output().expect("the docker client runs")
}

/// The test image, built by `scripts/image.sh` when it is not there yet (once for all tests).
pub fn image() -> &'static str {
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
pub struct Mounts {
    _dir: tempfile::TempDir,
    pub account: PathBuf,
    pub hosts: PathBuf,
}

/// The service account's `token` and the cluster's `ca.crt` where kubelet mounts them, and an
/// /etc/hosts that names `kubernetes.default.svc` (and `dumbmonit.test`) on loopback.
pub fn mounts(token: &str, ca_pem: &str) -> Mounts {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let account = dir.path().join("serviceaccount");
    std::fs::create_dir(&account).unwrap();
    std::fs::write(account.join("token"), token).unwrap();
    std::fs::write(account.join("ca.crt"), ca_pem).unwrap();
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

/// `docker run` with the restricted profile's flags, the mounts and the in-cluster variables
/// (the API server at `kubernetes.default.svc:PORT`), the image last: the command follows.
pub fn restricted(name: &str, m: &Mounts, port: u16, extra_mounts: &[(&Path, &str)]) -> Vec<String> {
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
    args.extend(["-v".into(), format!("{}:/var/run/secrets/kubernetes.io/serviceaccount:ro", super::path(&m.account))]);
    args.extend(["-v".into(), format!("{}:/etc/hosts:ro", super::path(&m.hosts))]);
    for (from, to) in extra_mounts {
        args.extend(["-v".into(), format!("{}:{to}:ro", super::path(from))]);
    }
    args.extend(["-e".into(), "KUBERNETES_SERVICE_HOST=kubernetes.default.svc".into()]);
    args.extend(["-e".into(), format!("KUBERNETES_SERVICE_PORT={port}")]);
    args.push(image().into());
    args
}
