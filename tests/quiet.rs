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
        "{}[[notifier]]\ntype = \"webhook\"\nurl = \"{}/hook\"\nheartbeat = \"1s\"\n\n\
         [[maintenance]]\ncluster = \"lab-a\"\nstart = \"{t0}\"\nend = \"{end}\"\ncomment = \"k3s upgrade\"\n\n\
         [[maintenance]]\ncluster = '{{cluster=~\"lab-b|lab-c\"}}'\nstart = \"{t0}\"\nend = \"{end}\"\n\n",
        auth_section(),
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
