//! DumbMonit in English and in French: the pages chosen by `Accept-Language` and the
//! `dumbmonit_lang` cookie, the English pages as they were before French came (golden files), the
//! guide's French words on the form and the Cluster panel, and the hostile strings of a cluster
//! escaped in both languages.

mod common;

use std::path::{Path, PathBuf};

use common::Harness;
use common::alertmanager::{alertmanager, get};
use common::receiver::Receiver;
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

/// serve with the troubled cluster, viewers and an admin; every cycle at START.
fn serve(dir: &Path, trouble: &Harness, extra: &str) -> Served {
    serve_stepped(dir, trouble, extra, start(), 0)
}

/// The same, rule time moving `step` seconds a cycle.
fn serve_stepped(dir: &Path, trouble: &Harness, extra: &str, start: jiff::Timestamp, step: u32) -> Served {
    common::register_secret("admin-password-91d3");
    common::register_secret("viewer-password-0b7e");
    std::fs::write(dir.join("viewer.password"), "viewer-password-0b7e").unwrap();
    let hash = bcrypt::hash("admin-password-91d3", 4).unwrap();
    let auth = format!(
        "{extra}\n[auth]\nusername = \"viewer\"\npassword_file = {:?}\n\n[auth.admin]\nusername = \"admin\"\npassword_hash = {hash:?}\n",
        common::path(&dir.join("viewer.password"))
    );
    let cfg = common::web::write_config(dir, &auth, &[("trouble", trouble, "100ms")]);
    Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{start}/{step}"))])
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
    // The history charts are drawn from two points on: the golden page has them.
    s.wait_for_with("/clusters/trouble", &basic(VIEWER), "the history charts drawn", |r| {
        r.status == 200 && r.body.contains("<title>ready</title>")
    });
    let bless = std::env::var("DUMBMONIT_BLESS").is_ok_and(|v| v == "1");
    for (file, path, who) in PAGES {
        let plain = steady(&page(&s, path, who, &[]).body, &s, &trouble.sim.url());
        let english =
            steady(&page(&s, path, who, &[("Accept-Language", "en-US,en;q=0.9")]).body, &s, &trouble.sim.url());
        assert_eq!(plain, english, "{path}: no header and `en` are the same page");
        let body = plain;
        if bless {
            std::fs::write(golden(file), without_language_link(&body)).unwrap();
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

const FRENCH: (&str, &str) = ("Accept-Language", "fr-FR,fr;q=0.9");

/// An admin's session on the forms, in French: its cookie and the CSRF token of the form.
struct Session {
    cookie: String,
    csrf: String,
}

impl Session {
    fn open(s: &Served) -> Session {
        let r = page(s, "/clusters/new", ADMIN, &[FRENCH]);
        assert_eq!(r.status, 200, "{}", r.body);
        let cookie = r.header("set-cookie").expect("a new session").split(';').next().unwrap().to_string();
        let at = r.body.find("name=\"csrf\" value=\"").expect("a CSRF token") + "name=\"csrf\" value=\"".len();
        Session { cookie, csrf: r.body[at..].split('"').next().unwrap().to_string() }
    }

    fn post(&self, s: &Served, path: &str, fields: &[(&str, &str)]) -> Response {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("csrf", &self.csrf);
        for (k, v) in fields {
            form.append_pair(k, v);
        }
        let (auth, origin) = (basic(ADMIN), format!("http://{}", s.addr));
        let headers = [
            ("Authorization", auth.as_str()),
            ("Cookie", self.cookie.as_str()),
            ("Origin", origin.as_str()),
            ("Content-Type", "application/x-www-form-urlencoded"),
            FRENCH,
        ];
        request(s.addr, "POST", path, &headers, form.finish().as_bytes())
    }
}

/// With a French browser: the form in the guide's words, the troubled cluster's panel with its
/// French sections, sentence and rule titles, the wrong token's English error inside the guide's
/// French help; the cookie over the header; `Vary` on every answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_french_browser_reads_the_guides_words() {
    let trouble = Harness::start(scenario::trouble(start())).await;
    let dir = tempfile::tempdir().unwrap();
    let s = serve(dir.path(), &trouble, "");
    s.wait_for_with("/api/v1/clusters/trouble", &basic(VIEWER), "a first cycle", |r| {
        r.status == 200 && r.body.contains("\"status\":\"critical\"")
    });

    let form = page(&s, "/clusters/new", ADMIN, &[FRENCH]);
    assert!(form.body.starts_with("<!DOCTYPE html><html lang=\"fr\">"), "{}", form.body);
    for label in [
        "<label>Jeton de compte de service<input type=\"password\" name=\"token\"",
        "<label>Certificat CA du cluster (base64 ou PEM)<textarea name=\"ca\"",
        "<label>Port<input type=\"number\" name=\"port\"",
        "<input type=\"checkbox\" name=\"insecure\"> Accepter un certificat non vérifiable</label>",
        "<label>Délai par requête (de 100ms à 10m)<input type=\"text\" name=\"timeout\"",
        "<label>Namespaces ignorés<input type=\"text\" name=\"ignored\"",
        "<h1>Ajouter un cluster</h1>",
    ] {
        assert!(form.body.contains(label), "missing {label:?} in the French form:\n{}", form.body);
    }

    let panel = page(&s, "/clusters/trouble", VIEWER, &[FRENCH]);
    assert_eq!(panel.status, 200);
    let vary = panel.header("vary").unwrap_or_default().to_string();
    assert!(vary.contains("Accept-Language, Cookie"), "Vary: {vary}");
    for expected in [
        "<html lang=\"fr\">",
        "<h2>Nœuds</h2>",
        "<h2>Pods qui ont besoin d’attention (4)</h2>",
        "<h2>Workloads avec des répliques manquantes (4)</h2>",
        "<h2>Demandes de volume bloquées (1)</h2>",
        "<h2>Événements d’avertissement de la dernière heure, par raison</h2>",
        "<th>Ready</th><th>Pression</th><th>En cordon</th><th>Version kubelet</th>",
        // The one sentence, with CLDR plurals.
        "1 nœud non prêt, 1 pod en boucle de crash, 1 nœud sous pression, 1 pod bloqué, 3 pods en attente, \
         4 workloads avec des répliques manquantes, 1 demande de volume bloquée",
        "3 nœuds (2 prêts), 14 pods (11 en cours, 3 en attente, 0 en échec)",
        // The rules' titles in the guide's words, their names beside, the severities in French.
        "Nœud Kubernetes non prêt<br><span class=\"muted\">KubernetesNodeNotReady</span>",
        "Pod Kubernetes en boucle de crash<br><span class=\"muted\">KubernetesPodCrashLooping</span>",
        "Nœud Kubernetes sous pression",
        "Pod Kubernetes bloqué en attente",
        "Workload Kubernetes avec des répliques manquantes",
        "Demande de volume Kubernetes en attente",
        "<td class=\"critical\">Avertissement</td>",
        "<td class=\"notice\">Avis</td>",
        "Le nœud node-3 n’est pas prêt",
        "Deployment shop/api\u{a0}: 1 réplique manquante sur 3",
        // The cluster's own words are not translated.
        "NodeStatusUnknown: Kubelet stopped posting node status.",
    ] {
        assert!(panel.body.contains(expected), "missing {expected:?} in the French panel:\n{}", panel.body);
    }
    let silences = page(&s, "/silences", ADMIN, &[FRENCH]).body;
    for expected in ["<h2>Fenêtres de maintenance</h2>", "Aucun silence.", ">Nouveau silence</a>"] {
        assert!(silences.contains(expected), "missing {expected:?} in the French silences:\n{silences}");
    }
    let overview = page(&s, "/", VIEWER, &[("Accept-Language", "fr-CH,fr;q=0.9,en;q=0.5")]);
    assert!(overview.body.contains("<th>Nœuds prêts</th>"), "{}", overview.body);
    assert!(overview.body.contains("1 nœud non prêt, 1 pod en boucle de crash"), "{}", overview.body);
    // English for a reader who asks for German first, English second.
    let german = page(&s, "/", VIEWER, &[("Accept-Language", "de,en;q=0.8")]);
    assert!(german.body.contains("<html lang=\"en\">") && german.body.contains("1 node not ready"), "{}", german.body);

    // The cookie wins over the header, either way.
    let cookie_en = page(&s, "/clusters/trouble", VIEWER, &[FRENCH, ("Cookie", "dumbmonit_lang=en")]);
    assert!(cookie_en.body.contains("<h2>Nodes</h2>") && cookie_en.body.contains("<html lang=\"en\">"));
    let cookie_fr = page(&s, "/clusters/trouble", VIEWER, &[("Cookie", "other=1; dumbmonit_lang=fr")]);
    assert!(cookie_fr.body.contains("<h2>Nœuds</h2>"));
    // The footer's link sets it, and comes back to the page, never elsewhere.
    let link = page(&s, "/language/fr?back=%2Fclusters%2Ftrouble", VIEWER, &[]);
    assert_eq!(link.status, 303);
    assert_eq!(link.header("location"), Some("/clusters/trouble"));
    let set = link.header("set-cookie").unwrap();
    assert!(set.starts_with("dumbmonit_lang=fr;") && set.contains("SameSite=Strict"), "{set}");
    for away in ["//example.com/x", "https://example.com/", "/\\example.com", "/\t/example.com", "/\n/example.com"] {
        let q: String = form_urlencoded::byte_serialize(away.as_bytes()).collect();
        let r = page(&s, &format!("/language/en?back={q}"), VIEWER, &[]);
        assert_eq!(r.header("location"), Some("/"), "{away}");
    }
    assert!(cookie_fr.body.contains("href=\"/language/en?back=%2Fclusters%2Ftrouble\""), "{}", cookie_fr.body);

    // A wrong token: the error as the guide quotes it, in English, inside the French help.
    let session = Session::open(&s);
    let wrong = dir.path().join("wrong.token");
    std::fs::write(&wrong, "wrong-token-0000").unwrap();
    let ca = std::fs::read_to_string(&trouble.ca_file).unwrap();
    let tested = session.post(
        &s,
        "/clusters/new",
        &[
            ("name", "lab"),
            ("address", &trouble.sim.url()),
            ("token", "wrong-token-0000"),
            ("ca", &ca),
            ("timeout", "10s"),
            ("interval", "60s"),
            ("action", "test"),
        ],
    );
    assert_eq!(tested.status, 200, "{}", tested.body);
    assert!(
        tested.body.contains("<strong>Le test a échoué.</strong> The API server refused the token (401)"),
        "{}",
        tested.body
    );
    assert!(tested.body.contains("Un jeton fait avec <code>kubectl create token</code> expire"), "{}", tested.body);
    // What was entered and cannot be kept, said in French, the field by its French label.
    let refused = session.post(
        &s,
        "/clusters/new",
        &[("name", "lab"), ("address", "k3s.lan"), ("port", "0"), ("action", "test")],
    );
    assert!(
        refused.body.contains("<strong>Non enregistré.</strong> Port\u{a0}: un nombre de 1 à 65535 est attendu"),
        "{}",
        refused.body
    );
    let refused = session.post(
        &s,
        "/clusters/new",
        &[("name", "lab"), ("address", "k3s.lan"), ("timeout", "2h"), ("action", "test")],
    );
    assert!(refused.body.contains("Délai par requête\u{a0}: une durée de"), "{}", refused.body);
}

/// A cluster's hostile strings stay inert on the French pages, as on the English ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_strings_are_inert_in_french() {
    let mut cluster = scenario::trouble(start());
    common::fixture::add_hostile_pod(&mut cluster, start());
    let h = Harness::start(cluster).await;
    let dir = tempfile::tempdir().unwrap();
    let s = serve(dir.path(), &h, "");
    s.wait_for_with("/api/v1/clusters/trouble", &basic(VIEWER), "a first cycle", |r| {
        r.status == 200 && r.body.contains("\"status\":\"critical\"")
    });
    for path in ["/", "/clusters/trouble", "/clusters/%3Cscript%3E"] {
        let r = page(&s, path, VIEWER, &[FRENCH]);
        assert!(r.body.contains("<html lang=\"fr\">"), "{path}");
        assert!(!r.body.contains("<script") && !r.body.contains("<b>"), "{path}: markup is inert:\n{}", r.body);
    }
    let panel = page(&s, "/clusters/trouble", VIEWER, &[FRENCH]).body;
    assert!(panel.contains("&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;"), "{panel}");
    assert!(panel.contains("Bad&lt;Reason&gt;"));
    // And the footer's link cannot be made to carry markup.
    let r = page(&s, "/clusters/trouble?x=%22%3E%3Cscript%3E", VIEWER, &[FRENCH]);
    assert!(!r.body.contains("\"><script>"), "{}", r.body);
}

/// `language = "fr"` in the file: the webhooks and Alertmanager are told in French, but a
/// `[[notifier]]` of `language = "en"`; the labels and JSON fields are the same in both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_are_told_in_the_files_language() {
    // Rule time starts at Alertmanager's now and runs ahead: a firing alert sent from an earlier
    // time than four re-send periods before Alertmanager's clock would already be over there.
    let now = jiff::Timestamp::now();
    let trouble = Harness::start(scenario::trouble(now)).await;
    let dir = tempfile::tempdir().unwrap();
    let (french, english) = (Receiver::start().await, Receiver::start().await);
    let (_am, port) = alertmanager(dir.path());
    let extra = format!(
        "language = \"fr\"\nexternal_url = \"https://dumbmonit.example.com/\"\n\n[[notifier]]\ntype = \"webhook\"\nurl = \"{}/hook\"\n\n\
         [[notifier]]\ntype = \"webhook\"\nurl = \"{}/hook\"\nlanguage = \"en\"\n\n\
         [[notifier]]\ntype = \"alertmanager\"\nurl = \"http://127.0.0.1:{port}\"\n",
        french.url(),
        english.url()
    );
    // Rule time moves a minute a cycle: the node alert fires after five.
    let _s = serve_stepped(dir.path(), &trouble, &extra, now, 60);
    let told = |r: &Receiver, name: &str| -> Option<serde_json::Value> {
        r.bodies()
            .into_iter()
            .flat_map(|d| d["alerts"].as_array().cloned().unwrap_or_default())
            .find(|a| a["labels"]["alertname"] == name && a["status"] == "firing")
    };
    let node_alert = |r: &Receiver| told(r, "KubernetesNodeNotReady");
    let crash = |r: &Receiver| told(r, "KubernetesPodCrashLooping");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while node_alert(&french).is_none()
        || node_alert(&english).is_none()
        || crash(&french).is_none()
        || crash(&english).is_none()
    {
        assert!(std::time::Instant::now() < deadline, "the node and crash-loop alerts were never told");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // Our words inside the why are French too; the cluster's stay as they are.
    let (fr_crash, en_crash) = (crash(&french).unwrap(), crash(&english).unwrap());
    let fr_said = fr_crash["annotations"]["description"].as_str().unwrap();
    let en_said = en_crash["annotations"]["description"].as_str().unwrap();
    assert!(fr_said.contains("dernier code de sortie") && fr_said.contains("redémarrages"), "{fr_said}");
    assert!(en_said.contains("last exit code") && !en_said.contains("dernier"), "{en_said}");
    let (fr, en) = (node_alert(&french).unwrap(), node_alert(&english).unwrap());
    assert_eq!(fr["annotations"]["summary"], "Le nœud node-3 n’est pas prêt");
    assert_eq!(en["annotations"]["summary"], "Node node-3 is not ready");
    assert_eq!(fr["labels"], en["labels"], "labels are not translated");
    assert_eq!(fr["annotations"]["description"], en["annotations"]["description"], "the cluster's own words");
    // Each to its runbook in its own language, on the pages' address.
    assert_eq!(fr["annotations"]["runbook_url"], "https://dumbmonit.example.com/runbooks/fr#kubernetesnodenotready");
    assert_eq!(en["annotations"]["runbook_url"], "https://dumbmonit.example.com/runbooks/en#kubernetesnodenotready");

    // Debian's Alertmanager holds the French annotations.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (_, body) = get(port, "/api/v2/alerts").expect("Alertmanager answers");
        let alerts: Vec<serde_json::Value> = serde_json::from_str(&body).unwrap();
        if let Some(a) = alerts.iter().find(|a| a["labels"]["alertname"] == "KubernetesNodeNotReady") {
            assert_eq!(a["annotations"]["summary"], "Le nœud node-3 n’est pas prêt");
            assert_eq!(
                a["annotations"]["runbook_url"],
                "https://dumbmonit.example.com/runbooks/fr#kubernetesnodenotready"
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "Alertmanager never got the node alert: {body}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// `check` speaks the environment's language in text, and only there: `LANG=fr_FR.UTF-8` is
/// French, `LANG=C` English, `--lang` wins; JSON and Prometheus are the same bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_follows_lang_and_its_machine_outputs_do_not() {
    let h = Harness::start(scenario::trouble(jiff::Timestamp::now())).await;
    let run = |env: &'static [(&'static str, &'static str)], extra: &'static [&'static str]| {
        let h = &h;
        async move {
            let mut args = vec!["check".to_string(), h.sim.url()];
            args.extend([
                "--token-file".into(),
                common::path(&h.token_file),
                "--ca-file".into(),
                common::path(&h.ca_file),
            ]);
            args.extend(extra.iter().map(|s| s.to_string()));
            common::dumbmonit(&args, env, h.dir.path()).await
        }
    };
    let fr = run(&[("LANG", "fr_FR.UTF-8")], &[]).await;
    assert!(fr.stdout.starts_with("1 nœud non prêt, 1 pod en boucle de crash"), "{}", fr.stdout);
    assert!(fr.stdout.contains("Pods qui ont besoin d’attention (4)"), "{}", fr.stdout);
    assert!(fr.stdout.contains("POURQUOI"), "{}", fr.stdout);
    let c = run(&[("LANG", "C")], &[]).await;
    assert!(c.stdout.starts_with("1 node not ready, 1 pod crash-looping"), "{}", c.stdout);
    assert!(c.stdout.contains("Pods needing attention (4)") && c.stdout.contains("WHY"), "{}", c.stdout);
    assert_eq!(fr.code, c.code);
    let forced = run(&[("LANG", "fr_FR.UTF-8")], &["--lang", "en"]).await;
    assert_eq!(forced.stdout, c.stdout, "--lang wins over the environment");
    let lc_all = run(&[("LANG", "C"), ("LC_ALL", "fr_FR.UTF-8")], &[]).await;
    assert_eq!(lc_all.stdout, fr.stdout, "LC_ALL wins over LANG");
    // What differs from one read to the next: durations, times, sizes.
    let varies = regex::Regex::new(r"\d+\.\d+|\d{4}-\d\d-\d\dT[0-9:.]+Z|\d{6,}").unwrap();
    let steady = |t: &str| varies.replace_all(t, "N").into_owned();
    for output in ["json", "prometheus"] {
        let extra: &'static [&'static str] =
            if output == "json" { &["--output", "json"] } else { &["--output", "prometheus"] };
        let (fr, en) = (run(&[("LANG", "fr_FR.UTF-8")], extra).await, run(&[("LANG", "C")], extra).await);
        assert_eq!(steady(&fr.stdout), steady(&en.stdout), "{output} is the same in both languages");
        assert!(!fr.stdout.contains("nœud"), "{output}");
    }
}

/// `dumbmonit rules --lang fr` passes promtool, its annotations in French; the default stays
/// English whatever the environment (a rule file is shared).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_french_rule_file_passes_promtool() {
    let dir = tempfile::tempdir().unwrap();
    let fr = common::dumbmonit(&["rules".into(), "--lang".into(), "fr".into()], &[], dir.path()).await;
    assert_eq!(fr.code, 0, "{}", fr.stderr);
    std::fs::write(dir.path().join("rules.yml"), &fr.stdout).unwrap();
    let out = std::process::Command::new("promtool")
        .args(["check", "rules", "rules.yml"])
        .current_dir(dir.path())
        .output()
        .expect("promtool is needed: install the Debian package `prometheus` (scripts/test.sh does)");
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && report.contains("SUCCESS: 39 rules found"), "{report}");
    assert!(fr.stdout.contains("summary: 'Le nœud {{ $labels.node }} n’est pas prêt'"), "{}", fr.stdout);
    assert!(fr.stdout.contains("- alert: KubernetesNodeNotReady"), "alert names are not translated");
    let en = common::dumbmonit(&["rules".into()], &[("LANG", "fr_FR.UTF-8")], dir.path()).await;
    assert!(en.stdout.contains("summary: 'Node {{ $labels.node }} is not ready'"), "{}", en.stdout);
    assert_eq!(
        fr.stdout
            .lines()
            .filter(|l| !l.trim_start().starts_with("summary:") && !l.trim_start().starts_with("description:"))
            .collect::<Vec<_>>(),
        en.stdout
            .lines()
            .filter(|l| !l.trim_start().starts_with("summary:") && !l.trim_start().starts_with("description:"))
            .collect::<Vec<_>>(),
        "only the annotations differ"
    );
}

/// The Playwright test of the cluster form, once more in French (`tests/browser/forms-fr.mjs`),
/// in Debian's Chromium; it leaves the French form and panel in artifacts/ (the docs' pictures).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_form_in_a_french_browser() {
    let trouble = Harness::start(scenario::trouble(jiff::Timestamp::now())).await;
    let dir = tempfile::tempdir().unwrap();
    let s = serve_stepped(dir.path(), &trouble, "", start(), 60);
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|b| Path::new(b).exists())
        .expect("Chromium is needed: install the Debian package `chromium` (scripts/test.sh does)");
    let browser = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("browser");
    assert!(
        browser.join("node_modules").join("playwright-core").exists(),
        "playwright-core is needed: `npm ci` in tests/browser (scripts/test.sh does)"
    );
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let run = std::process::Command::new("node")
        .arg("forms-fr.mjs")
        .current_dir(&browser)
        .env("BASE", format!("http://{}", s.addr))
        .env("ADMIN", ADMIN)
        .env("SIM", trouble.sim.url())
        .env("TOKEN_FILE", &trouble.token_file)
        .env("CA_FILE", &trouble.ca_file)
        .env("SHOTS", &artifacts)
        .env("CHROMIUM", chromium)
        .output()
        .expect("node runs");
    let out = format!("{}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "the French browser steps failed:\n{out}\nlog:\n{}", s.log());
    assert!(out.contains("ok: and French again"), "{out}");
    common::assert_no_secret(&out, "the browser's output");
}
