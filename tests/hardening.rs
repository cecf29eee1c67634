//! `serve` under the attacks of an outside attacker: the admins' forms (a stored token sent
//! elsewhere, durations out of range, addresses and names that do not hold), what reaches the
//! log, the state directory's modes, foreign `Host` headers, HTTPS's headers and the CSRF
//! check's scheme. Each through the real binary, over plain HTTP unless said.

mod common;

use std::net::SocketAddr;

use common::web::{Response, Served, request};
use common::{Harness, path, register_secret};
use dumbmonit_sim::scenario;

const ADMIN_TOKEN: &str = "admin-token-hardening-5b7e21c9";
const ADMIN: &str = "Bearer admin-token-hardening-5b7e21c9";

/// `[auth.admin]` with a bearer token; viewers open (no `[auth]`).
fn admins() -> String {
    register_secret(ADMIN_TOKEN);
    format!("[auth.admin]\nbearer_token = {ADMIN_TOKEN:?}\n")
}

/// An admin's browser: the session cookie and the CSRF token of a form it opened.
struct Browser {
    addr: SocketAddr,
    cookie: String,
    csrf: String,
}

impl Browser {
    /// Opens `path` (a form) as the admin and keeps its session.
    fn open(s: &Served, path: &str) -> Browser {
        let r = request(s.addr, "GET", path, &[("Authorization", ADMIN)], b"");
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        let cookie = r.header("set-cookie").expect("a new session").split(';').next().unwrap().to_string();
        Browser { addr: s.addr, cookie, csrf: csrf_of(&r.body) }
    }

    /// The form `path` again, in this session: its CSRF token is kept.
    fn reopen(&mut self, path: &str) -> Response {
        let r = request(self.addr, "GET", path, &[("Authorization", ADMIN), ("Cookie", &self.cookie)], b"");
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        self.csrf = csrf_of(&r.body);
        r
    }

    /// A form POST from a page of this server, with the session's CSRF token.
    fn post(&self, path: &str, fields: &[(&str, &str)]) -> Response {
        self.post_from(path, fields, &format!("http://{}", self.addr))
    }

    fn post_from(&self, path: &str, fields: &[(&str, &str)], origin: &str) -> Response {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("csrf", &self.csrf);
        for (k, v) in fields {
            form.append_pair(k, v);
        }
        let body = form.finish();
        let headers = [
            ("Authorization", ADMIN),
            ("Cookie", self.cookie.as_str()),
            ("Origin", origin),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ];
        request(self.addr, "POST", path, &headers, body.as_bytes())
    }
}

fn csrf_of(page: &str) -> String {
    let at = page.find("name=\"csrf\" value=\"").expect("a CSRF token in the form") + "name=\"csrf\" value=\"".len();
    page[at..].split('"').next().unwrap().to_string()
}

/// The settings of a cluster read directly at `url`, with `more` fields.
fn direct<'a>(url: &'a str, ca: &'a str, more: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut f = vec![("address", url), ("port", "6443"), ("ca", ca), ("timeout", "5s"), ("interval", "1s")];
    for (k, v) in more {
        f.retain(|(n, _)| n != k);
        f.push((k, v));
    }
    f
}

fn serve_with_admins(dir: &std::path::Path, env: &[(&str, &str)]) -> Served {
    let cfg = common::web::write_config(dir, &admins(), &[]);
    Served::start(&cfg, env)
}

/// Item 2 of the attack: an empty token on the edit form keeps the stored one only while the
/// cluster stays where it was saved for; a changed address, port, CA or certificate choice
/// needs the token again, and nothing is sent before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_token_is_never_sent_to_a_changed_address() {
    let now = jiff::Timestamp::now();
    let home = Harness::start(scenario::healthy(now)).await;
    let elsewhere = Harness::start(scenario::healthy(now)).await;
    let (home_ca, elsewhere_ca) = (home.sim.ca_pem(), elsewhere.sim.ca_pem());
    let (home_url, elsewhere_url) = (home.sim.url(), elsewhere.sim.url());
    let dir = tempfile::tempdir().unwrap();
    let s = serve_with_admins(dir.path(), &[]);
    let mut b = Browser::open(&s, "/clusters/new");
    let token = home.sim.token().to_string();
    let saved =
        b.post("/clusters/new", &direct(&home_url, home_ca, &[("action", "save"), ("name", "lab"), ("token", &token)]));
    assert_eq!(saved.status, 303, "{}", saved.body);
    let form = b.reopen("/clusters/lab/edit");

    let moved = [
        direct(&elsewhere_url, elsewhere_ca, &[]),
        direct(&elsewhere_url, home_ca, &[]),
        direct(&home_url, home_ca, &[("port", "6444")]),
        direct(&home_url, elsewhere_ca, &[]),
        direct(&home_url, home_ca, &[("insecure", "on")]),
    ];
    for fields in &moved {
        for action in ["test", "save"] {
            let mut f = fields.clone();
            f.extend([("action", action), ("token", "")]);
            let r = b.post("/clusters/lab/edit", &f);
            let sent = elsewhere.sim.requests();
            assert!(sent.is_empty(), "{action} {fields:?}: the stored token was sent elsewhere: {sent:?}");
            assert_eq!(r.status, 200, "{action} {fields:?}: {}", r.body);
            assert!(r.body.contains("so the stored token is not sent: enter the token again"), "{}", r.body);
        }
    }
    assert!(form.body.contains("when one changes, enter the token again"), "the form says so: {}", form.body);

    // Unchanged, the stored token is used where it belongs.
    let mut f = direct(&home_url, home_ca, &[]);
    f.extend([("action", "test"), ("token", "")]);
    let r = b.post("/clusters/lab/edit", &f);
    assert!(r.body.contains("The cluster was read."), "{}", r.body);
}

/// Items 10 and 11: durations out of range and addresses a cycle could not read are refused
/// on Save and Test, the field named, and nothing panics; a panic in a handler answers 500.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durations_and_addresses_are_checked_and_no_panic_is_reachable() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let (ca, url) = (h.sim.ca_pem(), h.sim.url());
    let dir = tempfile::tempdir().unwrap();
    let s = serve_with_admins(dir.path(), &[("DUMBMONIT_TEST_PANIC", "1")]);
    let b = Browser::open(&s, "/clusters/new");
    let token = h.sim.token().to_string();
    let nines = "9".repeat(400);
    for (field, value, said) in [
        ("timeout", nines.as_str(), "Timeout per request: a duration from 100ms to 10m is expected"),
        ("timeout", "0", "Timeout per request: a duration from 100ms to 10m is expected"),
        ("timeout", "-5s", "Timeout per request: a duration from 100ms to 10m is expected"),
        ("interval", "inf", "Interval: a duration from 1s to 24h is expected"),
        ("interval", "NaN", "Interval: a duration from 1s to 24h is expected"),
        ("interval", "1e400", "Interval: a duration from 1s to 24h is expected"),
        ("interval", "2d", "Interval: a duration from 1s to 24h is expected"),
    ] {
        for action in ["test", "save"] {
            let f = direct(&url, ca, &[("action", action), ("name", "lab"), ("token", &token), (field, value)]);
            let r = b.post("/clusters/new", &f);
            assert_eq!(r.status, 200, "{field} = {value:?} ({action}): {}", r.body);
            assert!(r.body.contains(said), "{field} = {value:?} ({action}): {}", r.body);
        }
    }
    for address in
        ["javascript:alert(1)", "https://k3s.lan\r\nX-Injected: 1", "https://k3s.lan:6443/?x#y", "http://k3s.lan"]
    {
        let f = direct(&url, ca, &[("action", "save"), ("name", "lab"), ("token", &token), ("address", address)]);
        let r = b.post("/clusters/new", &f);
        assert_eq!(r.status, 200, "{address:?}: {}", r.body);
        assert!(r.body.contains("Not saved.") && r.body.contains("Address: "), "{address:?}: {}", r.body);
    }
    assert!(!s.get("/").body.contains("href=\"/clusters/lab\""), "nothing was saved");
    assert!(h.sim.requests().is_empty(), "nothing was tested");
    // Good values still save.
    let r = b.post("/clusters/new", &direct(&url, ca, &[("action", "save"), ("name", "lab"), ("token", &token)]));
    assert_eq!(r.status, 303, "{}", r.body);

    // A handler that panics answers 500, logged; the server goes on.
    let r = s.get("/test/panic");
    assert_eq!(r.status, 500, "{}", r.body);
    assert!(s.log().contains("web: a request failed on an internal error"), "{}", s.log());
    assert_eq!(s.get("/healthz").status, 200);
    assert!(s.get("/").body.contains("href=\"/clusters/lab\""));
}

/// Item 10 in the file: a duration too large for the clock is refused at load, naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duration_out_of_range_in_the_file_is_refused_without_a_panic() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::web::write_config(dir.path(), "", &[("lab", &h, "1s")]);
    for (bad, said) in [("timeout = 1e300", "not a duration: \"1e300\""), ("record_retention = -1", "not a duration")] {
        let text =
            std::fs::read_to_string(&cfg).unwrap().replace("interval = \"1s\"", &format!("interval = \"1s\"\n{bad}"));
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, text).unwrap();
        let run = common::dumbmonit(&["serve".into(), "--config".into(), path(&file)], &[], dir.path()).await;
        assert_eq!(run.code, 3, "{bad}: {}", run.stderr);
        assert!(run.stderr.contains(said), "{bad}: {}", run.stderr);
    }
}

/// Items 7 and 8: names are what a Kubernetes-minded user expects, the rule is on the form, and
/// the agent's command gives the name as `--cluster=NAME`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_names_are_plain_and_the_agent_command_takes_any_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve_with_admins(dir.path(), &[]);
    let b = Browser::open(&s, "/clusters/new");
    let form = s.get_with("/clusters/new", ADMIN);
    assert!(
        form.body.contains("not starting with &#39;-&#39;") || form.body.contains("not starting with '-'"),
        "{}",
        form.body
    );
    for name in [
        "demo\u{200b}direct",
        "x\u{202e}y",
        "a\u{2028}injected: 1",
        "..",
        ".",
        "--help",
        "-x",
        "a/b",
        "café",
        "a b",
        "new",
        "",
    ] {
        let r = b.post("/clusters/new", &[("action", "agent"), ("name", name)]);
        assert_eq!(r.status, 200, "{name:?}: {}", r.body);
        assert!(r.body.contains("Not saved.") && r.body.contains("Name: up to 100 letters"), "{name:?}: {}", r.body);
    }
    let r = b.post("/clusters/new", &[("action", "agent"), ("name", "edge-17.eu_west")]);
    assert!(
        r.body.contains("--cluster=&#39;edge-17.eu_west&#39;") || r.body.contains("--cluster='edge-17.eu_west'"),
        "{}",
        r.body
    );
    let token = r.body.split("printf &#39;%s&#39; &#39;").nth(1).or_else(|| r.body.split("printf '%s' '").nth(1));
    register_secret(token.unwrap().split(['&', '\'']).next().unwrap());
    let names: Vec<String> = s
        .get("/api/v1/clusters")
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().into())
        .collect();
    assert_eq!(names, ["edge-17.eu_west"], "only the plain name was added");
}

/// Item 9: the forms and the agent's one-time command never reload themselves; the status
/// pages still do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_pages_never_reload_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve_with_admins(dir.path(), &[]);
    let refresh = "http-equiv=\"refresh\"";
    assert!(s.get("/").body.contains(refresh), "the overview refreshes");
    let b = Browser::open(&s, "/clusters/new");
    assert!(!s.get_with("/clusters/new", ADMIN).body.contains(refresh));
    let shown = b.post("/clusters/new", &[("action", "agent"), ("name", "edge")]);
    assert!(shown.body.contains("pre class=\"command\""), "{}", shown.body);
    let token =
        shown.body.split("printf &#39;%s&#39; &#39;").nth(1).or_else(|| shown.body.split("printf '%s' '").nth(1));
    register_secret(token.unwrap().split(['&', '\'']).next().unwrap());
    assert!(!shown.body.contains(refresh), "the one-time command stays on the screen");
    for path in ["/clusters/edge/edit", "/audit"] {
        let page = s.get_with(path, ADMIN);
        assert_eq!(page.status, 200, "{path}");
        assert!(!page.body.contains(refresh), "{path}");
    }
    let refused = b.post("/clusters/new", &[("action", "agent"), ("name", "..")]);
    assert!(!refused.body.contains(refresh), "a form with what was typed stays");
}

/// Item 15: the state directory is 0700 and the database's files 0600, even when the
/// directory was made open before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_state_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::web::write_config(dir.path(), "", &[("lab", &h, "100ms")]);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let state = dir.path().join("state");
    {
        let s = Served::start(&cfg, &[]);
        s.wait_for("/api/v1/clusters/lab", "a cycle saved", |r| r.json()["last_good_cycle"].is_string());
        assert_eq!(mode(&state), 0o700, "the state directory");
        for f in ["dumbmonit.db", "dumbmonit.db-wal", "dumbmonit.db-shm", "secret.key"] {
            assert_eq!(mode(&state.join(f)), 0o600, "{f}");
        }
    }
    // Made open by an older version: narrowed at the next start.
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(state.join("dumbmonit.db"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let s = Served::start(&cfg, &[]);
    s.wait_for("/api/v1/clusters/lab", "a cycle", |r| r.json()["last_good_cycle"].is_string());
    assert_eq!(mode(&state), 0o700);
    assert_eq!(mode(&state.join("dumbmonit.db")), 0o600);
}

/// Item 12: without `[auth]`, a page is answered only to this server's own host names: IP
/// addresses, loopback names and `allowed_hosts`; a rebinding page's name is refused (421).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_auth_only_known_host_names_are_answered() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::web::write_config(dir.path(), "allowed_hosts = [\"monitor.lan\"]", &[("lab", &h, "1s")]);
    let s = Served::start(&cfg, &[]);
    let port = s.addr.port();
    let with_host = |host: &str, path: &str| request(s.addr, "GET", path, &[("Host", host)], b"");
    for host in [
        format!("127.0.0.1:{port}"),
        "localhost".into(),
        format!("localhost:{port}"),
        "[::1]".into(),
        "monitor.lan".into(),
        format!("MONITOR.lan:{port}"),
        "app.localhost".into(),
    ] {
        assert_eq!(with_host(&host, "/api/v1/clusters").status, 200, "{host}");
    }
    for host in ["attacker.example", "attacker.example:80", "monitor.lan.attacker.example", "10.0.0.8"] {
        for path in ["/", "/api/v1/clusters", "/metrics", "/clusters/lab"] {
            let r = with_host(host, path);
            assert_eq!(r.status, 421, "{host} {path}: {}", r.body);
            assert!(r.body.contains("allowed_hosts"), "{}", r.body);
        }
    }
    assert_eq!(with_host("attacker.example", "/healthz").status, 200, "the probe answers any host");
    drop(s);

    // With [auth], credentials protect the pages whatever the host.
    common::register_secret("viewer-token-0123456789");
    let cfg = common::web::write_config(
        dir.path(),
        "[auth]\nbearer_token = \"viewer-token-0123456789\"\n",
        &[("lab", &h, "1s")],
    );
    let s = Served::start(&cfg, &[]);
    let r = request(
        s.addr,
        "GET",
        "/",
        &[("Host", "attacker.example"), ("Authorization", "Bearer viewer-token-0123456789")],
        b"",
    );
    assert_eq!(r.status, 200);
}

/// Item 13: the CSRF check compares the Origin's scheme too; over `[tls]` every answer carries
/// Strict-Transport-Security.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origins_of_another_scheme_are_refused_and_https_is_strict() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve_with_admins(dir.path(), &[]);
    let b = Browser::open(&s, "/clusters/new");
    let r = b.post_from("/clusters/new", &[("action", "agent"), ("name", "edge")], &format!("https://{}", s.addr));
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(s.get("/api/v1/clusters").json().as_array().unwrap().is_empty(), "nothing added");
    assert!(s.get("/").header("strict-transport-security").is_none(), "not over plain HTTP");
    drop(s);

    let site = common::agent::Site::new("interval = \"60s\"", "");
    let s = site.serve(&[]);
    for path in ["/healthz", "/", "/api/v1/clusters"] {
        let r = s.get(path);
        assert_eq!(r.header("strict-transport-security"), Some("max-age=31536000"), "{path}");
    }
}

fn report_with_error(error: &str) -> Vec<u8> {
    use dumbmonit::wire;
    let time = jiff::Timestamp::now().round(jiff::Unit::Second).unwrap();
    let r = wire::Report {
        format: wire::FORMAT,
        time,
        sent: time,
        duration_ms: 5,
        stats: vec![],
        address: "https://10.43.0.1:443".into(),
        note: Some(format!("note\r\n{error}")),
        outcome: wire::Reported::Error(error.into()),
        between: false,
    };
    serde_json::to_vec(&r).unwrap()
}

/// Items 4 and 14: an agent's error cannot forge a log line or drive the terminal, and what
/// an unauthenticated client sends (a path, a header) is logged cut short.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_cannot_be_forged_or_flooded() {
    use common::agent::{AGENT_TOKEN, Site};
    use common::web::request_tls;
    let site = Site::new("interval = \"60s\"", "");
    let s = site.serve(&[]);
    let auth = format!("Bearer {AGENT_TOKEN}");
    let forged = "boom\n2026-12-01T08:00:00Z audit: admin removed cluster prod\x1b[2J\u{2028}x";
    let r = request_tls(
        s.addr,
        "POST",
        "/api/v1/agent/cycles",
        &[("Authorization", &auth)],
        &report_with_error(forged),
        &site.ca,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    s.wait_for("/api/v1/clusters/edge", "the error shown", |r| {
        r.json()["error"].as_str().is_some_and(|e| e.contains("boom"))
    });
    let long = "a".repeat(60_000);
    let r = request_tls(s.addr, "GET", &format!("/api/v1/agent/{long}"), &[], b"", &site.ca);
    assert_eq!(r.status, 404);
    let r = request_tls(
        s.addr,
        "POST",
        "/api/v1/agent/cycles",
        &[("Authorization", &auth), ("DumbMonit-Cluster", &long)],
        b"{}",
        &site.ca,
    );
    assert_eq!(r.status, 404);
    let r = request_tls(
        s.addr,
        "POST",
        "/api/v1/agent/cycles",
        &[("Authorization", "Bearer agent-token-of-nobody-0000000"), ("DumbMonit-Cluster", &format!("edge{long}"))],
        b"{}",
        &site.ca,
    );
    // A wrong token learns nothing of the names (the second round's item 7): 401 for any.
    assert_eq!(r.status, 401);
    let log = s.log();
    assert!(!log.contains('\x1b') && !log.contains('\u{2028}'), "no escape sequence reaches the log:\n{log}");
    assert!(!log.lines().any(|l| l.starts_with("2026-12-01T08:00:00Z audit:")), "no forged line:\n{log}");
    assert!(log.contains("boom\\n2026-12-01T08:00:00Z audit: admin removed cluster prod\\u{1b}[2J"), "{log}");
    for line in log.lines() {
        assert!(line.len() < 1_000, "a log line of {} bytes: {}…", line.len(), &line[..200]);
    }
    assert!(
        log.contains("(60014 bytes)") && log.contains("(60000 bytes)") && log.contains("(60004 bytes)"),
        "the log says how long it was:\n{log}"
    );
}

/// One request from the loopback address `from` (another client than 127.0.0.1); its status.
async fn status_from(from: std::net::IpAddr, to: SocketAddr, path: &str, authorization: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(from, 0)).unwrap();
    let Ok(mut s) = socket.connect(to).await else { return 0 };
    let head = format!("GET {path} HTTP/1.0\r\nHost: {to}\r\nAuthorization: {authorization}\r\n\r\n");
    if s.write_all(head.as_bytes()).await.is_err() {
        return 0;
    }
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw).await;
    String::from_utf8_lossy(&raw).split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

fn basic(user: &str, password: &str) -> String {
    use base64::Engine;
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

/// A serve whose viewer ("viewer") and admin ("admin") log in with Basic auth against bcrypt
/// hashes of the cost htpasswd -B uses by default.
fn serve_with_bcrypt_accounts(dir: &std::path::Path, admin_pass: &str, viewer_pass: &str) -> Served {
    register_secret(admin_pass);
    register_secret(viewer_pass);
    let (admin_hash, viewer_hash) = (bcrypt::hash(admin_pass, 10).unwrap(), bcrypt::hash(viewer_pass, 10).unwrap());
    let auth = format!(
        "[auth]\nusername = \"viewer\"\npassword_hash = {viewer_hash:?}\n\n[auth.admin]\nusername = \"admin\"\npassword_hash = {admin_hash:?}\n"
    );
    let cfg = common::web::write_config(dir, &auth, &[]);
    Served::start(&cfg, &[])
}

/// Item 1: a flood of wrong credentials from one client (an unknown user name, and the right
/// names with wrong passwords) while an admin and a viewer read the pages from another: the
/// admin's page and /healthz stay fast, the viewer's first login is checked, the flooding
/// client is made to wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_wrong_credentials_slows_only_its_client() {
    let _one = measured().await;
    let (admin_pass, viewer_pass) = ("flood-admin-password-4d1e", "flood-viewer-password-93ab");
    let dir = tempfile::tempdir().unwrap();
    let s = serve_with_bcrypt_accounts(dir.path(), admin_pass, viewer_pass);
    let admin = basic("admin", admin_pass);
    assert_eq!(s.get_with("/", &admin).status, 200, "the admin logs in before the flood");

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flooder: std::net::IpAddr = "127.0.0.2".parse().unwrap();
    let mut floods = Vec::new();
    for i in 0..8 {
        let (stop, addr) = (stop.clone(), s.addr);
        floods.push(tokio::spawn(async move {
            let mut statuses = std::collections::BTreeMap::<u16, u32>::new();
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let header = match n % 3 {
                    0 => basic("x", "y"),
                    1 => basic("admin", &format!("guess-{i}-{n}")),
                    _ => basic("viewer", &format!("guess-{i}-{n}")),
                };
                *statuses.entry(status_from(flooder, addr, "/", &header).await).or_default() += 1;
                n += 1;
            }
            statuses
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let timed = |path: &str, authorization: Option<&str>| {
        let started = std::time::Instant::now();
        let r = match authorization {
            Some(a) => s.get_with(path, a),
            None => s.get(path),
        };
        (r.status, started.elapsed())
    };
    let (mut admin_times, mut probe_times) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        let (status, took) = timed("/", Some(&admin));
        assert_eq!(status, 200);
        assert!(took < std::time::Duration::from_millis(500), "the admin's page took {took:?} during the flood");
        admin_times.push(took);
        let (status, took) = timed("/healthz", None);
        assert_eq!(status, 200);
        assert!(took < std::time::Duration::from_millis(500), "/healthz took {took:?} during the flood");
        probe_times.push(took);
    }
    let (status, viewer_login) = timed("/", Some(&basic("viewer", viewer_pass)));
    assert_eq!(status, 200, "a viewer's first login, from another client, is checked during the flood");
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut statuses = std::collections::BTreeMap::<u16, u32>::new();
    for f in floods {
        for (k, v) in f.await.unwrap() {
            *statuses.entry(k).or_default() += v;
        }
    }
    admin_times.sort();
    probe_times.sort();
    println!(
        "during the flood: admin / p50 {:?} max {:?}; /healthz p50 {:?} max {:?}; a viewer's first login {viewer_login:?}; the flood's answers {statuses:?}",
        admin_times[10], admin_times[19], probe_times[10], probe_times[19]
    );
    assert!(statuses.get(&429).is_some_and(|n| *n > 0), "the flooding client is made to wait: {statuses:?}");
    assert!(statuses.keys().all(|k| [401, 429].contains(k)), "{statuses:?}");
}

/// A serve over plain HTTP with the agent's cluster "edge" (its token `AGENT_TOKEN`).
fn serve_an_agents_cluster(dir: &std::path::Path) -> Served {
    use common::agent::AGENT_TOKEN;
    register_secret(AGENT_TOKEN);
    let token_file = dir.join("edge.token");
    std::fs::write(&token_file, AGENT_TOKEN).unwrap();
    let extra =
        format!("[[cluster]]\nname = \"edge\"\nagent_token_file = {:?}\ninterval = \"60s\"\n", path(&token_file));
    let cfg = common::web::write_config(dir, &extra, &[]);
    Served::start(&cfg, &[])
}

fn mib(bytes: &serde_json::Value) -> f64 {
    bytes.as_f64().unwrap() / (1024.0 * 1024.0)
}

/// A connection that sends `mib` MiB of a 60 MiB report and holds on: it says how many MiB it
/// sent, waits for `hold`, then gives the status of the answer, if one came within 3 s.
fn slow_body(
    addr: SocketAddr,
    auth: String,
    mib: usize,
    sent: std::sync::mpsc::Sender<usize>,
    hold: impl FnOnce() + Send + 'static,
) -> std::thread::JoinHandle<Option<u16>> {
    use std::io::{Read, Write};
    std::thread::spawn(move || {
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        let head = format!(
            "POST /api/v1/agent/cycles HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {auth}\r\nContent-Length: {}\r\n\r\n",
            60 << 20
        );
        c.write_all(head.as_bytes()).unwrap();
        let chunk = vec![b' '; 1 << 20];
        sent.send((0..mib).take_while(|_| c.write_all(&chunk).is_ok()).count()).unwrap();
        hold();
        c.set_read_timeout(Some(std::time::Duration::from_secs(3))).unwrap();
        let mut answer = Vec::new();
        let _ = c.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer).split_whitespace().nth(1).and_then(|c| c.parse::<u16>().ok())
    })
}

/// A report of an agent that cannot read its API server.
fn report_of(error: &str, address: &str, note: Option<&str>) -> dumbmonit::wire::Report {
    let time = jiff::Timestamp::now().round(jiff::Unit::Second).unwrap();
    dumbmonit::wire::Report {
        format: dumbmonit::wire::FORMAT,
        time,
        sent: time,
        duration_ms: 5,
        stats: vec![],
        address: address.into(),
        note: note.map(str::to_string),
        outcome: dumbmonit::wire::Reported::Error(error.into()),
        between: false,
    }
}

/// Item 3: a gzip bomb and slow large bodies keep the memory bounded (one budget for every
/// body in flight, inflated as a stream that stops at the limit), and what an agent says of
/// itself is cut at 4 KB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_pushes_cannot_fill_the_memory() {
    let _one = measured().await;
    use common::agent::AGENT_TOKEN;
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let s = serve_an_agents_cluster(dir.path());
    let auth = format!("Bearer {AGENT_TOKEN}");
    let start = s.get("/api/v1/monitor").json();

    // 305 KB of gzip that inflates to 300 MiB of JSON whitespace.
    let member = {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&vec![b' '; 1 << 20]).unwrap();
        gz.finish().unwrap()
    };
    let bomb: Vec<u8> = member.iter().copied().cycle().take(member.len() * 300).collect();
    let started = std::time::Instant::now();
    let r = request(s.addr, "POST", "/api/v1/agent/cycles", &[("Authorization", &auth)], &bomb);
    let bomb_took = started.elapsed();
    let after_bomb = s.get("/api/v1/monitor").json();
    let bomb_peak = mib(&after_bomb["peak_resident_memory_bytes"]) - mib(&start["resident_memory_bytes"]);
    assert!(bomb_peak < 100.0, "the bomb grew the peak by {bomb_peak:.0} MiB");
    assert_eq!(r.status, 413, "{}", r.body);

    // Eight connections each sending 40 MiB of a 60 MiB body, and holding on.
    let (tx, rx) = std::sync::mpsc::channel();
    let mut held = Vec::new();
    for _ in 0..8 {
        // Held until the test has measured (the answer is waited for 3 s), then the answer, if any.
        held.push(slow_body(s.addr, auth.clone(), 40, tx.clone(), || {}));
    }
    let sent: usize = (0..8).map(|_| rx.recv().unwrap()).sum();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let holding = s.get("/api/v1/monitor").json();
    let held_growth = mib(&holding["resident_memory_bytes"]) - mib(&start["resident_memory_bytes"]);
    assert_eq!(s.get("/healthz").status, 200);
    let answers: Vec<Option<u16>> = held.into_iter().map(|t| t.join().unwrap()).collect();

    // A small report with a 50 MB note and a 10 MB error.
    let gz = report_of(
        &"e".repeat(10_000_000),
        &format!("https://10.43.0.1:443/{}", "a".repeat(1 << 20)),
        Some(&"n".repeat(50_000_000)),
    )
    .to_gzip();
    let r = request(s.addr, "POST", "/api/v1/agent/cycles", &[("Authorization", &auth)], &gz);
    assert_eq!(r.status, 200, "{}", r.body);
    let page = s.wait_for("/api/v1/clusters/edge", "the report taken", |r| r.json()["last_cycle"].is_string());
    println!(
        "serve's RSS: {:.0} MiB at start; peak {bomb_peak:+.0} MiB after a {} KB gzip bomb (refused in {bomb_took:?}); {held_growth:+.0} MiB with {sent} MiB sent on 8 unfinished bodies (answers {answers:?}); a {} KB report with a 50 MB note: API answer {} bytes",
        mib(&start["resident_memory_bytes"]),
        bomb.len() / 1000,
        gz.len() / 1000,
        page.body.len()
    );
    assert!(bomb_peak < 100.0, "the bomb grew the peak by {bomb_peak:.0} MiB");
    assert!(held_growth < 180.0, "unfinished bodies hold {held_growth:.0} MiB");
    assert!(s.log().contains("the server holds as many reports as it takes at once"), "{}", s.log());
    assert!(page.body.len() < 64 * 1024, "{} bytes", page.body.len());
    assert!(page.body.contains("(cut at 4 KB: the agent sent 50000000 bytes)"), "the page says so");
    let all = s.get("/api/v1/clusters");
    assert!(all.body.len() < 32 * 1024, "{} bytes", all.body.len());
    let cluster = s.get("/clusters/edge");
    assert!(cluster.body.len() < 64 * 1024, "{} bytes", cluster.body.len());
}

/// Item 5: 300 silent sockets from one client, reopened as soon as they are closed, while
/// another client's /healthz and pages are answered at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_sockets_of_one_client_do_not_hold_the_others_out() {
    let _one = measured().await;
    use tokio::io::AsyncReadExt;
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::web::write_config(dir.path(), "", &[("lab", &h, "1s")]);
    let s = Served::start(&cfg, &[]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let attacker: std::net::IpAddr = "127.0.0.3".parse().unwrap();
    let mut silent = Vec::new();
    for _ in 0..300 {
        let (stop, addr) = (stop.clone(), s.addr);
        silent.push(tokio::spawn(async move {
            let mut opened = 0u32;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let socket = tokio::net::TcpSocket::new_v4().unwrap();
                socket.bind(SocketAddr::new(attacker, 0)).unwrap();
                if let Ok(mut c) = socket.connect(addr).await {
                    opened += 1;
                    // Silent until the server closes it (or the test ends).
                    let mut b = [0u8; 1];
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(20), c.read(&mut b)).await;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            opened
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let mut times = Vec::new();
    for path in ["/healthz", "/api/v1/clusters"].iter().cycle().take(20) {
        let started = std::time::Instant::now();
        let r = tokio::task::block_in_place(|| s.get(path));
        assert_eq!(r.status, 200, "{path}");
        let took = started.elapsed();
        // Held out, a client would wait for a silent socket's head timeout (10 s). On a loaded
        // machine one connection may wait out a SYN retransmission (1 s): not a hold-out.
        assert!(took < std::time::Duration::from_secs(3), "{path} took {took:?} beside 300 silent sockets");
        times.push(took);
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    times.sort();
    assert!(times[10] < std::time::Duration::from_millis(500), "answers p50 {:?} beside 300 silent sockets", times[10]);
    let opened: u32 = {
        let mut n = 0;
        for t in silent {
            n += t.await.unwrap();
        }
        n
    };
    println!("beside 300 silent sockets ({opened} opened): answers p50 {:?}, max {:?}", times[10], times[19]);
    assert!(opened >= 300, "the silent sockets were opened ({opened}): otherwise nothing was tested");
}

/// Item 6: only sessions this server issued are taken (signed, with an expiry, for the admin
/// credentials of now and this start of the process); the CSRF token holds the credentials'
/// fingerprint; over `[tls]` the cookie is `__Host-` prefixed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_the_servers_own_and_end() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve_with_admins(dir.path(), &[]);
    // A cookie of the attacker's choosing is not adopted: a new session is issued.
    let forged = format!("dumbmonit_session={}", "A".repeat(43));
    let r = request(s.addr, "GET", "/clusters/new", &[("Authorization", ADMIN), ("Cookie", &forged)], b"");
    let cookie = r.header("set-cookie").expect("a new session for a forged cookie");
    assert!(
        cookie.contains("Max-Age=43200") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let planted = Browser { addr: s.addr, cookie: forged.clone(), csrf: csrf_of(&r.body) };
    assert_eq!(
        planted.post("/clusters/new", &[("action", "agent"), ("name", "edge")]).status,
        403,
        "not with the forged cookie"
    );

    // A session's form survives nothing but its own process and credentials.
    let b = Browser::open(&s, "/clusters/new");
    let mut again = Browser { addr: s.addr, cookie: b.cookie.clone(), csrf: String::new() };
    assert!(again.reopen("/clusters/new").header("set-cookie").is_none(), "the issued session is kept");
    assert_eq!(again.csrf, b.csrf);
    let cfg = dir.path().join("dumbmonit.toml");
    drop(s);
    let s = Served::start(&cfg, &[]);
    let b = Browser { addr: s.addr, ..b };
    let r = b.post("/clusters/new", &[("action", "agent"), ("name", "edge")]);
    assert_eq!(r.status, 403, "a session of the previous start: {}", r.body);
    let b = Browser::open(&s, "/clusters/new");
    // The admin token changes (reload): the form of the old credentials is refused.
    let text = std::fs::read_to_string(&cfg).unwrap();
    let new_token = "admin-token-hardening-rotated-77f1";
    register_secret(new_token);
    std::fs::write(&cfg, text.replace(ADMIN_TOKEN, new_token)).unwrap();
    let pid = s.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-HUP", &pid]).status().unwrap().success());
    let new_auth = format!("Bearer {new_token}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while request(s.addr, "GET", "/clusters/new", &[("Authorization", &new_auth)], b"").status != 200 {
        assert!(std::time::Instant::now() < deadline, "reload did not take effect:\n{}", s.log());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.append_pair("csrf", &b.csrf).append_pair("action", "agent").append_pair("name", "edge");
    let body = form.finish();
    let headers = [
        ("Authorization", new_auth.as_str()),
        ("Cookie", b.cookie.as_str()),
        ("Origin", &format!("http://{}", s.addr)),
        ("Content-Type", "application/x-www-form-urlencoded"),
    ];
    let r = request(s.addr, "POST", "/clusters/new", &headers, body.as_bytes());
    assert_eq!(r.status, 403, "a form of the old credentials: {}", r.body);
    assert!(s.get("/api/v1/clusters").json().as_array().unwrap().is_empty(), "nothing was added");
    drop(s);

    // Over [tls], the cookie is for this host only, and Secure.
    let site = common::agent::Site::new("interval = \"60s\"", &admins());
    let s = site.serve(&[]);
    let r = common::web::request_tls(s.addr, "GET", "/clusters/new", &[("Authorization", ADMIN)], b"", &site.ca);
    let cookie = r.header("set-cookie").unwrap();
    assert!(
        cookie.starts_with("__Host-dumbmonit_session=") && cookie.contains("; Path=/;") && cookie.contains("Secure"),
        "{cookie}"
    );
    assert!(!cookie.contains("Domain"), "{cookie}");
}

// ---------------------------------------------------------------------------------------------
// The second round of attacks: silences that could stall the monitor, secrets that other
// secrets' owners could make it show, and the agent door's last holes. Item numbers are the
// second report's.

/// The tests that measure time or memory run one at a time: a flood beside them would be
/// measured too.
async fn measured() -> tokio::sync::MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    ONE_AT_A_TIME.lock().await
}

/// `/healthz` asked every 20 ms from a thread of its own, until [`Probe::slowest`].
struct Probe {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<(std::time::Duration, u32)>,
}

impl Probe {
    fn start(addr: SocketAddr) -> Probe {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let halt = stop.clone();
        let thread = std::thread::spawn(move || {
            let (mut slowest, mut asked) = (std::time::Duration::ZERO, 0);
            while !halt.load(std::sync::atomic::Ordering::SeqCst) {
                let started = std::time::Instant::now();
                assert_eq!(common::web::get(addr, "GET", "/healthz", None).status, 200);
                slowest = slowest.max(started.elapsed());
                asked += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            (slowest, asked)
        });
        Probe { stop, thread }
    }

    /// The slowest answer, and how many were asked.
    fn slowest(self) -> (std::time::Duration, u32) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.join().unwrap()
    }
}

/// A JSON request with the admin's token.
fn as_admin(s: &Served, method: &str, path: &str, body: &serde_json::Value) -> Response {
    request(
        s.addr,
        method,
        path,
        &[("Authorization", ADMIN), ("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
}

/// A silence of `n` matchers `pod=~"\w{150}-i"` (each its own expression), ending in an hour.
fn costly_silence(n: usize) -> serde_json::Value {
    let ends = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1)).to_string();
    let matchers: Vec<serde_json::Value> = (0..n)
        .map(|i| serde_json::json!({"name": "pod", "value": format!("\\w{{150}}-{i}"), "isRegex": true, "isEqual": true}))
        .collect();
    serde_json::json!({"matchers": matchers, "endsAt": ends, "createdBy": "mallory", "comment": "costly"})
}

fn rss(s: &Served, field: &str) -> f64 {
    mib(&s.get("/api/v1/monitor").json()[field])
}

/// Second round, item 1: silences of costly regular expressions (400 matchers in a 28 KB body,
/// 60, and 20 within the count) are refused at once, and /healthz never waits; a silence
/// within the budgets is made. An expired silence that an older version kept is listed after
/// a restart, never compiled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn costly_silences_are_refused_at_once_and_an_expired_one_is_never_compiled() {
    let _one = measured().await;
    let dir = tempfile::tempdir().unwrap();
    let s = serve_with_admins(dir.path(), &[]);
    let rest = rss(&s, "resident_memory_bytes");
    let probe = Probe::start(s.addr);
    let mut took = Vec::new();
    for (n, said) in [
        (400, "field `matchers`: 400 matchers; a silence has at most 20"),
        (60, "field `matchers`: 60 matchers; a silence has at most 20"),
        (20, "the regular expression is too costly: compiled, it would take more than 1 MiB"),
    ] {
        let body = costly_silence(n);
        let started = std::time::Instant::now();
        let r = as_admin(&s, "POST", "/api/v1/silences", &body);
        took.push((n, body.to_string().len(), started.elapsed()));
        assert_eq!(r.status, 400, "{n} matchers: {}", r.body);
        assert!(r.json()["error"].as_str().unwrap().contains(said), "{n} matchers: {}", r.body);
    }
    // Within the budgets: made (each expression about 330 KB compiled).
    let ends = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1)).to_string();
    let fine = serde_json::json!({"matchers": [
        {"name": "pod", "value": "api-\\w+-\\w{5}", "isRegex": true},
        {"name": "namespace", "value": "shop"}], "endsAt": ends});
    assert_eq!(as_admin(&s, "POST", "/api/v1/silences", &fine).status, 200);
    // Past the silence's budget of 2 MiB together: refused, naming the matcher.
    let heavy: Vec<serde_json::Value> = (0..8)
        .map(|i| serde_json::json!({"name": "pod", "value": format!("api-\\w+-\\w{{5}}-{i}"), "isRegex": true}))
        .collect();
    let r = as_admin(&s, "POST", "/api/v1/silences", &serde_json::json!({"matchers": heavy, "endsAt": ends}));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("take at most 2 MiB compiled together"), "{}", r.body);
    let (slowest, asked) = probe.slowest();
    let peak = rss(&s, "peak_resident_memory_bytes") - rest;
    println!(
        "costly silences refused in {took:?}; /healthz slowest {slowest:?} of {asked}; peak {peak:+.1} MiB above rest ({rest:.0} MiB)"
    );
    assert!(slowest < std::time::Duration::from_millis(100), "/healthz took {slowest:?}");
    assert!(peak < 100.0, "the peak grew by {peak:.0} MiB");
    assert!(took.iter().all(|(_, _, t)| *t < std::time::Duration::from_secs(2)), "{took:?}");
    drop(s);

    // A silence of 400 such expressions, expired an hour ago, as a version before these
    // budgets could keep it: listed after a restart, and never compiled.
    let ended = jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1);
    let mut stored = costly_silence(400);
    stored["id"] = "old-costly-silence".into();
    stored["startsAt"] = (ended - jiff::SignedDuration::from_hours(1)).to_string().into();
    stored["endsAt"] = ended.to_string().into();
    stored["updatedAt"] = ended.to_string().into();
    stored["status"] = serde_json::json!({"state": "expired"});
    stored["from_file"] = false.into();
    let db = rusqlite::Connection::open(dir.path().join("state").join("dumbmonit.db")).unwrap();
    db.execute("INSERT INTO quiet (kind, id, body) VALUES ('silence', 'old-costly-silence', ?1)", [stored.to_string()])
        .unwrap();
    drop(db);
    let started = std::time::Instant::now();
    let s = serve_with_admins(dir.path(), &[]);
    let up = started.elapsed();
    let listed = s.get("/api/v1/silences").json();
    let old = listed.as_array().unwrap().iter().find(|v| v["id"] == "old-costly-silence").expect("still listed");
    assert_eq!(old["status"]["state"], "expired");
    let rest_again = rss(&s, "peak_resident_memory_bytes");
    println!("restarted with the expired silence of 400 expressions in {up:?}, peak {rest_again:.0} MiB");
    assert!(up < std::time::Duration::from_secs(5), "serve took {up:?} to start");
    assert!(rest_again < rest + 100.0, "{rest_again:.0} MiB at start, {rest:.0} before");
}

/// CPU seconds a process has used (user and system), from /proc.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    // utime and stime are the 14th and 15th fields, the 12th and 13th after the name.
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// Second round, item 2: with Alertmanager as the home of silences, a silence of 20 costly
/// expressions made there (by anyone who may make one) is listed on /silences as not applied,
/// and the polls that read it again compile nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_costly_silence_in_alertmanager_is_not_applied_and_costs_nothing_to_read_again() {
    let _one = measured().await;
    let dir = tempfile::tempdir().unwrap();
    let (_am, port) = common::alertmanager::alertmanager(dir.path());
    let extra = format!("{}\n[[notifier]]\ntype = \"alertmanager\"\nurl = \"http://127.0.0.1:{port}\"\n", admins());
    let cfg = common::web::write_config(dir.path(), &extra, &[]);
    let s = Served::start(&cfg, &[]);
    let rest = rss(&s, "resident_memory_bytes");
    // 20 matchers: within the count, so each poll would compile them were the refusal not kept.
    let mut silence = costly_silence(20);
    silence["startsAt"] = jiff::Timestamp::now().to_string().into();
    silence["matchers"].as_array_mut().unwrap()[0] = serde_json::json!({"name": "alertname", "value": "KubernetesPodCrashLooping", "isRegex": false, "isEqual": true});
    let (status, body) = common::alertmanager::send(port, "POST", "/api/v2/silences", &silence.to_string());
    assert_eq!(status, 200, "Alertmanager takes it: {body}");
    let page =
        s.wait_for("/silences", "the silence listed as not applied", |r| r.body.contains("Not applied: too costly"));
    assert!(page.body.contains("the regular expression is too costly"), "{}", page.body);
    assert!(page.body.contains("mallory"), "who made it: {}", page.body);
    assert!(!s.get("/api/v1/silences").body.contains("mallory"), "not among the silences in force");
    let probe = Probe::start(s.addr);
    let before = cpu_seconds(s.child.id());
    // Two polls (every 5 s) that read it again.
    tokio::time::sleep(std::time::Duration::from_secs(11)).await;
    let cpu = cpu_seconds(s.child.id()) - before;
    let (slowest, asked) = probe.slowest();
    let peak = rss(&s, "peak_resident_memory_bytes") - rest;
    println!(
        "a costly silence in Alertmanager: {cpu:.2} CPU s in 11 s; /healthz slowest {slowest:?} of {asked}; peak {peak:+.1} MiB"
    );
    assert!(cpu < 1.5, "serve used {cpu:.2} CPU s in 11 s");
    assert!(slowest < std::time::Duration::from_millis(100), "/healthz took {slowest:?}");
    assert!(peak < 100.0, "the peak grew by {peak:.0} MiB");
}

/// A gzip member of `bytes`.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// Second round, item 3: four small reports whose note inflates to 255 MiB each, sent at once,
/// are taken, their notes cut as they are read: the peak follows what is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notes_that_inflate_are_cut_as_they_are_read() {
    use common::agent::AGENT_TOKEN;
    let _one = measured().await;
    let dir = tempfile::tempdir().unwrap();
    let s = serve_an_agents_cluster(dir.path());
    let rest = rss(&s, "resident_memory_bytes");
    let now = jiff::Timestamp::now().round(jiff::Unit::Second).unwrap();
    let mib_of_n = gzip(&vec![b'n'; 1 << 20]);
    let bodies: Vec<Vec<u8>> = (0..4)
        .map(|i| {
            let time = now - jiff::SignedDuration::from_secs(4 - i);
            let head = format!(
                "{{\"format\": 1, \"time\": \"{time}\", \"sent\": \"{time}\", \"duration_ms\": 1, \"stats\": [], \
                 \"address\": \"https://10.43.0.1:443\", \"outcome\": {{\"error\": \"the API server is away\"}}, \"note\": \""
            );
            let mut body = gzip(head.as_bytes());
            for _ in 0..255 {
                body.extend_from_slice(&mib_of_n);
            }
            body.extend(gzip(b"\"}"));
            body
        })
        .collect();
    let sizes: Vec<usize> = bodies.iter().map(Vec::len).collect();
    let auth = format!("Bearer {AGENT_TOKEN}");
    let sent: Vec<_> = bodies
        .into_iter()
        .map(|body| {
            let (addr, auth) = (s.addr, auth.clone());
            std::thread::spawn(move || {
                request(addr, "POST", "/api/v1/agent/cycles", &[("Authorization", &auth)], &body)
            })
        })
        .collect();
    let answers: Vec<u16> = sent.into_iter().map(|t| t.join().unwrap().status).collect();
    let peak = rss(&s, "peak_resident_memory_bytes") - rest;
    let page = s.wait_for("/api/v1/clusters/edge", "the report taken", |r| r.body.contains("(cut at 4 KB"));
    println!(
        "four reports of {sizes:?} bytes whose notes inflate to 255 MiB: answers {answers:?}, peak {peak:+.1} MiB above rest"
    );
    assert_eq!(answers, [200; 4]);
    assert!(page.body.contains("(cut at 4 KB: the agent sent 267386880 bytes)"), "{}", page.body);
    assert!(peak < 100.0, "the peak grew by {peak:.0} MiB");
}

const OTHER_AGENT_TOKEN: &str = "agent-token-edge-two-0c4d8e1f92b7";

/// A serve over plain HTTP with two agents' clusters: "edge" and "edge-2".
fn serve_two_agents(dir: &std::path::Path, extra: &str) -> Served {
    use common::agent::AGENT_TOKEN;
    register_secret(AGENT_TOKEN);
    register_secret(OTHER_AGENT_TOKEN);
    let (one, two) = (dir.join("edge.token"), dir.join("edge-2.token"));
    std::fs::write(&one, AGENT_TOKEN).unwrap();
    std::fs::write(&two, OTHER_AGENT_TOKEN).unwrap();
    let clusters = format!(
        "{extra}\n[[cluster]]\nname = \"edge\"\nagent_token_file = {:?}\ninterval = \"60s\"\n\n\
         [[cluster]]\nname = \"edge-2\"\nagent_token_file = {:?}\ninterval = \"60s\"\n",
        path(&one),
        path(&two)
    );
    let cfg = common::web::write_config(dir, &clusters, &[]);
    Served::start(&cfg, &[])
}

/// A report pushed with the token of the agent's cluster "edge".
fn push_as_edge(s: &Served, report: &[u8]) -> Response {
    let auth = format!("Bearer {}", common::agent::AGENT_TOKEN);
    request(s.addr, "POST", "/api/v1/agent/cycles", &[("Authorization", &auth)], report)
}

/// A small report of an agent that cannot read its API server, gzip-compressed.
fn small_report(error: &str, address: &str, note: Option<&str>) -> Vec<u8> {
    report_of(error, address, note).to_gzip()
}

/// Second round, item 4: one agent's three slow bodies of 42 MiB (which would hold all but
/// 2 MiB of the budget of all bodies) hold its own share only: another cluster's agent's
/// report of 4 MiB is still taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_agents_slow_bodies_do_not_starve_the_others() {
    use common::agent::AGENT_TOKEN;
    let _one = measured().await;
    let dir = tempfile::tempdir().unwrap();
    let s = serve_two_agents(dir.path(), "");
    let (tx, rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let release = std::sync::Arc::new(std::sync::Mutex::new(release_rx));
    let mut held = Vec::new();
    for _ in 0..3 {
        let release = release.clone();
        let hold = move || {
            let _ = release.lock().unwrap().recv();
        };
        held.push(slow_body(s.addr, format!("Bearer {AGENT_TOKEN}"), 42, tx.clone(), hold));
    }
    let sent: usize = (0..3).map(|_| rx.recv().unwrap()).sum();
    std::thread::sleep(std::time::Duration::from_millis(300));
    // A report of 4 MiB as sent (plain JSON, a long note): more than the 2 MiB that three
    // bodies of 42 MiB leave of the budget of all.
    let report = report_of("the API server is away", "https://10.43.0.2:443", Some(&"x".repeat(4 << 20)));
    let other = request(
        s.addr,
        "POST",
        "/api/v1/agent/cycles",
        &[("Authorization", &format!("Bearer {OTHER_AGENT_TOKEN}"))],
        &serde_json::to_vec(&report).unwrap(),
    );
    drop(release_tx);
    let answers: Vec<Option<u16>> = held.into_iter().map(|t| t.join().unwrap()).collect();
    println!("edge's 3 slow bodies ({sent} MiB sent): answers {answers:?}; edge-2's report: {}", other.status);
    assert_eq!(other.status, 200, "{}", other.body);
    assert!(s.log().contains("as it takes at once from this cluster (64 MiB)"), "{}", s.log());
}

/// Second round, item 5: what an agent says (its error, its note, its address) is shown
/// cleaned of every secret the server knows: another cluster's agent token, the admin
/// password, a notifier's bearer token, and its own token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_secret_is_redacted_from_what_an_agent_says() {
    use common::agent::AGENT_TOKEN;
    let (admin_password, bearer) = ("admin-password-redacted-3c9e", "notifier-bearer-token-77a1d0e4");
    register_secret(admin_password);
    register_secret(bearer);
    let receiver = common::receiver::Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let password_file = dir.path().join("admin.password");
    std::fs::write(&password_file, admin_password).unwrap();
    let extra = format!(
        "[auth.admin]\nusername = \"admin\"\npassword_file = {:?}\n\n\
         [[notifier]]\ntype = \"webhook\"\nurl = \"{}/hook\"\nbearer_token = {bearer:?}\n",
        path(&password_file),
        receiver.url()
    );
    let s = serve_two_agents(dir.path(), &extra);
    let all = format!("{OTHER_AGENT_TOKEN} {admin_password} {bearer} {AGENT_TOKEN}");
    let report = small_report(
        &format!("dial tcp: refused, tried with {all}"),
        &format!("https://10.43.0.1:443/{admin_password}"),
        Some(&format!("my buffer is full; tokens {all}")),
    );
    let r = push_as_edge(&s, &report);
    assert_eq!(r.status, 200, "{}", r.body);
    let api = s.wait_for("/api/v1/clusters/edge", "the report taken", |r| r.body.contains("dial tcp: refused"));
    let page = s.get("/clusters/edge");
    let list = s.get("/api/v1/clusters");
    for (what, text) in
        [("the API's cluster", &api.body), ("the cluster's page", &page.body), ("the clusters", &list.body)]
    {
        for secret in [OTHER_AGENT_TOKEN, admin_password, bearer, AGENT_TOKEN] {
            assert!(!text.contains(secret), "{what} shows a secret: {text}");
        }
    }
    assert!(api.body.contains("tried with [redacted] [redacted] [redacted] [redacted]"), "{}", api.body);
    assert!(page.body.contains("[redacted]"), "{}", page.body);
}

/// Second round, item 6: a wrong-password flood from 20 addresses (6 each, all at once) makes
/// a fresh valid login wait for a few password checks at most, not behind the whole flood;
/// a header verified before passes at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_distributed_flood_of_wrong_passwords_does_not_hold_a_valid_login() {
    let _one = measured().await;
    let (admin_pass, viewer_pass) = ("spread-admin-password-1c7e", "spread-viewer-password-5d20");
    let dir = tempfile::tempdir().unwrap();
    let s = serve_with_bcrypt_accounts(dir.path(), admin_pass, viewer_pass);
    let admin = basic("admin", admin_pass);
    // One check, timed: what a login costs with nothing in its way.
    let started = std::time::Instant::now();
    assert_eq!(s.get_with("/", &admin).status, 200);
    let one_check = started.elapsed();

    let mut flood = Vec::new();
    for a in 0..20u8 {
        for n in 0..6 {
            let addr = s.addr;
            flood.push(tokio::spawn(async move {
                let from: std::net::IpAddr = format!("127.0.0.{}", 10 + a).parse().unwrap();
                status_from(from, addr, "/", &basic("viewer", &format!("guess-{a}-{n}"))).await
            }));
        }
    }
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let fresh: std::net::IpAddr = "127.0.0.60".parse().unwrap();
    let started = std::time::Instant::now();
    let first = status_from(fresh, s.addr, "/", &basic("viewer", viewer_pass)).await;
    let first_took = started.elapsed();
    let started = std::time::Instant::now();
    let remembered = s.get_with("/", &admin).status;
    let remembered_took = started.elapsed();
    let mut statuses = std::collections::BTreeMap::<u16, u32>::new();
    for f in flood {
        *statuses.entry(f.await.unwrap()).or_default() += 1;
    }
    // Then the valid login goes through, from the same address.
    let mut then = first;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while then != 200 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        then = status_from(fresh, s.addr, "/", &basic("viewer", viewer_pass)).await;
    }
    println!(
        "one check {one_check:?}; during a flood from 20 addresses: a fresh valid login answered {first} in {first_took:?}, a verified header {remembered} in {remembered_took:?}; the flood's answers {statuses:?}"
    );
    assert!(
        first_took < one_check * 5 + std::time::Duration::from_millis(300),
        "a fresh valid login waited {first_took:?} (one check: {one_check:?})"
    );
    assert!([200, 429].contains(&first), "{first}");
    assert_eq!(then, 200, "the valid login goes through");
    assert_eq!(remembered, 200);
    assert!(remembered_took < std::time::Duration::from_millis(500), "a verified header waited {remembered_took:?}");
    assert!(statuses.get(&429).is_some_and(|n| *n > 0), "the flood is told to wait: {statuses:?}");
}

/// Second round, item 7: the agents' door answers a wrong or absent token 401 whatever
/// cluster it names (it tells nobody which clusters are read through an agent); a valid token
/// that names another cluster is told it is none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_door_tells_a_wrong_token_nothing() {
    use common::agent::AGENT_TOKEN;
    let dir = tempfile::tempdir().unwrap();
    let s = serve_an_agents_cluster(dir.path());
    let push = |auth: &str, cluster: &str| {
        let mut headers = vec![("DumbMonit-Cluster", cluster)];
        if !auth.is_empty() {
            headers.push(("Authorization", auth));
        }
        request(s.addr, "POST", "/api/v1/agent/cycles", &headers, b"{}").status
    };
    let wrong = "Bearer agent-token-of-nobody-00000000";
    assert_eq!(push(wrong, "edge"), 401);
    assert_eq!(push(wrong, "nowhere"), 401, "a name no agent's cluster has: the same answer");
    assert_eq!(push("", "nowhere"), 401);
    assert_eq!(push("", "edge"), 401);
    assert_eq!(push(&format!("Bearer {AGENT_TOKEN}"), "nowhere"), 404, "a valid token is told");
}

/// Second round, item 8: a form's POST that says neither its Origin nor its Sec-Fetch-Site is
/// refused, even with the session's cookie and CSRF token, as the docs say; one that says it
/// comes from this site is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_post_that_says_no_origin_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve_with_admins(dir.path(), &[]);
    let b = Browser::open(&s, "/silences/new");
    let form = {
        let mut f = form_urlencoded::Serializer::new(String::new());
        f.append_pair("csrf", &b.csrf).append_pair("matchers", "pod=\"api-0\"").append_pair("duration", "2h");
        f.finish()
    };
    let post = |extra: Option<(&str, &str)>| {
        let mut headers = vec![
            ("Authorization", ADMIN),
            ("Cookie", b.cookie.as_str()),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ];
        headers.extend(extra);
        request(s.addr, "POST", "/silences", &headers, form.as_bytes())
    };
    let r = post(None);
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.body.contains("says neither its Origin nor its Sec-Fetch-Site"), "{}", r.body);
    assert!(s.get("/api/v1/silences").json().as_array().unwrap().is_empty(), "nothing was made");
    assert!(s.log().contains("a change was refused: it says neither its Origin nor its Sec-Fetch-Site"), "{}", s.log());
    let r = post(Some(("Sec-Fetch-Site", "same-origin")));
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(post(Some(("Sec-Fetch-Site", "cross-site"))).status, 403);
}

/// Second round, item 9: "Only these namespaces" is capped (100): a Test with 2,000 is refused
/// before any request, the file's too; a Test with 100 sends a bounded number of requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_namespaces_read_apart_are_capped() {
    let _one = measured().await;
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let (ca, url) = (h.sim.ca_pem(), h.sim.url());
    let token = h.sim.token().to_string();
    let dir = tempfile::tempdir().unwrap();
    let s = serve_with_admins(dir.path(), &[]);
    let mut b = Browser::open(&s, "/clusters/new");
    let many: Vec<String> = (0..2000).map(|i| format!("team-{i}")).collect();
    let many = many.join(", ");
    let mut f = direct(&url, ca, &[("action", "test"), ("name", "lab"), ("token", &token)]);
    f.push(("namespaces", &many));
    let r = b.post("/clusters/new", &f);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("Namespaces: 2000 namespaces; a cluster is read in at most 100"), "{}", r.body);
    assert!(h.sim.requests().is_empty(), "nothing was sent: {} requests", h.sim.requests().len());

    let hundred: Vec<String> = (0..100).map(|i| format!("team-{i}")).collect();
    let hundred = hundred.join(", ");
    b.reopen("/clusters/new");
    let mut f = direct(&url, ca, &[("action", "test"), ("name", "lab"), ("token", &token)]);
    f.push(("namespaces", &hundred));
    let r = b.post("/clusters/new", &f);
    assert_eq!(r.status, 200, "{}", r.body);
    let sent = h.sim.requests().len();
    println!("a Test with 100 namespaces sent {sent} requests");
    // In each namespace: six core reads, the pods' usage, five optional kinds and its Namespace.
    assert!(sent <= 100 * 14 + 20, "{sent} requests");

    // The file's list too.
    let cfg = dir.path().join("many.toml");
    let names: Vec<String> = (0..101).map(|i| format!("\"team-{i}\"")).collect();
    std::fs::write(
        &cfg,
        format!(
            "listen = \"127.0.0.1:0\"\nstate_dir = {:?}\n[[cluster]]\nname = \"lab\"\naddress = {url:?}\ntoken_file = {:?}\nca_file = {:?}\nnamespaces = [{}]\n",
            path(&dir.path().join("other-state")),
            path(&h.token_file),
            path(&h.ca_file),
            names.join(", ")
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
        .args(["serve", "--config", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("field `namespaces`: 101 namespaces; a cluster is read in at most 100"), "{stderr}");
}

/// Second round, item 10: comments are capped (4 KiB), so are the silences in force (1,000)
/// and the maintenance windows (1,000); /silences shows them 100 at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silences_windows_and_their_comments_are_capped_and_listed_a_page_at_a_time() {
    let _one = measured().await;
    let dir = tempfile::tempdir().unwrap();
    let s = serve_with_admins(dir.path(), &[]);
    let ends = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(2)).to_string();
    let silence = |i: usize, comment: &str| serde_json::json!({"matchers": [{"name": "pod", "value": format!("api-{i}")}], "endsAt": ends, "comment": comment});
    let r = as_admin(&s, "POST", "/api/v1/silences", &silence(0, &"c".repeat(60_000)));
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"], "field `comment`: 60000 bytes; it has at most 4096");
    let window = |i: usize, comment: &str| serde_json::json!({"cluster": format!("edge-{i}"), "startsAt": jiff::Timestamp::now().to_string(), "endsAt": ends, "comment": comment});
    let r = as_admin(&s, "POST", "/api/v1/maintenance", &window(0, &"c".repeat(60_000)));
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"], "field `comment`: 60000 bytes; it has at most 4096");

    let comment = "c".repeat(4096);
    for i in 0..300 {
        assert_eq!(as_admin(&s, "POST", "/api/v1/silences", &silence(i, &comment)).status, 200, "silence {i}");
    }
    let page = s.get("/silences");
    let second = s.get("/silences?page=3");
    println!(
        "/silences with 300 silences of 4 KiB comments: {} bytes; its third page {} bytes",
        page.body.len(),
        second.body.len()
    );
    assert!(page.body.len() < 1 << 20, "{} bytes", page.body.len());
    assert!(page.body.contains("1–100 of 300") && page.body.contains("href=\"/silences?page=2\""), "paged");
    assert!(second.body.contains("201–300 of 300") && second.body.contains("api-299"), "the last page");
    for i in 300..1000 {
        assert_eq!(as_admin(&s, "POST", "/api/v1/silences", &silence(i, "")).status, 200, "silence {i}");
    }
    let r = as_admin(&s, "POST", "/api/v1/silences", &silence(1000, ""));
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["error"],
        "field `matchers`: 1000 silences are in force already, the most there may be: expire some first"
    );
    for i in 0..1000 {
        assert_eq!(as_admin(&s, "POST", "/api/v1/maintenance", &window(i, "")).status, 200, "window {i}");
    }
    let r = as_admin(&s, "POST", "/api/v1/maintenance", &window(1000, ""));
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"], "1000 maintenance windows are kept already, the most there may be: end some first");
}

/// Second round, item 11: characters that turn text around or hide it, in what an agent says,
/// are shown on the pages as visible escapes, as the log shows them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direction_and_control_characters_are_shown_as_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve_an_agents_cluster(dir.path());
    let report = small_report(
        "refused \u{1b}[31m by the API server",
        "https://10.43.0.1:443/\u{202e}gnp.exe",
        Some("a note \u{2066}isolated\u{2069}"),
    );
    let r = push_as_edge(&s, &report);
    assert_eq!(r.status, 200, "{}", r.body);
    let page = s.wait_for("/clusters/edge", "the report taken", |r| r.body.contains("by the API server"));
    for c in ['\u{202e}', '\u{1b}', '\u{2066}', '\u{2069}'] {
        assert!(!page.body.contains(c), "{c:?} on the page");
    }
    assert!(page.body.contains("https://10.43.0.1:443/\\u{202e}gnp.exe"), "{}", page.body);
    assert!(page.body.contains("refused \\u{1b}[31m by the API server"), "{}", page.body);
    for path in ["/", "/clusters"] {
        assert!(!s.get(path).body.contains('\u{202e}'), "{path}");
    }
}

/// The first request `receiver` gets from a serve of no cluster with these notifiers.
async fn first_heartbeat(notifiers: &str, receiver: &common::receiver::Receiver) -> common::receiver::Received {
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::web::write_config(dir.path(), notifiers, &[]);
    let _s = Served::start(&cfg, &[]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while receiver.received.lock().unwrap().is_empty() {
        assert!(std::time::Instant::now() < deadline, "no heartbeat reached the receiver");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    receiver.received.lock().unwrap()[0].clone()
}

/// Second round, item 12: a user and password in a webhook's URL are sent as basic
/// authentication (and the URL requested is without them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_and_password_in_a_notifiers_url_are_sent_as_basic_authentication() {
    use base64::Engine;
    let password = "url-password-5e1f-9a0b";
    register_secret(password);
    let receiver = common::receiver::Receiver::start().await;
    let url = receiver.url().replacen("http://", &format!("http://ops:{password}@"), 1);
    let extra = format!("[[notifier]]\ntype = \"webhook\"\nurl = \"{url}/hook\"\nheartbeat = \"1s\"\n");
    let got = first_heartbeat(&extra, &receiver).await;
    let expected = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("ops:{password}")));
    assert_eq!((got.path.as_str(), got.authorization.as_str()), ("/hook", expected.as_str()));
}

/// Found beside the second round: a webhook's `heartbeat_url` on another server (a dead man's
/// switch of another service) is never sent the webhook's own credentials; one on the same
/// server is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_mans_switch_elsewhere_is_not_sent_the_webhooks_token() {
    let token = "webhook-bearer-token-for-the-switch-31d9";
    register_secret(token);
    let (hook, switch) = (common::receiver::Receiver::start().await, common::receiver::Receiver::start().await);
    let extra = format!(
        "[[notifier]]\ntype = \"webhook\"\nurl = \"{}/hook\"\nbearer_token = {token:?}\nheartbeat = \"1s\"\nheartbeat_url = \"{}/ping\"\n",
        hook.url(),
        switch.url()
    );
    let got = first_heartbeat(&extra, &switch).await;
    assert_eq!((got.path.as_str(), got.authorization.as_str()), ("/ping", ""), "the switch is shown no token");
}
