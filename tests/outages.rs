//! What else takes clusters down: certificate expiry, version skew, stuck rollouts and
//! terminations, flapping nodes, failed Jobs and missed CronJobs. One cluster with every case
//! (`scenario::outages`) through `check` (metrics, text, JSON); their rules' timings by replay;
//! and a busy but healthy cluster that raises none of them.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{Harness, dumbmonit, family, path, samples};
use dumbmonit_sim::fixtures::{Node, cronjob, job};
use dumbmonit_sim::{Cluster, SimOptions, scenario};
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

const FIVE_DAYS: Duration = Duration::from_secs(5 * 86_400);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_case_shows_in_the_metrics_the_report_and_the_json() {
    let options = SimOptions { certificate_lifetime: Some(FIVE_DAYS), ..Default::default() };
    let h = Harness::start_with(options, scenario::outages(Timestamp::now())).await;

    let run = h.check(&["--output", "prometheus"]).await;
    assert_eq!(run.code, 1, "notice-level problems only: {}", run.stderr);
    let m = samples(&run.stdout);
    let expiry = m["dumbmonit_k8s_apiserver_certificate_expiry_timestamp_seconds"];
    let left = expiry - Timestamp::now().as_second() as f64;
    assert!((4.9 * 86_400.0..=5.0 * 86_400.0).contains(&left), "{left} s left, from the handshake");
    assert!(
        family(&m, "dumbmonit_k8s_client_certificate_expiry_timestamp_seconds").is_empty(),
        "a token, not a certificate"
    );
    assert_eq!(m["dumbmonit_k8s_node_kubelet_skew{node=\"node-3\"}"], 1.0);
    assert_eq!(m["dumbmonit_k8s_node_kubelet_skew{node=\"node-1\"}"], 0.0);
    assert_eq!(m["dumbmonit_k8s_node_ready_transitions{node=\"node-1\"}"], 0.0, "one reading: no change seen");
    assert_eq!(
        m["dumbmonit_k8s_workload_rollout_stuck{kind=\"Deployment\",namespace=\"shop\",workload=\"checkout\"}"],
        1.0
    );
    assert_eq!(
        m["dumbmonit_k8s_workload_rollout_stuck{kind=\"StatefulSet\",namespace=\"shop\",workload=\"queue\"}"], 0.0,
        "a StatefulSet is stuck after 15 minutes without progress, which one reading cannot tell"
    );
    let terminating =
        m["dumbmonit_k8s_pod_terminating_seconds{namespace=\"shop\",pod=\"legacy-0\",workload=\"legacy\"}"];
    assert!((1800.0..1830.0).contains(&terminating), "{terminating}");
    assert_eq!(family(&m, "dumbmonit_k8s_pod_terminating_seconds").len(), 1, "only pods past their grace period");
    assert_eq!(m["dumbmonit_k8s_pods_stuck_terminating"], 1.0);
    assert_eq!(m["dumbmonit_k8s_job_failed{namespace=\"ops\",job=\"report-29400000\",owner=\"report\"}"], 1.0);
    assert_eq!(m["dumbmonit_k8s_job_failed{namespace=\"ops\",job=\"report-29399940\",owner=\"report\"}"], 0.0);
    let age = m["dumbmonit_k8s_cronjob_last_schedule_age_seconds{namespace=\"ops\",cronjob=\"backup\"}"];
    assert!((10_800.0..14_400.0).contains(&age), "three hours and less than one more: {age}");
    assert_eq!(m["dumbmonit_k8s_cronjob_schedule_interval_seconds{namespace=\"ops\",cronjob=\"backup\"}"], 3600.0);

    let run = h.check(&[]).await;
    assert_eq!(run.code, 1, "notice-level problems only: {}", run.stdout);
    let text = &run.stdout;
    for line in [
        "API server certificate expires in 4 days",
        "1 pod stuck terminating",
        "1 rollout stuck",
        "1 job failed",
        "1 cron job missed its runs",
        "1 kubelet outside the version skew",
        "The API server's serving certificate expires on",
        "Job ops/report-29400000 (CronJob report) failed: BackoffLimitExceeded: Job has reached the specified backoff limit",
        "CronJob ops/backup missed its runs: last scheduled 3 h ago, while \"0 * * * *\" runs it every 60 min",
        "Stuck rollouts (1)",
        "ProgressDeadlineExceeded: ReplicaSet \"checkout-6d5f7c8b9a\" has timed out progressing.",
        "stuck terminating",
        "waits for its finalizers: example.com/drain-connections",
        "kubelet v1.29.15+k3s1 is outside the supported skew from the API server v1.33.4+k3s1",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }

    let run = h.check(&["--output", "json"]).await;
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["counts"]["pods_stuck_terminating"], 1);
    assert_eq!(doc["counts"]["rollouts_stuck"], 1);
    assert_eq!(doc["counts"]["nodes_version_skew"], 1);
    assert_eq!(doc["certificates"]["expiring"][0]["certificate"], "serving");
    assert_eq!(doc["certificates"]["expiring"][0]["days"], 4);
    let jobs = doc["optional"]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(jobs[0]["name"], "report-29400000");
    let cron: Vec<&Value> =
        doc["optional"]["cronjobs"].as_array().unwrap().iter().filter(|c| c["missed"] == true).collect();
    assert_eq!(cron.len(), 1);
    assert_eq!(cron[0]["name"], "backup");
    h.assert_only_reads();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_batch_permission_the_cycle_succeeds_and_says_so_once() {
    let h = Harness::start(scenario::outages(Timestamp::now())).await;
    h.sim.set_faults(dumbmonit_sim::Faults {
        forbidden: vec![dumbmonit_sim::api::Resource::Jobs, dumbmonit_sim::api::Resource::CronJobs],
        ..Default::default()
    });
    let run = h.check(&["--output", "json"]).await;
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["status"], "notice", "{}", run.stdout);
    assert_eq!(doc["optional"]["not_granted"], json!(["jobs.batch", "cronjobs.batch"]));
    assert!(doc["optional"]["jobs"].is_null());
    let run = dumbmonit(&["rbac".into(), "--optional".into()], &[], h.dir.path()).await;
    assert!(
        run.stdout.contains(
            "  - apiGroups: [\"batch\"]\n    resources: [\"jobs\", \"cronjobs\"]\n    verbs: [\"get\", \"list\"]\n"
        ),
        "{}",
        run.stdout
    );
}

fn minute(m: i64) -> Timestamp {
    "2026-11-30T00:00:00Z".parse::<Timestamp>().unwrap() + SignedDuration::from_mins(m)
}

/// A recorded cycle in the documented format, with the Jobs, CronJobs and the connection's
/// certificates.
fn recorded(t: Timestamp, c: &Cluster, serving_not_after: Timestamp) -> String {
    let list = |kind: &str, items: &[Value]| json!({"kind": kind, "apiVersion": "batch/v1", "metadata": {"resourceVersion": "1"}, "items": items});
    common::recorded_cycle(
        t,
        c,
        json!({
            "jobs": list("JobList", &c.jobs),
            "cronjobs": list("CronJobList", &c.cronjobs),
            "certificates": {"serving": serving_not_after.to_string()},
        }),
    )
}

/// Replays `minutes` cycles of `at(m)`; the transitions as (minute, alertname, state), and the
/// lines.
async fn replay(
    dir: &Path,
    minutes: i64,
    at: impl Fn(i64) -> (Cluster, Timestamp),
) -> (Vec<(i64, String, String)>, Vec<Value>) {
    let cycles = dir.join("cycles");
    std::fs::create_dir_all(&cycles).unwrap();
    for m in 0..minutes {
        let (c, not_after) = at(m);
        std::fs::write(cycles.join(format!("{m:03}.json")), recorded(minute(m), &c, not_after)).unwrap();
    }
    let run = dumbmonit(&["replay".into(), path(&cycles), "--cluster".into(), "lab".into()], &[], dir).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<Value> = run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let got = lines
        .iter()
        .map(|l| {
            let t: Timestamp = l["time"].as_str().unwrap().parse().unwrap();
            (
                t.duration_since(minute(0)).as_mins(),
                l["alertname"].as_str().unwrap().to_string(),
                l["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (got, lines)
}

/// The outages' story, minute by minute: the serving certificate ends 7 days and 10 minutes after
/// minute 0; node-2 changes Ready at minutes 20, 22, 24 and 26; the failed report Job appears at
/// minute 30 and a newer run completes at 45; backup (every five minutes) last ran at minute 0,
/// and from 50 on time again.
fn outages_at(m: i64) -> (Cluster, Timestamp) {
    let now = minute(m);
    let mut c = scenario::outages(now);
    // The pod's grace period ended at minute 0; the CronJobs are the story's own.
    c.pods.retain(|p| p["metadata"]["name"] != "legacy-0");
    let legacy = dumbmonit_sim::fixtures::Pod::new("shop", "legacy-0").owned_by("StatefulSet", "legacy").build(now);
    c.pods.push(dumbmonit_sim::fixtures::deleting(
        legacy,
        30,
        now.duration_since(minute(0)),
        &["example.com/drain-connections"],
        now,
    ));
    let node2_ready = match m {
        20..=21 | 24..=25 => "False",
        _ => "True",
    };
    c.nodes[1] = Node::new("node-2").ready(Some(node2_ready)).build(now);
    c.jobs.clear();
    c.cronjobs.clear();
    let last_backup = if m >= 50 { minute(m - m % 5) } else { minute(0) };
    c.cronjobs.push(cronjob("ops", "backup", "*/5 * * * *", Some(last_backup), now));
    c.cronjobs.push(cronjob("ops", "report", "0 * * * *", Some(minute(30)), now));
    if m >= 30 {
        c.jobs.push(job("ops", "report-1", Some("report"), Some(false), minute(30)));
    }
    if m >= 45 {
        c.jobs.push(job("ops", "report-2", Some("report"), Some(true), minute(44)));
    }
    (c, minute(0) + SignedDuration::from_hours(7 * 24) + SignedDuration::from_mins(10))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_rule_fires_and_resolves_at_its_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let (got, lines) = replay(dir.path(), 65, outages_at).await;
    let at = |m: i64, name: &str, state: &str| (m, name.to_string(), state.to_string());
    assert_eq!(
        got,
        [
            at(0, "KubernetesAPICertificateExpiring", "firing"),
            // A Deployment past its deadline at once; its missing replicas are not a second alert.
            at(0, "KubernetesRolloutStuck", "firing"),
            at(11, "KubernetesCronJobMissed", "firing"),
            at(11, "KubernetesAPICertificateExpiring", "escalated"),
            // The StatefulSet's update made no progress for 15 minutes.
            at(15, "KubernetesPodStuckTerminating", "firing"),
            at(15, "KubernetesRolloutStuck", "firing"),
            at(24, "KubernetesNodeFlapping", "firing"),
            at(30, "KubernetesJobFailed", "firing"),
            at(37, "KubernetesNodeFlapping", "resolved"),
            at(45, "KubernetesJobFailed", "resolved"),
            at(50, "KubernetesCronJobMissed", "resolved"),
            at(60, "KubernetesVersionSkew", "firing"),
        ],
        "{lines:#?}"
    );
    let find = |name: &str, state: &str| lines.iter().find(|l| l["alertname"] == name && l["state"] == state).unwrap();
    let cert = find("KubernetesAPICertificateExpiring", "firing");
    assert_eq!(cert["severity"], "notice");
    assert_eq!(cert["labels"]["certificate"], "serving");
    assert_eq!(cert["summary"], "The API server's serving certificate expires on 2026-12-07 00:10 UTC (in 7 days)");
    assert!(
        cert["description"]
            .as_str()
            .unwrap()
            .contains("k3s renews the certificates that expire within 90 days when it restarts")
    );
    assert_eq!(find("KubernetesAPICertificateExpiring", "escalated")["severity"], "warning");
    let skew = find("KubernetesVersionSkew", "firing");
    assert_eq!(
        skew["summary"],
        "Kubelet v1.29.15+k3s1 on node node-3 is outside the supported skew from the API server v1.33.4+k3s1"
    );
    let terminating = find("KubernetesPodStuckTerminating", "firing");
    assert_eq!(terminating["summary"], "Pod shop/legacy-0 has been terminating for 15 min past its grace period");
    assert!(
        terminating["description"]
            .as_str()
            .unwrap()
            .contains("waits for its finalizers: example.com/drain-connections")
    );
    let sts = lines
        .iter()
        .find(|l| l["alertname"] == "KubernetesRolloutStuck" && l["labels"]["kind"] == "StatefulSet")
        .unwrap();
    assert_eq!(sts["summary"], "The rollout of StatefulSet shop/queue is stuck");
    assert!(
        sts["description"]
            .as_str()
            .unwrap()
            .starts_with("its update has made no progress for 15 min: 1 of 3 replicas updated")
    );
    let failed = find("KubernetesJobFailed", "firing");
    assert_eq!(failed["labels"]["owner"], "report");
    assert_eq!(failed["summary"], "Job ops/report-1 (of CronJob report) failed");
    assert!(!got.iter().any(|(_, n, _)| n == "KubernetesNodeNotReady"), "a flapping node is one alert");
    assert!(!got.iter().any(|(_, n, _)| n == "KubernetesWorkloadReplicasMissing"), "a stuck rollout is one alert");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_healthy_cluster_raises_none_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let far = minute(0) + SignedDuration::from_hours(300 * 24);
    // The StatefulSet's update gains a replica every five minutes; the pod being deleted is
    // within its grace period; the report CronJob's failed run was followed by one that worked.
    let (got, lines) = replay(dir.path(), 40, |m| (scenario::busy(m / 5, minute(m)), far)).await;
    assert!(got.is_empty(), "{lines:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_remembers_across_cycles_and_shows_every_case_on_the_page() {
    let options = SimOptions { certificate_lifetime: Some(FIVE_DAYS), ..Default::default() };
    let h = Harness::start_with(options, scenario::outages(Timestamp::now())).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::web::write_config(dir.path(), "", &[("edge", &h, "100ms")]);
    // A minute of rule time per cycle, from half an hour ago.
    let clock = format!("{}/60", Timestamp::now() - SignedDuration::from_mins(30));
    let s = common::web::Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &clock)]);
    // Fifteen cycles without progress make the StatefulSet's update stuck.
    let alerts = s.wait_for("/api/v1/alerts", "the StatefulSet's stuck rollout", |r| {
        r.body.contains("\"KubernetesRolloutStuck\"") && r.body.contains("\"StatefulSet\"")
    });
    for name in [
        "KubernetesAPICertificateExpiring",
        "KubernetesPodStuckTerminating",
        "KubernetesJobFailed",
        "KubernetesCronJobMissed",
    ] {
        assert!(alerts.body.contains(name), "{name} in {}", alerts.body);
    }
    assert!(
        !alerts.body.contains("KubernetesWorkloadReplicasMissing"),
        "a stuck rollout is one alert: {}",
        alerts.body
    );

    let page = s.get("/clusters/edge");
    assert_eq!(page.status, 200);
    for expected in [
        "2 rollouts stuck",
        "The API server's serving certificate expires on",
        "Stuck rollouts (2)",
        "its update has made no progress for",
        "ProgressDeadlineExceeded: ReplicaSet &quot;checkout-6d5f7c8b9a&quot; has timed out progressing.",
        "stuck terminating",
        "waits for its finalizers: example.com/drain-connections",
        "Failed jobs (1)",
        "report-29400000",
        "Cron jobs that missed their runs (1)",
        "kubelet v1.29.15+k3s1 is outside the supported skew",
    ] {
        assert!(page.body.contains(expected), "missing {expected:?} in the page:\n{}", page.body);
    }
    let m = samples(&s.get("/metrics").body);
    assert_eq!(
        m["dumbmonit_k8s_workload_rollout_stuck{cluster=\"edge\",kind=\"StatefulSet\",namespace=\"shop\",workload=\"queue\"}"],
        1.0
    );
    assert_eq!(m["dumbmonit_k8s_node_ready_transitions{cluster=\"edge\",node=\"node-2\"}"], 0.0);
    assert_eq!(m["dumbmonit_k8s_pods_stuck_terminating{cluster=\"edge\"}"], 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_certificate_of_a_kubeconfig_is_read_for_its_end() {
    use base64::Engine;
    let h = Harness::start(scenario::healthy(Timestamp::now())).await;
    // A client certificate beside the token, as a k3s admin kubeconfig carries one (the
    // simulator asks for none, so the token authenticates).
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(rcgen::DnType::CommonName, "system:admin");
    params.not_after = rcgen::date_time_ymd(2031, 6, 1);
    let cert = params.self_signed(&key).unwrap();
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: {}\n    certificate-authority-data: {}\n\
         contexts:\n- name: admin\n  context:\n    cluster: sim\n    user: admin\ncurrent-context: admin\nusers:\n\
         - name: admin\n  user:\n    token: {}\n    client-certificate-data: {}\n    client-key-data: {}\n",
        h.sim.url(),
        b64(h.sim.ca_pem()),
        h.sim.token(),
        b64(&cert.pem()),
        b64(&key.serialize_pem())
    );
    let file = h.dir.path().join("kubeconfig");
    std::fs::write(&file, kubeconfig).unwrap();
    let run = dumbmonit(
        &["check".into(), "--kubeconfig".into(), path(&file), "--output".into(), "prometheus".into()],
        &[],
        h.dir.path(),
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let m = samples(&run.stdout);
    let end: Timestamp = "2031-06-01T00:00:00Z".parse().unwrap();
    assert_eq!(m["dumbmonit_k8s_client_certificate_expiry_timestamp_seconds"], end.as_second() as f64);
    assert!(m.contains_key("dumbmonit_k8s_apiserver_certificate_expiry_timestamp_seconds"));
    assert!(!run.stdout.contains("BEGIN"), "no key material in the output");
}
