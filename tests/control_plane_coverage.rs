//! What the kubernetes-mixin alerts on beyond the core, on a real API server: disruption
//! budgets, quotas, volumes, the control plane's leader leases, autoscalers and admission
//! webhooks, created through the API (statuses through the status subresource, leases through
//! the coordination API, a webhook's Service without a ready endpoint, then with one), each in
//! trouble beside a healthy twin. With the guide's role alone every new read says it is not
//! granted and nothing fails; with `rbac --optional`, `check` finds them in both languages and
//! `serve`'s rules fire on the stepped clock, the twins silent.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};

use common::dumbmonit;
use common::plane::{Credentials, Plane, assert_only_reads};
use dumbmonit_sim::scenario;
use serde_json::Value;

const NEW_READS: [&str; 6] = [
    "poddisruptionbudgets.policy",
    "resourcequotas",
    "persistentvolumes",
    "leases.coordination.k8s.io",
    "validatingwebhookconfigurations.admissionregistration.k8s.io",
    "mutatingwebhookconfigurations.admissionregistration.k8s.io",
];

fn find<'a>(list: &'a Value, key: &str, name: &str) -> &'a Value {
    list.as_array().and_then(|a| a.iter().find(|v| v[key] == name)).unwrap_or_else(|| panic!("no {name} in {list:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mixins_signals_on_a_real_api_server() {
    let p = Plane::up(&["--no-kubelets", "--controllers", "serviceaccount-token"]);
    let creds = p.guide_service_account();
    p.load(&common::api_list(&scenario::coverage(jiff::Timestamp::now())));
    // kube-apiserver taints every node it admits not-ready until the node controller sees it
    // Ready; with no node controller here, the test does it, as it would.
    p.kubectl(&["taint", "nodes", "--all", "node.kubernetes.io/not-ready:NoSchedule-"]);

    // The guide's role alone: the cycle succeeds, each new read is said not granted.
    let run = p.check(&p.address, &creds, &["--output", "json"]).await;
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    // What the core reads see (the fixture's kubelets are v1.33 under a v1.37 API server), and
    // nothing of the optional reads'.
    let core = "1 node not ready, 1 pod blocked, 1 pod pending, 1 pod not ready, 1 claim stuck, \
                3 kubelets outside the version skew, \
                1 node full of pods, 1 DaemonSet on nodes it should not be on, \
                requests past what the cluster holds without its largest node";
    assert_eq!((run.code, doc["summary"].as_str()), (2, Some(core)), "{doc:#}");
    for resource in NEW_READS {
        assert!(doc["optional"]["not_granted"].as_array().unwrap().contains(&resource.into()), "{resource}: {doc:#}");
    }
    assert!(doc["optional"]["control_plane"].is_null() && doc["optional"]["pdbs"].is_null(), "{doc:#}");
    let text = p.check(&p.address, &creds, &[]).await;
    let line =
        text.stdout.lines().find(|l| l.starts_with("Not granted to this service account: ")).unwrap_or_else(|| {
            panic!("no not-granted line in {}", text.stdout);
        });
    assert!(NEW_READS.iter().all(|r| line.contains(r)), "{line}");
    assert!(line.ends_with("(`dumbmonit rbac --optional` adds them)"), "{line}");

    // `rbac --optional` grants them, get and list only.
    let dir = tempfile::tempdir().unwrap();
    p.apply(&dumbmonit(&["rbac".into(), "--optional".into()], &[], dir.path()).await.stdout);
    let sa = "system:serviceaccount:kube-system:dumbmonit";
    for (verb, resource, namespace, yes) in [
        ("list", "poddisruptionbudgets.policy", "shop", true),
        ("list", "resourcequotas", "quotas", true),
        ("list", "persistentvolumes", "", true),
        ("list", "leases.coordination.k8s.io", "kube-system", true),
        ("get", "leases.coordination.k8s.io", "kube-system", true),
        ("update", "leases.coordination.k8s.io", "kube-system", false),
        ("watch", "resourcequotas", "quotas", false),
        ("delete", "persistentvolumes", "", false),
        ("list", "validatingwebhookconfigurations.admissionregistration.k8s.io", "", true),
        ("list", "mutatingwebhookconfigurations.admissionregistration.k8s.io", "", true),
        ("list", "services", "policy", true),
        ("list", "endpointslices.discovery.k8s.io", "policy", true),
        ("watch", "services", "policy", false),
        ("get", "secrets", "policy", false),
    ] {
        let mut args = vec!["auth", "can-i", verb, resource, "--as", sa];
        if !namespace.is_empty() {
            args.extend(["-n", namespace]);
        }
        let out = p.kubectl_in(&args, "");
        let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert_eq!(said, if yes { "yes" } else { "no" }, "can-i {verb} {resource}");
    }
    granted_check(&p, &creds).await;
    serve_fires_the_rules(&p, &creds);
    assert_only_reads(&p, sa);
    let leases: Vec<(String, String)> =
        p.requests_of(sa).into_iter().filter(|(_, uri)| uri.contains("coordination.k8s.io")).collect();
    assert!(!leases.is_empty());
    assert!(
        leases.iter().all(|(verb, uri)| verb == "list"
            && uri.starts_with("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases")),
        "only kube-system's leases are read: {leases:?}"
    );
    // The webhooks' backends are read in their Services' namespaces only.
    let backends: Vec<(String, String)> = p
        .requests_of(sa)
        .into_iter()
        .filter(|(_, uri)| uri.contains("/services") || uri.contains("/endpointslices"))
        .collect();
    assert!(!backends.is_empty());
    assert!(
        backends.iter().all(|(verb, uri)| verb == "list"
            && ["policy", "mesh", "certs"].iter().any(|ns| uri.contains(&format!("/namespaces/{ns}/")))),
        "{backends:?}"
    );
}

/// `check` with every read granted: each signal, its twin healthy, in both languages.
async fn granted_check(p: &Plane, creds: &Credentials) {
    let run = p.check(&p.address, creds, &["--output", "json"]).await;
    assert_eq!(run.code, 2, "a stopped controller manager is critical: {}", run.stdout);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let x = &doc["optional"];
    for resource in NEW_READS {
        assert!(!x["not_granted"].as_array().unwrap().contains(&resource.into()), "{resource}: {x:#}");
    }

    let manager = find(&x["control_plane"], "component", "kube-controller-manager");
    assert_eq!((manager["down"].as_bool(), manager["holder"].as_str()), (Some(true), Some("cp-1_0c7e")));
    assert!(manager["age_seconds"].as_i64().unwrap() >= 600, "{manager:#}");
    let scheduler = find(&x["control_plane"], "component", "kube-scheduler");
    assert_eq!(scheduler["down"], false, "{scheduler:#}");

    assert_eq!(find(&x["pdbs"], "name", "db")["short"], true);
    assert_eq!(find(&x["pdbs"], "name", "web")["short"], false);
    let quota = |resource: &str| find(&x["quotas"], "resource", resource)["fullness"].clone();
    assert_eq!(quota("count/configmaps"), "almost_full");
    assert_eq!(quota("requests.storage"), "full");
    assert_eq!(quota("services"), "exceeded");
    assert_eq!(quota("secrets"), Value::Null);
    assert_eq!(find(&x["quotas"], "resource", "requests.storage")["hard"], 10.0 * 1024f64.powi(3));
    let pv = |name: &str| find(&x["pvs"], "name", name).clone();
    assert_eq!(pv("pv-failed")["why"], "host path /srv/pv-failed does not exist");
    assert_eq!(
        (pv("pv-failed")["in_error"].as_bool(), pv("pv-pending")["in_error"].as_bool()),
        (Some(true), Some(true))
    );
    assert_eq!(
        (pv("pv-bound")["in_error"].as_bool(), pv("pv-bound")["claim"].as_str()),
        (Some(false), Some("shop/data-db-0"))
    );
    let hpa = |name: &str| find(&x["hpas"], "name", name).clone();
    assert_eq!((hpa("web")["maxed_out"].as_bool(), hpa("web")["mismatch"].as_bool()), (Some(true), Some(false)));
    assert_eq!((hpa("api")["maxed_out"].as_bool(), hpa("api")["mismatch"].as_bool()), (Some(false), Some(true)));
    assert_eq!(hpa("api")["desired_replicas"], 7);
    let webhook = |name: &str| find(&x["webhooks"], "webhook", name).clone();
    assert_eq!(
        (webhook("policy.example.com")["ready"].as_bool(), webhook("policy.example.com")["failure_policy"].as_str()),
        (Some(false), Some("Fail"))
    );
    assert_eq!(webhook("policy.example.com")["service"], "policy/policy-webhook:443");
    assert_eq!(
        (webhook("inject.example.com")["ready"].as_bool(), webhook("inject.example.com")["kind"].as_str()),
        (Some(false), Some("mutating"))
    );
    assert_eq!(webhook("certs.example.com")["ready"], true);
    // What a stuck claim waits for, from the PersistentVolume controller's Normal event; one
    // that waits for its first consumer, used by no pod, is not stuck.
    let claim = find(&doc["claims"], "name", "uploads");
    assert_eq!(
        claim["why"],
        serde_json::json!(["waiting for the external provisioner disk.csi.example.com", "used by pod uploader-0"])
    );
    assert!(doc["claims"].as_array().unwrap().iter().all(|c| c["name"] != "scratch-1"), "{:#}", doc["claims"]);

    // The core reads' signals.
    let node = |name: &str| find(&doc["nodes"], "name", name).clone();
    assert_eq!((node("node-3")["pods"].as_i64(), node("node-3")["pods_capacity"].as_i64()), (Some(1), Some(1)));
    assert_eq!(
        node("node-2")["taints"][0],
        serde_json::json!({"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"})
    );
    let said = node("node-2")["why"].to_string();
    assert!(
        said.contains("tainted node.kubernetes.io/unreachable:NoExecute: the node controller has lost the node"),
        "{said}"
    );
    let workload = |kind: &str, name: &str| {
        doc["workloads"].as_array().unwrap().iter().find(|w| w["kind"] == kind && w["name"] == name).cloned().unwrap()
    };
    assert_eq!(workload("DaemonSet", "svclb-traefik")["misscheduled"], 1);
    assert_eq!(workload("Deployment", "checkout")["generation_lag"], 1);
    assert!(doc["workloads"].as_array().unwrap().iter().all(|w| w["name"] != "web"), "the twin is not listed");
    let running = |name: &str| find(&x["running_jobs"], "name", name)["seconds"].as_i64().unwrap();
    assert!(running("backfill") > 13 * 3600 - 60 && running("reindex") < 2 * 3600, "{:#}", x["running_jobs"]);
    let capacity = &doc["capacity"];
    assert_eq!(
        (capacity["nodes"].as_i64(), capacity["cpu_allocatable"].as_i64()),
        (Some(2), Some(8000)),
        "node-2 is not Ready"
    );
    assert!(capacity["cpu_requests"].as_i64().unwrap() > 9000, "{capacity:#}");
    let mailer = doc["pods"].as_array().unwrap().iter().find(|p| p["name"] == "mailer-0").unwrap();
    assert_eq!((mailer["blocked"][0].as_str(), mailer["pending"].as_bool()), (Some("ImagePullBackOff"), Some(false)));

    let en = p.check(&p.address, creds, &["--lang", "en"]).await.stdout;
    let first = en.lines().next().unwrap();
    assert!(first.starts_with("1 control-plane component stopped, "), "critical first: {first}");
    for part in [
        "1 disruption budget short of healthy pods",
        "1 admission webhook unreachable (refusing changes)",
        "1 admission webhook unreachable (letting changes through)",
        "2 quotas full",
        "2 volumes in error",
        "1 node full of pods",
        "1 DaemonSet on nodes it should not be on",
        "1 job running for over 12 hours",
        "requests past what the cluster holds without its largest node",
        "quotas promising over 1.5 times the cluster's CPU or memory",
    ] {
        assert!(first.contains(part), "{part} in {first}");
    }
    for line in [
        "The namespaces' quotas promise 20 CPU, 250% of the 8 the nodes give",
        "The pods request ",
        "Node node-3 runs 1 of the 1 pods it may run",
        "DaemonSet kube-system/svclb-traefik has 1 pods on nodes it should not run on",
        "Deployment shop/checkout: its controller has not seen its last change (generation ahead by 1)",
        "Job batch/backfill has run for 13 hours without completing",
        "tainted node.kubernetes.io/unreachable:NoExecute: the node controller has lost the node",
        "kube-controller-manager has not renewed its leader lease for ",
        "Nothing the controllers do happens: Deployments, ReplicaSets and StatefulSets make no pods",
        "PodDisruptionBudget shop/db has 1 healthy pods of the 2 it needs: a node drain would hang on it",
        "Quota quotas/team: services over its limit (3 used of 2)",
        "Quota quotas/team: requests.storage fully used, what needs more is refused (10Gi used of 10Gi)",
        "Quota quotas/team: count/configmaps almost full (9 used of 10)",
        "PersistentVolume pv-failed is Failed: host path /srv/pv-failed does not exist",
        "PersistentVolume pv-pending is Pending",
        "Validating webhook policy/policy.example.com: its Service policy/policy-webhook:443 has no ready endpoint on that port: the API server refuses CREATE, UPDATE of pods in every namespace.",
        "Mutating webhook inject/inject.example.com: its Service mesh/injector:443 does not exist: the API server lets through unchecked CREATE, UPDATE of pods in every namespace.",
        "waiting for the external provisioner disk.csi.example.com",
    ] {
        assert!(en.contains(line), "{line:?} in\n{en}");
    }
    for healthy in
        ["kube-scheduler has", "shop/web has", "secrets", "pv-bound", "Deployment shop/web:", "batch/reindex", "certs/"]
    {
        assert!(!en.contains(healthy), "the healthy twin {healthy:?} is not said:\n{en}");
    }

    let fr = p.check(&p.address, creds, &["--lang", "fr"]).await.stdout;
    let first = fr.lines().next().unwrap();
    assert!(first.starts_with("1 composant du plan de contrôle arrêté, "), "{first}");
    for part in [
        "1 budget de perturbation à court de pods sains",
        "2 quotas pleins",
        "2 volumes en erreur",
        "1 nœud plein de pods",
        "1 job en cours depuis plus de 12 heures",
        "1 webhook d’admission injoignable (refusant les changements)",
        "des quotas promettant plus de 1,5 fois le CPU ou la mémoire du cluster",
    ] {
        assert!(first.contains(part), "{part} in {first}");
    }
    for line in [
        "kube-controller-manager n’a pas renouvelé son bail de leader depuis ",
        "Plus rien de ce que font les contrôleurs n’a lieu",
        "Le PodDisruptionBudget shop/db a 1 pods sains sur les 2 qu’il exige",
        "Quota quotas/team\u{a0}: services au-delà de sa limite (3 utilisés sur 2)",
        "Le PersistentVolume pv-failed est Failed\u{a0}: host path /srv/pv-failed does not exist",
        "Le nœud node-3 fait tourner 1 des 1 pods permis",
        "Le Job batch/backfill tourne depuis 13 heures sans se terminer",
        "Les quotas des namespaces promettent 20 de CPU, 250\u{a0}% des 8 que donnent les nœuds",
        "attend le provisionneur externe disk.csi.example.com",
        "utilisé par le pod uploader-0",
        "Webhook de validation policy/policy.example.com\u{a0}: son Service policy/policy-webhook:443 n’a aucun endpoint prêt sur ce port\u{a0}: l’API server refuse CREATE, UPDATE de pods dans tous les namespaces.",
    ] {
        assert!(fr.contains(line), "{line:?} in\n{fr}");
    }
}

/// serve over the same cluster, ten seconds of rule time per cycle, while the scheduler
/// renews its lease (as a leader does): each signal's rule fires after its hold, the critical
/// one first on the pages, and the healthy twins never even pend.
fn serve_fires_the_rules(p: &Plane, creds: &Credentials) {
    let dir = tempfile::tempdir().unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let now = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string();
                let patch = format!(r#"{{"spec":{{"renewTime":"{now}"}}}}"#);
                // A renewal that fails is a leader that missed one: the next one counts.
                let _ = p.kubectl_in(
                    &["-n", "kube-system", "patch", "lease", "kube-scheduler", "--type", "merge", "-p", &patch],
                    "",
                );
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        });
        // Stops the renewals however this ends: the scope waits for them.
        struct Stop<'a>(&'a AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let _stop = Stop(&done);
        let s = p.serve_stepped(dir.path(), creds, "", 10);
        let expected = [
            ("KubernetesControlPlaneComponentDown", "component", "kube-controller-manager"),
            ("KubernetesPDBNotEnoughHealthy", "pdb", "db"),
            ("KubernetesQuotaAlmostFull", "resource", "count/configmaps"),
            ("KubernetesQuotaFullyUsed", "resource", "requests.storage"),
            ("KubernetesQuotaExceeded", "resource", "services"),
            ("KubernetesPersistentVolumeErrors", "pv", "pv-failed"),
            ("KubernetesPersistentVolumeErrors", "pv", "pv-pending"),
            ("KubernetesHPAMaxedOut", "hpa", "web"),
            ("KubernetesHPAReplicasMismatch", "hpa", "api"),
            ("KubernetesCPUOvercommit", "resource", "cpu"),
            ("KubernetesNodeTooManyPods", "node", "node-3"),
            ("KubernetesDaemonSetMisscheduled", "workload", "svclb-traefik"),
            ("KubernetesGenerationMismatch", "workload", "checkout"),
            ("KubernetesJobNotCompleted", "job", "backfill"),
            ("KubernetesNodeNotReady", "node", "node-2"),
            ("KubernetesWebhookUnavailable", "webhook", "policy.example.com"),
            ("KubernetesWebhookUnavailable", "webhook", "inject.example.com"),
            ("KubernetesPodPending", "pod", "uploader-0"),
            ("KubernetesCPUQuotaOvercommit", "resource", "cpu"),
            ("KubernetesPodNotReady", "pod", "debug-shell"),
            ("KubernetesPVCPending", "pvc", "uploads"),
        ];
        let firing = |alerts: &Value, (name, label, value): (&str, &str, &str)| {
            alerts
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["alertname"] == name && a["labels"][label] == value && a["state"] == "firing")
        };
        let alerts = s
            .wait_for("/api/v1/alerts", "every signal's rule", |r| {
                let alerts = r.json();
                expected.iter().all(|e| firing(&alerts, *e))
            })
            .json();
        // The fixture's v1.33 kubelets are outside the skew of the v1.37 server, and the sidecar
        // waits for its hour (its timing is the rules' unit tests'): those aside, one alert
        // each, the twins silent.
        let waiting = alerts.as_array().unwrap().iter().find(|a| a["alertname"] == "KubernetesContainerWaiting");
        let waiting = waiting.unwrap_or_else(|| panic!("the sidecar's alert pends: {alerts:#}"));
        assert_eq!((waiting["labels"]["pod"].as_str(), waiting["state"].as_str()), (Some("mailer-0"), Some("pending")));
        let aside = ["KubernetesVersionSkew", "KubernetesContainerWaiting"];
        let list: Vec<&Value> =
            alerts.as_array().unwrap().iter().filter(|a| !aside.contains(&a["alertname"].as_str().unwrap())).collect();
        assert_eq!(list.len(), expected.len(), "one alert each, the twins silent: {alerts:#}");
        // The two critical alerts first.
        let critical: Vec<&str> = list[..2].iter().map(|a| a["alertname"].as_str().unwrap()).collect();
        assert!(
            critical.contains(&"KubernetesControlPlaneComponentDown")
                && critical.contains(&"KubernetesWebhookUnavailable"),
            "{critical:?}"
        );
        assert!(list[..2].iter().all(|a| a["severity"] == "critical" && a["labels"]["severity"] == "critical"));
        let manager = list.iter().find(|a| a["alertname"] == "KubernetesControlPlaneComponentDown").unwrap();
        assert!(manager["description"].as_str().unwrap().ends_with("Its last leader was cp-1_0c7e."), "{manager:#}");
        let hook = |name: &str| {
            list.iter()
                .find(|a| a["alertname"] == "KubernetesWebhookUnavailable" && a["labels"]["webhook"] == name)
                .unwrap()
        };
        assert_eq!(
            (hook("policy.example.com")["severity"].as_str(), hook("inject.example.com")["severity"].as_str()),
            (Some("critical"), Some("notice"))
        );
        assert_eq!(hook("inject.example.com")["labels"]["failure_policy"], "Ignore");
        let quota = list.iter().find(|a| a["alertname"] == "KubernetesQuotaExceeded").unwrap();
        assert_eq!(quota["summary"], "Quota quotas/team is over its limit for services (150%)");
        assert_eq!(quota["description"], "3 used of 2");

        let m = common::samples(&s.get("/metrics").body);
        let at = |k: &str| m.get(k).copied().unwrap_or_else(|| panic!("no {k}"));
        assert!(
            at("dumbmonit_k8s_control_plane_lease_age_seconds{cluster=\"real\",component=\"kube-controller-manager\"}")
                >= 600.0
        );
        assert!(
            at("dumbmonit_k8s_control_plane_lease_age_seconds{cluster=\"real\",component=\"kube-scheduler\"}") <= 60.0
        );
        assert_eq!(
            at("dumbmonit_k8s_pdb_healthy{cluster=\"real\",namespace=\"shop\",pdb=\"db\",kind=\"current\"}"),
            1.0
        );
        assert_eq!(at("dumbmonit_k8s_pdb_disruptions_allowed{cluster=\"real\",namespace=\"shop\",pdb=\"web\"}"), 1.0);
        assert_eq!(
            at(
                "dumbmonit_k8s_resourcequota{cluster=\"real\",namespace=\"quotas\",resourcequota=\"team\",resource=\"services\",type=\"used\"}"
            ),
            3.0
        );
        assert_eq!(at("dumbmonit_k8s_pv_phase{cluster=\"real\",pv=\"pv-failed\",phase=\"Failed\"}"), 1.0);
        assert_eq!(at("dumbmonit_k8s_pv_phase{cluster=\"real\",pv=\"pv-failed\",phase=\"Bound\"}"), 0.0);
        assert_eq!(
            at("dumbmonit_k8s_hpa_replicas{cluster=\"real\",namespace=\"shop\",hpa=\"api\",kind=\"desired\"}"),
            7.0
        );

        let ready = |configuration: &str, webhook: &str, policy: &str| {
            at(&format!(
                "dumbmonit_k8s_webhook_backend_ready{{cluster=\"real\",kind=\"validating\",configuration=\"{configuration}\",webhook=\"{webhook}\",failure_policy=\"{policy}\"}}"
            ))
        };
        assert_eq!(
            (ready("policy", "policy.example.com", "Fail"), ready("certs", "certs.example.com", "Fail")),
            (0.0, 1.0)
        );

        let page = s.get("/clusters/real").body;
        for text in [
            "kube-controller-manager has not renewed its leader lease",
            "Disruption budgets short of healthy pods (1)",
            "Quotas 90% used or more (3)",
            "Volumes in error (2)",
            "short of its desired 7",
            "Node node-3 runs 1 of the 1 pods it may run",
            "Job batch/backfill has run for 13 hours without completing",
            "Validating webhook policy/policy.example.com: its Service policy/policy-webhook:443 has no ready endpoint",
        ] {
            assert!(page.contains(text), "{text} on the page");
        }
        let fr = common::web::request(s.addr, "GET", "/clusters/real", &[("Accept-Language", "fr")], b"").body;
        for text in [
            "n’a pas renouvelé son bail de leader",
            "Volumes en erreur (2)",
            "Critique",
            "en deçà des 7 voulues",
            "Webhook de validation policy/policy.example.com",
        ] {
            assert!(fr.contains(text), "{text} on the French page");
        }

        // The webhook's backend comes back (its endpoint ready): its alert resolves, and the
        // one whose Service does not exist stays.
        p.kubectl(&[
            "-n",
            "policy",
            "patch",
            "endpointslice",
            "policy-webhook-1",
            "--type",
            "json",
            "-p",
            r#"[{"op":"replace","path":"/endpoints/0/conditions/ready","value":true}]"#,
        ]);
        let alerts = s
            .wait_for("/api/v1/alerts", "the webhook's alert resolved", |r| {
                let alerts = r.json();
                !firing(&alerts, ("KubernetesWebhookUnavailable", "webhook", "policy.example.com"))
            })
            .json();
        assert!(firing(&alerts, ("KubernetesWebhookUnavailable", "webhook", "inject.example.com")), "{alerts:#}");
    });
}
