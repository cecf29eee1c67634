//! Replicas sharing one state in a real PostgreSQL (Debian's, an unprivileged cluster in a
//! temporary directory): three `serve` processes split sixty simulated clusters with no
//! `--shard`, one is killed with SIGKILL and the others take its clusters over with their alert
//! state, and a webhook receiver counts every notification exactly once across the whole test,
//! including those the killed replica had queued.
//!
//! Each replica reads the clusters at its own simulator (three fleets with the same objects,
//! cluster `cN` at member N of each), so that the API servers' request logs say which replica
//! read which cluster.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::path;
use common::postgres::Postgres;
use common::receiver::Receiver;
use common::web::Served;
use dumbmonit_sim::{Sim, SimOptions, scenario};

const CLUSTERS: usize = 60;

fn wait_until(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !check() {
        assert!(Instant::now() < deadline, "waited in vain for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// How many requests each cluster of a fleet has served.
fn reads(fleet: &Sim) -> Vec<usize> {
    (0..fleet.members()).map(|i| fleet.member_requests(i).len()).collect()
}

/// Which replicas read each cluster between two counts.
fn readers(before: &[Vec<usize>], after: &[Vec<usize>]) -> Vec<Vec<usize>> {
    (0..before[0].len()).map(|i| (0..before.len()).filter(|&r| after[r][i] > before[r][i]).collect()).collect()
}

/// Which replicas read each cluster over `window`, watched again until `check` holds of it.
fn readers_until(
    fleets: &[Sim],
    window: Duration,
    what: &str,
    limit: Duration,
    check: impl Fn(&[Vec<usize>]) -> bool,
) -> Vec<Vec<usize>> {
    let mut found = Vec::new();
    wait_until(what, limit, || {
        let before: Vec<_> = fleets.iter().map(reads).collect();
        std::thread::sleep(window);
        let after: Vec<_> = fleets.iter().map(reads).collect();
        found = readers(&before, &after);
        check(&found)
    });
    found
}

/// How many notifications of each (cluster, status), and each cluster's alerts' startsAt.
type Told = (BTreeMap<(String, String), usize>, BTreeMap<String, Vec<String>>);

/// The node alerts' notifications received.
fn told(receiver: &Receiver) -> Told {
    let mut counts = BTreeMap::new();
    let mut starts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for body in receiver.bodies() {
        for a in body["alerts"].as_array().cloned().unwrap_or_default() {
            // An acknowledgement's notification is counted apart ([`acknowledged`]).
            if a["labels"]["alertname"] != "KubernetesNodeNotReady"
                || a["labels"]["cluster"] == "paged"
                || a["annotations"]["acknowledged_by"].is_string()
            {
                continue;
            }
            let cluster = a["labels"]["cluster"].as_str().unwrap_or("").to_string();
            let status = a["status"].as_str().unwrap_or("").to_string();
            *counts.entry((cluster.clone(), status)).or_default() += 1;
            starts.entry(cluster).or_default().push(a["startsAt"].as_str().unwrap_or("").to_string());
        }
    }
    (counts, starts)
}

fn config(dir: &Path, name: &str, pg: &Postgres, fleet: &Sim, webhook: &str) -> std::path::PathBuf {
    config_of(dir, name, pg, "replicas", fleet, CLUSTERS, webhook, "")
}

/// A replica's file: its `[state]` in `database`, `count` clusters of `fleet`, and `extra`.
#[allow(clippy::too_many_arguments)]
fn config_of(
    dir: &Path,
    name: &str,
    pg: &Postgres,
    database: &str,
    fleet: &Sim,
    count: usize,
    webhook: &str,
    extra: &str,
) -> std::path::PathBuf {
    let replica = dir.join(name);
    std::fs::create_dir_all(&replica).unwrap();
    std::fs::write(replica.join("token"), fleet.token()).unwrap();
    std::fs::write(replica.join("ca.crt"), fleet.ca_pem()).unwrap();
    let mut text = format!(
        "listen = \"127.0.0.1:0\"\nstate_dir = {:?}\n{extra}\n\n{}\n[[notifier]]\ntype = \"webhook\"\nurl = {webhook:?}\n\n\
         [[rule]]\nname = \"KubernetesNodeNotReady\"\nfor = \"2s\"\n\n",
        path(&replica.join("state")),
        pg.section(&replica, database, &format!("lease = \"3s\"\nreplica = {name:?}\npool = 4")),
    );
    for i in 0..count {
        text.push_str(&format!(
            "[[cluster]]\nname = \"c{i:02}\"\naddress = {:?}\ntoken_file = {:?}\nca_file = {:?}\ninterval = \"1s\"\n\n",
            fleet.member_url(i),
            path(&replica.join("token")),
            path(&replica.join("ca.crt")),
        ));
    }
    let file = replica.join("dumbmonit.toml");
    std::fs::write(&file, text).unwrap();
    file
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_split_sixty_clusters_and_a_killed_ones_are_taken_over_without_a_repeated_page() {
    let pg = Postgres::start();
    pg.database("replicas");
    let dir = tempfile::tempdir().unwrap();
    let now = jiff::Timestamp::now();
    let mut lost = scenario::healthy(now);
    scenario::node_lost(&mut lost, now);
    let mut fleets = Vec::new();
    for _ in 0..3 {
        fleets.push(Sim::start_fleet(SimOptions::default(), lost.clone(), CLUSTERS).await.unwrap());
    }
    let receiver = Receiver::start().await;
    let webhook = format!("{}/hook", receiver.url());
    let names = ["replica-a", "replica-b", "replica-c"];
    let mut replicas: Vec<Option<Served>> = names
        .iter()
        .zip(&fleets)
        .map(|(name, fleet)| Some(Served::start(&config(dir.path(), name, &pg, fleet, &webhook), &[])))
        .collect();

    // The share settles: each cluster read by exactly one replica over three seconds, twenty
    // each.
    readers_until(
        &fleets,
        Duration::from_secs(3),
        "the replicas to split the clusters",
        Duration::from_secs(60),
        |settled| (0..3).map(|r| settled.iter().filter(|w| w == &&vec![r]).count()).all(|n| n == 20),
    );
    // Every cluster's node alert told once, whichever replica read it when it fired.
    wait_until("sixty alerts told", Duration::from_secs(60), || told(&receiver).0.len() == CLUSTERS);

    // The pages of each replica say how many it reads.
    for (served, name) in replicas.iter().flatten().zip(names) {
        let log =
            served.wait_for_log("its share", |log| log.contains("this replica reads 20 of the 60 cluster(s) it knows"));
        // The outbox is shared: a webhook is told once, and nothing warns that replicas double it.
        assert!(!log.contains("would each send their own"), "{name} warns of doubles it does not send:\n{log}");
        let home = served.get("/").body;
        assert!(home.contains(name), "{name}'s pages name it:\n{home}");
    }

    // The receiver refuses for a while (503): the resolutions wait in the outbox, the first of
    // them claimed and retried by one replica (the others' wait behind it, in order), and that
    // replica is killed while it holds the claim.
    receiver.fail.store(true, Ordering::SeqCst);
    for fleet in &fleets {
        fleet.set_cluster(scenario::healthy(now));
    }
    let mut k = None;
    wait_until("a resolution refused", Duration::from_secs(30), || {
        k = replicas.iter().position(|r| r.as_ref().is_some_and(|r| r.log().contains("503")));
        k.is_some()
    });
    let k = k.expect("found above");
    // Every replica's resolutions are queued by then (each replica's twenty are in the outbox).
    wait_until("sixty resolutions queued", Duration::from_secs(30), || {
        pg.psql("replicas", "SELECT count(*) FROM outbox WHERE body LIKE '%\"resolved\"%'") == CLUSTERS.to_string()
    });
    let mut killed = replicas[k].take().unwrap();
    killed.child.kill().unwrap();
    killed.child.wait().unwrap();
    // Requests under way when it died are logged by the simulator as they end.
    std::thread::sleep(Duration::from_secs(1));
    let before_kill = reads(&fleets[k]);
    receiver.fail.store(false, Ordering::SeqCst);

    // Within a lease (3 s) and a renewal, the survivors read all sixty, and the killed one's
    // fleet sees no more reads.
    readers_until(
        &fleets,
        Duration::from_secs(2),
        "the survivors to take the killed replica's clusters",
        Duration::from_secs(30),
        |r| r.iter().all(|w| w.len() == 1 && w[0] != k),
    );
    assert_eq!(reads(&fleets[k]), before_kill, "nothing reads through the killed replica");

    // Every resolution told, by whichever replica: exactly once each, and never a firing again.
    wait_until("sixty resolutions told", Duration::from_secs(60), || {
        told(&receiver).0.keys().filter(|(_, s)| s == "resolved").count() == CLUSTERS
    });
    std::thread::sleep(Duration::from_secs(4));
    let (counts, starts) = told(&receiver);
    for i in 0..CLUSTERS {
        let c = format!("c{i:02}");
        assert_eq!(counts.get(&(c.clone(), "firing".into())), Some(&1), "{c} fired once: {counts:?}");
        assert_eq!(counts.get(&(c.clone(), "resolved".into())), Some(&1), "{c} resolved once: {counts:?}");
        let s = &starts[&c];
        assert!(s.iter().all(|x| x == &s[0]), "{c}: startsAt unchanged across replicas: {s:?}");
    }
    for fleet in &fleets {
        for i in 0..CLUSTERS {
            assert!(fleet.member_requests(i).iter().all(|r| r.method == "GET"), "only GET reaches an API server");
        }
    }
    drop(replicas);
    drop(killed);
}

/// The clusters whose node alert was told acknowledged, once per notification.
fn acknowledged(receiver: &Receiver) -> Vec<String> {
    receiver
        .bodies()
        .iter()
        .flat_map(|b| b["alerts"].as_array().cloned().unwrap_or_default())
        .filter(|a| a["annotations"]["acknowledged_by"].is_string())
        .map(|a| a["labels"]["cluster"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Which replica reads each cluster now (over two seconds), once each is read by exactly one.
fn settled_readers(fleets: &[Sim], each: usize) -> Vec<usize> {
    let r = readers_until(
        fleets,
        Duration::from_secs(2),
        "the replicas to split the clusters",
        Duration::from_secs(60),
        |r| r.iter().all(|w| w.len() == 1) && (0..fleets.len()).all(|k| r.iter().filter(|w| w[0] == k).count() == each),
    );
    r.iter().map(|w| w[0]).collect()
}

fn send(s: &Served, method: &str, path: &str, authorization: &str, body: &serde_json::Value) -> common::web::Response {
    common::web::request(
        s.addr,
        method,
        path,
        &[("Authorization", authorization), ("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_added_on_one_replica_is_read_by_the_other_and_what_is_made_on_one_quiets_the_other() {
    let pg = Postgres::start();
    pg.database("pages");
    let dir = tempfile::tempdir().unwrap();
    let now = jiff::Timestamp::now();
    let healthy = scenario::healthy(now);
    let fleets = [
        Sim::start_fleet(SimOptions::default(), healthy.clone(), 6).await.unwrap(),
        Sim::start_fleet(SimOptions::default(), healthy.clone(), 6).await.unwrap(),
    ];
    let receiver = Receiver::start().await;
    let webhook = format!("{}/hook", receiver.url());
    let admin_token = "admin-token-replicas-5b2e90c1";
    common::register_secret(admin_token);
    let admin = format!("Bearer {admin_token}");
    // Every replica seals and unseals the pages' tokens with the same key.
    let key = dir.path().join("secret.key");
    let extra = format!("secret_key_file = {:?}\n[auth.admin]\nbearer_token = {admin_token:?}\n", path(&key));
    let names = ["replica-a", "replica-b"];
    let a = Served::start(&config_of(dir.path(), names[0], &pg, "pages", &fleets[0], 6, &webhook, &extra), &[]);
    let b = Served::start(&config_of(dir.path(), names[1], &pg, "pages", &fleets[1], 6, &webhook, &extra), &[]);
    let owner = settled_readers(&fleets, 3);
    let of_a: Vec<String> = (0..6).filter(|i| owner[*i] == 0).map(|i| format!("c{i:02}")).collect();

    // A cluster added on a's pages (its form, its CSRF token) is known to b, and read by one.
    let paged = common::Harness::start(healthy.clone()).await;
    let form = common::web::request(a.addr, "GET", "/clusters/new", &[("Authorization", admin.as_str())], b"");
    assert_eq!(form.status, 200, "{}", form.body);
    let cookie = form.header("set-cookie").unwrap().split(';').next().unwrap().to_string();
    let at = form.body.find("name=\"csrf\" value=\"").unwrap() + "name=\"csrf\" value=\"".len();
    let csrf = form.body[at..].split('"').next().unwrap().to_string();
    let (url, ca, token) = (paged.sim.url(), paged.sim.ca_pem().to_string(), paged.sim.token().to_string());
    let mut fields = form_urlencoded::Serializer::new(String::new());
    for (k, v) in [
        ("csrf", csrf.as_str()),
        ("action", "save"),
        ("name", "paged"),
        ("address", url.as_str()),
        ("ca", ca.as_str()),
        ("token", token.as_str()),
        ("interval", "1s"),
    ] {
        fields.append_pair(k, v);
    }
    let origin = format!("http://{}", a.addr);
    let saved = common::web::request(
        a.addr,
        "POST",
        "/clusters/new",
        &[
            ("Authorization", admin.as_str()),
            ("Cookie", cookie.as_str()),
            ("Origin", origin.as_str()),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        fields.finish().as_bytes(),
    );
    assert_eq!(saved.status, 303, "{}", saved.body);
    wait_until("the added cluster read", Duration::from_secs(30), || !paged.sim.requests().is_empty());
    for s in [&a, &b] {
        s.wait_for("/", "the added cluster on every replica's pages", |r| r.body.contains("/clusters/paged"));
    }

    // On b: a silence of one of a's clusters, and a maintenance window of the other.
    let end = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1)).to_string();
    let silence = serde_json::json!({
        "matchers": [{"name": "cluster", "value": of_a[0], "isRegex": false, "isEqual": true}],
        "endsAt": end, "comment": "made on b"
    });
    let made = send(&b, "POST", "/api/v1/silences", &admin, &silence);
    assert_eq!(made.status, 200, "{}", made.body);
    let window = serde_json::json!({"cluster": of_a[1], "startsAt": jiff::Timestamp::now().to_string(), "endsAt": end, "comment": "made on b"});
    let made = send(&b, "POST", "/api/v1/maintenance", &admin, &window);
    assert_eq!(made.status, 200, "{}", made.body);
    // a learns of both at its next renewal (a third of a lease).
    a.wait_for("/api/v1/silences", "b's silence on a", |r| r.body.contains("made on b"));
    a.wait_for("/api/v1/maintenance", "b's window on a", |r| r.body.contains("made on b"));

    // Every node is lost: b's three clusters and a's third are told, a's first two are not
    // (silenced, in maintenance).
    let mut lost = healthy.clone();
    scenario::node_lost(&mut lost, now);
    for fleet in &fleets {
        fleet.set_cluster(lost.clone());
    }
    wait_until("b's clusters and a's third told", Duration::from_secs(30), || {
        told(&receiver).0.keys().filter(|(c, s)| s == "firing" && c != &of_a[0] && c != &of_a[1]).count() == 4
    });
    for c in &of_a {
        a.wait_for(&format!("/api/v1/clusters/{c}"), "the node alert firing on a", |r| {
            r.body.contains("KubernetesNodeNotReady") && r.body.contains("\"firing\"")
        });
    }

    // a's third alert acknowledged on b: told once, and held by a's cycles.
    let print = alerts(&a, &of_a[2])[0]["fingerprint"].as_str().unwrap().to_string();
    let ack = serde_json::json!({"comment": "on it, from b"});
    let made = send(&b, "POST", &format!("/api/v1/alerts/{print}/ack"), &admin, &ack);
    assert_eq!(made.status, 200, "{}", made.body);
    a.wait_for(&format!("/api/v1/clusters/{}", of_a[2]), "b's acknowledgement held by a", |r| {
        r.body.contains("on it, from b")
    });
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(acknowledged(&receiver), [of_a[2].clone()], "the acknowledgement told once");
    let (counts, _) = told(&receiver);
    assert!(of_a[..2].iter().all(|c| !counts.keys().any(|(k, _)| k == c)), "a's quieted clusters: {counts:?}");
    assert!(counts.values().all(|n| *n == 1) && counts.len() == 4, "each told once: {counts:?}");

    // A third replica with another secret key cannot unseal the added cluster's token: it does
    // not start, and says why.
    let other_key = format!("secret_key_file = {:?}\n", path(&dir.path().join("another.key")));
    let third = config_of(dir.path(), "replica-c", &pg, "pages", &fleets[0], 6, &webhook, &other_key);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
        .args(["serve", "--config", &path(&third)])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(
        said.contains("cannot unseal the tokens of 1 cluster(s) added on the pages (paged)")
            && said.contains("every replica sharing the state needs the same secret_key_file"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_away_for_a_minute_loses_and_doubles_nothing() {
    let mut pg = Postgres::start();
    pg.database("away");
    let dir = tempfile::tempdir().unwrap();
    let now = jiff::Timestamp::now();
    let healthy = scenario::healthy(now);
    let fleets = [
        Sim::start_fleet(SimOptions::default(), healthy.clone(), 4).await.unwrap(),
        Sim::start_fleet(SimOptions::default(), healthy.clone(), 4).await.unwrap(),
    ];
    let receiver = Receiver::start().await;
    let webhook = format!("{}/hook", receiver.url());
    let replicas = [
        Served::start(&config_of(dir.path(), "replica-a", &pg, "away", &fleets[0], 4, &webhook, ""), &[]),
        Served::start(&config_of(dir.path(), "replica-b", &pg, "away", &fleets[1], 4, &webhook, ""), &[]),
    ];
    let owner = settled_readers(&fleets, 2);

    // The database stops: each replica says so in red, and reads on what it owns.
    pg.stop();
    let stopped = Instant::now();
    let red = "The shared state cannot be reached";
    for s in &replicas {
        s.wait_for("/", "the red line", |r| r.body.contains(red));
    }
    let mut lost = healthy.clone();
    scenario::node_lost(&mut lost, now);
    for fleet in &fleets {
        fleet.set_cluster(lost.clone());
    }
    for (i, reader) in owner.iter().enumerate() {
        replicas[*reader].wait_for(&format!("/api/v1/clusters/c{i:02}"), "the node alert firing", |r| {
            r.body.contains("KubernetesNodeNotReady") && r.body.contains("\"firing\"")
        });
    }
    assert!(told(&receiver).0.is_empty(), "nothing can be queued while the database is away");
    let before: Vec<_> = fleets.iter().map(reads).collect();
    std::thread::sleep(Duration::from_secs(60).saturating_sub(stopped.elapsed()));
    let after: Vec<_> = fleets.iter().map(reads).collect();
    let during = readers(&before, &after);
    assert!(
        during.iter().enumerate().all(|(i, w)| w == &vec![owner[i]]),
        "each replica read on what it owned, and only that: {during:?}"
    );

    // Back: the red line goes, each firing is told once, and each cluster stays with its owner.
    pg.resume();
    for s in &replicas {
        s.wait_for("/", "the red line gone", |r| !r.body.contains(red));
    }
    wait_until("four firings told", Duration::from_secs(30), || told(&receiver).0.len() == 4);
    std::thread::sleep(Duration::from_secs(4));
    let (counts, _) = told(&receiver);
    assert!(counts.values().all(|n| *n == 1) && counts.len() == 4, "each told once: {counts:?}");
    assert_eq!(settled_readers(&fleets, 2), owner, "ownership taken back as it was");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_with_different_files_each_read_their_own_and_the_pages_say_who_knows_what() {
    let pg = Postgres::start();
    pg.database("files");
    let dir = tempfile::tempdir().unwrap();
    let healthy = scenario::healthy(jiff::Timestamp::now());
    let fleets = [
        Sim::start_fleet(SimOptions::default(), healthy.clone(), 5).await.unwrap(),
        Sim::start_fleet(SimOptions::default(), healthy.clone(), 5).await.unwrap(),
    ];
    let receiver = Receiver::start().await;
    let webhook = format!("{}/hook", receiver.url());
    // a's file has c00 to c04, b's c00 to c03: a starts alone and takes all five, then shares
    // the four common ones with b, and keeps c04, which b cannot read.
    let a = Served::start(&config_of(dir.path(), "replica-a", &pg, "files", &fleets[0], 5, &webhook, ""), &[]);
    a.wait_for("/", "a alone reading its five clusters", |r| r.body.contains("reads 5 of the 5 clusters"));
    let b = Served::start(&config_of(dir.path(), "replica-b", &pg, "files", &fleets[1], 4, &webhook, ""), &[]);
    readers_until(
        &fleets,
        Duration::from_secs(2),
        "every cluster read by one replica, c04 by a",
        Duration::from_secs(60),
        |r| r.iter().all(|w| w.len() == 1) && r[4] == [0] && r[..4].iter().any(|w| w == &[1]),
    );

    // b's pages say that c04 is known to a only, and link it to a's pages; a's say nothing of
    // the kind (b knows no cluster that a does not).
    let page = b.wait_for("/", "c04 known only to a", |r| r.body.contains("c04 (replica-a)"));
    assert!(page.body.contains("Known only to other replicas"), "{}", page.body);
    assert!(page.body.contains(&format!("http://{}/clusters/c04", a.addr)), "{}", page.body);
    let page = a.get("/");
    assert!(!page.body.contains("Known only to other replicas"), "{}", page.body);
    assert!(page.body.contains("replica-b reads"), "{}", page.body);
}

/// The alerts of a cluster, as the API gives them.
fn alerts(s: &Served, cluster: &str) -> Vec<serde_json::Value> {
    s.get(&format!("/api/v1/clusters/{cluster}")).json()["alerts"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_migrate_carries_a_sqlite_state_and_the_migrated_replica_keeps_its_pending_timer() {
    let pg = Postgres::start();
    let url = pg.database("migrated");
    let now = jiff::Timestamp::now();
    let mut lost = scenario::healthy(now);
    scenario::node_lost(&mut lost, now);
    let h = common::Harness::start(lost).await;
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let notifier = format!(
        "[[notifier]]\ntype = \"webhook\"\nurl = \"{}/hook\"\n\n[[rule]]\nname = \"KubernetesNodeNotReady\"\nfor = \"15s\"\n",
        receiver.url()
    );
    let sqlite = common::web::write_config(dir.path(), &notifier, &[("lab", &h, "1s")]);
    let served = Served::start(&sqlite, &[]);
    let pending = served.wait_for("/api/v1/clusters/lab", "the node alert pending", |r| {
        r.json()["alerts"].as_array().is_some_and(|a| a.iter().any(|a| a["state"] == "pending"))
    });
    let active_at = pending.json()["alerts"][0]["active_at"].as_str().unwrap().to_string();
    drop(served);

    let password = dir.path().join("pg-password");
    std::fs::write(&password, common::postgres::PASSWORD).unwrap();
    let migrate = |extra: &[&str]| {
        let mut args = vec!["state", "migrate", "--from"];
        let from = path(&dir.path().join("state"));
        let password = path(&password);
        args.extend([
            from.as_str(),
            "--to",
            url.as_str(),
            "--password-file",
            password.as_str(),
            "--sslmode",
            "disable",
        ]);
        args.extend(extra);
        std::process::Command::new(env!("CARGO_BIN_EXE_dumbmonit")).args(&args).output().unwrap()
    };
    let carried = migrate(&[]);
    let said = String::from_utf8_lossy(&carried.stdout);
    assert!(carried.status.success(), "{said}{}", String::from_utf8_lossy(&carried.stderr));
    assert!(said.contains("clusters 1") && said.contains("alerts 1"), "{said}");
    let again = migrate(&[]);
    let error = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(3), "{error}");
    assert!(error.contains("already holds a state") && error.contains("--force"), "{error}");
    assert!(migrate(&["--force"]).status.success(), "told, it replaces");

    // The same cluster, now in PostgreSQL: the alert is still pending from the same moment, and
    // fires 15 s after it, told once with that start.
    let shared = dir.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let section = pg.section(&shared, "migrated", "replica = \"only\"");
    let config = common::web::write_config(&shared, &format!("{notifier}\n{section}"), &[("lab", &h, "1s")]);
    let replica = Served::start(&config, &[]);
    let first = replica.wait_for("/api/v1/clusters/lab", "the migrated alert", |r| {
        r.json()["alerts"].as_array().is_some_and(|a| !a.is_empty())
    });
    assert_eq!(first.json()["alerts"][0]["active_at"], active_at.as_str(), "its timer went on");
    wait_until("the node alert told", Duration::from_secs(40), || !told(&receiver).0.is_empty());
    let (counts, starts) = told(&receiver);
    assert_eq!(counts.values().sum::<usize>(), 1, "{counts:?}");
    // Fired 15 s after the moment it became pending in SQLite (not after the move).
    let fired: jiff::Timestamp = starts["lab"][0].parse().unwrap();
    let held = fired.duration_since(active_at.parse().unwrap()).as_secs_f64();
    assert!((15.0..18.0).contains(&held), "fired {held} s after it became pending");
    assert!(alerts(&replica, "lab").iter().all(|a| a["active_at"] == active_at.as_str()));
}

/// `serve` with this `[state]` section; its exit status and what it said (it is stopped if it
/// starts).
fn start_with(dir: &Path, section: &str) -> (Option<i32>, String) {
    let config = dir.join("bad.toml");
    std::fs::write(
        &config,
        format!("listen = \"127.0.0.1:0\"\nstate_dir = {:?}\n{section}\n", path(&dir.join("state"))),
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
        .args(["serve", "--config", &path(&config)])
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(dir.join("bad.log")).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code(), std::fs::read_to_string(dir.join("bad.log")).unwrap());
        }
        let log = std::fs::read_to_string(dir.join("bad.log")).unwrap_or_default();
        if log.contains("pages on http://") && Instant::now() + Duration::from_secs(17) < deadline {
            // Started: given a moment to say what it has to.
        }
        if log.contains("pages on http://") && log.contains("shared state") || Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return (None, log);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn bad_state_settings_and_servers_are_refused_at_start_naming_the_setting() {
    let pg = Postgres::start();
    pg.database("refusing");
    pg.database("newer");
    pg.psql("postgres", "CREATE ROLE viewer LOGIN PASSWORD 'viewer-password-81'");
    common::register_secret("viewer-password-81");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("password"), common::postgres::PASSWORD).unwrap();
    std::fs::write(d.join("viewer"), "viewer-password-81\n").unwrap();
    let password = path(&d.join("password"));
    let port = pg.port;
    let closed = common::free_port();
    let not_postgres = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let not_postgres_port = not_postgres.local_addr().unwrap().port();
    // An HTTP server where PostgreSQL was expected: it reads what it is sent, answers HTTP, and
    // closes only after the client (so that the client reads the answer, not a reset).
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in not_postgres.incoming().flatten() {
            let mut stream = stream;
            let mut first = [0u8; 512];
            let _ = stream.read(&mut first);
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
            let _ = stream.shutdown(std::net::Shutdown::Write);
            let _ = stream.read_to_end(&mut Vec::new());
        }
    });
    let section = |url: &str, extra: &str| format!("[state]\nurl = {url:?}\nsslmode = \"disable\"\n{extra}");
    let with_password = format!("password_file = {password:?}");
    for (state, said) in [
        (section("postgres://postgres:secret@127.0.0.1/x", ""), "state: field `url`: carries a password"),
        (section("http://127.0.0.1/x", ""), "state: field `url`: must be a postgres:// URL"),
        (
            section(&format!("postgres://postgres@127.0.0.1:{port}/refusing"), "password_file = \"/nonexistent/pw\""),
            "state: field `password_file` /nonexistent/pw",
        ),
        (
            format!("[state]\nurl = \"postgres://postgres@127.0.0.1:{port}/refusing\"\nsslmode = \"allow\""),
            "unknown variant `allow`, expected one of `disable`, `prefer`, `require`, `verify-ca`, `verify-full`",
        ),
        (
            section(
                &format!("postgres://postgres@127.0.0.1:{port}/refusing"),
                &format!("password_file = {:?}", path(&d.join("viewer"))),
            ),
            "password authentication failed",
        ),
        (
            section(
                &format!("postgres://viewer@127.0.0.1:{port}/refusing"),
                &format!("password_file = {:?}", path(&d.join("viewer"))),
            ),
            "permission denied",
        ),
        (
            section(&format!("postgres://postgres@127.0.0.1:{not_postgres_port}/x"), &with_password),
            "[state]: postgres://postgres@127.0.0.1",
        ),
    ] {
        let (code, log) = start_with(d, &state);
        assert_eq!(code, Some(3), "{state}\n{log}");
        assert!(log.contains(said), "{state}: wanted {said:?} in:\n{log}");
        assert!(!log.contains(common::postgres::PASSWORD) && !log.contains("viewer-password-81"), "{log}");
    }
    // --shard (or shard) with a shared state.
    let (code, log) = start_with(
        d,
        &format!(
            "shard = \"0/2\"\n{}",
            section(&format!("postgres://postgres@127.0.0.1:{port}/refusing"), &with_password)
        ),
    );
    assert_eq!(code, Some(3), "{log}");
    assert!(log.contains("replicas sharing [state] split them themselves"), "{log}");
    // A schema from a newer DumbMonit: both versions named.
    let (code, _) = start_with(d, &section(&format!("postgres://postgres@127.0.0.1:{port}/newer"), &with_password));
    assert_eq!(code, None, "a new database is taken");
    pg.psql("newer", "UPDATE schema_version SET version = 7");
    let (code, log) = start_with(d, &section(&format!("postgres://postgres@127.0.0.1:{port}/newer"), &with_password));
    assert_eq!(code, Some(3), "{log}");
    assert!(log.contains("schema is version 7, newer than this DumbMonit knows (version 3)"), "{log}");
    // A server that cannot be reached (yet): serve starts, and says why on its pages.
    let (code, log) = start_with(d, &section(&format!("postgres://postgres@127.0.0.1:{closed}/x"), &with_password));
    assert_eq!(code, None, "{log}");
    assert!(log.contains("the shared state cannot be reached"), "{log}");
}
