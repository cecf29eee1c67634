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

/// DumbMonit's clock three hours ahead of Alertmanager's: a new alert, an escalation and a
/// resolution are all taken (each says when it ends, after it starts, whatever Alertmanager's
/// clock), and nothing is refused or held. Without `endsAt` Alertmanager ends a firing alert
/// `resolve_timeout` after its own now, before the alert's start, and refuses it with 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_hours_ahead_of_alertmanagers_has_every_alert_taken() {
    let now = jiff::Timestamp::now();
    let mut cluster = scenario::healthy(now);
    // A crash-looping pod (warning, 10 min) of a Deployment missing a replica (notice, 10 min,
    // escalated to warning an hour after it fired).
    scenario::crash_loop(&mut cluster, now);
    let h = Harness::start(cluster).await;
    let dir = tempfile::tempdir().unwrap();
    let (_am, port) = alertmanager(dir.path());
    let cfg = common::web::write_config(
        dir.path(),
        &format!("[[notifier]]\ntype = \"alertmanager\"\nurl = \"http://127.0.0.1:{port}\"\n"),
        &[("lab", &h, "100ms")],
    );
    // A minute of rule time a cycle, from three hours ahead of the wall clock.
    let ahead = now + jiff::SignedDuration::from_hours(3);
    let served = common::web::Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{ahead}/60"))]);

    let missing = "KubernetesWorkloadReplicasMissing";
    let at = |a: &Value, field: &str| -> jiff::Timestamp { a[field].as_str().unwrap().parse().unwrap() };
    let of = |a: &[Value], name: &str, severity: &str| -> Option<Value> {
        a.iter().find(|x| x["labels"]["alertname"] == name && x["labels"]["severity"] == severity).cloned()
    };
    let got = wait_for("the escalated alert", port, |a| {
        of(a, missing, "warning").is_some() && named(a, "KubernetesPodCrashLooping").is_some()
    })
    .await;
    for a in &got {
        let starts: jiff::Timestamp = a["startsAt"].as_str().unwrap().parse().unwrap();
        let ends: jiff::Timestamp = a["endsAt"].as_str().unwrap().parse().unwrap();
        assert!(starts > now + jiff::SignedDuration::from_mins(170) && ends > starts, "{a}");
        assert_eq!(a["status"]["state"], "active", "{a}");
    }
    // The escalation ended the notice under its old labels where the warning starts. Alertmanager
    // keeps the later of that end and the one its last re-send gave (an end in its future is not
    // a resolution to it), and lists the notice until its own clock gets there.
    let warning = of(&got, missing, "warning").unwrap();
    if let Some(notice) = of(&got, missing, "notice") {
        let four = jiff::SignedDuration::from_mins(4);
        assert!(at(&notice, "endsAt") <= at(&warning, "startsAt") + four, "{notice}\n{warning}");
    }

    // Healed: each resolution is taken (nothing failed, below), and the alerts are sent no more:
    // their ends stop moving, DumbMonit's time passes them (Alertmanager lists them until its own
    // clock does).
    h.sim.set_cluster(scenario::healthy(now));
    served.wait_for("/api/v1/alerts", "both alerts resolved", |r| {
        r.json().as_array().is_some_and(|a| !a.iter().any(|x| x["state"] == "firing"))
    });
    let last_cycle = || -> jiff::Timestamp {
        served.get("/api/v1/clusters/lab").json()["last_cycle"].as_str().unwrap().parse().unwrap()
    };
    wait_for("the resolutions taken", port, |a| {
        let seen = last_cycle();
        [("KubernetesPodCrashLooping", "warning"), (missing, "warning")]
            .iter()
            .all(|(n, severity)| of(a, n, severity).is_some_and(|x| at(&x, "endsAt") <= seen))
    })
    .await;

    // Nothing refused, nothing failed, nothing waiting.
    let metrics = common::samples(&served.get("/metrics").body);
    let failed = common::family(&metrics, "dumbmonit_notifications_failed_total");
    assert!(failed.iter().all(|(_, v)| *v == 0.0), "{failed:?}\n{}", served.log());
    assert!(common::family(&metrics, "dumbmonit_notifications_sent_total").iter().any(|(_, v)| *v >= 3.0));
    served.wait_for("/metrics", "the outbox empty", |r| {
        common::family(&common::samples(&r.body), "dumbmonit_notifications_queued").iter().all(|(_, v)| *v == 0.0)
    });
    assert_eq!(served.get("/api/v1/monitor").json()["notifications_refused"], serde_json::json!([]));
    assert!(!served.log().contains("refused"), "{}", served.log());
}
