//! `dumbmonit serve` as a real process: notifications delivered with their credentials, and
//! state and outbox that survive `kill -9` at random moments.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::receiver::Receiver;
use common::{Harness, path};
use dumbmonit_sim::scenario;
use serde_json::Value;

const START: &str = "2026-01-01T00:00:00Z";

fn config(h: &Harness, state: &Path, notifier: &str) -> String {
    format!(
        "listen = \"127.0.0.1:0\"\nstate_dir = {:?}\n\n[[cluster]]\nname = \"lab\"\naddress = {:?}\ntoken_file = {:?}\nca_file = {:?}\ninterval = \"30ms\"\n\n{notifier}",
        path(state),
        h.sim.url(),
        path(&h.token_file),
        path(&h.ca_file)
    )
}

fn serve(config: &Path, log: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
        .args(["serve", "--config", &path(config)])
        .env("DUMBMONIT_TEST_CLOCK", format!("{START}/60"))
        .env_remove("DUMBMONIT_TOKEN")
        .stdout(Stdio::null())
        .stderr(std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap())
        .spawn()
        .expect("dumbmonit serve starts")
}

/// The simulated time of the last committed cycle, and the outbox's length.
fn progress(state: &Path) -> (Option<jiff::Timestamp>, i64) {
    let Ok(db) = rusqlite::Connection::open(state.join("dumbmonit.db")) else { return (None, 0) };
    let last: Option<String> =
        db.query_row("SELECT last_cycle FROM clusters WHERE cluster = 'lab'", [], |r| r.get(0)).ok().flatten();
    let outbox = db.query_row("SELECT count(*) FROM outbox", [], |r| r.get(0)).unwrap_or(0);
    (last.map(|t| t.parse().unwrap()), outbox)
}

fn minutes_after_start(m: i64) -> jiff::Timestamp {
    START.parse::<jiff::Timestamp>().unwrap() + jiff::SignedDuration::from_mins(m)
}

/// A small deterministic generator, seeded from the clock and printed, for kill delays.
struct Lcg(u64);
impl Lcg {
    fn next_ms(&mut self, lo: u64, hi: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        lo + (self.0 >> 33) % (hi - lo)
    }
}

/// Runs serve and kills it with SIGKILL after a random delay, until `done` says so.
async fn kill_loop(cfg: &Path, log: &Path, rng: &mut Lcg, kills: &mut u32, done: impl Fn(u32) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done(*kills) {
        assert!(Instant::now() < deadline, "no progress; log:\n{}", std::fs::read_to_string(log).unwrap_or_default());
        let mut child = serve(cfg, log);
        tokio::time::sleep(Duration::from_millis(rng.next_ms(20, 300))).await;
        if let Some(status) = child.try_wait().unwrap() {
            panic!("serve exited by itself ({status}); log:\n{}", std::fs::read_to_string(log).unwrap_or_default());
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        *kills += 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_and_outbox_survive_kill_9() {
    let h = Harness::start(scenario::trouble(jiff::Timestamp::now())).await;
    let receiver = Receiver::start().await;
    receiver.fail.store(true, Ordering::SeqCst);
    let state = h.dir.path().join("state");
    let cfg = h.dir.path().join("dumbmonit.toml");
    std::fs::write(
        &cfg,
        config(
            &h,
            &state,
            &format!(
                "[[notifier]]\ntype = \"webhook\"\nurl = \"{}/hook\"\nbearer_token = \"hook-secret-123456\"\n",
                receiver.url()
            ),
        ),
    )
    .unwrap();
    let log = h.dir.path().join("serve.log");
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    println!("kill delays seeded with {seed}");
    let mut rng = Lcg(seed);
    let mut kills = 0;

    // The trouble lasts past every rule's duration (15 minutes) while the receiver refuses
    // everything: the notifications wait in the outbox through the kills.
    kill_loop(&cfg, &log, &mut rng, &mut kills, |_| progress(&state).0.is_some_and(|t| t >= minutes_after_start(16)))
        .await;
    assert!(progress(&state).1 > 0, "notifications are queued while the receiver fails");
    assert!(receiver.bodies().is_empty());

    // The receiver recovers; the cluster heals a little later; kills go on.
    receiver.fail.store(false, Ordering::SeqCst);
    let until = kills + 3;
    kill_loop(&cfg, &log, &mut rng, &mut kills, |k| k >= until).await;
    h.sim.set_cluster(scenario::healthy(jiff::Timestamp::now()));
    let healed = progress(&state).0.unwrap();
    assert!(healed < minutes_after_start(60), "the trouble ends before any escalation (at 70 minutes)");
    // Past 50 cycles in all (one a minute on the test clock), with the kills going on.
    let end = (healed + jiff::SignedDuration::from_mins(3)).max(minutes_after_start(50));
    kill_loop(&cfg, &log, &mut rng, &mut kills, |_| progress(&state).0.is_some_and(|t| t >= end)).await;

    // A last run, left alone until the outbox is empty.
    let mut child = serve(&cfg, &log);
    let deadline = Instant::now() + Duration::from_secs(30);
    while progress(&state).1 > 0 {
        assert!(
            Instant::now() < deadline,
            "the outbox never emptied; log:\n{}",
            std::fs::read_to_string(&log).unwrap()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    println!("{kills} kills");
    assert!(kills >= 5, "the test killed the monitor several times ({kills})");

    // Every alert of the trouble fired once, at activeAt (the first cycle) + its duration, and
    // resolved once, after the cluster healed.
    let expected: BTreeMap<&str, i64> = BTreeMap::from([
        ("KubernetesNodeNotReady{node=\"node-3\"}", 5),
        ("KubernetesNodePressure{condition=\"memory\",node=\"node-2\"}", 5),
        ("KubernetesPodCrashLooping{namespace=\"shop\",pod=\"api-7c9696d669-8tpp6\",workload=\"api\"}", 10),
        ("KubernetesWorkloadReplicasMissing{kind=\"Deployment\",namespace=\"shop\",workload=\"api\"}", 10),
        ("KubernetesWorkloadReplicasMissing{kind=\"Deployment\",namespace=\"web\",workload=\"frontend\"}", 10),
        ("KubernetesWorkloadReplicasMissing{kind=\"Deployment\",namespace=\"batch\",workload=\"reporter\"}", 10),
        ("KubernetesWorkloadReplicasMissing{kind=\"StatefulSet\",namespace=\"shop\",workload=\"search\"}", 10),
        ("KubernetesPodPending{namespace=\"batch\",pod=\"reporter-84c6b5f7d9-zz7rt\",workload=\"reporter\"}", 15),
        ("KubernetesPodPending{namespace=\"shop\",pod=\"search-0\",workload=\"search\"}", 15),
        ("KubernetesPodPending{namespace=\"web\",pod=\"frontend-6b7d9c8f5-m2n4b\",workload=\"frontend\"}", 15),
        ("KubernetesPVCPending{namespace=\"shop\",pvc=\"data-search-0\"}", 15),
    ]);
    // Delivery is at least once: a kill between the receiver's 200 and the outbox forgetting the
    // notification sends it again, byte for byte, with the same Idempotency-Key. A receiver that
    // drops repeated keys sees each transition exactly once; that is what is checked.
    let mut seen: BTreeMap<String, Vec<(String, String, String)>> = BTreeMap::new();
    let mut by_key: BTreeMap<String, String> = BTreeMap::new();
    let mut repeats = 0;
    for r in receiver.received.lock().unwrap().iter() {
        assert_eq!(r.path, "/hook");
        assert_eq!(r.authorization, "Bearer hook-secret-123456");
        assert_eq!(r.idempotency_key.len(), 16, "every notification carries its key");
        if let Some(first) = by_key.get(&r.idempotency_key) {
            assert_eq!(first, &r.body, "a repeated key is the same notification, resent unchanged");
            repeats += 1;
            continue;
        }
        by_key.insert(r.idempotency_key.clone(), r.body.clone());
        let v: Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!(v["version"], "4");
        let a = &v["alerts"][0];
        let labels = a["labels"].as_object().unwrap();
        assert_eq!(labels["cluster"], "lab");
        let object: Vec<String> = labels
            .iter()
            .filter(|(k, _)| !["alertname", "severity", "cluster"].contains(&k.as_str()))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let key = format!("{}{{{}}}", labels["alertname"].as_str().unwrap(), object.join(","));
        seen.entry(key).or_default().push((
            v["status"].as_str().unwrap().to_string(),
            a["startsAt"].as_str().unwrap().to_string(),
            a["endsAt"].as_str().unwrap().to_string(),
        ));
    }
    println!("{} notifications, {repeats} resent after a kill", by_key.len());
    assert_eq!(seen.keys().map(String::as_str).collect::<Vec<_>>(), expected.keys().copied().collect::<Vec<_>>());
    for (key, hold) in expected {
        let got = &seen[key];
        assert_eq!(got.len(), 2, "{key}: exactly one firing and one resolved transition: {got:?}");
        assert_eq!(got[0].0, "firing", "{key}");
        assert_eq!(got[0].1, minutes_after_start(hold).to_string(), "{key}: fired at activeAt + {hold} minutes");
        assert_eq!(got[1].0, "resolved", "{key}");
        let ended: jiff::Timestamp = got[1].2.parse().unwrap();
        assert!(ended > healed, "{key}: resolved after the cluster healed");
    }
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(!log.contains("hook-secret-123456") && !log.contains(h.sim.token()), "no secret in the log");
    assert!(log.contains("failed, attempt 1: 503"), "failed deliveries are logged:\n{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_configuration_refuses_to_start_and_names_the_field() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let cfg = h.dir.path().join("dumbmonit.toml");
    let state = h.dir.path().join("state");
    std::fs::write(&cfg, config(&h, &state, "[[notifier]]\ntype = \"pager\"\nurl = \"http://x\"\n")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dumbmonit")).args(["serve", "--config", &path(&cfg)]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with(&format!("{}, line 12: unknown variant `pager`", path(&cfg))), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_records_cycles_that_replay_reads() {
    let h = Harness::start(scenario::trouble(jiff::Timestamp::now())).await;
    let state = h.dir.path().join("state");
    let records = h.dir.path().join("cycles");
    let cfg = h.dir.path().join("dumbmonit.toml");
    let text = config(&h, &state, "")
        .replace("interval = \"30ms\"", &format!("interval = \"30ms\"\nrecord_dir = {:?}", path(&records)));
    std::fs::write(&cfg, text).unwrap();
    let log = h.dir.path().join("serve.log");
    let mut child = serve(&cfg, &log);
    let deadline = Instant::now() + Duration::from_secs(30);
    while progress(&state).0.is_none_or(|t| t < minutes_after_start(11)) {
        assert!(Instant::now() < deadline, "no progress; log:\n{}", std::fs::read_to_string(&log).unwrap_or_default());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let files = std::fs::read_dir(&records).unwrap().count();
    assert!(files >= 11, "one file per cycle: {files}");
    let run =
        common::dumbmonit(&["replay".into(), path(&records), "--cluster".into(), "lab".into()], &[], h.dir.path())
            .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let first: Value = serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["time"], minutes_after_start(5).to_string(), "the recorded cycles replay as they ran live");
    assert!(!std::fs::read_to_string(&log).unwrap().contains(h.sim.token()));
    for f in std::fs::read_dir(&records).unwrap() {
        let path = f.unwrap().path();
        if path.file_name().unwrap().to_string_lossy().starts_with('.') {
            continue; // a cycle being written while serve runs: it appears whole or not at all
        }
        let mut text = String::new();
        let file = std::fs::File::open(&path).unwrap();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(file), &mut text).unwrap();
        common::assert_no_secret(&text, "a recorded cycle");
    }
}

/// A receiver that refuses notifications for good (400): each is dropped, not tried again, so
/// none waits behind another; the log, `/metrics` and every page say so until the receiver takes
/// one again, and the resolutions of the alerts whose firing was dropped are still sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_refused_for_good_holds_up_none_after_it() {
    let h = Harness::start(scenario::trouble(jiff::Timestamp::now())).await;
    let receiver = Receiver::start().await;
    receiver.refuse.store(usize::MAX, Ordering::SeqCst);
    let state = h.dir.path().join("state");
    let cfg = h.dir.path().join("dumbmonit.toml");
    let hook = format!("[[notifier]]\ntype = \"webhook\"\nname = \"ops-hook\"\nurl = \"{}/hook\"\n", receiver.url());
    std::fs::write(&cfg, config(&h, &state, &hook)).unwrap();
    let s = common::web::Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{START}/60"))]);

    // The trouble fires its alerts within 16 minutes of the test clock; every notification is
    // refused, and none waits in the outbox.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (last, queued) = progress(&state);
        if receiver.refused.lock().unwrap().len() >= 2 && queued == 0 && last >= Some(minutes_after_start(17)) {
            break;
        }
        assert!(Instant::now() < deadline, "the refused notifications were held:\n{}", s.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let refused = receiver.refused.lock().unwrap().clone();
    let keys: std::collections::BTreeSet<&str> = refused.iter().map(|r| r.idempotency_key.as_str()).collect();
    assert_eq!(keys.len(), refused.len(), "each refused notification was sent once, not tried again");
    let log = s.log();
    assert!(log.contains("refused: 400 Bad Request") && log.contains("it is dropped"), "{log}");
    assert!(!log.contains("failed, attempt"), "nothing was retried:\n{log}");

    let metrics = s.get("/metrics").body;
    let refused_total = metrics
        .lines()
        .find_map(|l| l.strip_prefix(r#"dumbmonit_notifications_failed_total{notifier="ops-hook",reason="refused"} "#))
        .and_then(|v| v.parse::<f64>().ok());
    assert!(refused_total.is_some_and(|n| n >= 2.0), "{metrics}");
    assert!(metrics.contains(r#"dumbmonit_notifications_failed_total{notifier="ops-hook",reason="error"} 0"#));
    let page = s.get("/").body;
    assert!(page.contains("ops-hook refused ") && page.contains(" notifications since 20"), "{page}");
    assert!(page.contains("invalid_payload"), "the receiver's answer is said: {page}");
    let monitor = s.get("/api/v1/monitor").json();
    assert_eq!(monitor["notifications_refused"].as_array().map(Vec::len), Some(1), "{monitor}");

    // The receiver takes notifications again; the cluster heals: the resolutions arrive, though
    // their firings were dropped, and the pages no longer speak of refusals.
    receiver.refuse.store(0, Ordering::SeqCst);
    h.sim.set_cluster(scenario::healthy(jiff::Timestamp::now()));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !receiver.bodies().iter().any(|b| b["status"] == "resolved") {
        assert!(Instant::now() < deadline, "no resolution came:\n{}", s.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    s.wait_for("/", "the refusal no longer said", |r| !r.body.contains("ops-hook refused"));
}
