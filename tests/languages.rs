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
    for away in ["//example.com/x", "https://example.com/", "/\\example.com"] {
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
    assert!(tested.body.contains("<strong>Le test a échoué.</strong> The API server refused the token (401)"), "{}", tested.body);
    assert!(tested.body.contains("Un jeton fait avec <code>kubectl create token</code> expire"), "{}", tested.body);
}

/// A cluster's hostile strings stay inert on the French pages, as on the English ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_strings_are_inert_in_french() {
    use dumbmonit_sim::fixtures::{Container, Event, Pod};
    let now = start();
    let evil = "<script>alert(\"pwned\")</script>";
    let mut cluster = scenario::trouble(now);
    cluster.pods.push(
        Pod::new("shop", "evil")
            .container(Container::waiting("app", "Evil\"<b>", Some(&format!("{evil} 'quoted' & more"))))
            .build(now),
    );
    cluster.events.push(Event::warning("Pod", "shop", "evil", "Bad<Reason>", evil).build(now));
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
