//! Quiet when it should be: silences made through the API (Alertmanager's body, kept across a
//! restart, expired early), maintenance windows (from the file and the API), acknowledgements,
//! and the heartbeat. Against the simulator and a webhook receiver, on the stepped clock: rule
//! time moves a minute a cycle, and cycles come every fraction of a second.

mod common;

use std::time::{Duration, Instant};

use common::receiver::Receiver;
use common::web::{Response, Served, request};
use common::{Harness, register_secret};
use dumbmonit_sim::fixtures::{Container, Pod, deployment};
use dumbmonit_sim::scenario;
use serde_json::{Value, json};

/// The alerts of the webhook bodies, but the heartbeat's: (status, alertname, the object).
fn told(receiver: &Receiver) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for doc in receiver.bodies() {
        for a in doc["alerts"].as_array().unwrap() {
            let l = &a["labels"];
            if l["alertname"] == "DumbMonitWatchdog" {
                continue;
            }
            let object =
                ["namespace", "node", "workload"].iter().filter_map(|k| l[*k].as_str()).collect::<Vec<_>>().join("/");
            let object = format!("{}:{object}", l["cluster"].as_str().unwrap_or(""));
            out.push((a["status"].as_str().unwrap().to_string(), l["alertname"].as_str().unwrap().to_string(), object));
        }
    }
    out
}

fn heartbeats(receiver: &Receiver) -> usize {
    receiver.bodies().iter().filter(|d| d["alerts"][0]["labels"]["alertname"] == "DumbMonitWatchdog").count()
}

fn wait(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(40);
    while !ok() {
        assert!(Instant::now() < deadline, "waited in vain for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A JSON request with the admin's (or anyone's) Authorization.
fn send(s: &Served, method: &str, path: &str, authorization: &str, body: &Value) -> Response {
    let text = if body.is_null() { String::new() } else { body.to_string() };
    request(
        s.addr,
        method,
        path,
        &[("Authorization", authorization), ("Content-Type", "application/json")],
        text.as_bytes(),
    )
}

fn alert_of<'a>(alerts: &'a Value, alertname: &str, key: &str, value: &str) -> Option<&'a Value> {
    alerts.as_array().unwrap().iter().find(|a| a["alertname"] == alertname && a["labels"][key] == value)
}

fn crash_looping_dev() -> Pod {
    Pod::new("dev-7", "api-0").container(Container::crashlooping("app", "Error", 1, 9))
}

fn base64_of(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

const ADMIN: &str = "admin-token-quiet-5be0c2d1";
const VIEWER: &str = "viewer-token-quiet-9a7f1e44";

fn auth_section() -> String {
    register_secret(ADMIN);
    register_secret(VIEWER);
    format!("[auth]\nbearer_token = {VIEWER:?}\n\n[auth.admin]\nbearer_token = {ADMIN:?}\n\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silence_made_through_the_api_mutes_firing_and_resolution_survives_a_restart_and_its_early_end_tells_at_once()
{
    let now = jiff::Timestamp::now();
    let mut base = scenario::healthy(now);
    scenario::crash_loop(&mut base, now);
    let with_dev = || {
        let mut c = base.clone();
        c.pods.push(crash_looping_dev().build(now));
        c
    };
    let h = Harness::start(base.clone()).await;
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let notifier = format!("[[notifier]]\ntype = \"webhook\"\nurl = \"{}/hook\"\n\n", receiver.url());
    let cfg = common::web::write_config(dir.path(), &format!("{}{notifier}", auth_section()), &[("lab", &h, "200ms")]);
    let clock = format!("{now}/60");
    let admin = format!("Bearer {ADMIN}");
    let viewer = format!("Bearer {VIEWER}");
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &clock)]);

    // Refusals first: nothing is made by them.
    let silence = json!({
        "matchers": [{"name": "namespace", "value": "dev-7", "isRegex": false, "isEqual": true}],
        "endsAt": (now + jiff::SignedDuration::from_hours(200 * 24)).to_string(),
        "comment": "dev-7 is rebuilt <today>",
    });
    assert_eq!(send(&s, "POST", "/api/v1/silences", &viewer, &silence).status, 403, "a viewer's POST");
    assert_eq!(send(&s, "POST", "/api/v1/silences", "Bearer nope", &silence).status, 401);
    let bad = json!({"matchers": [{"name": "pod", "value": "(", "isRegex": true}], "endsAt": silence["endsAt"]});
    let refused = send(&s, "POST", "/api/v1/silences", &admin, &bad);
    assert_eq!(refused.status, 400);
    assert!(refused.json()["error"].as_str().unwrap().starts_with("field `matchers[0]`:"), "{}", refused.body);
    let everything =
        json!({"matchers": [{"name": "cluster", "value": ".*", "isRegex": true}], "endsAt": silence["endsAt"]});
    let refused = send(&s, "POST", "/api/v1/silences", &admin, &everything);
    assert_eq!(refused.status, 400, "a silence of every alert, not confirmed");
    assert!(refused.body.contains("these match every alert of every cluster"), "{}", refused.body);
    let form = request(
        s.addr,
        "POST",
        "/api/v1/silences",
        &[("Authorization", &admin), ("Content-Type", "application/x-www-form-urlencoded")],
        b"matchers=x",
    );
    assert_eq!(form.status, 415, "only JSON: a form of another site cannot send it");
    assert_eq!(s.get_with("/api/v1/silences", &viewer).json(), json!([]));

    // The silence, then dev-7's crash loop: it fires, shown silenced, and is not told.
    let made = send(&s, "POST", "/api/v1/silences", &admin, &silence);
    assert_eq!(made.status, 200, "{}", made.body);
    let id = made.json()["silenceID"].as_str().unwrap().to_string();
    let listed = s.get_with("/api/v1/silences", &viewer).json();
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["status"]["state"], "active");
    assert_eq!(listed[0]["createdBy"], "admin token");
    assert_eq!(
        listed[0]["matchers"][0],
        json!({"name": "namespace", "value": "dev-7", "isRegex": false, "isEqual": true})
    );
    h.sim.set_cluster(with_dev());
    let firing = |r: &Response, ns: &str| {
        alert_of(&r.json(), "KubernetesPodCrashLooping", "namespace", ns).is_some_and(|a| a["state"] == "firing")
    };
    let alerts = s.wait_for_with("/api/v1/alerts", &viewer, "dev-7's crash loop firing", |r| firing(r, "dev-7"));
    let dev = alert_of(&alerts.json(), "KubernetesPodCrashLooping", "namespace", "dev-7").unwrap().clone();
    assert_eq!(dev["silenced_by"], json!([id]), "{dev:#}");
    assert_eq!(dev["in_maintenance"], false);
    assert_eq!(dev["acknowledged"], Value::Null);
    assert_eq!(dev["fingerprint"].as_str().unwrap().len(), 16);
    let page = s.get_with("/clusters/lab", &viewer).body;
    assert!(
        page.contains("silenced until ") && page.contains(" by admin token: dev-7 is rebuilt &lt;today&gt;"),
        "{page}"
    );
    wait("shop's crash loop told", || {
        told(&receiver).iter().any(|(st, _, o)| st == "firing" && o.starts_with("lab:shop"))
    });

    // Resolved inside the silence: not told either.
    h.sim.set_cluster(base.clone());
    s.wait_for_with("/api/v1/alerts", &viewer, "dev-7's crash loop resolved", |r| {
        alert_of(&r.json(), "KubernetesPodCrashLooping", "namespace", "dev-7").is_none()
    });
    h.sim.set_cluster(with_dev());
    s.wait_for_with("/api/v1/alerts", &viewer, "dev-7's crash loop firing again", |r| firing(r, "dev-7"));
    assert!(!told(&receiver).iter().any(|(_, _, o)| o == "lab:dev-7"), "{:?}", told(&receiver));
    let last = s.get_with("/api/v1/clusters/lab", &viewer).json()["last_cycle"].clone();
    drop(s);

    // A restart: the silence is kept. With an interval of an hour, one cycle is taken at start;
    // the early end of the silence tells dev-7's crash loop at once, not at the next interval.
    let text = std::fs::read_to_string(&cfg).unwrap().replace("interval = \"200ms\"", "interval = \"1h\"");
    std::fs::write(&cfg, text).unwrap();
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &clock)]);
    s.wait_for_with("/api/v1/clusters/lab", &viewer, "the first cycle after the restart", |r| {
        r.json()["last_cycle"] != last && !r.json()["last_cycle"].is_null()
    });
    let listed = s.get_with("/api/v1/silences", &viewer).json();
    assert_eq!((listed[0]["id"].as_str(), listed[0]["status"]["state"].as_str()), (Some(id.as_str()), Some("active")));
    assert!(firing(&s.get_with("/api/v1/alerts", &viewer), "dev-7"));
    assert!(!told(&receiver).iter().any(|(_, _, o)| o == "lab:dev-7"));
    assert_eq!(send(&s, "DELETE", "/api/v1/silences/no-such-id", &admin, &Value::Null).status, 404);
    assert_eq!(send(&s, "DELETE", &format!("/api/v1/silences/{id}"), &viewer, &Value::Null).status, 403);
    let expired = send(&s, "DELETE", &format!("/api/v1/silences/{id}"), &admin, &Value::Null);
    assert_eq!(expired.status, 200, "{}", expired.body);
    wait("dev-7's crash loop told once the silence is expired", || {
        told(&receiver).iter().any(|(st, _, o)| st == "firing" && o == "lab:dev-7")
    });
    assert_eq!(told(&receiver).iter().filter(|(_, _, o)| o == "lab:dev-7").count(), 1, "told once");
    assert_eq!(s.get_with("/api/v1/silences", &viewer).json()[0]["status"]["state"], "expired");
    let audit = s.get_with("/audit", &viewer).body;
    assert!(audit.contains(&format!("silence {id} created: {{namespace=&quot;dev-7&quot;}} until")), "{audit}");
    assert!(audit.contains(&format!("silence {id} expired")), "{audit}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_maintenance_window_tells_nothing_of_what_ends_inside_it_the_rest_at_its_end_and_the_heartbeat_goes_on() {
    let now = jiff::Timestamp::now();
    let t0 = jiff::Timestamp::from_second(now.as_second()).unwrap();
    let healthy = scenario::healthy(now);
    let mut lost = healthy.clone();
    scenario::node_lost(&mut lost, now);
    let a = Harness::start(lost.clone()).await;
    let b = Harness::start(lost.clone()).await;
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let end = t0 + jiff::SignedDuration::from_mins(30);
    let extra = format!(
        "{}[[notifier]]\ntype = \"webhook\"\nurl = \"{}/hook\"\nheartbeat = \"1s\"\nheartbeat_url = \"{}/dead-mans-switch\"\n\n\
         [[maintenance]]\ncluster = \"lab-a\"\nstart = \"{t0}\"\nend = \"{end}\"\ncomment = \"k3s upgrade\"\n\n\
         [[maintenance]]\ncluster = '{{cluster=~\"lab-b|lab-c\"}}'\nstart = \"{t0}\"\nend = \"{end}\"\n\n",
        auth_section(),
        receiver.url(),
        receiver.url()
    );
    let cfg = common::web::write_config(dir.path(), &extra, &[("lab-a", &a, "500ms"), ("lab-b", &b, "500ms")]);
    let viewer = format!("Bearer {VIEWER}");
    let admin = format!("Bearer {ADMIN}");
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{t0}/60"))]);

    // In the window: both nodes fire, shown in maintenance, nothing told; the heartbeat goes on.
    let not_ready =
        |r: &Response, cluster: &str| {
            r.json().as_array().unwrap().iter().any(|x| {
                x["alertname"] == "KubernetesNodeNotReady" && x["cluster"] == cluster && x["state"] == "firing"
            })
        };
    let alerts = s.wait_for_with("/api/v1/alerts", &viewer, "both nodes firing", |r| {
        not_ready(r, "lab-a") && not_ready(r, "lab-b")
    });
    assert!(alerts.json().as_array().unwrap().iter().all(|x| x["in_maintenance"] == true), "{}", alerts.body);
    let page = s.get_with("/clusters/lab-a", &viewer).body;
    let until = format!("in maintenance until {}", end.strftime("%Y-%m-%d %H:%M UTC"));
    assert!(page.contains(&until) && page.contains("the configuration file: k3s upgrade"), "{page}");
    assert!(s.get_with("/", &viewer).body.contains(&until));
    let windows = s.get_with("/api/v1/maintenance", &viewer).json();
    assert_eq!(windows[1]["cluster"], r#"{cluster=~"lab-b|lab-c"}"#);
    assert_eq!(windows[0]["status"]["state"], "active");
    // lab-a's node comes back inside the window: its alert resolves, untold.
    a.sim.set_cluster(healthy.clone());
    s.wait_for_with("/api/v1/alerts", &viewer, "lab-a's node ready again", |r| !not_ready(r, "lab-a"));
    wait("two heartbeats inside the window", || heartbeats(&receiver) >= 2);
    let paths: Vec<(String, bool)> = receiver
        .received
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r.path.clone(), r.body.contains("DumbMonitWatchdog")))
        .collect();
    assert!(
        paths.iter().all(|(p, beat)| (p == "/dead-mans-switch") == *beat),
        "the heartbeat to its own URL: {paths:?}"
    );
    let in_window = s.get_with("/api/v1/clusters/lab-b", &viewer).json()["last_cycle"].as_str().unwrap().to_string();
    assert!(in_window.parse::<jiff::Timestamp>().unwrap() < end, "{in_window}: still inside the window");
    assert!(told(&receiver).is_empty(), "{:?}", told(&receiver));

    // The window ends: lab-b's node, still not ready, is told then; lab-a's never.
    wait("lab-b's node told at the end of the window", || {
        told(&receiver).iter().any(|(st, n, o)| st == "firing" && n == "KubernetesNodeNotReady" && o == "lab-b:node-3")
    });
    let after =
        s.get_with("/api/v1/clusters/lab-b", &viewer).json()["last_cycle"].as_str().unwrap().parse::<jiff::Timestamp>();
    assert!(after.unwrap() >= end);
    assert!(!told(&receiver).iter().any(|(_, _, o)| o.starts_with("lab-a:")), "{:?}", told(&receiver));

    // The API: a recurring window made, listed, refused when wrong, and ended.
    let w = json!({"cluster": "{cluster=~\"edge-.*\"}", "schedule": "0 2 * * 0", "timeZone": "Europe/Paris", "duration": "2h", "comment": "weekly"});
    let made = send(&s, "POST", "/api/v1/maintenance", &admin, &w);
    assert_eq!(made.status, 200, "{}", made.body);
    let id = made.json()["id"].as_str().unwrap().to_string();
    let listed = s.get_with("/api/v1/maintenance", &viewer).json();
    let mine = listed.as_array().unwrap().iter().find(|x| x["id"] == id.as_str()).unwrap();
    assert_eq!(
        (mine["schedule"].as_str(), mine["timeZone"].as_str(), mine["duration"].as_str()),
        (Some("0 2 * * 0"), Some("Europe/Paris"), Some("2h"))
    );
    let wrong = json!({"cluster": "lab-a", "startsAt": "2027-01-02T04:00:00Z", "endsAt": "2027-01-02T02:00:00Z"});
    let refused = send(&s, "POST", "/api/v1/maintenance", &admin, &wrong);
    assert_eq!((refused.status, refused.json()["error"].as_str()), (400, Some("field `endsAt`: not after `startsAt`")));
    assert_eq!(send(&s, "DELETE", "/api/v1/maintenance/file-1", &admin, &Value::Null).status, 409, "the file's");
    assert_eq!(send(&s, "DELETE", &format!("/api/v1/maintenance/{id}"), &admin, &Value::Null).status, 200);
    let listed = s.get_with("/api/v1/maintenance", &viewer).json();
    assert!(!listed.as_array().unwrap().iter().any(|x| x["id"] == id.as_str()), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acknowledged_alert_is_not_escalated_nor_told_again_and_another_alert_of_the_cluster_is() {
    let now = jiff::Timestamp::now();
    let mut c = scenario::healthy(now);
    // Two Deployments short of a replica: both fire after 10 min and escalate an hour later.
    c.deployments[0] = deployment("shop", "api", Some(2), 1, 1, now);
    c.deployments[1] = deployment("shop", "web", Some(2), 1, 1, now);
    let h = Harness::start(c).await;
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let notifier = format!("[[notifier]]\ntype = \"webhook\"\nurl = \"{}/hook\"\n\n", receiver.url());
    let cfg = common::web::write_config(dir.path(), &format!("{}{notifier}", auth_section()), &[("lab", &h, "200ms")]);
    let (admin, viewer) = (format!("Bearer {ADMIN}"), format!("Bearer {VIEWER}"));
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{now}/60"))]);
    let missing = |r: &Response, w: &str| {
        alert_of(&r.json(), "KubernetesWorkloadReplicasMissing", "workload", w).is_some_and(|a| a["state"] == "firing")
    };
    let alerts =
        s.wait_for_with("/api/v1/alerts", &viewer, "both workloads firing", |r| missing(r, "api") && missing(r, "web"));
    let api = alert_of(&alerts.json(), "KubernetesWorkloadReplicasMissing", "workload", "api").unwrap().clone();
    assert_eq!(api["severity"], "notice");
    let print = api["fingerprint"].as_str().unwrap();
    let path = format!("/api/v1/alerts/{print}/ack");
    assert_eq!(send(&s, "POST", &path, &viewer, &json!({"comment": "x"})).status, 403);
    assert_eq!(send(&s, "POST", "/api/v1/alerts/0000000000000000/ack", &admin, &json!({})).status, 404);
    let acked = send(&s, "POST", &path, &admin, &json!({"comment": "scaling the node pool"}));
    assert_eq!(acked.status, 200, "{}", acked.body);
    assert_eq!(acked.json()["by"], "admin token");
    let shown =
        alert_of(&s.get_with("/api/v1/alerts", &viewer).json(), "KubernetesWorkloadReplicasMissing", "workload", "api")
            .unwrap()
            .clone();
    assert_eq!(shown["acknowledged"]["comment"], "scaling the node pool", "shown at once: {shown:#}");
    assert!(s.get_with("/clusters/lab", &viewer).body.contains("acknowledged by admin token at "));

    // The receivers hear of the acknowledgement once.
    wait("the acknowledgement told", || {
        receiver.bodies().iter().any(|d| d["alerts"][0]["annotations"]["acknowledged_by"] == "admin token")
    });
    // An hour of firing later: web escalates and is told; api neither escalates nor is told again.
    wait("web's escalation told", || {
        receiver
            .bodies()
            .iter()
            .any(|d| d["alerts"][0]["labels"]["workload"] == "web" && d["alerts"][0]["labels"]["severity"] == "warning")
    });
    let alerts = s.get_with("/api/v1/alerts", &viewer).json();
    let api = alert_of(&alerts, "KubernetesWorkloadReplicasMissing", "workload", "api").unwrap();
    assert_eq!((api["severity"].as_str(), api["escalated_at"].is_null()), (Some("notice"), true), "{api:#}");
    assert_eq!(api["acknowledged"]["by"], "admin token", "held by the rules since");
    let of_api: Vec<Value> = receiver
        .bodies()
        .into_iter()
        .filter(|d| d["alerts"][0]["labels"]["workload"] == "api")
        .map(|d| json!([d["alerts"][0]["labels"]["severity"], d["alerts"][0]["annotations"]["acknowledged_by"]]))
        .collect();
    assert_eq!(
        of_api,
        [json!(["notice", null]), json!(["notice", "admin token"])],
        "fired, then acknowledged; no more"
    );
    let audit = s.get_with("/audit", &viewer).body;
    assert!(
        audit.contains(&format!("alert KubernetesWorkloadReplicasMissing {print} acknowledged: scaling the node pool")),
        "{audit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_alertmanager_silences_live_there_replicas_share_them_and_the_heartbeat_reaches_it() {
    use common::alertmanager::{alertmanager, get, send as am_send};
    let now = jiff::Timestamp::now();
    let mut base = scenario::healthy(now);
    scenario::crash_loop(&mut base, now);
    // The crash-looping pod's Deployment has its replicas: the crash loops are the only alerts.
    base.deployments.retain(|d| d["metadata"]["name"] != "api");
    base.deployments.push(deployment("shop", "api", Some(3), 3, 3, now));
    let mut with_dev8 = base.clone();
    with_dev8.pods.push(Pod::new("dev-8", "api-0").container(Container::crashlooping("app", "Error", 1, 9)).build(now));
    let with_dev7 = {
        let mut c = with_dev8.clone();
        c.pods.push(crash_looping_dev().build(now));
        c
    };
    let h = Harness::start(base.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let (am, port) = alertmanager(dir.path());
    // A silence made with Alertmanager's own API, before DumbMonit starts.
    let end = (now + jiff::SignedDuration::from_hours(200 * 24)).to_string();
    let (status, made) = am_send(
        port,
        "POST",
        "/api/v2/silences",
        &json!({"matchers": [{"name": "namespace", "value": "dev-8", "isRegex": false, "isEqual": true}],
                "startsAt": now.to_string(), "endsAt": end, "createdBy": "amtool user", "comment": "made in Alertmanager"})
        .to_string(),
    );
    assert_eq!(status, 200, "{made}");
    let am_made: Value = serde_json::from_str(&made).unwrap();
    let am_id = am_made["silenceID"].as_str().unwrap().to_string();

    // Two replicas, each with its own state and webhook receiver, the same Alertmanager. Rule
    // time starts at Alertmanager's now and runs ahead of it (a minute a cycle): each alert says
    // when it ends, so Alertmanager takes alerts that start in its future.
    let clock = format!("{now}/60");
    let mut replicas = Vec::new();
    for name in ["a", "b"] {
        let receiver = Receiver::start().await;
        let sub = dir.path().join(name);
        std::fs::create_dir_all(&sub).unwrap();
        let notifiers = format!(
            "[[notifier]]\ntype = \"alertmanager\"\nurl = \"http://127.0.0.1:{port}\"\nheartbeat = \"1s\"\n\n\
             [[notifier]]\ntype = \"webhook\"\nurl = \"{}/hook\"\n\n",
            receiver.url()
        );
        let cfg = common::web::write_config(&sub, &format!("{}{notifiers}", auth_section()), &[("lab", &h, "200ms")]);
        let served = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &clock)]);
        replicas.push((served, receiver));
    }
    let (admin, viewer) = (format!("Bearer {ADMIN}"), format!("Bearer {VIEWER}"));
    let (a, b) = (&replicas[0], &replicas[1]);
    // Once rule time is past the start of Alertmanager's silence, dev-8 starts crash-looping.
    for (s, _) in [a, b] {
        s.wait_for_with("/api/v1/clusters/lab", &viewer, "rule time past the silence's start", |r| {
            r.json()["last_cycle"]
                .as_str()
                .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                .is_some_and(|t| t > now + jiff::SignedDuration::from_mins(1))
        });
    }
    h.sim.set_cluster(with_dev8.clone());

    // Alertmanager's silence holds on both replicas: dev-8 fires, shown silenced, not told.
    for (s, _) in [a, b] {
        let alerts =
            s.wait_for_with("/api/v1/alerts", &viewer, "dev-8 firing, silenced by Alertmanager's silence", |r| {
                alert_of(&r.json(), "KubernetesPodCrashLooping", "namespace", "dev-8")
                    .is_some_and(|x| x["state"] == "firing" && x["silenced_by"] == json!([am_id]))
            });
        assert!(alerts.body.contains(&am_id));
        let page = s.get_with("/clusters/lab", &viewer).body;
        assert!(page.contains(" by amtool user: made in Alertmanager"), "{page}");
    }

    // A silence made on replica a lives in Alertmanager, and replica b obeys it.
    let silence = json!({"matchers": [{"name": "namespace", "value": "dev-7"}], "endsAt": end, "comment": "shared"});
    let made = send(&a.0, "POST", "/api/v1/silences", &admin, &silence);
    assert_eq!(made.status, 200, "{}", made.body);
    let id = made.json()["silenceID"].as_str().unwrap().to_string();
    let (_, in_am) = get(port, "/api/v2/silences").unwrap();
    let in_am: Value = serde_json::from_str(&in_am).unwrap();
    let shared =
        in_am.as_array().unwrap().iter().find(|s| s["id"] == id.as_str()).expect("the silence is Alertmanager's");
    assert_eq!(shared["matchers"][0]["value"], "dev-7");
    assert_eq!(shared["createdBy"], "admin token");
    b.0.wait_for_with("/api/v1/silences", &viewer, "replica b reads the silence", |r| r.body.contains(&id));
    h.sim.set_cluster(with_dev7.clone());
    for (s, _) in [a, b] {
        s.wait_for_with("/api/v1/alerts", &viewer, "dev-7 firing, silenced", |r| {
            alert_of(&r.json(), "KubernetesPodCrashLooping", "namespace", "dev-7")
                .is_some_and(|x| x["state"] == "firing" && x["silenced_by"] == json!([id]))
        });
    }
    for (_, receiver) in [a, b] {
        wait("shop told", || told(receiver).iter().any(|(st, _, o)| st == "firing" && o.starts_with("lab:shop")));
        assert!(!told(receiver).iter().any(|(_, _, o)| o == "lab:dev-7" || o == "lab:dev-8"), "{:?}", told(receiver));
    }
    // The heartbeat reaches Alertmanager.
    let (_, alerts) = get(port, "/api/v2/alerts").unwrap();
    assert!(alerts.contains("DumbMonitWatchdog"), "{alerts}");
    // Shop's crash loop acknowledged on replica a: Alertmanager gets who is on it.
    let shop =
        alert_of(&a.0.get_with("/api/v1/alerts", &viewer).json(), "KubernetesPodCrashLooping", "namespace", "shop")
            .unwrap()
            .clone();
    let path = format!("/api/v1/alerts/{}/ack", shop["fingerprint"].as_str().unwrap());
    assert_eq!(send(&a.0, "POST", &path, &admin, &json!({"comment": "on it"})).status, 200);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, alerts) = get(port, "/api/v2/alerts").unwrap();
        let alerts: Vec<Value> = serde_json::from_str(&alerts).unwrap();
        let acked = alerts
            .iter()
            .any(|x| x["labels"]["namespace"] == "shop" && x["annotations"]["acknowledged_by"] == "admin token");
        if acked {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Alertmanager never had the acknowledgement: {alerts:?}\nreplica a's log:\n{}",
            a.0.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Expired on replica b: expired in Alertmanager, and both replicas tell dev-7's crash loop.
    assert_eq!(send(&b.0, "DELETE", &format!("/api/v1/silences/{id}"), &admin, &Value::Null).status, 200);
    for (_, receiver) in [a, b] {
        wait("dev-7 told once the shared silence is expired", || {
            told(receiver).iter().any(|(st, _, o)| st == "firing" && o == "lab:dev-7")
        });
    }
    let (_, in_am) = get(port, "/api/v2/silences").unwrap();
    assert!(in_am.contains("\"expired\""), "{in_am}");

    // Alertmanager goes away: the page says so, and its silences stay in force.
    drop(am);
    b.0.wait_for_with("/silences", &viewer, "the silences' page saying Alertmanager is away", |r| {
        r.body.contains("Alertmanager&#39;s silences cannot be read.")
            || r.body.contains("Alertmanager's silences cannot be read.")
    });
    let page = b.0.get_with("/silences", &viewer).body;
    assert!(page.contains("made in Alertmanager"), "{page}");
    let alerts = b.0.get_with("/api/v1/alerts", &viewer).json();
    assert_eq!(
        alert_of(&alerts, "KubernetesPodCrashLooping", "namespace", "dev-8").unwrap()["silenced_by"],
        json!([am_id])
    );
}

/// Made, edited and expired on the pages, and an alert acknowledged there, in a real browser
/// (Playwright from npm driving Debian's Chromium; `tests/browser/silences.mjs` holds the steps).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silence_is_made_edited_and_expired_and_an_alert_acknowledged_in_a_browser() {
    let now = jiff::Timestamp::now();
    let mut c = scenario::healthy(now);
    scenario::crash_loop(&mut c, now);
    let h = Harness::start(c).await;
    let dir = tempfile::tempdir().unwrap();
    let admin_pass = "admin-password-quiet-41d2";
    register_secret(admin_pass);
    let hash = bcrypt::hash(admin_pass, 4).unwrap();
    let auth = format!("[auth.admin]\nusername = \"admin\"\npassword_hash = {hash:?}\n\n");
    let cfg = common::web::write_config(dir.path(), &auth, &[("lab", &h, "200ms")]);
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{now}/60"))]);
    s.wait_for("/api/v1/alerts", "the crash loop firing", |r| {
        alert_of(&r.json(), "KubernetesPodCrashLooping", "namespace", "shop").is_some_and(|a| a["state"] == "firing")
    });
    let browser = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("browser");
    assert!(browser.join("node_modules/playwright-core").exists(), "`npm ci` in tests/browser (scripts/test.sh does)");
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|b| std::path::Path::new(b).exists())
        .expect("Chromium is needed: the Debian package `chromium` (scripts/test.sh installs it)");
    let artifacts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let run = std::process::Command::new("node")
        .arg("silences.mjs")
        .current_dir(&browser)
        .env("BASE", format!("http://{}", s.addr))
        .env("ADMIN", format!("admin:{admin_pass}"))
        .env("SHOTS", &artifacts)
        .env("CHROMIUM", chromium)
        .output()
        .expect("node runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    common::assert_no_secret(&stdout, "the browser test's output");
    assert!(run.status.success(), "the browser steps failed:\n{stdout}\n{stderr}\nserve's log:\n{}", s.log());
    for step in
        ["the new silence is pre-filled", "expired", "the maintenance window ended", "the alert shows who is on it"]
    {
        assert!(stdout.contains(&format!("ok: {step}")), "{step}:\n{stdout}");
    }
    // What the browser did, as the API says it.
    let silences = s.get("/api/v1/silences").json();
    assert_eq!(silences[0]["status"]["state"], "expired");
    assert_eq!(silences[0]["comment"], "edited in the browser");
    assert_eq!(silences[0]["createdBy"], "admin");
    let alerts = s.get("/api/v1/alerts").json();
    let ack = &alert_of(&alerts, "KubernetesPodCrashLooping", "namespace", "shop").unwrap()["acknowledged"];
    assert_eq!((ack["by"].as_str(), ack["comment"].as_str()), (Some("admin"), Some("looking at the logs")));
    // A form's POST without its session's CSRF token is refused, even with the admin's password.
    let basic = format!("Basic {}", base64_of(&format!("admin:{admin_pass}")));
    let forged = request(
        s.addr,
        "POST",
        "/silences",
        &[("Authorization", &basic), ("Content-Type", "application/x-www-form-urlencoded")],
        b"matchers=pod%3D%22x%22&duration=2h&comment=forged",
    );
    assert_eq!(forged.status, 403, "{}", forged.body);
    let audit = s.get("/audit").body;
    assert!(!audit.contains("forged"));
    for action in ["created: {alertname=", "expired: {alertname=", "ended", "acknowledged: looking at the logs"] {
        assert!(audit.contains(action), "{action}: {audit}");
    }
}

/// Every Sunday 02:00 Europe/Paris for 2 h, made through the API, on the Sunday after clocks went
/// forward: it opens at 00:00 UTC (02:00 summer time, not 01:00 UTC as in winter) and closes at
/// 02:00 UTC. A crash loop that fires at 00:00 UTC is told at 02:00 UTC, not before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recurring_window_in_paris_opens_and_closes_at_the_right_instants_after_a_daylight_saving_change() {
    let t0: jiff::Timestamp = "2027-04-03T23:50:00Z".parse().unwrap();
    let (opens, closes): (jiff::Timestamp, jiff::Timestamp) =
        ("2027-04-04T00:00:00Z".parse().unwrap(), "2027-04-04T02:00:00Z".parse().unwrap());
    let mut c = scenario::healthy(t0);
    scenario::crash_loop(&mut c, t0);
    let h = Harness::start(c).await;
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let notifier = format!("[[notifier]]\ntype = \"webhook\"\nurl = \"{}/hook\"\n\n", receiver.url());
    let cfg = common::web::write_config(dir.path(), &format!("{}{notifier}", auth_section()), &[("lab", &h, "100ms")]);
    let (admin, viewer) = (format!("Bearer {ADMIN}"), format!("Bearer {VIEWER}"));
    // Rule time stands still at its start until the window is made: the interval is an hour.
    let slow = std::fs::read_to_string(&cfg).unwrap().replace("interval = \"100ms\"", "interval = \"1h\"");
    std::fs::write(&cfg, &slow).unwrap();
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{t0}/60"))]);
    let w = json!({"cluster": "lab", "schedule": "0 2 * * 0", "timeZone": "Europe/Paris", "duration": "2h", "comment": "weekly"});
    let made = send(&s, "POST", "/api/v1/maintenance", &admin, &w);
    assert_eq!(made.status, 200, "{}", made.body);
    drop(s);
    std::fs::write(&cfg, slow.replace("interval = \"1h\"", "interval = \"100ms\"")).unwrap();
    let s = Served::start(&cfg, &[("DUMBMONIT_TEST_CLOCK", &format!("{t0}/60"))]);

    let crash = |r: &Response| alert_of(&r.json(), "KubernetesPodCrashLooping", "namespace", "shop").cloned();
    // Fired at 00:00 UTC, inside the window: held, marked, not told.
    let fired = s.wait_for_with("/api/v1/alerts", &viewer, "the crash loop firing", |r| {
        crash(r).is_some_and(|a| a["state"] == "firing")
    });
    let a = crash(&fired).unwrap();
    assert_eq!(a["fired_at"], opens.to_string(), "ten minutes after 23:50 UTC");
    assert!(told(&receiver).is_empty(), "{:?}", told(&receiver));
    // Told when the window closes, at 02:00 UTC (04:00 summer time).
    wait("the crash loop told when the window closes", || !told(&receiver).is_empty());
    let cycle =
        s.get_with("/api/v1/clusters/lab", &viewer).json()["last_cycle"].as_str().unwrap().parse::<jiff::Timestamp>();
    assert!(cycle.unwrap() >= closes);
    let bodies = receiver.bodies();
    let first = bodies.iter().find(|d| d["alerts"][0]["labels"]["alertname"] == "KubernetesPodCrashLooping").unwrap();
    assert_eq!(first["alerts"][0]["startsAt"], opens.to_string(), "the alert as it fired");
}
