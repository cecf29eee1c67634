//! The notifiers that reach people where they are, each against a receiver that checks its
//! format as the real service documents it: Slack's messages type-checked against Slack's own
//! Block Kit types (`@slack/types` from npm, by TypeScript), Teams' cards parsed and validated
//! by Microsoft's Adaptive Cards library (`adaptivecards` from npm), PagerDuty's events against the
//! Events API v2 fields (trigger → acknowledge → resolve with one `dedup_key`). Then routing by
//! `matchers` and `min_severity`, and a receiver that refuses one notification and takes the
//! rest. Against the simulator, on the stepped clock.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::receiver::{Received, Receiver};
use common::web::{Served, request};
use common::{Harness, register_secret};
use dumbmonit_sim::scenario;
use serde_json::{Value, json};

fn wait(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ok() {
        assert!(Instant::now() < deadline, "waited in vain for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// As [`wait`], saying serve's log when the wait is in vain.
fn wait_on(s: &Served, what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ok() {
        assert!(Instant::now() < deadline, "waited in vain for {what}; serve's log:\n{}", s.log());
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn received(r: &Receiver) -> Vec<Received> {
    r.received.lock().unwrap().clone()
}

const ADMIN: &str = "admin-token-notifiers-7d41c9e2";

fn admin_section() -> String {
    register_secret(ADMIN);
    format!("[auth.admin]\nbearer_token = {ADMIN:?}\n\n")
}

/// tests/formats, where `npm ci` put TypeScript and Slack's types (scripts/test.sh does).
fn formats() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/formats");
    assert!(
        dir.join("node_modules/@slack/types").is_dir() && dir.join("node_modules/typescript").is_dir(),
        "Slack's types are needed: run `npm ci` in tests/formats (scripts/test.sh does)"
    );
    dir
}

/// What TypeScript says of `messages` typed as incoming-webhook messages of Slack's Block Kit
/// types: None when they type-check, else its errors.
fn slack_type_errors(messages: &[Value]) -> Option<String> {
    let formats = formats();
    let dir = tempfile::tempdir().unwrap();
    let types = formats.join("node_modules/@slack/types");
    let source = format!(
        "import type {{ KnownBlock }} from {:?};\n\
         interface IncomingWebhookMessage {{ text: string; blocks: KnownBlock[] }}\n\
         export const messages: IncomingWebhookMessage[] = {};\n",
        types.to_str().unwrap(),
        serde_json::to_string_pretty(messages).unwrap()
    );
    let file = dir.path().join("messages.ts");
    std::fs::write(&file, source).unwrap();
    let out = Command::new("node")
        .arg(formats.join("node_modules/typescript/bin/tsc"))
        .args(["--noEmit", "--strict", "--target", "es2020", "--module", "commonjs", "--moduleResolution", "node"])
        .arg(&file)
        .output()
        .expect("node runs TypeScript");
    (!out.status.success())
        .then(|| format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// Slack's limits that its types do not say: a header's 150 characters, a text's 3,000, 50
/// blocks, 10 elements of a context.
fn slack_limit_problems(m: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let blocks = m["blocks"].as_array().cloned().unwrap_or_default();
    if blocks.is_empty() || blocks.len() > 50 {
        problems.push(format!("{} blocks", blocks.len()));
    }
    for b in &blocks {
        let text = b["text"]["text"].as_str().unwrap_or_default().chars().count();
        match b["type"].as_str() {
            Some("header") if text > 150 => problems.push(format!("a header of {text} characters")),
            Some("section") if text > 3000 => problems.push(format!("a section of {text} characters")),
            Some("context") if b["elements"].as_array().is_none_or(|e| e.len() > 10) => {
                problems.push("a context of more than 10 elements".into())
            }
            _ => {}
        }
    }
    problems
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_is_sent_one_block_kit_message_a_cycle_that_slacks_own_types_accept() {
    // The check can fail: a header of mrkdwn text and a block Slack does not know are refused.
    let wrong = json!([{"text": "x", "blocks": [{"type": "header", "text": {"type": "mrkdwn", "text": "x"}}]},
                       {"text": "x", "blocks": [{"type": "banner", "text": "x"}]}]);
    let said = slack_type_errors(wrong.as_array().unwrap()).expect("a wrong message does not type-check");
    assert!(said.contains("messages.ts(") && said.contains("error TS2322") && said.contains("\"banner\""), "{said}");

    let now = jiff::Timestamp::now();
    let h = Harness::start(scenario::trouble(now)).await;
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    // The webhook's URL is its secret: given in a file, never in the log.
    let secret = "Xk9sL2pQ7vN4mR8tZ1wY6uBc";
    register_secret(secret);
    let url_file = dir.path().join("slack.url");
    std::fs::write(&url_file, format!("{}/services/T0DUMB01/B0MONIT1/{secret}\n", receiver.url())).unwrap();
    let notifier = format!(
        "external_url = \"https://dumbmonit.example.com/\"\n\n[[notifier]]\ntype = \"slack\"\nname = \"ops-chat\"\nurl_file = {:?}\n\n",
        common::path(&url_file)
    );
    let cfg = common::web::write_config(dir.path(), &notifier, &[("lab", &h, "200ms")]);
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{now}/60"))]);

    // The trouble's alerts: several fire in one cycle, told in one message.
    wait("a message of several alerts", || {
        received(&receiver).iter().any(|r| {
            serde_json::from_str::<Value>(&r.body).is_ok_and(|m| m["blocks"].as_array().is_some_and(|b| b.len() >= 4))
        })
    });
    h.sim.set_cluster(scenario::healthy(now));
    wait("a resolution", || received(&receiver).iter().any(|r| r.body.contains("Resolved after ")));
    let got = received(&receiver);
    assert!(got.iter().all(|r| r.path == format!("/services/T0DUMB01/B0MONIT1/{secret}")), "{:?}", got[0].path);
    let messages: Vec<Value> = got.iter().map(|r| serde_json::from_str(&r.body).unwrap()).collect();
    if let Some(errors) = slack_type_errors(&messages) {
        panic!("Slack's types refuse a message:\n{errors}");
    }
    for m in &messages {
        assert_eq!(slack_limit_problems(m), Vec::<String>::new(), "{m}");
    }
    let several = messages.iter().find(|m| m["blocks"].as_array().unwrap().len() >= 4).unwrap();
    let header = several["blocks"][0]["text"]["text"].as_str().unwrap();
    assert!(header.starts_with("lab: ") && header.contains(" more"), "{header}");
    let context = several["blocks"].as_array().unwrap().last().unwrap();
    assert_eq!(context["elements"][0]["text"], "<https://dumbmonit.example.com/clusters/lab|lab on DumbMonit>");
    let sections: Vec<&str> = several["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "section")
        .map(|b| b["text"]["text"].as_str().unwrap())
        .collect();
    assert!(
        sections.iter().all(|t| t.starts_with("*Firing* · ") && t.contains("/runbooks/en#kubernetes")),
        "{sections:?}"
    );
    // The log names the notifier and its host, never the path that is the secret.
    let log = s.log();
    assert!(!log.contains("B0MONIT1"), "{log}");
}

/// What Microsoft's Adaptive Cards library says of Teams messages (tests/formats/adaptive-cards.cjs):
/// None when every card parses and validates at its declared version, 1.4 or lower.
fn teams_card_problems(messages: &[Value]) -> Option<String> {
    let formats = formats();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("messages.json");
    std::fs::write(&file, serde_json::to_string(messages).unwrap()).unwrap();
    let out = Command::new("node").arg(formats.join("adaptive-cards.cjs")).arg(&file).output().expect("node runs");
    (!out.status.success())
        .then(|| format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teams_is_sent_adaptive_cards_that_microsofts_library_validates() {
    // The check can fail: a card of a version Teams does not render, a weight that is none.
    let card = |version: &str, weight: &str| {
        json!({"type": "message", "attachments": [{"contentType": "application/vnd.microsoft.card.adaptive",
            "content": {"type": "AdaptiveCard", "version": version,
                "body": [{"type": "RichTextBlock", "inlines": [{"type": "TextRun", "text": "x", "weight": weight}]}]}}]})
    };
    let said = teams_card_problems(&[card("1.5", "Bolder"), card("1.4", "Heavy")]).expect("wrong cards are refused");
    assert!(
        said.contains("message 0: card version \"1.5\"") && said.contains("message 1: Invalid value \"Heavy\""),
        "{said}"
    );
    assert_eq!(teams_card_problems(&[card("1.4", "Bolder")]), None);

    let now = jiff::Timestamp::now();
    let h = Harness::start(scenario::trouble(now)).await;
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let secret = "sig=Qz7TeamsWorkflowSignature0042";
    register_secret(secret);
    let url_file = dir.path().join("teams.url");
    std::fs::write(
        &url_file,
        format!("{}/workflows/7f3a/triggers/manual/run?api-version=1&{secret}\n", receiver.url()),
    )
    .unwrap();
    let notifier =
        format!("[[notifier]]\ntype = \"teams\"\nurl_file = {:?}\nlanguage = \"fr\"\n\n", common::path(&url_file));
    let cfg = common::web::write_config(dir.path(), &notifier, &[("lab", &h, "200ms")]);
    let _s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{now}/60"))]);
    wait("a card of several alerts", || received(&receiver).iter().any(|r| r.body.contains(" autres")));
    h.sim.set_cluster(scenario::healthy(now));
    wait("a resolution", || received(&receiver).iter().any(|r| r.body.contains("Résolue après ")));
    let got = received(&receiver);
    assert!(
        got.iter()
            .all(|r| r.path == "/workflows/7f3a/triggers/manual/run" && r.query == format!("api-version=1&{secret}"))
    );
    let messages: Vec<Value> = got.iter().map(|r| serde_json::from_str(&r.body).unwrap()).collect();
    if let Some(problems) = teams_card_problems(&messages) {
        panic!("Microsoft's library refuses a card:\n{problems}");
    }
    assert!(got.iter().all(|r| r.body.len() < 28_000));
    let card = &messages[0]["attachments"][0]["content"];
    assert!(card["body"][0]["inlines"][0]["text"].as_str().unwrap().starts_with("lab: "), "{card}");
    assert_eq!(card["actions"][0]["title"], "lab sur DumbMonit");
}

/// The Events API v2 as PagerDuty documents it: what is wrong with one event.
fn events_v2_problems(e: &Value, routing_key: &str) -> Vec<String> {
    let mut p = Vec::new();
    let known = ["routing_key", "event_action", "dedup_key", "payload", "images", "links", "client", "client_url"];
    for key in e.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
        if !known.contains(&key.as_str()) {
            p.push(format!("unknown field {key}"));
        }
    }
    if e["routing_key"] != routing_key {
        p.push("not the routing key".into());
    }
    let key = e["dedup_key"].as_str().unwrap_or_default();
    if key.is_empty() || key.len() > 255 {
        p.push(format!("dedup_key {key:?}"));
    }
    match e["event_action"].as_str() {
        Some("trigger") => {
            let payload = &e["payload"];
            let summary = payload["summary"].as_str().unwrap_or_default();
            if summary.is_empty() || summary.chars().count() > 1024 {
                p.push(format!("summary of {} characters", summary.chars().count()));
            }
            if payload["source"].as_str().is_none_or(str::is_empty) {
                p.push("no source".into());
            }
            if !["critical", "error", "warning", "info"].contains(&payload["severity"].as_str().unwrap_or_default()) {
                p.push(format!("severity {}", payload["severity"]));
            }
            if payload["timestamp"].as_str().is_some_and(|t| t.parse::<jiff::Timestamp>().is_err()) {
                p.push("a timestamp that is not ISO 8601".into());
            }
            if !payload["custom_details"].is_object() {
                p.push("custom_details not an object".into());
            }
            for l in e["links"].as_array().cloned().unwrap_or_default() {
                if l["href"].as_str().is_none_or(|h| !h.starts_with("http")) {
                    p.push(format!("link {l}"));
                }
            }
        }
        Some("acknowledge" | "resolve") => {}
        other => p.push(format!("event_action {other:?}")),
    }
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pagerduty_is_triggered_acknowledged_and_resolved_with_one_dedup_key() {
    let now = jiff::Timestamp::now();
    let mut cluster = scenario::healthy(now);
    scenario::crash_loop(&mut cluster, now);
    let h = Harness::start(cluster).await;
    let stand_in = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let routing_key = "R0ut1ngK3yOfTh3Int3grat10n00042";
    register_secret(routing_key);
    let key_file = dir.path().join("pagerduty.key");
    std::fs::write(&key_file, format!("{routing_key}\n")).unwrap();
    let notifier = format!(
        "{}[[notifier]]\ntype = \"pagerduty\"\nurl = \"{}\"\nrouting_key_file = {:?}\n\n",
        admin_section(),
        stand_in.url(),
        common::path(&key_file)
    );
    let cfg = common::web::write_config(dir.path(), &notifier, &[("lab", &h, "200ms")]);
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{now}/60"))]);
    let events =
        || -> Vec<Value> { received(&stand_in).iter().map(|r| serde_json::from_str(&r.body).unwrap()).collect() };
    let of_crash = |es: &[Value], action: &str| -> Option<Value> {
        es.iter()
            .find(|e| {
                e["event_action"] == action
                    && (action != "trigger" || e["payload"]["class"] == "KubernetesPodCrashLooping")
            })
            .cloned()
    };

    wait("the crash loop's trigger", || of_crash(&events(), "trigger").is_some());
    let trigger = of_crash(&events(), "trigger").unwrap();
    let key = trigger["dedup_key"].as_str().unwrap().to_string();
    assert_eq!(trigger["payload"]["severity"], "warning");
    assert_eq!(trigger["payload"]["source"], "lab");
    assert_eq!(trigger["payload"]["group"], "shop");
    assert_eq!(trigger["payload"]["custom_details"]["labels"]["alertname"], "KubernetesPodCrashLooping");

    // Acknowledged in DumbMonit: PagerDuty is told, with the same key.
    let auth = format!("Bearer {ADMIN}");
    let path = format!("/api/v1/alerts/{key}/ack");
    let acked = request(
        s.addr,
        "POST",
        &path,
        &[("Authorization", &auth), ("Content-Type", "application/json")],
        br#"{"comment":"on it"}"#,
    );
    assert_eq!(acked.status, 200, "{}", acked.body);
    wait("the acknowledgement", || of_crash(&events(), "acknowledge").is_some_and(|e| e["dedup_key"] == key.as_str()));

    // Healed: resolved, with the same key.
    h.sim.set_cluster(scenario::healthy(now));
    wait("the resolution", || {
        events().iter().any(|e| e["event_action"] == "resolve" && e["dedup_key"] == key.as_str())
    });
    let all = events();
    for e in &all {
        assert_eq!(events_v2_problems(e, routing_key), Vec::<String>::new(), "{e}");
    }
    let of_key: Vec<&str> =
        all.iter().filter(|e| e["dedup_key"] == key.as_str()).map(|e| e["event_action"].as_str().unwrap()).collect();
    assert_eq!(of_key, ["trigger", "acknowledge", "resolve"]);
    // The checks can fail.
    assert!(
        !events_v2_problems(&json!({"event_action": "trigger", "dedup_key": "k", "payload": {}}), routing_key)
            .is_empty()
    );

    // The routing key is the integration's secret: never in the state on disk, nor in the log.
    drop(s);
    for f in walk(&dir.path().join("state")) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(!bytes.windows(routing_key.len()).any(|w| w == routing_key.as_bytes()), "in {}", f.display());
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

/// The alerts of webhook bodies: (status, alertname, namespace, severity).
fn told(r: &Receiver) -> Vec<(String, String, String, String)> {
    r.bodies()
        .iter()
        .flat_map(|d| d["alerts"].as_array().cloned().unwrap_or_default())
        .map(|a| {
            let l = |k: &str| a["labels"][k].as_str().unwrap_or_default().to_string();
            (a["status"].as_str().unwrap_or_default().to_string(), l("alertname"), l("namespace"), l("severity"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_team_whose_matchers_match_is_told_and_the_rest_go_to_the_others_above_their_severity() {
    let now = jiff::Timestamp::now();
    let h = Harness::start(scenario::trouble(now)).await;
    let (shop, rest, loud) = (Receiver::start().await, Receiver::start().await, Receiver::start().await);
    let dir = tempfile::tempdir().unwrap();
    let notifiers = format!(
        "[[notifier]]\ntype = \"webhook\"\nname = \"shop-team\"\nurl = \"{}/hook\"\nmatchers = ['namespace=\"shop\"']\n\n\
         [[notifier]]\ntype = \"webhook\"\nname = \"everyone\"\nurl = \"{}/hook\"\n\n\
         [[notifier]]\ntype = \"webhook\"\nname = \"on-call\"\nurl = \"{}/hook\"\nmin_severity = \"warning\"\n\n",
        shop.url(),
        rest.url(),
        loud.url()
    );
    let cfg = common::web::write_config(dir.path(), &notifiers, &[("lab", &h, "200ms")]);
    let _s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{now}/60"))]);
    // The trouble fires alerts in shop (a crash loop, a Deployment short of replicas), in web,
    // and on a node (no namespace), notices and warnings.
    wait("alerts for the team and for the others", || {
        let (s, r) = (told(&shop), told(&rest));
        s.iter().any(|a| a.1 == "KubernetesPodCrashLooping")
            && r.iter().any(|a| a.1 == "KubernetesNodeNotReady")
            && r.iter().any(|a| a.3 == "notice")
    });
    let (s, r, l) = (told(&shop), told(&rest), told(&loud));
    assert!(s.iter().all(|a| a.2 == "shop"), "the team is told its own: {s:?}");
    assert!(!r.iter().any(|a| a.2 == "shop"), "the others are not told the team's: {r:?}");
    assert!(!l.iter().any(|a| a.2 == "shop" || a.3 == "notice"), "on-call: warnings and above, not the team's: {l:?}");
    assert!(l.iter().any(|a| a.1 == "KubernetesNodeNotReady"), "{l:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_refuses_one_notification_gets_every_later_one_in_order() {
    let now = jiff::Timestamp::now();
    let h = Harness::start(scenario::trouble(now)).await;
    let receiver = Receiver::start().await;
    receiver.refuse.store(1, Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let hook = format!("[[notifier]]\ntype = \"webhook\"\nname = \"ops-hook\"\nurl = \"{}/hook\"\n\n", receiver.url());
    let cfg = common::web::write_config(dir.path(), &hook, &[("lab", &h, "200ms")]);
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{now}/60"))]);
    wait("the first notification refused and later ones taken", || {
        !receiver.refused.lock().unwrap().is_empty() && told(&receiver).len() >= 3
    });
    // Said and counted (the pages say it until the receiver takes one: at once here, as
    // tests/serve.rs shows with a receiver that refuses everything).
    s.wait_for("/metrics", "the refusal counted", |r| {
        r.body.contains(r#"dumbmonit_notifications_failed_total{notifier="ops-hook",reason="refused"} 1"#)
    });
    assert!(s.log().contains("refused: 400 Bad Request"), "{}", s.log());
    h.sim.set_cluster(scenario::healthy(now));
    let refused: Vec<Value> =
        receiver.refused.lock().unwrap().iter().map(|r| serde_json::from_str(&r.body).unwrap()).collect();
    let refused_alert = refused[0]["alerts"][0]["labels"]["alertname"].as_str().unwrap().to_string();
    wait("every alert resolved, the refused one's too", || {
        let t = told(&receiver);
        let fired: std::collections::BTreeSet<_> =
            t.iter().filter(|a| a.0 == "firing").map(|a| (a.1.clone(), a.2.clone())).collect();
        !fired.is_empty()
            && fired.iter().all(|f| t.iter().any(|a| a.0 == "resolved" && (&a.1, &a.2) == (&f.0, &f.1)))
            && t.iter().any(|a| a.0 == "resolved" && a.1 == refused_alert)
    });
    // In order: no alert's resolution before its firing.
    let t = told(&receiver);
    for (i, a) in t.iter().enumerate().filter(|(_, a)| a.0 == "firing") {
        assert!(!t[..i].iter().any(|b| b.0 == "resolved" && (&b.1, &b.2, &b.3) == (&a.1, &a.2, &a.3)), "{t:?}");
    }
    assert_eq!(receiver.refused.lock().unwrap().len(), 1, "refused once, not tried again");
}

/// The Python that has aiosmtpd (scripts/test.sh installs it from PyPI into its own
/// environment; `DUMBMONIT_AIOSMTPD_PYTHON` names another).
fn smtp_python() -> String {
    let python = std::env::var("DUMBMONIT_AIOSMTPD_PYTHON").unwrap_or_else(|_| {
        format!("{}/.cache/dumbmonit-tools/aiosmtpd/bin/python", std::env::var("HOME").unwrap_or_default())
    });
    let has = Command::new(&python).args(["-c", "import aiosmtpd"]).output().is_ok_and(|o| o.status.success());
    assert!(has, "aiosmtpd is needed: {python} -m pip install aiosmtpd (scripts/test.sh does)");
    python
}

/// A real SMTP server (aiosmtpd), TLS by STARTTLS or from the start, AUTH required: (process,
/// port, where it writes what it takes).
fn smtp_server(
    dir: &Path,
    name: &str,
    mode: &str,
    cert: &Path,
    key: &Path,
    password: &str,
) -> (common::Killed, u16, PathBuf) {
    let out = dir.join(name);
    std::fs::create_dir_all(&out).unwrap();
    let port = common::free_port();
    let mut child = Command::new(smtp_python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/smtp/server.py"))
        .args([port.to_string(), common::path(cert), common::path(key), common::path(&out)])
        .args(["dumbmonit", password, mode])
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(dir.join(format!("{name}.log"))).unwrap())
        .spawn()
        .expect("the SMTP server starts");
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
    assert_eq!(
        line.trim(),
        "ready",
        "{}",
        std::fs::read_to_string(dir.join(format!("{name}.log"))).unwrap_or_default()
    );
    (common::Killed(child), port, out)
}

/// The messages an SMTP server took, as Python's email package reads them: headers, the
/// parts' types and their decoded text, and the session (encrypted, authenticated, recipients).
fn mailbox(out: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = walk(out).into_iter().filter(|p| p.extension().is_some_and(|e| e == "eml")).collect();
    files.sort();
    let read = r#"
import email, json, sys
from email import policy
m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=policy.default)
parts = [{"type": p.get_content_type(), "text": p.get_content()} for p in m.walk() if not p.is_multipart()]
print(json.dumps({"headers": {k.lower(): str(v) for k, v in m.items()}, "type": m.get_content_type(), "parts": parts}))
"#;
    files
        .iter()
        .map(|f| {
            let o = Command::new("python3").args(["-c", read]).arg(f).output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let mut m: Value = serde_json::from_slice(&o.stdout).unwrap();
            m["session"] = serde_json::from_str(&std::fs::read_to_string(f.with_extension("json")).unwrap()).unwrap();
            m
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_reaches_a_real_smtp_server_over_tls_in_two_parts_threaded_and_a_refusal_holds_up_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let (cert, key) = (dir.path().join("smtp.crt"), dir.path().join("smtp.key"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let password = "smtp-Pa55word-0f3c9a";
    register_secret(password);
    std::fs::write(dir.path().join("smtp.password"), format!("{password}\n")).unwrap();
    std::fs::write(dir.path().join("wrong.password"), "not-the-password-7d2e\n").unwrap();
    let (_starttls, p1, box1) = smtp_server(dir.path(), "starttls", "starttls", &cert, &key, password);
    let (_implicit, p2, box2) = smtp_server(dir.path(), "implicit", "implicit", &cert, &key, password);

    let now = jiff::Timestamp::now();
    let mut cluster = scenario::healthy(now);
    scenario::crash_loop(&mut cluster, now);
    let h = Harness::start(cluster).await;
    let section = |name: &str, port: u16, tls: &str, password_file: &str| {
        format!(
            "[[notifier]]\ntype = \"email\"\nname = \"{name}\"\nhost = \"127.0.0.1\"\nport = {port}\n{tls}\
             from = \"DumbMonit <dumbmonit@example.com>\"\nto = [\"ops@example.com\", \"On call <oncall@example.com>\"]\n\
             username = \"dumbmonit\"\npassword_file = {:?}\nca_file = {:?}\n\n",
            common::path(&dir.path().join(password_file)),
            common::path(&cert)
        )
    };
    let notifiers = format!(
        "{}{}{}",
        section("mail", p1, "", "smtp.password"),
        section("mail-smtps", p2, "starttls = false\n", "smtp.password"),
        section("mail-refused", p1, "", "wrong.password"),
    );
    let cfg = common::web::write_config(dir.path(), &notifiers, &[("lab", &h, "200ms")]);
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{now}/60"))]);
    let crash = |m: &Value| m["headers"]["subject"].as_str().is_some_and(|t| t.contains("is crash-looping"));
    wait_on(&s, "the crash loop's firing by both servers", || {
        mailbox(&box1).iter().any(&crash) && mailbox(&box2).iter().any(&crash)
    });
    h.sim.set_cluster(scenario::healthy(now));
    let resolved = |m: &Value| m["headers"]["subject"].as_str().is_some_and(|t| t.contains("Resolved after "));
    wait_on(&s, "the resolution by both servers", || {
        mailbox(&box1).iter().any(|m| crash(m) && resolved(m)) && mailbox(&box2).iter().any(|m| crash(m) && resolved(m))
    });
    for out in [&box1, &box2] {
        let mails = mailbox(out);
        let firing = mails.iter().find(|m| crash(m) && !resolved(m)).unwrap();
        let resolution = mails.iter().find(|m| crash(m) && resolved(m)).unwrap();
        let (hf, hr) = (&firing["headers"], &resolution["headers"]);
        assert!(hf["subject"].as_str().unwrap().starts_with("[lab] Firing: Pod shop/api-"), "{hf}");
        assert_eq!(hf["from"], "DumbMonit <dumbmonit@example.com>");
        assert_eq!(hf["to"], "ops@example.com, On call <oncall@example.com>");
        let id = hf["message-id"].as_str().unwrap();
        assert!(id.starts_with('<') && id.ends_with("@example.com>"), "{id}");
        assert_eq!((hr["in-reply-to"].as_str(), hr["references"].as_str()), (Some(id), Some(id)), "threaded");
        assert_ne!(hr["message-id"], hf["message-id"]);
        assert_eq!(firing["type"], "multipart/alternative");
        let types: Vec<&str> =
            firing["parts"].as_array().unwrap().iter().map(|p| p["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["text/plain", "text/html"]);
        let html = firing["parts"][1]["text"].as_str().unwrap();
        assert!(html.contains("is crash-looping") && html.contains("/runbooks/en#kubernetespodcrashlooping"), "{html}");
        for m in &mails {
            assert_eq!(m["session"]["encrypted"], true);
            assert_eq!(m["session"]["authenticated"], true);
            assert_eq!(m["session"]["rcpt_tos"], json!(["ops@example.com", "oncall@example.com"]));
        }
    }
    // The notifier whose password the server refuses: each message refused for good (535),
    // dropped and said, and none of the others' held behind it.
    let metrics = common::samples(&s.get("/metrics").body);
    let refused =
        metrics.get(r#"dumbmonit_notifications_failed_total{notifier="mail-refused",reason="refused"}"#).copied();
    assert!(
        refused.is_some_and(|n| n >= 2.0),
        "{:?}\n{}",
        common::family(&metrics, "dumbmonit_notifications_failed_total"),
        s.log()
    );
    assert!(s.get("/").body.contains("mail-refused refused "), "the page says it");
    assert!(s.log().contains("535"), "the server's answer is said: {}", s.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_sends_a_test_notification_from_the_page_or_the_api_and_is_told_what_the_receiver_answered() {
    let h = Harness::start(scenario::healthy(jiff::Timestamp::now())).await;
    let (taker, refuser) = (Receiver::start().await, Receiver::start().await);
    refuser.refuse.store(usize::MAX, Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let notifiers = format!(
        "{}[[notifier]]\ntype = \"webhook\"\nname = \"ops-hook\"\nurl = \"{}/hook\"\n\n\
         [[notifier]]\ntype = \"slack\"\nname = \"ops-chat\"\nurl = \"{}/services/T1/B2/c3\"\nmin_severity = \"warning\"\n\n",
        admin_section(),
        taker.url(),
        refuser.url()
    );
    let cfg = common::web::write_config(dir.path(), &notifiers, &[("lab", &h, "1s")]);
    let s = Served::start(&cfg, &[]);
    let admin = format!("Bearer {ADMIN}");

    // The page: each notifier, what it is told, and for an admin a button with the session's token.
    let page = request(s.addr, "GET", "/notifiers", &[("Authorization", &admin)], b"");
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("ops-hook") && page.body.contains("warning and above"), "{}", page.body);
    // How each groups: the webhook each change alone, Slack by cluster with reminders.
    assert!(page.body.contains("each change alone"), "{}", page.body);
    assert!(page.body.contains("grouped by cluster, told again every 4 h"), "{}", page.body);
    assert!(
        page.body.contains("http://127.0.0.1:") && !page.body.contains("/services/T1/B2/c3"),
        "a Slack URL is its secret"
    );
    let cookie = page.header("set-cookie").expect("a session").split(';').next().unwrap().to_string();
    let at = page.body.find("name=\"csrf\" value=\"").expect("the button's token") + "name=\"csrf\" value=\"".len();
    let csrf = page.body[at..].split('"').next().unwrap().to_string();
    let origin = format!("http://{}", s.addr);
    let press = |name: &str, token: &str| {
        let body = format!("csrf={token}");
        request(
            s.addr,
            "POST",
            &format!("/notifiers/{name}/test"),
            &[
                ("Authorization", &admin),
                ("Cookie", &cookie),
                ("Origin", &origin),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            body.as_bytes(),
        )
    };
    let pressed = press("ops-hook", &csrf);
    assert_eq!(pressed.status, 200, "{}", pressed.body);
    assert!(pressed.body.contains("ops-hook took the test notification: 200 OK"), "{}", pressed.body);
    let test = taker.bodies().into_iter().find(|b| b["alerts"][0]["labels"]["alertname"] == "DumbMonitTest").unwrap();
    assert_eq!(test["alerts"][0]["annotations"]["summary"], "A test notification from DumbMonit, sent by admin token");
    let refused = press("ops-chat", &csrf);
    assert!(refused.body.contains("ops-chat did not take the test notification: 400 Bad Request"), "{}", refused.body);
    assert_ne!(press("ops-hook", "forged").status, 200, "without the session's token");

    // The API: the admin's credentials; a viewer is refused, an unknown notifier is 404.
    let api = |name: &str, auth: &str| {
        let headers = [("Authorization", auth), ("Content-Type", "application/json")];
        request(s.addr, "POST", &format!("/api/v1/notifiers/{name}/test"), &headers, b"{}")
    };
    let ok = api("ops-hook", &admin);
    assert_eq!(
        (ok.status, ok.json()["sent"].as_bool(), ok.json()["answer"].as_str()),
        (200, Some(true), Some("200 OK"))
    );
    let bad = api("ops-chat", &admin);
    assert_eq!(bad.status, 502);
    assert!(bad.json()["error"].as_str().unwrap().contains("invalid_payload"), "{}", bad.body);
    assert_eq!(api("nobody", &admin).status, 404);
    let stranger = api("ops-hook", "Bearer not-the-admin").status;
    assert!(stranger == 401 || stranger == 403, "{stranger}");
    // Each test is in the audit list.
    let audit = request(s.addr, "GET", "/audit", &[("Authorization", &admin)], b"").body;
    assert!(audit.contains("test notification sent to ops-hook: 200 OK"), "{audit}");
}

/// Each Slack message's sections: (what changed, the pod), from `*What changed* · severity` and
/// the summary `Pod NS/NAME is crash-looping`.
fn slack_sections(r: &Receiver) -> Vec<Vec<(String, String)>> {
    received(r)
        .iter()
        .filter_map(|m| serde_json::from_str::<Value>(&m.body).ok())
        .map(|m| {
            m["blocks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "section")
                .filter_map(|b| {
                    let text = b["text"]["text"].as_str()?;
                    let changed = text.strip_prefix('*')?.split('*').next()?.to_string();
                    let pod = text.split("Pod shop/").nth(1)?.split(' ').next()?.to_string();
                    Some((changed, pod))
                })
                .collect()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_alerts_of_one_cycle_are_one_message_and_what_still_fires_is_told_again_unless_acknowledged_or_silenced() {
    use dumbmonit_sim::fixtures::{Container, Pod};
    let now = jiff::Timestamp::now();
    let mut cluster = scenario::healthy(now);
    for i in 1..=5 {
        cluster.pods.push(
            Pod::new("shop", &format!("worker-{i}"))
                .container(Container::crashlooping("app", "Error", 1, 9))
                .build(now),
        );
    }
    let h = Harness::start(cluster).await;
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let url_file = dir.path().join("slack.url");
    std::fs::write(&url_file, format!("{}/services/T0/B0/grouping-secret-5e1f\n", receiver.url())).unwrap();
    register_secret("grouping-secret-5e1f");
    // A cycle is a minute of rule time: the first message a cycle after the firing, reminders
    // every ten cycles.
    let notifier = format!(
        "{}[[notifier]]\ntype = \"slack\"\nurl_file = {:?}\ngroup_wait = \"30s\"\ngroup_interval = \"1m\"\n\
         repeat_interval = \"10m\"\n\n",
        admin_section(),
        common::path(&url_file)
    );
    let cfg = common::web::write_config(dir.path(), &notifier, &[("lab", &h, "200ms")]);
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{now}/60"))]);

    wait_on(&s, "the first message", || !slack_sections(&receiver).is_empty());
    let first = &slack_sections(&receiver)[0];
    let pods: Vec<&str> = first.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(
        pods,
        ["worker-1", "worker-2", "worker-3", "worker-4", "worker-5"],
        "five alerts, one message: {first:?}"
    );
    assert!(first.iter().all(|(changed, _)| changed == "Firing"), "{first:?}");

    // Nothing changes: ten minutes after that message, the five are told again.
    wait_on(&s, "the first reminder", || slack_sections(&receiver).len() >= 2);
    let sections = slack_sections(&receiver);
    assert_eq!(sections.len(), 2, "nothing between the message and its reminder: {sections:?}");
    assert_eq!(sections[1].len(), 5);
    let minutes = |changed: &str| -> i64 {
        let m = changed.strip_prefix("Still firing, for ").and_then(|m| m.strip_suffix(" min"));
        m.and_then(|m| m.parse().ok()).unwrap_or_else(|| panic!("not a reminder: {changed:?}"))
    };
    let lasted = minutes(&sections[1][0].0);
    assert!(sections[1].iter().all(|(changed, _)| minutes(changed) == lasted), "{:?}", sections[1]);

    // worker-1 acknowledged (told at once, alone), worker-2 silenced: the next reminder tells
    // the three others.
    let admin = format!("Bearer {ADMIN}");
    let alerts = s.get_with("/api/v1/alerts", &admin).json();
    let print = alerts
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["labels"]["pod"] == "worker-1")
        .and_then(|a| a["fingerprint"].as_str())
        .unwrap()
        .to_string();
    let json = [("Authorization", admin.as_str()), ("Content-Type", "application/json")];
    let acked = request(s.addr, "POST", &format!("/api/v1/alerts/{print}/ack"), &json, br#"{"comment":"on it"}"#);
    assert_eq!(acked.status, 200, "{}", acked.body);
    let silence = json!({
        "matchers": [{"name": "pod", "value": "worker-2", "isRegex": false, "isEqual": true}],
        "endsAt": (now + jiff::SignedDuration::from_hours(24 * 365)).to_string(),
        "comment": "rebuilt tomorrow",
    });
    let made = request(s.addr, "POST", "/api/v1/silences", &json, silence.to_string().as_bytes());
    assert_eq!(made.status, 200, "{}", made.body);
    wait_on(&s, "the second reminder", || {
        slack_sections(&receiver).iter().filter(|m| m.iter().any(|(c, _)| c.starts_with("Still firing"))).count() >= 2
    });
    let sections = slack_sections(&receiver);
    let acknowledged: Vec<_> =
        sections.iter().filter(|m| m.iter().any(|(c, _)| c.starts_with("Acknowledged"))).collect();
    assert_eq!(acknowledged.len(), 1, "{sections:?}");
    assert_eq!(acknowledged[0].len(), 1, "the acknowledgement alone: {:?}", acknowledged[0]);
    let reminder = sections.iter().rfind(|m| m.iter().any(|(c, _)| c.starts_with("Still firing"))).unwrap();
    let pods: Vec<&str> = reminder.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(pods, ["worker-3", "worker-4", "worker-5"], "{reminder:?}");
    assert!(reminder.iter().all(|(c, _)| minutes(c) == lasted + 10), "ten minutes later: {reminder:?}");
}

/// Whether `got` holds a whole HTTP request: its head, and as much body as it says.
fn whole_request(got: &[u8]) -> bool {
    let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") else { return false };
    let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    got.len() >= end + 4 + length
}

/// A receiver that misbehaves, and how many requests it got: `Endless` answers 200 with a body
/// that never ends, `Silent` never answers, `Garbage` answers with bytes that are not HTTP.
#[derive(Clone, Copy)]
enum Misbehaves {
    Endless,
    Silent,
    Garbage,
}

async fn misbehaving(how: Misbehaves) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let (mut buf, mut got) = (vec![0u8; 65536], Vec::new());
                while !whole_request(&got) {
                    match conn.read(&mut buf).await {
                        Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
                        _ => return,
                    }
                }
                seen.fetch_add(1, Ordering::SeqCst);
                match how {
                    Misbehaves::Endless => {
                        let head =
                            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000000000000\r\n\r\n";
                        if conn.write_all(head).await.is_err() {
                            return;
                        }
                        while conn.write_all(&[b'x'; 65536]).await.is_ok() {
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                    }
                    Misbehaves::Silent => tokio::time::sleep(Duration::from_secs(3600)).await,
                    Misbehaves::Garbage => {
                        let _ = conn.write_all(b"garbage!\r\n\r\n").await;
                    }
                }
            });
        }
    });
    (url, count)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_answers_slowly_endlessly_or_with_garbage_is_cut_off_and_holds_up_no_other() {
    let now = jiff::Timestamp::now();
    let h = Harness::start(scenario::trouble(now)).await;
    let good = Receiver::start().await;
    let (endless, endless_got) = misbehaving(Misbehaves::Endless).await;
    let (silent, _) = misbehaving(Misbehaves::Silent).await;
    let (garbage, _) = misbehaving(Misbehaves::Garbage).await;
    let dir = tempfile::tempdir().unwrap();
    let hook = |name: &str, url: &str| {
        format!("[[notifier]]\ntype = \"webhook\"\nname = \"{name}\"\nurl = \"{url}\"\ntimeout = \"1s\"\n\n")
    };
    let notifiers = format!(
        "{}{}{}{}",
        hook("good", &format!("{}/hook", good.url())),
        hook("endless", &endless),
        hook("silent", &silent),
        hook("garbage", &garbage)
    );
    let cfg = common::web::write_config(dir.path(), &notifiers, &[("lab", &h, "200ms")]);
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{now}/60"))]);
    wait_on(&s, "the trouble's alerts", || told(&good).len() >= 3);
    h.sim.set_cluster(scenario::healthy(now));
    wait_on(&s, "their resolutions", || told(&good).iter().any(|a| a.0 == "resolved"));
    let sent = |name: &str| {
        let m = common::samples(&s.get("/metrics").body);
        m.get(&format!(r#"dumbmonit_notifications_sent_total{{notifier="{name}"}}"#)).copied().unwrap_or(0.0)
    };
    let failed = |name: &str| {
        let m = common::samples(&s.get("/metrics").body);
        m.get(&format!(r#"dumbmonit_notifications_failed_total{{notifier="{name}",reason="error"}}"#))
            .copied()
            .unwrap_or(0.0)
    };
    // The endless answer's status is taken: each notification sent once, none again.
    wait_on(&s, "every notification to the endless receiver, once", || {
        let all = good.received.lock().unwrap().len();
        sent("good") as usize == all && sent("endless") as usize == all && endless_got.load(Ordering::SeqCst) == all
    });
    assert_eq!(failed("endless"), 0.0, "its body is not waited for");
    // The silent one is cut at its timeout, the garbage one at once; both are tried again, and
    // neither holds up the others.
    wait_on(&s, "the silent and the garbage receivers' failures", || {
        failed("silent") >= 1.0 && failed("garbage") >= 1.0
    });
    assert_eq!((sent("silent"), sent("garbage")), (0.0, 0.0));
    let log = s.log();
    assert!(log.contains("no answer within 1 s"), "{log}");
    // The pages still answer.
    assert_eq!(s.get("/").status, 200);
}
