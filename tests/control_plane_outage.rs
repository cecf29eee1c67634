//! The real API server stopped while serve reads it (unreachable, said as for any refused
//! connection, and the unreachable alert), then started again on the same port (recovered).

mod common;

use common::dumbmonit;
use common::plane::Plane;
use common::web::Served;

fn unreachable_firing(s: &Served) -> bool {
    s.get("/api/v1/alerts")
        .json()
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["alertname"] == "KubernetesMonitorUnreachable" && a["state"] == "firing")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_server_stopped_then_restarted() {
    let p = Plane::up(&[]);
    let dir = tempfile::tempdir().unwrap();
    p.apply(&dumbmonit(&["rbac".into()], &[], dir.path()).await.stdout);
    let creds = p.read_credentials("kube-system", "dumbmonit-token");
    // A minute of rule time per cycle, so that the unreachable alert's duration passes.
    let s = p.serve(dir.path(), &creds, "timeout = \"2s\"\n");
    let first = s.wait_for("/api/v1/clusters/real", "a first good cycle", |r| r.json()["last_good_cycle"].is_string());
    assert_eq!(first.json()["nodes"], 2, "{}", first.body);

    p.apiserver("stop");
    let down = s.wait_for("/api/v1/clusters/real", "the outage", |r| r.json()["error"].is_string());
    let error = down.json()["error"].as_str().unwrap().to_string();
    assert!(error.contains(&p.address) && error.lines().count() == 1, "{error}");
    s.wait_for("/api/v1/alerts", "the unreachable alert", |_| unreachable_firing(&s));
    let run = p.check(&p.address, &creds, &[]).await;
    assert_eq!(run.code, 3);
    assert!(
        run.stderr.starts_with(&format!("Connection refused by {} while reading version", p.address)),
        "{}",
        run.stderr
    );

    p.apiserver("start");
    s.wait_for("/api/v1/clusters/real", "recovery", |r| {
        let d = r.json();
        d["error"].is_null() && d["nodes"] == 2
    });
    s.wait_for("/api/v1/alerts", "the unreachable alert resolved", |_| !unreachable_firing(&s));
}
