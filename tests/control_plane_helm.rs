//! The Helm chart installed for real, as users install it: the test suite's Helm (v4, built from
//! its Go module) against the real control plane. `helm install` into a namespace that enforces
//! the restricted Pod Security Standard (the pod admitted; a value that breaks the standard
//! refused by admission), the chart's service account answering `kubectl auth can-i` as the
//! guide says, the image reading the cluster with a token bound to the chart's pod, `helm
//! upgrade` rolling the Deployment (and going to two replicas and back), the agent and a
//! namespaced release admitted, and `helm uninstall` leaving nothing but the state's claim.

mod common;

use std::process::{Command, Output};

use common::plane::{Plane, assert_only_reads};
use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const NS: &str = "monitoring";

/// helm ARGS against the plane, as its admin.
fn helm(p: &Plane, args: &[&str]) -> Output {
    Command::new(common::helm::bin())
        .args(args)
        .arg("--kubeconfig")
        .arg(&p.kubeconfig)
        .env("HOME", p.dir.path())
        .env("HELM_CACHE_HOME", p.dir.path().join("helm/cache"))
        .env("HELM_CONFIG_HOME", p.dir.path().join("helm/config"))
        .env("HELM_DATA_HOME", p.dir.path().join("helm/data"))
        .output()
        .unwrap()
}

fn helm_ok(p: &Plane, args: &[&str]) -> String {
    let out = helm(p, args);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "helm {args:?}:\n{stdout}{stderr}");
    assert!(!stderr.contains("PodSecurity"), "helm {args:?}: admitted with no Pod Security warning: {stderr}");
    format!("{stdout}{stderr}")
}

fn chart() -> String {
    common::helm::chart().display().to_string()
}

/// The image the test suite built, as the chart's values name it.
fn image_values() -> String {
    let (repository, tag) = common::pod::IMAGE.split_once(':').unwrap();
    format!("image.repository={repository},image.tag={tag}")
}

fn can_i(p: &Plane, args: &[&str]) -> String {
    let mut all = vec!["auth", "can-i"];
    all.extend(args);
    all.push("--as=system:serviceaccount:monitoring:dumbmonit");
    let out = p.kubectl_in(&all, "");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn deployment(p: &Plane) -> Value {
    p.get(&["-n", NS, "deployment", "dumbmonit"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installed_with_helm_under_the_restricted_standard_upgraded_and_uninstalled() {
    let p = Plane::up(&[]);
    p.apply(&format!(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {NS}\n  labels:\n    pod-security.kubernetes.io/enforce: restricted\n"
    ));

    // The release, for real.
    let said = helm_ok(&p, &["install", "dumbmonit", &chart(), "-n", NS, "--set", &image_values()]);
    assert!(said.contains("STATUS: deployed"), "{said}");
    assert!(said.contains("kubectl -n monitoring get secret dumbmonit-admin"), "the NOTES: {said}");
    let pods = p.wait_for("the chart's pod", &["-n", NS, "pods", "-l", "app.kubernetes.io/instance=dumbmonit"], |l| {
        l["items"].as_array().is_some_and(|a| a.len() == 1)
    });
    let pod = &pods["items"][0];
    assert_eq!(pod["spec"]["serviceAccountName"], "dumbmonit");
    assert_eq!(pod["spec"]["securityContext"]["runAsNonRoot"], true);

    // A value that breaks the standard: its pod is refused by admission.
    let out = Command::new(common::helm::bin())
        .args(["template", "dumbmonit", &chart(), "-n", NS, "--set", "securityContext.allowPrivilegeEscalation=true"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let docs = common::manifests::documents(&String::from_utf8_lossy(&out.stdout));
    let template = &docs.iter().find(|d| d["kind"] == "Deployment").unwrap()["spec"]["template"];
    let broken = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "broken", "namespace": NS},
        "spec": template["spec"],
    });
    let refused = p.kubectl_in(&["apply", "--dry-run=server", "-f", "-"], &broken.to_string());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "the broken pod is refused");
    assert!(
        stderr.contains("violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false"),
        "{stderr}"
    );

    // The guide's checks, as the chart's service account.
    assert_eq!(can_i(&p, &["list", "pods", "--all-namespaces"]), "yes");
    assert_eq!(can_i(&p, &["list", "nodes"]), "yes");
    assert_eq!(can_i(&p, &["list", "poddisruptionbudgets.policy", "--all-namespaces"]), "yes", "rbac.optional");
    assert_eq!(can_i(&p, &["get", "secrets", "--all-namespaces"]), "no");
    assert_eq!(can_i(&p, &["watch", "pods", "--all-namespaces"]), "no", "rbac.watch is off by default");

    // The image reads the cluster with a token bound to the chart's pod.
    let token = common::pod::bound_token(&p, pod);
    common::pod::in_cluster_check(&p, &token, "dumbmonit");

    // A changed value rolls the Deployment: a new pod template, a second revision.
    let before = deployment(&p);
    assert_eq!(before["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "1");
    helm_ok(&p, &["upgrade", "dumbmonit", &chart(), "-n", NS, "--reuse-values", "--set", "config.language=fr"]);
    let after = p.wait_for("the second revision", &["-n", NS, "deployment", "dumbmonit"], |d| {
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    });
    let checksum = |d: &Value| d["spec"]["template"]["metadata"]["annotations"]["checksum/config"].clone();
    assert_ne!(checksum(&before), checksum(&after), "the configuration's checksum changed");
    let admin = |p: &Plane| p.get(&["-n", NS, "secret", "dumbmonit-admin"])["data"]["password"].clone();
    let password = admin(&p);
    helm_ok(&p, &["upgrade", "dumbmonit", &chart(), "-n", NS, "--reuse-values", "--set", "logFormat=text"]);
    assert_eq!(admin(&p), password, "an upgrade keeps the generated password");

    // To two replicas (behind Alertmanager, each with its state in its pod) and back: the
    // strategy changes both ways (the chart always says it, so no field of the other is left).
    let two = "replicaCount=2,admin.enabled=false,persistence.enabled=false,\
               config.notifier[0].type=alertmanager,config.notifier[0].url=http://alertmanager.monitoring:9093";
    helm_ok(&p, &["upgrade", "dumbmonit", &chart(), "-n", NS, "--reuse-values", "--set", two]);
    assert_eq!(deployment(&p)["spec"]["strategy"]["type"], "RollingUpdate");
    let one = "replicaCount=1,admin.enabled=true,persistence.enabled=true";
    helm_ok(&p, &["upgrade", "dumbmonit", &chart(), "-n", NS, "--reuse-values", "--set", one]);
    let back = deployment(&p);
    assert_eq!(back["spec"]["strategy"], serde_json::json!({"type": "Recreate"}));

    // The agent from the same chart, beside it: admitted too.
    let agent = format!(
        "{},mode=agent,agent.servers[0]=https://dumbmonit.example.com,agent.cluster=edge,agent.token=an-agent-token",
        image_values()
    );
    common::register_secret("an-agent-token");
    helm_ok(&p, &["install", "edge", &chart(), "-n", NS, "--set", &agent]);
    p.wait_for("the agent's pod", &["-n", NS, "pods", "-l", "app.kubernetes.io/instance=edge"], |l| {
        l["items"].as_array().is_some_and(|a| a.len() == 1 && a[0]["spec"]["serviceAccountName"] == "edge-dumbmonit")
    });
    helm_ok(&p, &["uninstall", "edge", "-n", NS]);

    // Namespaced access (ci/serve-namespaces-values.yaml): Roles in the teams' namespaces only.
    for ns in ["team-a", "team-b"] {
        p.apply(&format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}\n"));
    }
    let tenant_values = format!("{ROOT}/deploy/helm/dumbmonit/ci/serve-namespaces-values.yaml");
    let tenant = format!("{},persistence.enabled=false,admin.enabled=false", image_values());
    helm_ok(&p, &["install", "tenant", &chart(), "-n", NS, "-f", &tenant_values, "--set", &tenant]);
    let as_tenant = "--as=system:serviceaccount:monitoring:tenant-dumbmonit";
    let tenant_can = |args: &[&str]| {
        let mut all = vec!["auth", "can-i"];
        all.extend(args);
        all.push(as_tenant);
        String::from_utf8_lossy(&p.kubectl_in(&all, "").stdout).trim().to_string()
    };
    assert_eq!(tenant_can(&["list", "pods", "-n", "team-a"]), "yes");
    assert_eq!(tenant_can(&["list", "pods", "-n", "team-b"]), "yes");
    assert_eq!(tenant_can(&["list", "pods", "-n", "default"]), "no");
    assert_eq!(tenant_can(&["list", "nodes"]), "no");
    p.wait_for("the tenant's pod", &["-n", NS, "pods", "-l", "app.kubernetes.io/instance=tenant"], |l| {
        l["items"].as_array().is_some_and(|a| a.len() == 1)
    });
    helm_ok(&p, &["uninstall", "tenant", "-n", NS]);

    // Uninstalled: nothing of the release is left but the state's claim.
    let said = helm_ok(&p, &["uninstall", "dumbmonit", "-n", NS]);
    assert!(said.contains("kept due to the resource policy"), "{said}");
    let kinds = "deployments,replicasets,pods,services,secrets,configmaps,serviceaccounts,networkpolicies,\
                 persistentvolumeclaims";
    let names = |l: &Value| -> Vec<String> {
        l["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| format!("{}/{}", o["kind"].as_str().unwrap(), o["metadata"]["name"].as_str().unwrap()))
            .collect()
    };
    // The garbage collector removes the ReplicaSets and the pod after the Deployment.
    let left = p.wait_for("only the claim", &["-n", NS, kinds, "-l", "app.kubernetes.io/instance=dumbmonit"], |l| {
        names(l) == ["PersistentVolumeClaim/dumbmonit-state"]
    });
    assert_eq!(names(&left), ["PersistentVolumeClaim/dumbmonit-state"]);
    let role = p.kubectl_in(&["get", "clusterrole", "dumbmonit-read"], "");
    assert!(String::from_utf8_lossy(&role.stderr).contains("NotFound"), "the ClusterRole is gone");
    let binding = p.kubectl_in(&["get", "clusterrolebinding", "dumbmonit-read"], "");
    assert!(String::from_utf8_lossy(&binding.stderr).contains("NotFound"), "the ClusterRoleBinding is gone");

    assert_only_reads(&p, "system:serviceaccount:monitoring:dumbmonit");
}
