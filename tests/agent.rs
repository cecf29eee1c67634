//! The relay agent: `serve` over TLS taking cycles pushed by `dumbmonit agent`, both real
//! processes, the agent reading the simulated API server.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::agent::{AGENT_TOKEN, Agent, START, Site, server_url, wait_until};
use common::web::{Served, request_tls};
use common::{Harness, path, register_secret};
use dumbmonit::wire;
use dumbmonit_sim::{Faults, scenario};
use serde_json::Value;

/// `text` with the cluster's name changed, and the lines that speak of the agent left out.
fn neutral(text: &str, name: &str) -> String {
    // An alert's fingerprint is of its labels, the cluster's name among them.
    let fingerprints = regex::Regex::new("/alerts/[0-9a-f]{16}/ack").unwrap();
    fingerprints
        .replace_all(text, "/alerts/FINGERPRINT/ack")
        .replace(&format!("/clusters/{name}"), "/clusters/NAME")
        // The footer's language links come back to the page: its path, encoded.
        .replace(&format!("%2Fclusters%2F{name}"), "%2Fclusters%2FNAME")
        .replace(&format!("cluster%3D%22{name}%22"), "cluster%3D%22NAME%22")
        .replace(&format!("cluster=\"{name}\""), "cluster=\"NAME\"")
        .replace(&format!(">{name}<"), ">NAME<")
        .replace(&format!("<title>{name} "), "<title>NAME ")
        .lines()
        .map(without_agent_lines)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A page line without the paragraphs that speak of the agent.
fn without_agent_lines(line: &str) -> String {
    let mut out = line.to_string();
    for class in ["<p class=\"muted agent\">", "<p class=\"stale agent\">"] {
        while let Some(start) = out.find(class) {
            let end = out[start..].find("</p>").map(|e| start + e + "</p>".len()).unwrap_or(out.len());
            out.replace_range(start..end, "");
        }
    }
    out
}

/// Equal texts, or the first place where they differ.
fn same(a: &str, b: &str, what: &str) {
    if a != b {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let at = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        let part = |t: &[char]| t[at.saturating_sub(200)..(at + 200).min(t.len())].iter().collect::<String>();
        panic!("{what} differ at character {at}:\n{}\n---\n{}", part(&a), part(&b));
    }
}

fn object_series(metrics: &str, name: &str) -> Vec<String> {
    let mut lines: Vec<String> = metrics
        .lines()
        // Durations are the only series that differ from one read to the next.
        .filter(|l| l.starts_with("dumbmonit_k8s_") && !l.contains("_duration_seconds"))
        .filter(|l| l.contains(&format!("cluster=\"{name}\"")))
        .map(|l| neutral(l, name))
        .collect();
    lines.sort();
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_read_through_the_agent_is_the_cluster_read_directly() {
    let now: jiff::Timestamp = START.parse().unwrap();
    let h = Harness::start(scenario::trouble(now)).await;
    let direct = format!(
        "[[cluster]]\nname = \"direct\"\naddress = {:?}\ntoken_file = {:?}\nca_file = {:?}\ninterval = \"2s\"\n",
        h.sim.url(),
        path(&h.token_file),
        path(&h.ca_file)
    );
    // Two seconds: the server says "no report" after two intervals without one, which a loaded
    // machine reached at 0.3 s (0.6 s without a report) while the pages were compared.
    let site = Site::new("interval = \"2s\"", &direct);
    // The same time for every cycle on both sides: what each shows must be the same, to the byte.
    let clock = [("DUMBMONIT_TEST_CLOCK", &*format!("{START}/0"))];
    let s = site.serve(&clock);
    let agent = Agent::start(&site, &h, &server_url(&s), &["--listen", "127.0.0.1:0"], &clock);
    let taken = |n: &str| s.get(&format!("/api/v1/clusters/{n}")).json()["last_good_cycle"].is_string();
    wait_until("both clusters read", || taken("edge") && taken("direct"), || format!("{}\n{}", s.log(), agent.log()));

    let edge = s.get("/api/v1/clusters/edge").json();
    let mut a = edge.clone();
    let mut b = s.get("/api/v1/clusters/direct").json();
    assert!(a["agent"]["last_report"].is_string(), "{a}");
    assert!(b["agent"].is_null());
    for doc in [&mut a, &mut b] {
        doc["name"] = Value::Null;
        doc["agent"] = Value::Null;
        for alert in doc["alerts"].as_array_mut().unwrap() {
            alert["fingerprint"] = Value::Null;
        }
    }
    let (a, b) = (a.to_string().replace("\"edge\"", "\"NAME\""), b.to_string().replace("\"direct\"", "\"NAME\""));
    same(&a, &b, "the API's view of both");
    assert_eq!(edge["address"], h.sim.url(), "the API server the agent reads");
    assert_eq!(edge["status"], "critical");

    let metrics = s.get("/metrics").body;
    let (m_edge, m_direct) = (object_series(&metrics, "edge"), object_series(&metrics, "direct"));
    assert!(m_edge.len() > 20, "{m_edge:?}");
    same(&m_edge.join("\n"), &m_direct.join("\n"), "the object series of both");
    assert!(metrics.contains("dumbmonit_k8s_up{cluster=\"edge\"} 1"), "{metrics}");

    let page_edge = s.get("/clusters/edge").body;
    assert!(page_edge.contains("Read through its agent"), "{page_edge}");
    same(&neutral(&page_edge, "edge"), &neutral(&s.get("/clusters/direct").body, "direct"), "the pages");

    let alerts = s.get("/api/v1/alerts").json();
    let of = |name: &str| {
        let mut v: Vec<String> = alerts
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["cluster"] == name)
            .map(|x| {
                let mut x = x.clone();
                x["fingerprint"] = Value::Null;
                neutral(&x.to_string(), name).replace(&format!("\"{name}\""), "\"NAME\"")
            })
            .collect();
        v.sort();
        v
    };
    assert!(!of("edge").is_empty());
    assert_eq!(of("edge"), of("direct"), "the alerts");
    assert!(agent.log().contains(&format!("reporting to {}", server_url(&s))), "{}", agent.log());
    h.assert_only_reads();
}

/// The cycle times the server kept a history point for, oldest first.
fn history(state: &Path, cluster: &str) -> Vec<jiff::Timestamp> {
    let db = rusqlite::Connection::open(state.join("dumbmonit.db")).unwrap();
    let mut q = db.prepare("SELECT time FROM history WHERE cluster = ?1 ORDER BY rowid").unwrap();
    q.query_map([cluster], |r| r.get::<_, i64>(0))
        .unwrap()
        .map(|t| jiff::Timestamp::from_second(t.unwrap()).unwrap())
        .collect()
}

fn minutes(m: i64) -> jiff::Timestamp {
    START.parse::<jiff::Timestamp>().unwrap() + jiff::SignedDuration::from_mins(m)
}

/// The last cycle the server took from the agent (not a "no report" one).
fn last_good(s: &Served, name: &str) -> Option<jiff::Timestamp> {
    s.get(&format!("/api/v1/clusters/{name}")).json()["last_good_cycle"].as_str().map(|t| t.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_cycles_arrive_in_order_once_and_alerts_keep_the_agents_times() {
    let h = Harness::start(scenario::trouble(minutes(0))).await;
    let receiver = common::receiver::Receiver::start().await;
    let site =
        Site::new("interval = \"0.2s\"", &format!("[[notifier]]\ntype = \"webhook\"\nurl = {:?}\n", receiver.url()));
    let buffer = h.dir.path().join("buffer");
    let s = site.serve(&[]);
    // One minute of the agent's clock per cycle.
    let clock = [("DUMBMONIT_TEST_CLOCK", &*format!("{START}/60"))];
    let agent = Agent::start(&site, &h, &server_url(&s), &["--buffer-dir", &path(&buffer)], &clock);
    wait_until("minute 2 taken", || last_good(&s, "edge").is_some_and(|t| t >= minutes(2)), || agent.log());
    let port = s.addr.port();
    drop(s);

    // The server is away while the node's alert comes due (minute 5): the agent keeps cycles.
    let kept = || {
        std::fs::read_dir(&buffer)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("cycle-"))
            .count()
    };
    wait_until("eight cycles kept", || kept() >= 8, || agent.log());
    let text = std::fs::read_to_string(&site.config).unwrap();
    std::fs::write(&site.config, text.replace("listen = \"127.0.0.1:0\"", &format!("listen = \"127.0.0.1:{port}\"")))
        .unwrap();
    let s = site.serve(&[]);
    wait_until(
        "minute 14 taken",
        || last_good(&s, "edge").is_some_and(|t| t >= minutes(14)),
        || format!("{}\n{}", s.log(), agent.log()),
    );
    // The agent's clock runs on test time, hours behind: the page says so.
    let page = s.get("/clusters/edge").body;
    assert!(page.contains("The agent's clock is") && page.contains("behind the server's"), "{page}");
    drop(agent);
    drop(s);

    let times = history(&site.dir.path().join("state"), "edge");
    assert!(times.len() >= 15, "{times:?}");
    let expected: Vec<jiff::Timestamp> = (0..times.len() as i64).map(minutes).collect();
    assert_eq!(times, expected, "every cycle once, in order, at the agent's times");

    let fired: Vec<Value> = receiver
        .bodies()
        .into_iter()
        .filter(|b| b["status"] == "firing" && b["alerts"][0]["labels"]["alertname"] == "KubernetesNodeNotReady")
        .collect();
    assert_eq!(fired.len(), 1, "fired once: {fired:?}");
    let alert = &fired[0]["alerts"][0];
    assert_eq!(
        alert["startsAt"],
        minutes(5).to_string(),
        "due five minutes of the agent's clock after the first cycle"
    );
    let description = alert["annotations"]["description"].as_str().unwrap();
    assert!(description.contains("Reported late: this happened at 2026-11-30T03:05:00Z"), "{description}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_is_refused_said_once_and_the_cycles_wait() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let site = Site::new("interval = \"0.2s\"", "");
    let s = site.serve(&[]);
    let good = std::fs::read_to_string(&site.token_file).unwrap();
    std::fs::write(&site.token_file, "agent-token-of-another-cluster-0000\n").unwrap();
    register_secret("agent-token-of-another-cluster-0000");
    let agent = Agent::start(&site, &h, &server_url(&s), &[], &[]);
    wait_until("refusals", || s.log().matches("agent request refused (401)").count() >= 4, || s.log());
    let said = agent.log().matches("refused the agent token (401)").count();
    assert_eq!(said, 1, "said once, not at every try: {}", agent.log());
    assert!(agent.log().contains("Check --agent-token-file"), "{}", agent.log());
    assert!(s.get("/api/v1/clusters/edge").json()["last_good_cycle"].is_null(), "nothing stored");
    assert!(s.log().contains("the agent token is not the one of any agent's cluster"), "{}", s.log());

    // Meanwhile the server says no report came, and the unreachable alert fires.
    let unreachable = || {
        s.get("/api/v1/alerts").json().as_array().unwrap().iter().any(|a| {
            a["cluster"] == "edge" && a["alertname"] == "KubernetesMonitorUnreachable" && a["state"] == "firing"
        })
    };
    wait_until("the unreachable alert", unreachable, || s.log());

    // The right token: the kept cycles go, the first first. They come from inside the stretch
    // the server filled with "no report": it goes back before it, takes them in order, and
    // resolves what it raised meanwhile.
    std::fs::write(&site.token_file, good).unwrap();
    wait_until("taken", || s.get("/api/v1/clusters/edge").json()["last_good_cycle"].is_string(), || agent.log());
    // The agent says so once the server's answer is back, which may be after the page shows it.
    wait_until("the agent's line", || agent.log().contains("takes the reports again"), || agent.log());
    wait_until("the unreachable alert resolved", || !unreachable(), || s.log());
    assert!(s.log().contains("the agent's kept cycles arrive"), "{}", s.log());
    assert!(s.log().contains("cluster edge: resolved KubernetesMonitorUnreachable"), "{}", s.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_stops_and_an_api_server_that_fails_are_told_apart() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let site = Site::new("interval = \"1s\"", "");
    let s = site.serve(&[]);
    let mut agent = Agent::start(&site, &h, &server_url(&s), &["--listen", "127.0.0.1:0"], &[]);
    wait_until("taken", || s.get("/api/v1/clusters/edge").json()["status"] == "ok", || agent.log());

    // What a push weighs once the server holds the last snapshot: only what changed.
    let healthz = || agent.probe("/healthz").body;
    wait_until("a push of the difference", || healthz().contains("(the difference from the last)"), healthz);
    let bytes: usize = healthz().split("last push ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(bytes < 1500, "an unchanged cluster costs little: {bytes} bytes\n{}", healthz());

    // The API server fails behind the agent: the agent says so.
    h.sim.set_faults(Faults { fail_status: Some(503), ..Default::default() });
    let doc = s.wait_for("/api/v1/clusters/edge", "the agent's error", |r| {
        r.json()["error"].as_str().is_some_and(|e| e.starts_with("The agent reports: ") && e.contains(&h.sim.url()))
    });
    assert!(doc.json()["error"].as_str().unwrap().contains("503"), "{}", doc.body);
    let page = s.get("/clusters/edge").body;
    assert!(page.contains("The agent reports: "), "{page}");
    h.sim.set_faults(Faults::default());
    s.wait_for("/api/v1/clusters/edge", "recovery", |r| r.json()["status"] == "ok");

    // The agent stops: after two intervals, the page says no report came.
    agent.child.kill().unwrap();
    let doc =
        s.wait_for("/api/v1/clusters/edge", "no report", |r| r.json()["error"] == "No report from the agent for 2 s");
    assert_eq!(doc.json()["status"], "unreachable");
    assert!(s.get("/clusters/edge").body.contains("No report from the agent for 2 s"));
    s.wait_for("/api/v1/alerts", "the unreachable alert", |r| {
        r.json().as_array().unwrap().iter().any(|a| {
            a["cluster"] == "edge"
                && a["alertname"] == "KubernetesMonitorUnreachable"
                && a["description"].as_str().is_some_and(|d| d.contains("No report from the agent"))
        })
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_token_file_is_read_at_the_next_cycle() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let site = Site::new("interval = \"0.3s\"", "");
    let s = site.serve(&[]);
    let agent = Agent::start(&site, &h, &server_url(&s), &[], &[]);
    wait_until("taken", || s.get("/api/v1/clusters/edge").json()["status"] == "ok", || agent.log());
    let rotated = "sim-token-rotated-4d2c8e6f1a3b5d7e";
    register_secret(rotated);
    h.sim.rotate_token(rotated);
    s.wait_for("/api/v1/clusters/edge", "the old token refused", |r| {
        r.json()["error"].as_str().is_some_and(|e| e.contains("401"))
    });
    // kubelet writes the new token: the next cycle uses it, no restart.
    std::fs::write(&h.token_file, format!("{rotated}\n")).unwrap();
    s.wait_for("/api/v1/clusters/edge", "the new token used", |r| r.json()["status"] == "ok");
    assert!(agent.child.id() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_buffer_directory_that_cannot_be_written_is_said_and_cycles_go_on() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let site = Site::new("interval = \"0.3s\"", "");
    let s = site.serve(&[]);
    let agent = Agent::start(
        &site,
        &h,
        &server_url(&s),
        &["--buffer-dir", "/proc/dumbmonit-buffer", "--listen", "127.0.0.1:0"],
        &[],
    );
    let page =
        s.wait_for("/clusters/edge", "the agent's note", |r| r.body.contains("The agent says: the buffer directory"));
    assert!(page.body.contains("cycles are kept in memory only"), "{}", page.body);
    assert_eq!(s.get("/api/v1/clusters/edge").json()["status"], "ok");
    let healthz = agent.probe("/healthz");
    assert_eq!(healthz.status, 200);
    assert!(healthz.body.contains("cannot be written"), "{}", healthz.body);
}

/// Debian's tinyproxy on loopback, killed when dropped; its log tells what went through.
struct Proxy {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Proxy {
    fn start() -> Proxy {
        let dir = tempfile::tempdir().unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let log = dir.path().join("tinyproxy.log");
        let conf = dir.path().join("tinyproxy.conf");
        std::fs::write(
            &conf,
            format!(
                "Port {port}\nListen 127.0.0.1\nTimeout 60\nLogFile \"{}\"\nLogLevel Connect\nMaxClients 20\nAllow 127.0.0.1\n",
                path(&log)
            ),
        )
        .unwrap();
        let child = Command::new("tinyproxy")
            .args(["-d", "-c", &path(&conf)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tinyproxy is needed: install the Debian package `tinyproxy` (scripts/test.sh does)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "tinyproxy did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Proxy { child, port, log, _dir: dir }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_reaches_the_server_through_a_proxy() {
    let proxy = Proxy::start();
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let site = Site::new("interval = \"0.3s\"", "");
    let s = site.serve(&[]);
    let proxy_url = format!("http://127.0.0.1:{}", proxy.port);
    // The API server is reached directly; only the server is behind the proxy.
    let env = [("HTTPS_PROXY", proxy_url.as_str()), ("NO_PROXY", h.sim.addr().ip().to_string().leak() as &str)];
    let server = format!("https://localhost:{}", s.addr.port());
    let agent = Agent::start(&site, &h, &server, &[], &env);
    wait_until("taken through the proxy", || s.get("/api/v1/clusters/edge").json()["status"] == "ok", || agent.log());
    assert!(agent.log().contains(&format!("reporting to {server} through the proxy {proxy_url}")), "{}", agent.log());
    let log = std::fs::read_to_string(&proxy.log).unwrap_or_default();
    assert!(log.contains(&format!("CONNECT localhost:{}", s.addr.port())), "the proxy carried the pushes:\n{log}");
}

fn report(time: jiff::Timestamp, base: Option<jiff::Timestamp>) -> wire::Report {
    let snapshot = dumbmonit::collect::Snapshot { time, version: "v1.33.4+k3s1".into(), ..Default::default() };
    let mut delta = wire::whole(snapshot);
    delta.base = base;
    wire::Report {
        format: wire::FORMAT,
        time,
        sent: time,
        duration_ms: 5,
        stats: vec![],
        address: "https://10.43.0.1:443".into(),
        note: None,
        outcome: wire::Reported::Snapshot(Box::new(delta)),
        between: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_pushes_are_refused_said_in_the_log_and_change_nothing() {
    let site = Site::new("interval = \"60s\"", "");
    let s = site.serve(&[]);
    let auth = format!("Bearer {AGENT_TOKEN}");
    let push = |headers: &[(&str, &str)], body: &[u8]| {
        request_tls(s.addr, "POST", "/api/v1/agent/cycles", headers, body, &site.ca)
    };
    let with_token = |body: &[u8]| push(&[("Authorization", &auth)], body);
    let now = jiff::Timestamp::now().round(jiff::Unit::Second).unwrap();
    let good = serde_json::to_vec(&report(now, None)).unwrap();

    let r = push(&[], &good);
    assert_eq!((r.status, r.json()["status"].clone()), (401, "refused".into()), "{}", r.body);
    let r = push(&[("Authorization", "Bearer agent-token-of-nobody-0000000")], &good);
    assert_eq!(r.status, 401);
    let r = push(&[("Authorization", &auth), ("DumbMonit-Cluster", "nowhere")], &good);
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["message"], "no cluster \"nowhere\" is read through an agent here");
    let r = with_token(b"{\"not\": \"a cycle\"}");
    assert_eq!(r.status, 400);
    assert!(r.json()["message"].as_str().unwrap().starts_with("cluster edge: not a cycle report"), "{}", r.body);
    let future = serde_json::to_vec(&report(now + jiff::SignedDuration::from_hours(2), None)).unwrap();
    let r = with_token(&future);
    assert_eq!(r.status, 422);
    assert!(
        r.json()["message"].as_str().unwrap().contains("more than 60 min ahead of this server's clock"),
        "{}",
        r.body
    );
    // Said to be too large before it is read.
    let r = push(&[("Authorization", &auth), ("Content-Length", "73400320")], b"{");
    assert_eq!(r.status, 413, "{}", r.body);
    // A small body that inflates to what is no JSON (600 gzip members of 1 MiB of zeros each):
    // refused at its first byte, the rest never inflated.
    let member = {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&vec![0u8; 1 << 20]).unwrap();
        gz.finish().unwrap()
    };
    let bomb: Vec<u8> = member.iter().copied().cycle().take(member.len() * 600).collect();
    let r = with_token(&bomb);
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.json()["message"].as_str().unwrap().contains("not a cycle report"), "{}", r.body);
    assert!(s.get("/api/v1/clusters/edge").json()["last_cycle"].is_null(), "nothing stored");

    let r = with_token(&good);
    assert_eq!((r.status, r.json()["status"].clone()), (200, "taken".into()), "{}", r.body);
    assert_eq!(r.json()["settings"]["cluster"], "edge");
    assert_eq!(r.json()["settings"]["interval_seconds"], 60.0);
    let r = with_token(&good);
    assert_eq!((r.status, r.json()["status"].clone()), (200, "duplicate".into()), "dropped, acknowledged");
    let later = now + jiff::SignedDuration::from_mins(1);
    let r = with_token(&serde_json::to_vec(&report(later, Some(now - jiff::SignedDuration::from_mins(5)))).unwrap());
    assert_eq!((r.status, r.json()["status"].clone()), (409, "unknown_base".into()), "{}", r.body);
    let doc = s.get("/api/v1/clusters/edge").json();
    assert_eq!(doc["last_cycle"], now.to_string(), "only the good cycle counted: {doc}");
    assert_eq!(doc["address"], "https://10.43.0.1:443");

    let log = s.log();
    for status in ["401", "404", "400", "422", "413"] {
        assert!(log.contains(&format!("agent request refused ({status})")), "{status} in the log:\n{log}");
    }
    // Viewer routes are not opened by an agent token, nor the agent's by nothing.
    let r = request_tls(s.addr, "GET", "/api/v1/agent/settings", &[("Authorization", &auth)], b"", &site.ca);
    assert_eq!(r.json()["settings"]["cluster"], "edge");
    let r = request_tls(s.addr, "DELETE", "/api/v1/agent/cycles", &[("Authorization", &auth)], b"", &site.ca);
    assert_eq!(r.status, 405);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_server_gets_every_cycle_even_the_one_that_was_away() {
    let h = Harness::start(scenario::healthy(minutes(0))).await;
    let (one, two) = (Site::new("interval = \"0.2s\"", ""), Site::new("interval = \"0.2s\"", ""));
    // One CA file that trusts both servers.
    std::fs::write(&one.ca_file, format!("{}{}", one.ca, two.ca)).unwrap();
    let (s1, s2) = (one.serve(&[]), two.serve(&[]));
    let clock = [("DUMBMONIT_TEST_CLOCK", &*format!("{START}/60"))];
    let extra = ["--server", &server_url(&s2)];
    let agent = Agent::start(&one, &h, &server_url(&s1), &extra, &clock);
    let at = |s: &Served, m: i64| last_good(s, "edge").is_some_and(|t| t >= minutes(m));
    wait_until("both at minute 2", || at(&s1, 2) && at(&s2, 2), || agent.log());
    let port = s2.addr.port();
    drop(s2);
    wait_until("the first server goes on", || at(&s1, 8), || agent.log());
    let text = std::fs::read_to_string(&two.config).unwrap();
    std::fs::write(&two.config, text.replace("listen = \"127.0.0.1:0\"", &format!("listen = \"127.0.0.1:{port}\"")))
        .unwrap();
    let s2 = two.serve(&[]);
    // Both at minute 10: each server's deliveries are its own, so the first one's minute 10
    // may still be on its way when the second has it.
    wait_until("the second catches up", || at(&s1, 10) && at(&s2, 10), || agent.log());
    drop(agent);
    drop((s1, s2));
    for site in [&one, &two] {
        let times = history(&site.dir.path().join("state"), "edge");
        assert!(
            times.len() >= 11,
            "{times:?} in {}: {:?}",
            site.dir.path().display(),
            std::fs::read_dir(site.dir.path().join("state"))
                .map(|d| d.flatten().map(|e| e.file_name()).collect::<Vec<_>>())
        );
        assert_eq!(times, (0..times.len() as i64).map(minutes).collect::<Vec<_>>(), "every cycle, once, in order");
    }
}

/// A token file that cannot be read leaves the cluster's door closed to everyone, the empty
/// token included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_agent_token_file_opens_to_nobody() {
    let site = Site::new("interval = \"60s\"", "");
    std::fs::remove_file(&site.token_file).unwrap();
    let s = site.serve(&[]);
    assert!(s.log().contains("field `agent_token_file`"), "{}", s.log());
    let body = serde_json::to_vec(&report(jiff::Timestamp::now(), None)).unwrap();
    for auth in [None, Some("Bearer "), Some("Bearer  "), Some("Basic Og==")] {
        let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", *a)).collect();
        let r = request_tls(s.addr, "POST", "/api/v1/agent/cycles", &headers, &body, &site.ca);
        assert_eq!(r.status, 401, "{auth:?}: {}", r.body);
    }
    assert!(s.get("/api/v1/clusters/edge").json()["last_cycle"].is_null());
}
