//! `dumbmonit serve --log-format json` as a real process, over TLS, against the simulator with
//! the stepped clock: one JSON object a line, each with its level, message and fields, and no
//! secret in any of them, even where a request put one into a field.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::receiver::Receiver;
use common::web::{Served, request_tls};
use common::{Harness, path};
use dumbmonit_sim::scenario;
use serde_json::Value;

const AGENT_TOKEN: &str = "agent-token-of-edge-in-the-log-5d2e8c1a";
const WEB_TOKEN: &str = "web-token-of-the-pages-0a9b8c7d";
const NOTIFIER_PASSWORD: &str = "notifier-password-3e4f5a6b";

/// Starts `serve --config FILE --log-format json` and waits until its log says where its pages are.
fn serve_json(config: &Path, ca: &str) -> Served {
    let log = config.with_extension("log");
    let child = Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
        .args(["serve", "--config", &path(config), "--log-format", "json"])
        .env("DUMBMONIT_TEST_CLOCK", "2026-01-01T00:00:00Z/60")
        .env_remove("DUMBMONIT_TOKEN")
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("dumbmonit serve starts");
    let mut served = Served { child, addr: ([0, 0, 0, 0], 0).into(), log, tls_ca: Some(ca.to_string()) };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let found = lines(&served.log()).iter().find_map(|l| {
            let message = l["message"].as_str()?;
            message.split("pages on https://").nth(1).map(|a| a.trim().to_string())
        });
        if let Some(addr) = found {
            served.addr = addr.parse().unwrap();
            return served;
        }
        assert!(Instant::now() < deadline, "serve did not start:\n{}", served.log());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every line of the log as JSON: each must be one object.
fn lines(log: &str) -> Vec<Value> {
    log.lines()
        .map(|l| match serde_json::from_str::<Value>(l) {
            Ok(v) if v.is_object() => v,
            _ => panic!("not one JSON object: {l:?}"),
        })
        .collect()
}

/// Every string in a value, keys included.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        Value::Object(m) => m.iter().for_each(|(k, v)| {
            out.push(k.clone());
            strings(v, out)
        }),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_logs_one_json_object_a_line_with_its_fields_and_no_secret() {
    let h = Harness::start(scenario::trouble(jiff::Timestamp::now())).await;
    let receiver = Receiver::start().await;
    receiver.fail.store(true, Ordering::SeqCst);
    let dir = h.dir.path();
    let pki = dumbmonit_sim::tls::Pki::generate(&["localhost".into(), "127.0.0.1".into()], None).unwrap();
    let (cert, key, agent_token) = (dir.join("tls.crt"), dir.join("tls.key"), dir.join("edge.token"));
    std::fs::write(&cert, &pki.server_cert_pem).unwrap();
    std::fs::write(&key, &pki.server_key_pem).unwrap();
    std::fs::write(&agent_token, format!("{AGENT_TOKEN}\n")).unwrap();
    let hook = receiver.url().replacen("http://", &format!("http://ops:{NOTIFIER_PASSWORD}@"), 1);
    let config = dir.join("dumbmonit.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\nstate_dir = {:?}\n\n[tls]\ncert_file = {:?}\nkey_file = {:?}\n\n\
             [auth]\nbearer_token = {WEB_TOKEN:?}\n\n\
             [[cluster]]\nname = \"lab\"\naddress = {:?}\ntoken_file = {:?}\nca_file = {:?}\ninterval = \"30ms\"\n\n\
             [[cluster]]\nname = \"edge\"\nagent_token_file = {:?}\n\n\
             [[notifier]]\ntype = \"webhook\"\nname = \"ops-hook\"\nurl = \"{hook}/hook\"\n",
            path(&dir.join("state")),
            path(&cert),
            path(&key),
            h.sim.url(),
            path(&h.token_file),
            path(&h.ca_file),
            path(&agent_token),
        ),
    )
    .unwrap();
    let s = serve_json(&config, &pki.ca_pem);

    // Secrets that requests bring into what is logged: a report whose error quotes the agent's
    // own token, and a cluster header that holds the pages' token.
    let auth = format!("Bearer {AGENT_TOKEN}");
    let push = |headers: &[(&str, &str)], body: &str| {
        request_tls(s.addr, "POST", "/api/v1/agent/cycles", headers, body.as_bytes(), &pki.ca_pem)
    };
    let r = push(&[("Authorization", &auth)], &format!("{{\"format\": \"{AGENT_TOKEN}\"}}"));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains(AGENT_TOKEN), "the serializer's error quotes the token: {}", r.body);
    let r = push(&[("Authorization", &auth), ("DumbMonit-Cluster", WEB_TOKEN)], "{}");
    assert_eq!(r.status, 404, "{}", r.body);

    // The trouble fires alerts within minutes of the stepped clock; the receiver refuses them.
    let failed = |v: &Value| v["notifier"] == "ops-hook" && v["message"].as_str().unwrap().contains("failed, attempt");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !lines(&s.log()).iter().any(failed) {
        assert!(Instant::now() < deadline, "no failed delivery logged:\n{}", s.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let log = s.log();
    let all = lines(&log);
    for v in &all {
        assert!(v["timestamp"].as_str().unwrap().parse::<jiff::Timestamp>().is_ok(), "{v}");
        assert!(["INFO", "WARN", "ERROR"].contains(&v["level"].as_str().unwrap()), "{v}");
        assert!(v["message"].is_string() && v["target"].as_str().unwrap().starts_with("dumbmonit"), "{v}");
    }
    let started = all.iter().find(|v| v["message"].as_str().unwrap().contains("pages on https://")).unwrap();
    assert_eq!(started["level"], "INFO");

    // The refused report: the cluster its token opened, the status, the error; the token in
    // it redacted in the error as in the message.
    let refused = all.iter().find(|v| v["status"] == 400).unwrap_or_else(|| panic!("no 400 logged:\n{log}"));
    assert_eq!((refused["cluster"].clone(), refused["level"].clone()), ("edge".into(), "WARN".into()), "{refused}");
    let error = refused["error"].as_str().unwrap();
    assert!(error.starts_with("cluster edge: not a cycle report") && error.contains("[redacted]"), "{refused}");
    assert!(refused["message"].as_str().unwrap().starts_with("agent request refused (400): cluster edge"));
    // The cluster it named: what the agent said, the pages' token redacted.
    let unknown = all.iter().find(|v| v["status"] == 404).unwrap_or_else(|| panic!("no 404 logged:\n{log}"));
    assert_eq!(unknown["agent"], "[redacted]", "{unknown}");
    assert!(unknown.get("cluster").is_none(), "no token opened a cluster: {unknown}");
    // The failed delivery: the notifier, the endpoint without its user information, the
    // attempt and the wait as numbers.
    let delivery = all.iter().find(|v| failed(v)).unwrap();
    assert_eq!(delivery["endpoint"], format!("{}/hook", receiver.url()), "{delivery}");
    assert!(delivery["attempt"].is_u64() && delivery["retry_in_seconds"].is_u64(), "{delivery}");
    assert!(delivery["error"].as_str().unwrap().contains("503"), "{delivery}");

    // No secret anywhere: not on the lines, not in any string once decoded.
    let secrets = [h.sim.token(), AGENT_TOKEN, WEB_TOKEN, NOTIFIER_PASSWORD];
    let mut decoded = Vec::new();
    all.iter().for_each(|v| strings(v, &mut decoded));
    for secret in secrets {
        assert!(!log.contains(secret), "a secret is in the log:\n{log}");
        assert!(!decoded.iter().any(|s| s.contains(secret)), "a secret is in a field:\n{log}");
    }
}
