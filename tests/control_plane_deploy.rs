//! Running inside the real API server's admission: the kustomize bases and
//! `dumbmonit manifests agent` into a namespace that enforces the restricted Pod Security
//! Standard (admitted, no warning; a broken overlay refused, proof that the check is real), the
//! component `deploy/rbac/watch` admitted over them, and the image run with a pod's real
//! service-account token (TokenRequest) reading the cluster through `--in-cluster`.

mod common;

use std::process::Command;

use common::dumbmonit;
use common::plane::{Plane, assert_only_reads};
use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn kustomize(base: &str) -> String {
    let out = Command::new("kubectl").args(["kustomize", &format!("{ROOT}/deploy/{base}")]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `deploy/BASE` with the component `deploy/rbac/watch`, as an overlay adds it.
fn kustomize_with_watch(base: &str) -> String {
    let dir = common::watch_overlay(base);
    let out = Command::new("kubectl").args(["kustomize", dir.path().to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `kubectl apply --dry-run=server`: (succeeded, what it said on stderr).
fn dry_run(p: &Plane, yaml: &str) -> (bool, String) {
    let out = p.kubectl_in(&["apply", "--dry-run=server", "-f", "-"], yaml);
    (out.status.success(), String::from_utf8_lossy(&out.stderr).to_string())
}

/// What kubectl said, but for its own version-skew notice (the PyPI kubectl is older than the
/// server).
fn warnings(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("Warning") && !l.contains("version difference")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admitted_under_the_restricted_standard_and_reading_with_a_pods_own_token() {
    let p = Plane::up(&[]);
    // The shared base for real (the namespace that enforces the restricted standard, the
    // ServiceAccount and its read-only role); the others first as dry runs.
    p.apply(&kustomize("rbac"));

    for base in ["agent", "serve"] {
        let (ok, stderr) = dry_run(&p, &kustomize(base));
        assert!(ok, "{base}: {stderr}");
        assert!(warnings(&stderr).is_empty(), "{base} admitted with no warning: {stderr}");
    }
    // The watch component over each: admitted; of what deploy/rbac applied, it changes the
    // ClusterRole and not its binding.
    for base in ["rbac", "agent", "serve"] {
        let out = p.kubectl_in(&["apply", "--dry-run=server", "-f", "-"], &kustomize_with_watch(base));
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{base} with watch: {stderr}");
        assert!(warnings(&stderr).is_empty(), "{base} with watch admitted with no warning: {stderr}");
        assert!(stdout.contains("clusterrole.rbac.authorization.k8s.io/dumbmonit-read configured"), "{stdout}");
        assert!(stdout.contains("clusterrolebinding.rbac.authorization.k8s.io/dumbmonit-read unchanged"), "{stdout}");
    }
    let dir = tempfile::tempdir().unwrap();
    let agent_token = dir.path().join("edge.agent-token");
    std::fs::write(&agent_token, "an-agent-token-of-thirty-two-bytes-long").unwrap();
    common::register_secret("an-agent-token-of-thirty-two-bytes-long");
    let printed = dumbmonit(
        &[
            "manifests".into(),
            "agent".into(),
            "--server".into(),
            "https://dumbmonit.example.com".into(),
            "--cluster".into(),
            "edge".into(),
            "--agent-token-file".into(),
            common::path(&agent_token),
        ],
        &[],
        dir.path(),
    )
    .await;
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    let (ok, stderr) = dry_run(&p, &printed.stdout);
    assert!(ok && warnings(&stderr).is_empty(), "manifests agent: {stderr}");

    // An overlay that breaks one rule: the Deployment is admitted with the warning, and a pod
    // made from its template is refused.
    let broken = kustomize("agent").replace("allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true");
    assert_ne!(broken, kustomize("agent"));
    let (ok, stderr) = dry_run(&p, &broken);
    assert!(ok, "{stderr}");
    assert!(
        warnings(&stderr)
            .iter()
            .any(|w| w.contains("would violate PodSecurity \"restricted:latest\"")
                && w.contains("allowPrivilegeEscalation")),
        "{stderr}"
    );
    let docs: Vec<Value> = serde_saphyr::from_multiple(&broken).unwrap();
    let deployment = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let pod = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "broken", "namespace": "dumbmonit"},
        "spec": deployment["spec"]["template"]["spec"],
    });
    let (ok, stderr) = dry_run(&p, &pod.to_string());
    assert!(!ok, "the broken pod is refused");
    assert!(
        stderr.contains("violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false"),
        "{stderr}"
    );

    // For real: both Deployments and their pods, and a token bound to each pod.
    p.apply(&kustomize("agent"));
    p.apply(&kustomize("serve"));
    for app in ["dumbmonit-agent", "dumbmonit"] {
        let pods = p.wait_for(
            &format!("the pod of {app}"),
            &["-n", "dumbmonit", "pods", "-l", &format!("app.kubernetes.io/name={app}")],
            |l| l["items"].as_array().is_some_and(|a| a.len() == 1),
        );
        let pod = &pods["items"][0];
        assert_eq!(pod["spec"]["serviceAccountName"], "dumbmonit", "{app}");
        let token = common::pod::bound_token(&p, pod);
        common::pod::in_cluster_check(&p, &token, app);
    }
    assert_only_reads(&p, "system:serviceaccount:dumbmonit:dumbmonit");
}
