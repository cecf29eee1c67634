//! DumbMonit against a real kube-apiserver (testenv/, scripts/control-plane.sh): the guide's
//! steps verbatim, `dumbmonit rbac` on top of them, `rbac --watch`, and the errors as the real
//! server makes them.

mod common;

use std::sync::OnceLock;

use common::plane::{Credentials, Plane, assert_only_reads};
use common::{Run, dumbmonit};

/// One control plane for the tests of this file: each works under its own ServiceAccount.
fn plane() -> &'static Plane {
    static PLANE: OnceLock<Plane> = OnceLock::new();
    PLANE.get_or_init(|| Plane::up(&[]))
}

/// The guide's manifest ("La même chose comme manifeste"), as it prints it.
const GUIDE_MANIFEST: &str = "apiVersion: v1
kind: ServiceAccount
metadata:
  name: dumbmonit
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: dumbmonit-read
rules:
  - apiGroups: [\"\"]
    resources: [\"nodes\", \"pods\", \"persistentvolumeclaims\", \"events\"]
    verbs: [\"get\", \"list\"]
  - apiGroups: [\"apps\"]
    resources: [\"deployments\", \"statefulsets\", \"daemonsets\"]
    verbs: [\"get\", \"list\"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: dumbmonit-read
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: dumbmonit-read
subjects:
  - kind: ServiceAccount
    name: dumbmonit
    namespace: kube-system
---
apiVersion: v1
kind: Secret
metadata:
  name: dumbmonit-token
  namespace: kube-system
  annotations:
    kubernetes.io/service-account.name: dumbmonit
type: kubernetes.io/service-account-token
";

/// The product's guide, where the repository sits beside it.
fn guide() -> Option<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/guide");
    let entry = std::fs::read_dir(dir).ok()?.flatten().find(|e| e.path().extension().is_some_and(|x| x == "txt"))?;
    std::fs::read_to_string(entry.path()).ok()
}

#[test]
fn the_manifest_here_is_the_guides_word_for_word() {
    let Some(guide) = guide() else {
        // CI always has it beside the clone; a newcomer's clone may not.
        assert!(std::env::var_os("CI").is_none(), "the guide (../shared/guide) is not beside the repository");
        eprintln!("the guide is not beside this repository: nothing to compare");
        return;
    };
    let guide = guide.replace("\r\n", "\n");
    assert!(guide.contains(GUIDE_MANIFEST.trim_end()), "the guide's manifest changed: update GUIDE_MANIFEST");
    assert!(guide.contains(common::plane::GUIDE_SECRET), "the guide's Secret line changed");
}

async fn rbac(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec!["rbac".to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    let run = dumbmonit(&all, &[], dir.path()).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

/// Exit 3, one line on stderr, nothing on stdout.
fn one_error(run: &Run) -> String {
    assert_eq!(run.code, 3, "stdout: {} stderr: {}", run.stdout, run.stderr);
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr.lines().count(), 1, "one line: {}", run.stderr);
    run.stderr.trim_end().to_string()
}

fn can_i(p: &Plane, verb: &str, resource: &str, sa: &str) -> String {
    let out =
        p.kubectl_in(&["auth", "can-i", verb, resource, &format!("--as=system:serviceaccount:kube-system:{sa}")], "");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The first line of a healthy cluster's report on this control plane (two Ready nodes).
fn assert_healthy(run: &Run) {
    assert_eq!(run.code, 0, "stdout: {}\nstderr: {}", run.stdout, run.stderr);
    assert!(run.stdout.starts_with("Healthy: 2 nodes ready"), "{}", run.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guide_verbatim_then_dumbmonit_rbac_updates_the_same_objects() {
    let p = plane();
    let creds = p.guide_service_account();
    assert_eq!(can_i(p, "list", "pods", "dumbmonit"), "yes");
    assert_eq!(can_i(p, "list", "secrets", "dumbmonit"), "no");
    // The token controller's ca.crt is the CA of the serving certificate, as in a real cluster.
    use base64::Engine;
    let ca =
        base64::engine::general_purpose::STANDARD.decode(std::fs::read_to_string(&creds.ca_file).unwrap()).unwrap();
    assert_eq!(String::from_utf8(ca).unwrap(), std::fs::read_to_string(&p.ca_file).unwrap());

    let run = p.check(&p.address, &creds, &[]).await;
    assert_healthy(&run);
    assert!(run.stdout.contains("(v1.37.2)"), "the real release in /version: {}", run.stdout);
    let user = "system:serviceaccount:kube-system:dumbmonit";
    assert_only_reads(p, user);
    let seen = p.requests_of(user);
    for path in [
        "/version",
        "/api/v1/nodes?",
        "/api/v1/pods?",
        "/apis/apps/v1/deployments?",
        "/apis/apps/v1/statefulsets?",
        "/apis/apps/v1/daemonsets?",
        "/api/v1/persistentvolumeclaims?",
        "/api/v1/events?",
    ] {
        assert!(seen.iter().any(|(_, uri)| uri.starts_with(path)), "{path} was read: {seen:?}");
    }

    // `dumbmonit rbac` after the guide: the same ServiceAccount, role, binding and Secret.
    p.apply(&rbac(&[]).await);
    let roles = p.kubectl(&["get", "clusterroles,clusterrolebindings", "-o", "name"]);
    let ours: Vec<&str> = roles.lines().filter(|l| l.contains("dumbmonit")).collect();
    assert_eq!(
        ours,
        [
            "clusterrole.rbac.authorization.k8s.io/dumbmonit-read",
            "clusterrolebinding.rbac.authorization.k8s.io/dumbmonit-read"
        ]
    );
    // The Secret is the same: its token still works.
    assert_healthy(&p.check(&p.address, &creds, &[]).await);

    // --optional adds the optional rules to that role, and nothing else changes.
    let optional = rbac(&["--optional"]).await;
    let diff = p.kubectl_in(&["diff", "-f", "-"], &optional);
    assert_eq!(
        diff.status.code(),
        Some(1),
        "kubectl diff finds differences: {}",
        String::from_utf8_lossy(&diff.stderr)
    );
    let diff = String::from_utf8(diff.stdout).unwrap();
    assert_only_optional_rules_added(&diff);
    p.apply(&optional);
    let run = p.check(&p.address, &creds, &["--output", "json"]).await;
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["optional"]["not_granted"], serde_json::json!([]), "every optional read is granted: {}", run.stdout);
    assert_only_reads(p, user);
}

/// A `kubectl diff` that adds the optional rules to the ClusterRole, and changes nothing else.
fn assert_only_optional_rules_added(diff: &str) {
    let changed: Vec<&str> = diff
        .lines()
        .filter(|l| (l.starts_with('+') || l.starts_with('-')) && !l.starts_with("+++") && !l.starts_with("---"))
        .collect();
    assert!(!changed.is_empty(), "{diff}");
    for line in &changed {
        assert!(line.starts_with('+') || line.contains("generation:"), "only additions: {line}\n{diff}");
    }
    let files: Vec<&str> = diff.lines().filter(|l| l.starts_with("diff ")).collect();
    assert_eq!(files.len(), 1, "one object changes: {diff}");
    assert!(files[0].contains("ClusterRole") && files[0].contains("dumbmonit-read"), "{diff}");
    for group in ["apiregistration.k8s.io", "metrics.k8s.io", "autoscaling", "batch"] {
        assert!(changed.iter().any(|l| l.contains(group)), "{group} added: {diff}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guides_manifest_as_is_works_the_same() {
    // A control plane of its own: the manifest's names are the guide's, as the other test's.
    let p = Plane::up(&[]);
    p.apply(GUIDE_MANIFEST);
    let creds = p.read_credentials("kube-system", "dumbmonit-token");
    assert_eq!(can_i(&p, "list", "pods", "dumbmonit"), "yes");
    assert_eq!(can_i(&p, "list", "secrets", "dumbmonit"), "no");
    assert_healthy(&p.check(&p.address, &creds, &[]).await);
    // `dumbmonit rbac` over it changes nothing; `--optional` adds only the optional rules.
    let diff = p.kubectl_in(&["diff", "-f", "-"], &rbac(&[]).await);
    assert_eq!(diff.status.code(), Some(0), "no difference: {}", String::from_utf8_lossy(&diff.stdout));
    let diff = p.kubectl_in(&["diff", "-f", "-"], &rbac(&["--optional"]).await);
    assert_eq!(diff.status.code(), Some(1), "{}", String::from_utf8_lossy(&diff.stderr));
    assert_only_optional_rules_added(&String::from_utf8(diff.stdout).unwrap());
    assert_only_reads(&p, "system:serviceaccount:kube-system:dumbmonit");
}

/// Asks `kubectl auth can-i` until it answers `want` (a changed role reaches the API server's
/// authorizer within a moment), and fails with the last answer if it never does.
fn can_i_until(p: &Plane, verb: &str, resource: &str, sa: &str, want: &str) {
    let mut said = String::new();
    for _ in 0..100 {
        said = can_i(p, verb, resource, sa);
        if said == want {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    panic!("can-i {verb} {resource} as {sa}: {said:?}, not {want:?}");
}

/// Whether the role lets `sa` do `verb` on `resource` of `group`, as the API server's
/// authorizer answers a SubjectAccessReview: the group given as is (`kubectl auth can-i` finds
/// it by discovery, and this control plane serves no Metrics API).
fn may(p: &Plane, verb: &str, group: &str, resource: &str, sa: &str) -> bool {
    let review = serde_json::json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": format!("system:serviceaccount:kube-system:{sa}"),
            "resourceAttributes": {"verb": verb, "group": group, "resource": resource},
        },
    });
    let answer: serde_json::Value =
        serde_json::from_str(&p.kubectl_ok(&["create", "-o", "json", "-f", "-"], &review.to_string())).unwrap();
    answer["status"]["allowed"] == true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_watch_grants_watch_on_the_rules_and_nothing_more() {
    use dumbmonit::rbac::{optional_rules, rules, watched};
    let p = plane();
    let sa = "watcher";
    p.apply(&rbac(&["--name", sa]).await);
    can_i_until(p, "list", "pods", sa, "yes");
    assert_eq!(can_i(p, "watch", "pods", sa), "no", "without --watch, no watch");

    // `dumbmonit rbac --watch | kubectl apply -f -`: watch on each resource of the rules.
    p.apply(&rbac(&["--name", sa, "--watch"]).await);
    can_i_until(p, "watch", "pods", sa, "yes");
    for (group, resources) in rules() {
        for r in resources {
            assert!(may(p, "watch", group, r, sa) && may(p, "list", group, r, sa), "watch and list {r} in {group:?}");
        }
    }
    for (verb, r) in [("watch", "secrets"), ("watch", "configmaps"), ("list", "secrets"), ("create", "pods")] {
        assert_eq!(can_i(p, verb, r, sa), "no", "{verb} {r}");
    }
    // Without --optional the optional reads stay out, watched or not.
    for (group, resources) in optional_rules() {
        assert!(!may(p, "watch", group, resources[0], sa) && !may(p, "list", group, resources[0], sa), "{group}");
    }

    // With --optional: watch on the optional rules too, but the Metrics API.
    p.apply(&rbac(&["--name", sa, "--watch", "--optional"]).await);
    can_i_until(p, "watch", "jobs.batch", sa, "yes");
    for (group, resources) in optional_rules() {
        for r in resources {
            assert!(may(p, "list", group, r, sa), "list {r} in {group}");
            assert_eq!(may(p, "watch", group, r, sa), watched(group, r), "watch {r} in {group}");
        }
    }
    assert_eq!(can_i(p, "watch", "secrets", sa), "no");

    // `dumbmonit rbac` applied again takes watch back.
    p.apply(&rbac(&["--name", sa]).await);
    can_i_until(p, "watch", "pods", sa, "no");
    assert_eq!(can_i(p, "list", "pods", sa), "yes");
}

/// A ServiceAccount of `dumbmonit rbac --name NAME`, and its token.
async fn account(p: &Plane, name: &str) -> Credentials {
    p.apply(&rbac(&["--name", name]).await);
    p.read_credentials("kube-system", &format!("{name}-token"))
}

/// Runs check until its answer satisfies `ok` (RBAC and token changes reach the API server's
/// caches within a moment).
async fn check_until(p: &Plane, address: &str, creds: &Credentials, args: &[&str], ok: impl Fn(&Run) -> bool) -> Run {
    let mut last = None;
    for _ in 0..100 {
        let run = p.check(address, creds, args).await;
        if ok(&run) {
            return run;
        }
        last = Some(run);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let last = last.expect("tried");
    panic!("check never gave the answer awaited; the last: {}\n{}{}", last.code, last.stdout, last.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_secret_is_401_as_the_guide_says() {
    let p = plane();
    let creds = account(p, "revoked").await;
    // The new token and its binding reach the API server's caches within a moment, as above.
    assert_healthy(&check_until(p, &p.address, &creds, &[], |r| r.code == 0).await);
    p.kubectl(&["-n", "kube-system", "delete", "secret", "revoked-token"]);
    let run = check_until(p, &p.address, &creds, &[], |r| r.code == 3).await;
    let line = one_error(&run);
    assert!(line.starts_with("The API server refused the token (401)"), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_without_pods_is_403_naming_what_the_server_named() {
    let p = plane();
    let creds = account(p, "nopods").await;
    let role = rbac(&["--name", "nopods"]).await.replace("\"nodes\", \"pods\",", "\"nodes\",");
    p.apply(&role);
    let run = check_until(p, &p.address, &creds, &[], |r| r.code == 3).await;
    assert_eq!(
        one_error(&run),
        "The service account may not read pods (403): pods is forbidden: User \
         \"system:serviceaccount:kube-system:nopods\" cannot list resource \"pods\" in API group \"\" at the \
         cluster scope"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_errors_as_a_real_server_makes_them() {
    let p = plane();
    let creds = account(p, "certs").await;
    // A name that reaches the server but that its certificate does not list.
    let unlisted =
        p.address.replace("://k8s.test:", "://unlisted.k8s.test:").replace("://localhost:", "://unlisted.k8s.test:");
    let line = one_error(&p.check(&unlisted, &creds, &[]).await);
    assert!(
        line.starts_with(
            "The certificate of the API server could not be verified: the address unlisted.k8s.test is not one of \
             the names in the certificate (it lists localhost, k8s.test, kubernetes, kubernetes.default, \
             kubernetes.default.svc, kubernetes.default.svc.cluster.local, 127.0.0.1, 10.0.0.1)"
        ),
        "{line}"
    );
    // Without the CA: the system's roots do not know the cluster's.
    let args: Vec<String> =
        vec!["check".into(), p.address.clone(), "--token-file".into(), common::path(&creds.token_file)];
    let run = dumbmonit(&args, &[], p.dir.path()).await;
    let line = one_error(&run);
    assert!(
        line.starts_with(
            "The certificate of the API server could not be verified: it is signed by an unknown authority"
        ),
        "{line}"
    );
}
