//! Standing ignore rules: the `[[silence]]` entries of serve's file mute what they match for every
//! notifier while the alerts are evaluated and shown marked; a reload that takes one away tells
//! what still fires. Against the simulator and a webhook receiver, on the stepped clock.

mod common;

use std::time::{Duration, Instant};

use common::Harness;
use common::receiver::Receiver;
use dumbmonit_sim::fixtures::{Container, Pod};
use dumbmonit_sim::scenario;

/// The webhook bodies' alerts: (status, namespace of the alert's pod).
fn told(receiver: &Receiver) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for doc in receiver.bodies() {
        for a in doc["alerts"].as_array().unwrap() {
            if a["labels"]["alertname"] == "KubernetesPodCrashLooping" {
                out.push((
                    a["status"].as_str().unwrap().to_string(),
                    a["labels"]["namespace"].as_str().unwrap().to_string(),
                ));
            }
        }
    }
    out
}

fn wait(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ok() {
        assert!(Instant::now() < deadline, "waited in vain for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silence_of_the_file_mutes_what_it_matches_and_its_removal_tells_what_still_fires() {
    let now = jiff::Timestamp::now();
    let mut cluster = scenario::healthy(now);
    scenario::crash_loop(&mut cluster, now);
    cluster.pods.push(Pod::new("dev-7", "api-0").container(Container::crashlooping("app", "Error", 1, 9)).build(now));
    let h = Harness::start(cluster).await;
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let silence = "[[silence]]\nmatchers = ['alertname=\"KubernetesPodCrashLooping\"', 'namespace=~\"dev-.*\"']\n\
                   comment = \"dev namespaces crash all day\"\n";
    let notifier = format!("[[notifier]]\ntype = \"webhook\"\nurl = \"{}/hook\"\n\n", receiver.url());
    let cfg = common::web::write_config(dir.path(), &format!("{notifier}{silence}"), &[("lab", &h, "200ms")]);
    let clock = format!("{}/60", now);
    let s = common::web::Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &clock)]);

    // Both crash loops fire (minutes of rule time go by in seconds); only shop's is told.
    s.wait_for("/api/v1/alerts", "both crash loops firing", |r| {
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["alertname"] == "KubernetesPodCrashLooping" && a["state"] == "firing")
            .count()
            == 2
    });
    wait("shop's crash loop told", || told(&receiver).contains(&("firing".into(), "shop".into())));
    let alerts = s.get("/api/v1/alerts").json();
    let dev = alerts.as_array().unwrap().iter().find(|a| a["labels"]["namespace"] == "dev-7").unwrap().clone();
    assert_eq!(dev["silenced_by"], serde_json::json!(["file-1"]), "{dev:#}");
    let shop = alerts
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["labels"]["namespace"] == "shop" && a["alertname"] == "KubernetesPodCrashLooping")
        .unwrap()
        .clone();
    assert_eq!(shop["silenced_by"], serde_json::json!([]));
    let listed = s.get("/api/v1/silences").json();
    assert_eq!(listed[0]["id"], "file-1");
    assert_eq!(listed[0]["status"]["state"], "active");
    assert_eq!(
        listed[0]["matchers"][1],
        serde_json::json!({"name": "namespace", "value": "dev-.*", "isRegex": true, "isEqual": true})
    );
    assert_eq!(listed[0]["createdBy"], "the configuration file");
    let page = s.get("/clusters/lab").body;
    assert!(page.contains("silenced by the configuration file: dev namespaces crash all day"), "{page}");
    // A few more cycles: still nothing told of dev-7.
    let at = s.get("/api/v1/clusters/lab").json()["last_cycle"].clone();
    s.wait_for("/api/v1/clusters/lab", "more cycles", |r| r.json()["last_cycle"] != at);
    assert!(!told(&receiver).iter().any(|(_, ns)| ns == "dev-7"), "{:?}", told(&receiver));

    // The silence taken out of the file: the next cycle tells dev-7's crash loop, still firing.
    let text = std::fs::read_to_string(&cfg).unwrap().replace(silence, "");
    std::fs::write(&cfg, text).unwrap();
    unsafe { libc::kill(s.child.id() as i32, libc::SIGHUP) };
    wait("dev-7's crash loop told once the silence is gone", || {
        told(&receiver).contains(&("firing".into(), "dev-7".into()))
    });
    assert_eq!(s.get("/api/v1/silences").json(), serde_json::json!([]));
    assert_eq!(told(&receiver).iter().filter(|(_, ns)| ns == "dev-7").count(), 1, "told once");
}

#[test]
fn bad_maintenance_windows_are_refused_at_load_naming_the_entry_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("dumbmonit.toml");
    for (window, said) in [
        (
            "cluster = \"lab\"\nstart = \"2027-01-02T04:00:00Z\"\nend = \"2027-01-02T02:00:00Z\"",
            "maintenance 1: field `end`: not after `start`",
        ),
        (
            "cluster = \"lab\"\nschedule = \"0 2 * * 0\"\ntime_zone = \"Europe/Pariss\"\nduration = \"2h\"",
            "maintenance 1: field `time_zone`: \"Europe/Pariss\" is not a time zone",
        ),
        ("cluster = \"lab\"\nschedule = \"0 2 * *\"\nduration = \"2h\"", "maintenance 1: field `schedule`:"),
        (
            "cluster = '{pod=\"x\"}'\nstart = \"2027-01-02T02:00:00Z\"\nend = \"2027-01-02T04:00:00Z\"",
            "maintenance 1: field `cluster`: a window's matchers are over `cluster` only",
        ),
        ("cluster = \"lab\"", "maintenance 1: give `start` and `end`, or `schedule` and `duration`"),
        ("cluster = \"lab\"\nstarts = \"x\"", "unknown field `starts`"),
    ] {
        std::fs::write(&cfg, format!("state_dir = \"/tmp/x\"\n\n[[maintenance]]\n{window}\n")).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
            .args(["serve", "--config", cfg.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{window}: {stderr}");
        assert!(stderr.contains(said), "{window}:\n{stderr}");
    }
}

#[test]
fn bad_silences_are_refused_at_load_naming_the_entry_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("dumbmonit.toml");
    for (silence, said) in [
        (
            "matchers = ['team=\"a\"']",
            "silence 1: field `matchers`: \"team=\\\"a\\\"\": no alert of DumbMonit has the label \"team\"",
        ),
        (
            "matchers = ['pod=~\"(\"']",
            "silence 1: field `matchers`: \"pod=~\\\"(\\\"\": the regular expression does not compile",
        ),
        ("matchers = []", "silence 1: field `matchers`: give at least one matcher"),
        ("matchers = ['pod']", "silence 1: field `matchers`: \"pod\" is not a matcher"),
        ("matcher = ['pod=\"a\"']", "unknown field `matcher`, expected `matchers` or `comment`"),
    ] {
        std::fs::write(&cfg, format!("state_dir = \"/tmp/x\"\n\n[[silence]]\n{silence}\n")).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
            .args(["serve", "--config", cfg.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{silence}: {stderr}");
        assert!(stderr.contains(said), "{silence}:\n{stderr}");
    }
}
