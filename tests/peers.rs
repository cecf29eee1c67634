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
