//! `dumbmonit serve` with two simulated clusters, one healthy, one in trouble and then
//! unreachable: the pages, the JSON API, /metrics and the probes.

mod common;

use common::Harness;
use common::web::{self, Served, get};
use dumbmonit_sim::{Faults, scenario};

fn write_config(dir: &std::path::Path, extra: &str, clusters: &[(&str, &Harness)]) -> std::path::PathBuf {
    let clusters: Vec<(&str, &Harness, &str)> = clusters.iter().map(|(n, h)| (*n, *h, "100ms")).collect();
    common::web::write_config(dir, extra, &clusters)
}

/// Rule time runs a minute per cycle, starting half an hour ago, so alerts fire within seconds.
fn clock() -> String {
    format!("{}/60", jiff::Timestamp::now() - jiff::SignedDuration::from_mins(30))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clusters_on_the_pages_the_api_and_metrics() {
    let now = jiff::Timestamp::now();
    let healthy = Harness::start(scenario::healthy(now)).await;
    let trouble = Harness::start(scenario::trouble(now)).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "", &[("healthy", &healthy), ("trouble", &trouble)]);
    let clock = clock();
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &clock)]);

    // Wait until the node alert fires in the trouble cluster (five minutes of rule time).
    s.wait_for("/api/v1/alerts", "the node alert", |r| {
        r.body.contains("\"KubernetesNodeNotReady\"") && r.body.contains("\"firing\"")
    });

    let home = s.get("/");
    assert_eq!(home.status, 200);
    assert!(home.header("content-type").unwrap().starts_with("text/html"));
    assert!(home.body.contains("<a href=\"/clusters/healthy\">healthy</a>"));
    assert!(home.body.contains("Healthy: 3 nodes ready, 10 pods"), "{}", home.body);
    assert!(home.body.contains("1 node not ready, 1 pod crash-looping, 1 node under pressure"), "{}", home.body);
    assert!(home.body.contains("<td>2/3</td>"), "nodes ready of the trouble cluster");

    let page = s.get("/clusters/trouble");
    assert_eq!(page.status, 200);
    for expected in [
        "1 node not ready, 1 pod crash-looping",
        "node-3",
        "NodeStatusUnknown: Kubelet stopped posting node status.",
        "shop/api-7c9696d669-8tpp6",
        "app: last exit code 137 (OOMKilled): SIGKILL: out of memory, the container went over its memory limit",
        "blocked (ImagePullBackOff)",
        "FailedScheduling: 0/3 nodes are available",
        "Deployment shop/api",
        "shop/data-search-0",
        "ProvisioningFailed: storageclass.storage.k8s.io &quot;fast-ssd&quot; not found",
        "Warning events in the last hour, by reason",
        "KubernetesNodeNotReady",
        "History, last 24 hours",
        "<svg",
    ] {
        assert!(page.body.contains(expected), "missing {expected:?} in the cluster page");
    }
    let page = s.get("/clusters/healthy");
    // Requests and limits against allocatable: node-1 carries eight pods of 100m and 128Mi
    // (limited to 256Mi) on 4 cores and 8029404Ki.
    assert!(page.body.contains("<h2>Requests and limits against allocatable</h2>"), "{}", page.body);
    assert!(page.body.contains("aria-label=\"CPU requests: 20% of allocatable\""));
    assert!(page.body.contains("aria-label=\"memory limits: 26% of allocatable\""));
    assert!(!page.body.contains("limits overcommitted"));
    assert!(page.body.contains("Healthy: 3 nodes ready, 10 pods"));
    assert!(!page.body.contains("Pods needing attention"), "a healthy cluster shows its counters and nothing else");
    assert!(s.get("/clusters/healthy?range=7d").body.contains("History, last 7 days"));

    // The JSON API.
    let list = s.get("/api/v1/clusters").json();
    let list = list.as_array().unwrap();
    assert_eq!(list.iter().map(|c| c["name"].as_str().unwrap()).collect::<Vec<_>>(), ["healthy", "trouble"]);
    assert_eq!(list[0]["status"], "ok");
    assert_eq!(list[1]["status"], "critical");
    assert_eq!(list[1]["nodes_ready"], 2);
    let detail = s.get("/api/v1/clusters/trouble").json();
    let pods = detail["pods_needing_attention"].as_array().unwrap();
    assert!(pods.iter().any(|p| p["name"] == "api-7c9696d669-8tpp6" && p["problems"][0] == "crash-looping"));
    assert!(detail["alerts"].as_array().unwrap().iter().any(|a| a["alertname"] == "KubernetesNodeNotReady"));
    let alerts = s.get("/api/v1/alerts").json();
    assert!(alerts.as_array().unwrap().iter().all(|a| a["cluster"] == "trouble"));
    assert_eq!(s.get("/api/v1/clusters/nope").status, 404);

    // /metrics: both clusters, labelled.
    let metrics = s.get("/metrics");
    assert!(metrics.header("content-type").unwrap().starts_with("text/plain; version=0.0.4"));
    for line in [
        "dumbmonit_k8s_nodes{cluster=\"healthy\"} 3",
        "dumbmonit_k8s_nodes{cluster=\"trouble\"} 3",
        "dumbmonit_k8s_nodes_ready{cluster=\"trouble\"} 2",
        "dumbmonit_k8s_up{cluster=\"trouble\"} 1",
        "dumbmonit_k8s_pods_crashlooping{cluster=\"trouble\"} 1",
    ] {
        assert!(metrics.body.lines().any(|l| l == line), "missing {line}");
    }
    assert_eq!(
        metrics.body.matches("# TYPE dumbmonit_k8s_nodes gauge").count(),
        1,
        "one family, samples of both clusters"
    );
    // Compressed for a scraper that asks (Prometheus does): the same text.
    let (head, body) = web::get_raw(s.addr, "/metrics", "Accept-Encoding: gzip\r\n");
    assert!(head.to_ascii_lowercase().contains("content-encoding: gzip"), "{head}");
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&body[..]), &mut text).unwrap();
    assert!(text.lines().any(|l| l == "dumbmonit_k8s_nodes{cluster=\"trouble\"} 3"), "{text}");
    assert_eq!(text.matches("# TYPE dumbmonit_k8s_nodes gauge").count(), 1);
    // Each cluster's families are compressed apart (they are joined per family), which costs
    // small texts a little: 2.5 times smaller here, 12 times at 5,000 clusters.
    assert!(body.len() < text.len() / 2, "{} bytes compressed for {}", body.len(), text.len());

    // Restarts that change draw their line over 24 hours on the pod's row.
    let mut more_restarts = scenario::trouble(now);
    for pod in more_restarts.pods.iter_mut() {
        if pod["metadata"]["name"] == "api-7c9696d669-8tpp6" {
            pod["status"]["containerStatuses"][0]["restartCount"] = serde_json::json!(21);
        }
    }
    trouble.sim.set_cluster(more_restarts);
    let page = s.wait_for("/clusters/trouble", "the restart line", |r| {
        r.body.contains("aria-label=\"restarts over 24 hours\"")
    });
    assert!(page.body.contains("<title>restarts over 24 hours: 14 to 21</title>"));

    // The trouble cluster becomes unreachable: its page keeps the last good data, marked.
    trouble.sim.set_faults(Faults { fail_status: Some(503), ..Default::default() });
    s.wait_for("/api/v1/alerts", "the unreachable alert", |r| r.body.contains("KubernetesMonitorUnreachable"));
    let page = s.get("/clusters/trouble");
    assert!(page.body.contains("Cannot be read"), "{}", page.body);
    assert!(page.body.contains("The API server answered 503 Service Unavailable"));
    assert!(page.body.contains("The data below is the last good data, from"));
    assert!(page.body.contains("shop/api-7c9696d669-8tpp6"), "the last good data is still shown");
    assert!(s.get("/").body.contains("Cannot be read"));
    assert_eq!(s.get("/api/v1/clusters").json()[1]["status"], "unreachable");
    // /metrics may serve the text before the failed cycle for a moment after a slow join
    // (metrics/cache.rs: up to ten times the join, which a loaded machine's debug build can
    // make longer than 20 ms), so it is waited for, not read once.
    let metrics = s
        .wait_for("/metrics", "up 0 for the unreachable cluster", |r| {
            r.body.lines().any(|l| l == "dumbmonit_k8s_up{cluster=\"trouble\"} 0")
        })
        .body;
    assert!(metrics.lines().any(|l| l == "dumbmonit_k8s_nodes{cluster=\"trouble\"} 3"), "last good series are kept");

    // Probes, methods, headers, the stylesheet.
    assert_eq!(s.get("/healthz").status, 200);
    assert_eq!(s.get("/readyz").status, 200);
    assert_eq!(s.get("/clusters/nope").status, 404);
    assert_eq!(get(s.addr, "POST", "/", None).status, 405);
    let r = s.get("/");
    assert!(r.header("content-security-policy").unwrap().starts_with("default-src 'none'"));
    assert!(r.header("content-security-policy").unwrap().contains("frame-ancestors 'none'"));
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert!(!r.body.contains("<script"), "no script at all");
    let css = s.get("/static/dumbmonit.css");
    assert_eq!((css.status, css.header("content-type")), (200, Some("text/css; charset=utf-8")));
    let log = s.log();
    assert!(!log.contains(healthy.sim.token()) && !log.contains(trouble.sim.token()));
    healthy.assert_only_reads();
    trouble.assert_only_reads();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_strings_are_inert_in_pages_and_escaped_in_metrics() {
    let now = jiff::Timestamp::now();
    let mut cluster = scenario::healthy(now);
    let evil = common::fixture::EVIL;
    common::fixture::add_hostile_pod(&mut cluster, now);
    let h = Harness::start(cluster).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "", &[("c\"<x>", &h)]);
    let s = Served::start(&cfg, &[]);
    s.wait_for("/api/v1/clusters", "a cycle", |r| r.body.contains("\"last_good_cycle\":\"2"));
    for path in ["/", "/clusters/c%22%3Cx%3E"] {
        let page = s.get(path);
        assert_eq!(page.status, 200, "{path}");
        assert!(
            !page.body.contains("<script") && !page.body.contains("<x>") && !page.body.contains("<b>"),
            "{path}: markup is inert:\n{}",
            page.body
        );
    }
    let page = s.get("/clusters/c%22%3Cx%3E").body;
    assert!(page.contains("&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;"), "{page}");
    assert!(page.contains("Bad&lt;Reason&gt;"));
    let metrics = s.get("/metrics").body;
    assert!(
        metrics.contains(
            "pod_blocked{cluster=\"c\\\"<x>\",namespace=\"shop\",pod=\"evil\",workload=\"\",reason=\"Evil\\\"<b>\"} 1"
        ),
        "{metrics}"
    );
    let api = s.get("/api/v1/clusters/c%22%3Cx%3E").json();
    assert_eq!(api["name"], "c\"<x>");
    assert!(
        api["pods_needing_attention"][0]["why"][0].as_str().unwrap().contains(evil),
        "JSON carries the text, escaped by JSON"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_protect_everything_but_healthz_and_reload_takes_effect() {
    let now = jiff::Timestamp::now();
    let a = Harness::start(scenario::healthy(now)).await;
    let b = Harness::start(scenario::trouble(now)).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "[auth]\nbearer_token = \"web-token-0123456789\"\n", &[("a", &a)]);
    let s = Served::start(&cfg, &[]);
    for path in ["/", "/clusters/a", "/api/v1/clusters", "/api/v1/alerts", "/metrics", "/readyz"] {
        let r = s.get(path);
        assert_eq!(r.status, 401, "{path}");
        assert!(r.header("www-authenticate").unwrap().starts_with("Bearer"), "{path}");
        assert_eq!(s.get_with(path, "Bearer web-token-0123456789").status, 200, "{path}");
        assert_eq!(s.get_with(path, "Bearer web-token-0123456780").status, 401, "{path}");
    }
    assert_eq!(s.get("/healthz").status, 200);

    // Reload: basic auth with a bcrypt hash, /metrics open, a second cluster.
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let cfg2 = write_config(
        dir.path(),
        &format!("[auth]\nusername = \"ops\"\npassword_hash = \"{hash}\"\nopen_metrics = true\n"),
        &[("a", &a), ("b", &b)],
    );
    assert_eq!(cfg, cfg2);
    let pid = s.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-HUP", &pid]).status().unwrap().success());
    use base64::Engine;
    let basic =
        |u: &str, p: &str| format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}")));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while s.get_with("/api/v1/clusters", &basic("ops", "s3cret")).status != 200 {
        assert!(std::time::Instant::now() < deadline, "reload did not take effect:\n{}", s.log());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let names = s.get_with("/api/v1/clusters", &basic("ops", "s3cret")).json();
    assert_eq!(names.as_array().unwrap().len(), 2);
    assert_eq!(s.get_with("/", &basic("ops", "wrong")).status, 401);
    assert_eq!(s.get_with("/", "Bearer web-token-0123456789").status, 401, "the old token no longer opens");
    assert_eq!(s.get("/metrics").status, 200, "metrics are open now");
    assert!(s.get("/").header("www-authenticate").unwrap().starts_with("Basic"));

    // A broken file is refused and the running configuration stays.
    std::fs::write(&cfg, "listen = 12\n").unwrap();
    std::process::Command::new("kill").args(["-HUP", &pid]).status().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !s.log().contains("configuration not reloaded, the running one stays") {
        assert!(std::time::Instant::now() < deadline, "{}", s.log());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(s.get_with("/api/v1/clusters", &basic("ops", "s3cret")).status, 200);
    assert!(!s.log().contains("s3cret") && !s.log().contains("web-token-0123456789"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_cluster_never_delays_another_and_sigterm_ends_cleanly() {
    let now = jiff::Timestamp::now();
    let slow = Harness::start(scenario::healthy(now)).await;
    slow.sim.set_faults(Faults { latency: std::time::Duration::from_secs(4), ..Default::default() });
    let fast = Harness::start(scenario::healthy(now)).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "", &[("slow", &slow), ("fast", &fast)]);
    let mut s = Served::start(&cfg, &[]);
    let started = std::time::Instant::now();
    let r = s.wait_for("/api/v1/clusters", "the fast cluster's cycles", |r| {
        let v = r.json();
        v[1]["status"] == "ok" && v[0]["last_cycle"].is_null()
    });
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "the fast cluster was read while the slow one still waited"
    );
    assert_eq!(r.json()[0]["status"], "waiting");

    // SIGTERM: the cycle under way ends, then the process exits 0.
    let pid = s.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "serve did not stop on SIGTERM:\n{}", s.log());
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
    assert!(s.log().contains("stopping: finishing the cycles under way and flushing the outbox"));
}

/// Past a few hundred clusters the overview stays usable: counts per status at the top (each a
/// filter), what needs attention first, a filter by name, 100 clusters a page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_pages_filters_and_puts_trouble_first() {
    let now = jiff::Timestamp::now();
    let healthy = Harness::start(dumbmonit_sim::scenario::healthy(now)).await;
    let names: Vec<String> = (0..129).map(|i| format!("site-{i:03}")).collect();
    let list: Vec<(&str, &Harness)> = names.iter().map(|n| (n.as_str(), &healthy)).collect();
    let cfg = write_config(healthy.dir.path(), "", &list);
    // One more, which never answers: it must come first. The others' first cycles spread over
    // 5 s: 129 clusters a second, each read whole, would be more than one simulator in a debug
    // build answers on two cores within the clusters' timeout.
    let mut text = std::fs::read_to_string(&cfg).unwrap().replace("interval = \"100ms\"", "interval = \"5s\"");
    text.push_str(&format!(
        "[[cluster]]\nname = \"zz-<b>gone\"\naddress = \"https://127.0.0.1:1\"\ntoken_file = {:?}\ninterval = \"1s\"\ntimeout = \"1s\"\n",
        healthy.token_file.to_str().unwrap()
    ));
    std::fs::write(&cfg, text).unwrap();
    let s = Served::start(&cfg, &[]);
    let r = s.wait_for("/", "every cluster read", |r| r.body.contains("129 ok") && r.body.contains("1 unreachable"));
    let body = &r.body;
    assert!(body.contains("130 clusters</a>"), "{body}");
    assert!(body.contains("Page 1 of 2") && body.contains("rel=\"next\""), "{body}");
    assert_eq!(body.matches("<tr><td>").count(), 100, "100 a page");
    let first = body.split("<tr><td>").nth(1).unwrap();
    assert!(first.contains("zz-&lt;b&gt;gone"), "trouble first, escaped: {first}");
    let second = s.get("/?page=2").body;
    assert_eq!(second.matches("<tr><td>").count(), 30);
    assert!(second.contains("Page 2 of 2") && second.contains("rel=\"prev\""));
    let only = s.get("/?status=unreachable").body;
    assert_eq!(only.matches("<tr><td>").count(), 1, "{only}");
    let named = s.get("/?q=site-12").body;
    assert_eq!(named.matches("<tr><td>").count(), 9, "site-120 … site-128: {named}");
    let hostile = s.get("/?q=%22%3E%3Cscript%3E").body;
    assert!(hostile.contains("value=\"&quot;&gt;&lt;script&gt;\"") && !hostile.contains("\"><script>"), "{hostile}");
    assert!(hostile.contains("No cluster matches."));
}

/// The file's `[[rule]]` entries: applied to the alerts they match, shown on `/rules` and in
/// `GET /api/v1/rules`, changed by a reload, a bad one refused at start (exit 3) and on reload
/// (the running ones stay), each naming its entry and field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_files_rules_are_applied_shown_reloaded_and_refused() {
    let now = jiff::Timestamp::now();
    let trouble = Harness::start(scenario::trouble(now)).await;
    let dir = tempfile::tempdir().unwrap();
    let tuned = |extra: &str| {
        format!(
            "[[rule]]\nname = \"KubernetesPodCrashLooping\"\nfor = \"20m\"\nseverity = \"critical\"\n\
             labels = {{ team = \"platform\" }}\nmatchers = ['namespace=\"shop\"']\n{extra}\n"
        )
    };
    // Refused at start, naming the entry and the field.
    let bad = write_config(dir.path(), &tuned("escalate_after = \"soon\""), &[("t", &trouble)]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dumbmonit"))
        .args(["serve", "--config", bad.to_str().unwrap()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(said.contains("rule 1 (\"KubernetesPodCrashLooping\"): field `escalate_after`: "), "{said}");

    let cfg = write_config(dir.path(), &tuned(""), &[("t", &trouble)]);
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{now}/60"))]);
    let crash = |r: &web::Response| {
        r.json().as_array().unwrap().iter().find(|a| a["alertname"] == "KubernetesPodCrashLooping").cloned()
    };
    let alerts =
        s.wait_for("/api/v1/alerts", "the crash loop fired", |r| crash(r).is_some_and(|a| a["state"] == "firing"));
    let a = crash(&alerts).unwrap();
    assert_eq!((a["severity"].as_str(), a["labels"]["team"].as_str()), (Some("critical"), Some("platform")));
    let (active, fired): (jiff::Timestamp, jiff::Timestamp) =
        (a["active_at"].as_str().unwrap().parse().unwrap(), a["fired_at"].as_str().unwrap().parse().unwrap());
    assert_eq!(fired.duration_since(active), jiff::SignedDuration::from_mins(20), "held 20 minutes, not 10");

    let rules = s.get("/api/v1/rules").json();
    let rule = rules.as_array().unwrap().iter().find(|r| r["alertname"] == "KubernetesPodCrashLooping").unwrap();
    assert_eq!((rule["for_seconds"].as_u64(), rule["severity"].as_str()), (Some(600), Some("warning")));
    let o = &rule["overrides"][0];
    assert_eq!((o["for_seconds"].as_u64(), o["severity"].as_str()), (Some(1200), Some("critical")));
    assert_eq!(o["matchers"], serde_json::json!(["namespace=\"shop\""]));
    assert_eq!(rules.as_array().unwrap().len(), 36, "every rule");
    let page = s.get("/rules").body;
    assert!(page.contains("namespace=&quot;shop&quot;: held 20m, critical, team=&quot;platform&quot;"), "{page}");
    // Each rule's name leads to its runbook, which the pages serve in either language.
    assert!(page.contains("<a href=\"/runbooks#kubernetespodcrashlooping\">"), "{page}");
    for (path, said) in [("/runbooks/en", "What it means."), ("/runbooks/fr", "Ce que cela signifie.")] {
        let r = s.get(path);
        assert_eq!(r.status, 200, "{path}");
        assert!(r.body.contains("id=\"kubernetespodcrashlooping\"") && r.body.contains(said), "{path}: {}", r.body);
    }

    // A bad entry on reload: refused, the running rules stay.
    let pid = s.child.id().to_string();
    std::fs::write(&cfg, std::fs::read_to_string(&cfg).unwrap().replace("\"critical\"", "\"page\"")).unwrap();
    std::process::Command::new("kill").args(["-HUP", &pid]).status().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !s.log().contains("field `severity`: \"page\" is not a severity") {
        assert!(std::time::Instant::now() < deadline, "{}", s.log());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(s.log().contains("configuration not reloaded, the running one stays"), "{}", s.log());
    assert_eq!(s.get("/api/v1/rules").json()[2]["overrides"][0]["severity"], "critical");

    // Turned off on reload: the alert resolves.
    std::fs::write(&cfg, std::fs::read_to_string(&cfg).unwrap().replace("severity = \"page\"", "enabled = false"))
        .unwrap();
    std::process::Command::new("kill").args(["-HUP", &pid]).status().unwrap();
    s.wait_for("/api/v1/alerts", "the crash loop's alert gone", |r| crash(r).is_none());
    assert_eq!(s.get("/api/v1/rules").json()[2]["overrides"][0]["enabled"], false);
}
