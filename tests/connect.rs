//! The ways a user points DumbMonit at a cluster: address forms, CA forms, token sources,
//! kubeconfig (exec plugins included).

mod common;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use common::{Harness, Run, dumbmonit, path};
use dumbmonit_sim::{SimOptions, scenario};

fn healthy() -> dumbmonit_sim::Cluster {
    scenario::healthy(jiff::Timestamp::now())
}

fn ok(run: &Run) {
    assert_eq!(run.code, 0, "stdout: {}\nstderr: {}", run.stdout, run.stderr);
    assert!(run.stdout.starts_with("Healthy: 3 nodes ready, 10 pods"), "{}", run.stdout);
}

async fn run(h: &Harness, args: &[String], env: &[(&str, &str)]) -> Run {
    let r = dumbmonit(args, env, h.dir.path()).await;
    h.assert_clean(&r);
    r
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_address_forms() {
    let h = Harness::start(healthy()).await;
    let port = h.sim.addr().port().to_string();
    let token = path(&h.token_file);
    let ca = path(&h.ca_file);
    for address in [h.sim.url(), format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        ok(&run(&h, &args(&["check", &address, "--token-file", &token, "--ca-file", &ca]), &[]).await);
    }
    // A bare host or IP takes --port.
    for host in ["127.0.0.1", "localhost"] {
        ok(&run(&h, &args(&["check", host, "--port", &port, "--token-file", &token, "--ca-file", &ca]), &[]).await);
    }
    // IPv6, bracketed, with and without a port.
    let options = SimOptions { bind: "[::1]:0".parse().unwrap(), ..SimOptions::default() };
    let v6 = Harness::start_with(options, healthy()).await;
    let v6port = v6.sim.addr().port().to_string();
    let (t6, c6) = (path(&v6.token_file), path(&v6.ca_file));
    ok(&run(&v6, &args(&["check", &format!("[::1]:{v6port}"), "--token-file", &t6, "--ca-file", &c6]), &[]).await);
    ok(&run(&v6, &args(&["check", "[::1]", "--port", &v6port, "--token-file", &t6, "--ca-file", &c6]), &[]).await);
    ok(&run(&v6, &args(&["check", &format!("https://[::1]:{v6port}"), "--token-file", &t6, "--ca-file", &c6]), &[])
        .await);
    h.assert_only_reads();
    v6.assert_only_reads();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ca_forms() {
    let h = Harness::start(healthy()).await;
    let url = h.sim.url();
    let token = path(&h.token_file);
    let pem = h.sim.ca_pem().to_string();
    // As `kubectl get secret … -o jsonpath='{.data.ca\.crt}'` prints it.
    let base64 = B64.encode(&pem);
    ok(&run(&h, &args(&["check", &url, "--token-file", &token, "--ca", &base64]), &[]).await);
    // PEM pasted whole, and on one line with its breaks turned into spaces or lost.
    ok(&run(&h, &args(&["check", &url, "--token-file", &token, "--ca", &pem]), &[]).await);
    ok(&run(&h, &args(&["check", &url, "--token-file", &token, "--ca", &pem.replace('\n', " ")]), &[]).await);
    ok(&run(&h, &args(&["check", &url, "--token-file", &token, "--ca", &pem.replace('\n', "")]), &[]).await);
    // A file holding the base64.
    let b64_file = h.dir.path().join("ca.b64");
    std::fs::write(&b64_file, &base64).unwrap();
    ok(&run(&h, &args(&["check", &url, "--token-file", &token, "--ca-file", &path(&b64_file)]), &[]).await);
    // No CA but --insecure-skip-tls-verify.
    ok(&run(&h, &args(&["check", &url, "--token-file", &token, "--insecure-skip-tls-verify"]), &[]).await);
    // Without a CA the system roots are used, and they do not know the cluster's CA.
    let r = run(&h, &args(&["check", &url, "--token-file", &token]), &[]).await;
    assert_eq!(r.code, 3);
    assert!(r.stderr.contains("signed by an unknown authority"), "{}", r.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_sources() {
    let h = Harness::start(healthy()).await;
    let url = h.sim.url();
    let ca = path(&h.ca_file);
    let token = h.sim.token().to_string();
    ok(&run(&h, &args(&["check", &url, "--token", &token, "--ca-file", &ca]), &[]).await);
    ok(&run(&h, &args(&["check", &url, "--ca-file", &ca]), &[("DUMBMONIT_TOKEN", &token)]).await);
    // The file wins over the environment.
    ok(&run(
        &h,
        &args(&["check", &url, "--token-file", &path(&h.token_file), "--ca-file", &ca]),
        &[("DUMBMONIT_TOKEN", "not-the-token-at-all")],
    )
    .await);
    let r = run(&h, &args(&["check", &url, "--token", &token, "--token-file", "x", "--ca-file", &ca]), &[]).await;
    assert_eq!(r.code, 3, "one token only");
    for request in h.sim.requests() {
        assert!(request.authorized, "sent as Authorization: Bearer");
    }
}

fn kubeconfig(server: &str, ca_pem: &str, contexts: &[(&str, &str)], current: &str, users: &str) -> String {
    let ctx: String = contexts
        .iter()
        .map(|(name, user)| format!("- name: {name}\n  context:\n    cluster: sim\n    user: {user}\n"))
        .collect();
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: {server}\n    certificate-authority-data: {}\n\
         contexts:\n{ctx}current-context: {current}\nusers:\n{users}",
        B64.encode(ca_pem)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubeconfig_contexts_and_exec_plugins() {
    let h = Harness::start(healthy()).await;
    let token = h.sim.token();
    let plugin = h.dir.path().join("credential-plugin");
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\necho '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{token}\"}}}}'\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let users = format!(
        "- name: good\n  user:\n    token: {token}\n- name: bad\n  user:\n    token: wrong-token-wrong-token\n\
         - name: exec\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\n",
        path(&plugin)
    );
    let file = h.dir.path().join("kubeconfig");
    std::fs::write(
        &file,
        kubeconfig(&h.sim.url(), h.sim.ca_pem(), &[("good", "good"), ("bad", "bad"), ("exec", "exec")], "good", &users),
    )
    .unwrap();
    let kc = path(&file);
    ok(&run(&h, &args(&["check", "--kubeconfig", &kc]), &[]).await);
    let r = run(&h, &args(&["check", "--kubeconfig", &kc, "--context", "bad"]), &[]).await;
    assert!(r.stderr.starts_with("The API server refused the token (401)"), "{}", r.stderr);
    ok(&run(&h, &args(&["check", "--kubeconfig", &kc, "--context", "exec"]), &[]).await);
    // $KUBECONFIG is used when nothing else is given, as kubectl does.
    ok(&run(&h, &args(&["check", "--context", "good"]), &[("KUBECONFIG", &kc)]).await);
    ok(&run(&h, &args(&["check"]), &[("KUBECONFIG", &kc)]).await);
    let r = run(&h, &args(&["check", "--kubeconfig", &kc, "--context", "nope"]), &[]).await;
    assert_eq!(r.code, 3);
    assert!(r.stderr.starts_with(&format!("--kubeconfig {kc}:")), "{}", r.stderr);
    let r = run(&h, &args(&["check", &h.sim.url(), "--kubeconfig", &kc]), &[]).await;
    assert!(r.stderr.starts_with("Give either an ADDRESS"), "{}", r.stderr);
    h.assert_only_reads();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_gets_to_the_collections_across_every_output() {
    let h = Harness::start(scenario::trouble(jiff::Timestamp::now())).await;
    for output in ["text", "json", "prometheus"] {
        let r = h.check(&["--output", output]).await;
        assert_eq!(r.code, 2, "{output}");
    }
    h.assert_only_reads();
    // The eight collections, the thirteen optional reads (the Metrics API is asked even though
    // metrics-server is not installed here: only its APIService being down spares the request;
    // no webhook names a Service, so their backends are not asked), and the events that say what
    // the Pending claim waits for.
    assert_eq!(h.sim.requests().len(), 3 * 22);
    let claims =
        h.sim.requests().iter().filter(|r| r.query.contains("involvedObject.kind%3DPersistentVolumeClaim")).count();
    assert_eq!(claims, 3, "{:?}", h.sim.requests());
}
