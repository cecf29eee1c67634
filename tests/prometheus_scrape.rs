//! A real Prometheus (Debian's `prometheus`) scrapes `serve`'s /metrics: every cluster's
//! series arrive with their `cluster` label.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::web::{Served, get};
use common::{Harness, path};
use dumbmonit_sim::scenario;

struct Killed(std::process::Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_scrapes_every_cluster() {
    let now = jiff::Timestamp::now();
    let healthy = Harness::start(scenario::healthy(now)).await;
    let trouble = Harness::start(scenario::trouble(now)).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::web::write_config(
        dir.path(),
        "[auth]\nbearer_token = \"web-token-0123456789\"\nopen_metrics = true\n",
        &[("healthy", &healthy, "500ms"), ("trouble", &trouble, "500ms")],
    );
    let s = Served::start(&cfg, &[]);

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let prom_cfg = dir.path().join("prometheus.yml");
    std::fs::write(
        &prom_cfg,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: dumbmonit\n    static_configs:\n      - targets: ['{}']\n",
            s.addr
        ),
    )
    .unwrap();
    let _prometheus = Killed(
        Command::new("prometheus")
            .args([
                format!("--config.file={}", path(&prom_cfg)),
                format!("--storage.tsdb.path={}", path(&dir.path().join("tsdb"))),
                format!("--web.listen-address=127.0.0.1:{port}"),
            ])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("prometheus.log")).unwrap())
            .spawn()
            .expect("Prometheus is needed: install the Debian package `prometheus` (scripts/test.sh does)"),
    );
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let result = loop {
        if std::net::TcpStream::connect(addr).is_ok() {
            let r = get(addr, "GET", "/api/v1/query?query=dumbmonit_k8s_nodes_ready", None);
            if r.status == 200 {
                let v = r.json();
                if v["data"]["result"].as_array().is_some_and(|a| a.len() == 2) {
                    break v;
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus never had both clusters; its log:\n{}",
            std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let mut got: Vec<(String, String)> = result["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["metric"]["cluster"].as_str().unwrap().to_string(), r["value"][1].as_str().unwrap().to_string()))
        .collect();
    got.sort();
    assert_eq!(got, [("healthy".to_string(), "3".to_string()), ("trouble".to_string(), "2".to_string())]);
    // The scrape itself is healthy: Prometheus parsed every line.
    let up = get(addr, "GET", "/api/v1/query?query=up%7Bjob%3D%22dumbmonit%22%7D", None).json();
    assert_eq!(up["data"]["result"][0]["value"][1], "1");
    let crash = get(addr, "GET", "/api/v1/query?query=dumbmonit_k8s_pod_crashlooping%3D%3D1", None).json();
    assert_eq!(crash["data"]["result"][0]["metric"]["pod"], "api-7c9696d669-8tpp6");
}
