//! The container image run as Kubernetes runs a pod under the restricted Pod Security profile:
//! read-only root, user 65532, every capability dropped, no privilege escalation, the
//! service-account token, CA and namespace mounted where kubelet mounts them, and
//! KUBERNETES_SERVICE_HOST/PORT set. Docker runs with the host's network (loopback only).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use super::plane::Plane;

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

/// A token of the pod's ServiceAccount bound to the pod (TokenRequest), as kubelet asks for it.
pub fn bound_token(p: &Plane, pod: &Value) -> String {
    let (name, uid) = (pod["metadata"]["name"].as_str().unwrap(), pod["metadata"]["uid"].as_str().unwrap());
    let token = p
        .kubectl(&[
            "-n",
            pod["metadata"]["namespace"].as_str().unwrap(),
            "create",
            "token",
            pod["spec"]["serviceAccountName"].as_str().unwrap(),
            "--bound-object-kind",
            "Pod",
            "--bound-object-name",
            name,
            "--bound-object-uid",
            uid,
        ])
        .trim()
        .to_string();
    super::register_secret(&token);
    use base64::Engine;
    let claims = token.split('.').nth(1).unwrap();
    let claims: Value =
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap();
    assert_eq!(claims["kubernetes.io"]["pod"]["name"], name, "a token bound to the pod: {claims}");
    token
}

/// The image as kubelet would run it, with the token mounted where kubelet mounts it.
pub fn in_cluster_check(p: &Plane, token: &str, app: &str) {
    let ca = std::fs::read_to_string(&p.ca_file).unwrap();
    let m = mounts(token, &ca);
    let mut args = restricted(&format!("dumbmonit-{app}-{}", std::process::id()), &m, p.port, &[]);
    args.extend(["check".into(), "--in-cluster".into()]);
    let out = Command::new("docker").args(&args).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    super::assert_no_secret(&stdout, "check's output in the image");
    super::assert_no_secret(&stderr, "check's errors in the image");
    // Read (serve's own pod may still wait for its claim: the report may say so).
    let read = format!("Cluster https://kubernetes.default.svc:{} (v1.37.2): 2 nodes (2 ready)", p.port);
    assert!(stdout.contains(&read), "{app}: {stdout}\n{stderr}");
    assert_ne!(out.status.code(), Some(3), "{app}: {stdout}\n{stderr}");
}
