//! DumbMonit in English and in French: the pages chosen by `Accept-Language` and the
//! `dumbmonit_lang` cookie, the English pages as they were before French came (golden files), the
//! guide's French words on the form and the Cluster panel, and the hostile strings of a cluster
//! escaped in both languages.

mod common;

use std::path::{Path, PathBuf};

use common::Harness;
use common::web::{Response, Served, request};
use dumbmonit_sim::scenario;

/// Fixed times, so that a page is the same bytes at each run: the simulated cluster's objects
/// are dated from START, and every cycle happens at START (a step of 0).
const START: &str = "2026-12-01T06:35:00Z";

fn start() -> jiff::Timestamp {
    START.parse().unwrap()
}

const ADMIN: &str = "admin:admin-password-91d3";
const VIEWER: &str = "viewer:viewer-password-0b7e";

fn basic(user_pass: &str) -> String {
    use base64::Engine;
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(user_pass))
}

/// serve with the troubled cluster (and an unreachable one), viewers and an admin.
fn serve(dir: &Path, trouble: &Harness, extra: &str) -> Served {
    common::register_secret("admin-password-91d3");
    common::register_secret("viewer-password-0b7e");
    std::fs::write(dir.join("viewer.password"), "viewer-password-0b7e").unwrap();
    let hash = bcrypt::hash("admin-password-91d3", 4).unwrap();
    let auth = format!(
        "{extra}\n[auth]\nusername = \"viewer\"\npassword_file = {:?}\n\n[auth.admin]\nusername = \"admin\"\npassword_hash = {hash:?}\n",
        common::path(&dir.join("viewer.password"))
    );
    let cfg = common::web::write_config(dir, &auth, &[("trouble", trouble, "100ms")]);
    Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{START}/0"))])
}

fn page(s: &Served, path: &str, who: &str, headers: &[(&str, &str)]) -> Response {
    let auth = basic(who);
    let mut all = vec![("Authorization", auth.as_str())];
    all.extend_from_slice(headers);
    request(s.addr, "GET", path, &all, b"")
}

/// What differs from one run to the next and is not the page's: the simulator's and serve's
/// ports, how long a read took, the CSRF token, and what is drawn against the wall clock (the
/// history's time axis, « … ago »).
fn steady(body: &str, s: &Served, sim_url: &str) -> String {
    let mut body = body.replace(sim_url, "https://SIMULATOR").replace(&s.addr.to_string(), "SERVE");
    for (pattern, with) in [
        (r"\b\d+(?:\.\d+)? ?(?:ms|µs)\b", "DURATION"),
        (r#"name="csrf" value="[^"]*""#, r#"name="csrf" value="CSRF""#),
        (r">\d\d:\d\d</text>", ">HH:MM</text>"),
        (r#"points="[^"]*""#, r#"points="P""#),
        (r"\([^()<>]* ago\)", "(AGO)"),
        (r"\(il y a [^()<>]*\)", "(AGO)"),
    ] {
        body = regex::Regex::new(pattern).unwrap().replace_all(&body, with).into_owned();
    }
    body
}

/// The pages of the golden files: (file, path, who asks).
const PAGES: &[(&str, &str, &str)] = &[
    ("overview.html", "/", VIEWER),
    ("cluster.html", "/clusters/trouble", VIEWER),
    ("form.html", "/clusters/new", ADMIN),
    ("audit.html", "/audit", VIEWER),
    ("not-found.html", "/clusters/nope", VIEWER),
    ("refused.html", "/clusters/new", VIEWER),
];

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("golden").join(name)
}

/// The English pages, with no `Accept-Language` and with `en`, are the bytes they were before
/// the pages spoke French (bar the footer's language link), as kept in tests/golden/.
/// `DUMBMONIT_BLESS=1` writes the files anew.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn english_pages_are_as_they_were() {
    let trouble = Harness::start(scenario::trouble(start())).await;
    let dir = tempfile::tempdir().unwrap();
    let s = serve(dir.path(), &trouble, "");
    s.wait_for_with("/api/v1/clusters/trouble", &basic(VIEWER), "a first cycle", |r| {
        r.status == 200 && r.body.contains("\"status\":\"critical\"")
    });
    let bless = std::env::var("DUMBMONIT_BLESS").is_ok_and(|v| v == "1");
    for (file, path, who) in PAGES {
        let plain = steady(&page(&s, path, who, &[]).body, &s, &trouble.sim.url());
        let english = steady(&page(&s, path, who, &[("Accept-Language", "en-US,en;q=0.9")]).body, &s, &trouble.sim.url());
        assert_eq!(plain, english, "{path}: no header and `en` are the same page");
        let body = plain;
        if bless {
            std::fs::write(golden(file), &body).unwrap();
            continue;
        }
        let was = std::fs::read_to_string(golden(file)).unwrap();
        assert_eq!(without_language_link(&body), was, "{path} changed in English (see tests/golden/{file})");
    }
}

/// The footer's « English · Français » link, the one thing French added to the English pages.
fn without_language_link(body: &str) -> String {
    let link = regex::Regex::new(r#"<footer class="languages">.*?</footer>"#).unwrap();
    assert_eq!(link.find_iter(body).count(), 1, "one language link in the footer: {body}");
    link.replace(body, "").into_owned()
}
