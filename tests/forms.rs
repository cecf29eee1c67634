//! Clusters added, tested, edited and removed on the pages, in a real browser: Playwright (from
//! npm, `tests/browser`) driving Debian's Chromium against `serve` and the simulated API server
//! (`tests/browser/forms.mjs` holds the steps). Afterwards: the tokens are in no page, no log and
//! not in clear in the state directory. And over plain HTTP: what the file's clusters and
//! viewers may not do, and the follow-by-watch box kept with a cluster read directly.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::web::Served;
use common::{Harness, path, register_secret};
use dumbmonit_sim::scenario;

fn chromium() -> String {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|b| Path::new(b).exists())
        .expect("Chromium is needed: install the Debian package `chromium` (scripts/test.sh does)")
        .to_string()
}

fn playwright_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("browser");
    assert!(
        dir.join("node_modules").join("playwright-core").exists(),
        "playwright-core is needed: `npm ci` in tests/browser (scripts/test.sh does)"
    );
    dir
}

/// Every file under `dir`, as bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_is_added_tested_edited_and_removed_in_a_browser() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let dir = tempfile::tempdir().unwrap();
    let (admin_pass, viewer_pass) = ("admin-password-5e1f", "viewer-password-77c2");
    register_secret(admin_pass);
    register_secret(viewer_pass);
    std::fs::write(dir.path().join("viewer.password"), viewer_pass).unwrap();
    let hash = bcrypt::hash(admin_pass, 4).unwrap();
    let auth = format!(
        "[auth]\nusername = \"viewer\"\npassword_file = {:?}\n\n[auth.admin]\nusername = \"admin\"\npassword_hash = {hash:?}\n",
        path(&dir.path().join("viewer.password"))
    );
    // No cluster in the file: every one comes from the pages.
    let cfg = common::web::write_config(dir.path(), &auth, &[]);
    let s = Served::start(&cfg, &[]);

    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let agent_token_out = dir.path().join("agent-token");
    let run = Command::new("node")
        .arg("forms.mjs")
        .current_dir(playwright_dir())
        .env("BASE", format!("http://{}", s.addr))
        .env("ADMIN", format!("admin:{admin_pass}"))
        .env("VIEWER", format!("viewer:{viewer_pass}"))
        .env("SIM", h.sim.url())
        .env("TOKEN_FILE", &h.token_file)
        .env("CA_FILE", &h.ca_file)
        .env("SHOTS", &artifacts)
        .env("CHROMIUM", chromium())
        .env("AGENT_TOKEN_OUT", &agent_token_out)
        .output()
        .expect("node runs (Node.js from Debian or nodejs.org)");
    let (stdout, stderr) = (String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    common::assert_no_secret(&stdout, "the browser test's output");
    common::assert_no_secret(&stderr, "the browser test's errors");
    assert!(run.status.success(), "the browser steps failed:\n{stdout}\n{stderr}\nserve's log:\n{}", s.log());
    println!("{stdout}");
    for step in
        ["a wrong token shows the 401", "a missing CA shows the certificate error", "the corrected entry tests healthy"]
    {
        assert!(stdout.contains(&format!("ok: {step}")), "{step}:\n{stdout}");
    }

    // The agent's token was shown once; from now on it is a secret like the others.
    let agent_token = std::fs::read_to_string(&agent_token_out).unwrap();
    assert!(agent_token.len() >= 32, "an agent token of 32 random bytes");
    register_secret(&agent_token);
    let sim_token = h.sim.token().to_string();
    for (file, bytes) in files(&dir.path().join("state")) {
        for secret in [sim_token.as_str(), agent_token.as_str(), admin_pass, viewer_pass] {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "a token is in clear in {}",
                file.display()
            );
        }
    }
    let key = std::fs::read_to_string(dir.path().join("state").join("secret.key")).unwrap();
    assert_eq!(key.trim().len(), 64, "the secret key was made in the state directory");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("state").join("secret.key")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let log = s.log();
    for change in
        ["audit: admin added cluster lab", "audit: admin changed cluster lab", "audit: admin removed cluster lab"]
    {
        assert!(log.contains(change), "{change} in the log:\n{log}");
    }
    // The agent's cluster stays, with its token sealed: it is watched after a restart, and its
    // door opens to the token that was shown.
    drop(s);
    let s = Served::start(&cfg, &[]);
    let auth = format!("Basic {}", base64_of(&format!("viewer:{viewer_pass}")));
    let page = s.get_with("/api/v1/clusters/edge", &auth);
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.json()["added_on_pages"].as_bool().unwrap());
    let settings = common::web::get(s.addr, "GET", "/api/v1/agent/settings", Some(&format!("Bearer {agent_token}")));
    assert_eq!(settings.status, 200, "the agent's door opens to its token: {}", settings.body);
    assert_eq!(settings.json()["settings"]["cluster"], "edge");
}

/// The status of a form POST sent as is.
fn post_raw(addr: std::net::SocketAddr, path: &str, authorization: &str, body: &str) -> u16 {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    let head = format!(
        "POST {path} HTTP/1.0\r\nHost: {addr}\r\nAuthorization: {authorization}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(head.as_bytes()).and_then(|_| s.write_all(body.as_bytes()));
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

fn base64_of(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clusters_of_the_file_are_read_only_and_without_admins_nothing_changes() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let dir = tempfile::tempdir().unwrap();
    // No [auth] and no [auth.admin]: everyone reads, nobody changes.
    let cfg = common::web::write_config(dir.path(), "", &[("from-file", &h, "100ms")]);
    let s = Served::start(&cfg, &[]);
    let page = s.wait_for("/clusters/from-file", "the first cycle", |r| r.body.contains("p class=\"counters\""));
    assert!(page.body.contains("From the configuration file"), "{}", page.body);
    let form = s.get("/clusters/new");
    assert_eq!(form.status, 403);
    assert!(form.body.contains("This monitor is read-only") && form.body.contains("[auth.admin]"), "{}", form.body);
    let post = common::web::get(s.addr, "POST", "/clusters/from-file/remove", None);
    assert_eq!(post.status, 403, "{}", post.body);
    assert!(s.get("/").body.contains("href=\"/clusters/from-file\""));
    drop(s);

    // With admins, a cluster of the file still cannot be edited or removed on the pages.
    let hash = bcrypt::hash("admin-password-5e1f", 4).unwrap();
    register_secret("admin-password-5e1f");
    let cfg = common::web::write_config(
        dir.path(),
        &format!("[auth.admin]\nusername = \"admin\"\npassword_hash = {hash:?}\n"),
        &[("from-file", &h, "100ms")],
    );
    let s = Served::start(&cfg, &[]);
    let admin = format!("Basic {}", base64_of("admin:admin-password-5e1f"));
    let edit = s.get_with("/clusters/from-file/edit", &admin);
    assert_eq!(edit.status, 404);
    assert!(edit.body.contains("comes from the configuration file"), "{}", edit.body);
    assert_eq!(s.get_with("/clusters/new", &admin).status, 200, "an admin opens the form");
    assert_eq!(post_raw(s.addr, "/clusters/new", &admin, &"a".repeat(100_000)), 413, "a form is at most 64 KiB");
    assert_eq!(post_raw(s.addr, "/clusters/new", &admin, "action=save&name=x"), 403, "no CSRF token");
    let anonymous = s.get("/clusters/new");
    assert_eq!(anonymous.status, 401, "without [auth] everyone reads; the form asks for the admin's credentials");
    assert!(anonymous.header("www-authenticate").is_some_and(|c| c.starts_with("Basic")));
    assert_eq!(s.get_with("/clusters/new", "Basic dmlld2VyOm5vcGU=").status, 403, "other credentials change nothing");
}

/// An admin's session on the forms: its cookie and the CSRF token of the form it opened.
struct Session {
    addr: std::net::SocketAddr,
    authorization: String,
    cookie: String,
    csrf: String,
}

impl Session {
    fn open(s: &Served, authorization: &str) -> Session {
        let r = common::web::request(s.addr, "GET", "/clusters/new", &[("Authorization", authorization)], b"");
        assert_eq!(r.status, 200, "{}", r.body);
        let cookie = r.header("set-cookie").expect("a new session").split(';').next().unwrap().to_string();
        let at = r.body.find("name=\"csrf\" value=\"").expect("a CSRF token") + "name=\"csrf\" value=\"".len();
        let csrf = r.body[at..].split('"').next().unwrap().to_string();
        Session { addr: s.addr, authorization: authorization.to_string(), cookie, csrf }
    }

    /// A form POST from a page of this server.
    fn post(&self, path: &str, fields: &[(&str, &str)]) -> common::web::Response {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("csrf", &self.csrf);
        for (k, v) in fields {
            form.append_pair(k, v);
        }
        let origin = format!("http://{}", self.addr);
        let headers = [
            ("Authorization", self.authorization.as_str()),
            ("Cookie", self.cookie.as_str()),
            ("Origin", origin.as_str()),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ];
        common::web::request(self.addr, "POST", path, &headers, form.finish().as_bytes())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_by_watch_is_kept_with_the_cluster_and_never_given_to_an_agents() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let dir = tempfile::tempdir().unwrap();
    let admin_token = "admin-token-forms-watch-3c1d9e7a";
    register_secret(admin_token);
    let admin = format!("Bearer {admin_token}");
    let cfg = common::web::write_config(dir.path(), &format!("[auth.admin]\nbearer_token = {admin_token:?}\n"), &[]);
    let s = Served::start(&cfg, &[]);
    let f = Session::open(&s, &admin);
    let (url, ca, token) = (h.sim.url(), h.sim.ca_pem().to_string(), h.sim.token().to_string());
    let lab = |more: &[(&'static str, &'static str)]| {
        let mut fields = vec![("action", "save"), ("name", "lab"), ("address", url.as_str()), ("ca", ca.as_str())];
        fields.extend([("token", token.as_str()), ("interval", "1s")]);
        fields.extend_from_slice(more);
        fields
    };
    let checked = r#"<input type="checkbox" name="watch" checked>"#;
    let unchecked = r#"<input type="checkbox" name="watch">"#;
    assert!(s.get_with("/clusters/new", &admin).body.contains(unchecked), "the new cluster's box is unticked");

    let saved = f.post("/clusters/new", &lab(&[("watch", "on")]));
    assert_eq!(saved.status, 303, "{}", saved.body);
    let edit = s.get_with("/clusters/lab/edit", &admin);
    assert!(edit.body.contains(checked), "{}", edit.body);

    // A cluster read by its agent (the box sent by hand with its button and its edit): its edit
    // page has no box.
    let made = f.post("/clusters/new", &[("action", "agent"), ("name", "edge"), ("watch", "on")]);
    assert_eq!(made.status, 200, "{}", made.body);
    let shown = made.body.split("printf &#39;%s&#39; &#39;").nth(1).or_else(|| made.body.split("printf '%s' '").nth(1));
    register_secret(shown.expect("the agent's command").split(['&', '\'']).next().unwrap());
    let edge = s.get_with("/clusters/edge/edit", &admin);
    assert_eq!(edge.status, 200, "{}", edge.body);
    assert!(!edge.body.contains("name=\"watch\"") && !edge.body.contains("Follow by watch"), "{}", edge.body);
    let edited = f.post("/clusters/edge/edit", &[("action", "save"), ("interval", "60s"), ("watch", "on")]);
    assert_eq!(edited.status, 303, "{}", edited.body);

    // Kept in the state: after a restart, lab's box is still ticked, and edge still has none.
    drop(s);
    let s = Served::start(&cfg, &[]);
    assert!(s.get_with("/clusters/lab/edit", &admin).body.contains(checked));
    assert!(!s.get_with("/clusters/edge/edit", &admin).body.contains("name=\"watch\""));
    // Unticked and saved again: unticked from then on.
    let f = Session::open(&s, &admin);
    let saved = f.post("/clusters/lab/edit", &lab(&[]));
    assert_eq!(saved.status, 303, "{}", saved.body);
    assert!(s.get_with("/clusters/lab/edit", &admin).body.contains(unchecked));
}
