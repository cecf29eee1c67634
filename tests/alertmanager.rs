//! A real Alertmanager (Debian's `prometheus-alertmanager`) receives DumbMonit's alerts through
//! its v2 API, with the right labels, and sees them resolve.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::alertmanager::{alertmanager, get};
use common::{Harness, Killed, path};
use dumbmonit_sim::fixtures::{Container, Pod};
use dumbmonit_sim::{Faults, scenario};
use serde_json::Value;

fn alerts(port: u16) -> Vec<Value> {
    let (status, body) = get(port, "/api/v2/alerts").expect("Alertmanager answers");
    assert_eq!(status, 200, "{body}");
    serde_json::from_str::<Vec<Value>>(&body).unwrap()
}

async fn wait_for(what: &str, port: u16, check: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let a = alerts(port);
        if check(&a) {
            return a;
        }
        assert!(Instant::now() < deadline, "waited in vain for {what}; Alertmanager has: {a:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn named<'a>(alerts: &'a [Value], name: &str) -> Option<&'a Value> {
    alerts.iter().find(|a| a["labels"]["alertname"] == name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_alertmanager_receives_and_resolves_the_alerts() {
    let now = jiff::Timestamp::now();
    let with_restarts = |n| {
        let mut c = scenario::healthy(now);
        c.pods.push(Pod::new("shop", "flaky").container(Container::running("app").restarts(n)).build(now));
        c
    };
    let h = Harness::start(with_restarts(0)).await;
    let (_am, port) = alertmanager(h.dir.path());
    let cfg = h.dir.path().join("dumbmonit.toml");
    std::fs::write(
        &cfg,
        format!(
            "listen = \"127.0.0.1:0\"\nstate_dir = {:?}\n\n[[cluster]]\nname = \"lab\"\naddress = {:?}\ntoken_file = {:?}\nca_file = {:?}\ninterval = \"100ms\"\n\n\
             [[notifier]]\ntype = \"alertmanager\"\nurl = \"http://127.0.0.1:{port}\"\n",
            path(&h.dir.path().join("state")),
            h.sim.url(),
            path(&h.token_file),
            path(&h.ca_file)
        ),
    )
    .unwrap();
    let log = h.dir.path().join("serve.log");
    let _serve = Killed(
        Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
            .args(["serve", "--config", &path(&cfg)])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    // The restarts are counted from the first cycle on: the change must come after it. Two pod
    // lists begun means the first cycle was whole (a loaded machine may start serve late).
    let deadline = Instant::now() + Duration::from_secs(30);
    while h.sim.requests().iter().filter(|r| r.path == "/api/v1/pods").count() < 2 {
        assert!(Instant::now() < deadline, "serve never read the pods twice");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(alerts(port).is_empty(), "a healthy cluster raises nothing");

    // Eight restarts between two cycles: KubernetesPodRestarting fires at once (no duration).
    h.sim.set_cluster(with_restarts(8));
    let got = wait_for("the restart alert", port, |a| named(a, "KubernetesPodRestarting").is_some()).await;
    let alert = named(&got, "KubernetesPodRestarting").unwrap();
    assert_eq!(
        alert["labels"],
        serde_json::json!({"alertname": "KubernetesPodRestarting", "severity": "notice", "cluster": "lab", "namespace": "shop", "pod": "flaky"})
    );
    assert_eq!(alert["annotations"]["summary"], "Pod shop/flaky restarted 8 times in the last hour");
    assert_eq!(alert["status"]["state"], "active");

    // The pod goes away: the alert resolves.
    h.sim.set_cluster(scenario::healthy(now));
    wait_for("the restart alert to resolve", port, |a| named(a, "KubernetesPodRestarting").is_none()).await;

    // The API server fails: after two cycles the monitor is unreachable, with the error; then back.
    h.sim.set_faults(Faults { fail_status: Some(503), ..Default::default() });
    let got = wait_for("the unreachable alert", port, |a| named(a, "KubernetesMonitorUnreachable").is_some()).await;
    let alert = named(&got, "KubernetesMonitorUnreachable").unwrap();
    assert_eq!(
        alert["labels"],
        serde_json::json!({"alertname": "KubernetesMonitorUnreachable", "severity": "warning", "cluster": "lab"})
    );
    assert!(
        alert["annotations"]["description"]
            .as_str()
            .unwrap()
            .starts_with("The API server answered 503 Service Unavailable"),
        "{alert}"
    );
    h.sim.set_faults(Faults::default());
    wait_for("the unreachable alert to resolve", port, |a| named(a, "KubernetesMonitorUnreachable").is_none()).await;
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(!log.contains("failed"), "every delivery to Alertmanager succeeded:\n{log}");
}
