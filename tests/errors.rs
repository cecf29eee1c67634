//! Each failure gives its one clear line on stderr and exit status 3; never a panic, never the token.

mod common;

use std::time::Duration;

use common::{Harness, Run, dumbmonit, path};
use dumbmonit_sim::api::Resource;
use dumbmonit_sim::{Faults, SimOptions, scenario};

fn healthy() -> dumbmonit_sim::Cluster {
    scenario::healthy(jiff::Timestamp::now())
}

/// Exit 3, one line on stderr, nothing on stdout (text output).
fn one_error(run: &Run) -> &str {
    assert_eq!(run.code, 3, "stdout: {} stderr: {}", run.stdout, run.stderr);
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr.lines().count(), 1, "one line: {}", run.stderr);
    run.stderr.trim_end()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_is_401() {
    let h = Harness::start(healthy()).await;
    let wrong = h.dir.path().join("wrong-token");
    std::fs::write(&wrong, "eyJhbGciOiJSUzI1NiIsImtpZCI6ImV4cGlyZWQifQ.expired").unwrap();
    let args: Vec<String> =
        ["check", &h.sim.url(), "--token-file", &path(&wrong), "--ca-file", &path(&h.ca_file)].map(String::from).into();
    let run = dumbmonit(&args, &[], h.dir.path()).await;
    let line = one_error(&run);
    assert!(line.starts_with("The API server refused the token (401)"), "{line}");
    assert!(line.contains("kubectl create token"), "the hint about short-lived tokens: {line}");
    assert!(!line.contains("expired\u{0}") && !run.stderr.contains("eyJhbGciOiJSUzI1NiIsImtpZCI6ImV4cGlyZWQifQ"));
    h.assert_only_reads();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forbidden_collection_is_403_naming_the_resource() {
    let h = Harness::start(healthy()).await;
    h.sim.set_faults(Faults { forbidden: vec![Resource::PersistentVolumeClaims], ..Default::default() });
    let line = one_error(&h.check(&[]).await).to_string();
    assert_eq!(
        line,
        "The service account may not read persistentvolumeclaims (403): persistentvolumeclaims is forbidden: \
         User \"system:serviceaccount:kube-system:dumbmonit\" cannot list resource \"persistentvolumeclaims\" \
         in API group \"\" at the cluster scope"
    );
    h.sim.set_faults(Faults { forbidden: vec![Resource::Deployments], ..Default::default() });
    let line = one_error(&h.check(&[]).await).to_string();
    assert!(
        line.starts_with("The service account may not read deployments.apps (403): deployments.apps is forbidden"),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_authority_is_named() {
    let h = Harness::start(healthy()).await;
    let other = dumbmonit_sim::Sim::start(SimOptions::default(), healthy()).await.unwrap();
    let wrong_ca = h.dir.path().join("other-ca.crt");
    std::fs::write(&wrong_ca, other.ca_pem()).unwrap();
    let args: Vec<String> =
        ["check", &h.sim.url(), "--token-file", &path(&h.token_file), "--ca-file", &path(&wrong_ca)]
            .map(String::from)
            .into();
    let run = dumbmonit(&args, &[], h.dir.path()).await;
    let line = one_error(&run);
    assert!(
        line.starts_with(
            "The certificate of the API server could not be verified: it is signed by an unknown authority"
        ),
        "{line}"
    );
    assert!(line.contains("--ca"), "{line}");
    assert!(h.sim.requests().is_empty(), "nothing is sent over an unverified connection");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_missing_from_the_certificate_is_named() {
    let options =
        SimOptions { sans: vec!["kubernetes.default.svc".into(), "10.43.0.1".into()], ..SimOptions::default() };
    let h = Harness::start_with(options, healthy()).await;
    let line = one_error(&h.check(&[]).await).to_string();
    assert!(
        line.starts_with(
            "The certificate of the API server could not be verified: the address 127.0.0.1 is not one of the names \
             in the certificate (it lists kubernetes.default.svc, 10.43.0.1). Use a name or IP it lists, or add one \
             with --tls-san on k3s"
        ),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_answer_within_the_timeout() {
    let h = Harness::start(healthy()).await;
    h.sim.set_faults(Faults { latency: Duration::from_secs(5), ..Default::default() });
    let started = std::time::Instant::now();
    let line = one_error(&h.check(&["--timeout", "0.5"]).await).to_string();
    assert_eq!(line, format!("No answer from {} while reading version within 0.5 s", h.sim.url()));
    assert!(started.elapsed() < Duration::from_secs(4), "the deadline holds: {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_and_an_unknown_host() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("t");
    std::fs::write(&token, "a-token-that-is-long-enough").unwrap();
    let run =
        dumbmonit(&["check".into(), format!("127.0.0.1:{port}"), "--token-file".into(), path(&token)], &[], dir.path())
            .await;
    let line = one_error(&run);
    assert!(
        line.starts_with(&format!("Connection refused by https://127.0.0.1:{port} while reading version")),
        "{line}"
    );

    let run = dumbmonit(
        &[
            "check".into(),
            "nonexistent.invalid".into(),
            "--token-file".into(),
            path(&token),
            "--timeout".into(),
            "5".into(),
        ],
        &[],
        dir.path(),
    )
    .await;
    let line = one_error(&run);
    assert_eq!(
        line,
        "The host name nonexistent.invalid could not be resolved (https://nonexistent.invalid:6443 while reading version)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_are_reported_and_never_retried() {
    let h = Harness::start(healthy()).await;
    h.sim.set_faults(Faults { fail_status: Some(500), ..Default::default() });
    let line = one_error(&h.check(&[]).await).to_string();
    assert_eq!(
        line,
        format!(
            "The API server answered 500 Internal Server Error at {} while reading version: Internal error occurred: etcdserver: request timed out",
            h.sim.url()
        )
    );
    h.sim.set_faults(Faults { fail_status: Some(503), ..Default::default() });
    let before = h.sim.requests().len();
    let line = one_error(&h.check(&[]).await).to_string();
    assert!(line.starts_with("The API server answered 503 Service Unavailable"), "{line}");
    assert_eq!(
        h.sim.requests().len() - before,
        // The eight collections and the thirteen optional reads (the claims' events are asked only
        // when the claims were read; no webhook was, so no backend).
        21,
        "one request per collection and per optional read: 503 is not retried behind the user's back"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_flags_exit_3_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let run =
        dumbmonit(&["check".into(), "http://k3s.lan:6443".into(), "--token".into(), "x".repeat(20)], &[], dir.path())
            .await;
    assert!(one_error(&run).starts_with("Plain http:// is refused"));
    assert!(!run.stderr.contains(&"x".repeat(20)));

    let run = dumbmonit(&["check".into(), "k3s.lan".into()], &[], dir.path()).await;
    assert!(
        one_error(&run)
            .starts_with("No token: give --token-file FILE, --token TOKEN or the environment variable DUMBMONIT_TOKEN")
    );

    let run = dumbmonit(&["check".into()], &[], dir.path()).await;
    assert!(one_error(&run).starts_with("No cluster given"));

    let run = dumbmonit(
        &[
            "check".into(),
            "k3s.lan".into(),
            "--token".into(),
            "tok-tok-tok-tok".into(),
            "--ca".into(),
            "garbage!".into(),
        ],
        &[],
        dir.path(),
    )
    .await;
    assert!(one_error(&run).starts_with("--ca: not a CA certificate"));

    let run = dumbmonit(&["check".into(), "--output".into(), "yaml".into()], &[], dir.path()).await;
    assert_eq!(run.code, 3, "a usage error is UNKNOWN in the monitoring-plugin convention");
}
