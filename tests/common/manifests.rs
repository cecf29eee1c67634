//! Rendered manifests (kustomize, `dumbmonit manifests`, Helm): read as YAML documents, each
//! object decoded into its Kubernetes type, and each pod template held to the restricted Pod
//! Security Standard, rule by rule.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, Namespace, PersistentVolumeClaim, PodSpec, Secret, Service, ServiceAccount,
};
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use serde_json::Value;

/// The documents of a YAML stream, the empty ones left out.
pub fn documents(yaml: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(yaml).expect("valid YAML").into_iter().filter(|d| !d.is_null()).collect()
}

pub fn typed<T: serde::de::DeserializeOwned>(d: &Value) -> T {
    serde_json::from_value(d.clone())
        .unwrap_or_else(|e| panic!("{} {} does not decode: {e}", d["kind"], d["metadata"]["name"]))
}

/// Every object decoded into its type; the pod specs returned, by the workload's name.
pub fn decode(docs: &[Value]) -> BTreeMap<String, PodSpec> {
    let mut pods = BTreeMap::new();
    for d in docs {
        let kind = d["kind"].as_str().expect("every object has a kind");
        let name = d["metadata"]["name"].as_str().unwrap_or_default().to_string();
        match kind {
            "Namespace" => drop(typed::<Namespace>(d)),
            "ServiceAccount" => drop(typed::<ServiceAccount>(d)),
            "ClusterRole" => drop(typed::<ClusterRole>(d)),
            "ClusterRoleBinding" => drop(typed::<ClusterRoleBinding>(d)),
            "ConfigMap" => drop(typed::<ConfigMap>(d)),
            "Secret" => drop(typed::<Secret>(d)),
            "Service" => drop(typed::<Service>(d)),
            "PersistentVolumeClaim" => drop(typed::<PersistentVolumeClaim>(d)),
            "NetworkPolicy" => drop(typed::<NetworkPolicy>(d)),
            "Role" => drop(typed::<Role>(d)),
            "RoleBinding" => drop(typed::<RoleBinding>(d)),
            "Ingress" => drop(typed::<Ingress>(d)),
            "PodDisruptionBudget" => drop(typed::<PodDisruptionBudget>(d)),
            // The Prometheus Operator's kinds have no type here: their shape is checked by the
            // tests that render them.
            "ServiceMonitor" | "PrometheusRule" => assert_eq!(d["apiVersion"], "monitoring.coreos.com/v1"),
            "Deployment" => {
                let dep: Deployment = typed(d);
                let spec = dep.spec.and_then(|s| s.template.spec).expect("a pod template");
                pods.insert(name, spec);
            }
            other => panic!("an object of an unexpected kind: {other}"),
        }
    }
    pods
}

/// The restricted Pod Security Standard (with the baseline it includes), rule by rule, for
/// one pod spec: every violation, named as the standard names its control.
pub fn restricted_violations(spec: &PodSpec) -> Vec<String> {
    let mut v = Vec::new();
    let pod = spec.security_context.clone().unwrap_or_default();
    // Baseline: host namespaces.
    for (on, what) in [(spec.host_network, "hostNetwork"), (spec.host_pid, "hostPID"), (spec.host_ipc, "hostIPC")] {
        if on == Some(true) {
            v.push(format!("Host Namespaces: {what}"));
        }
    }
    // Baseline: HostPath volumes. Restricted: volume types.
    const ALLOWED: [&str; 8] =
        ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"];
    for vol in spec.volumes.iter().flatten() {
        let value = serde_json::to_value(vol).unwrap();
        for key in value.as_object().unwrap().keys().filter(|k| *k != "name") {
            if key == "hostPath" {
                v.push(format!("HostPath Volumes: {}", vol.name));
            }
            if !ALLOWED.contains(&key.as_str()) {
                v.push(format!("Volume Types: {} is {key}", vol.name));
            }
        }
    }
    // Baseline: sysctls (the safe set only).
    const SAFE_SYSCTLS: [&str; 5] = [
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
    ];
    for s in pod.sysctls.iter().flatten() {
        if !SAFE_SYSCTLS.contains(&s.name.as_str()) {
            v.push(format!("Sysctls: {}", s.name));
        }
    }
    let pod_seccomp = pod.seccomp_profile.as_ref().map(|p| p.type_.clone());
    let containers: Vec<&Container> = spec.containers.iter().chain(spec.init_containers.iter().flatten()).collect();
    for c in containers {
        let sc = c.security_context.clone().unwrap_or_default();
        let at = format!("container {}", c.name);
        if sc.privileged == Some(true) {
            v.push(format!("Privileged Containers: {at}"));
        }
        for p in c.ports.iter().flatten() {
            if p.host_port.is_some_and(|h| h != 0) {
                v.push(format!("Host Ports: {at}"));
            }
        }
        if sc.proc_mount.as_deref().is_some_and(|m| m != "Default") {
            v.push(format!("/proc Mount Type: {at}"));
        }
        if let Some(se) = sc.se_linux_options.as_ref().or(pod.se_linux_options.as_ref()) {
            let allowed = ["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"];
            if !allowed.contains(&se.type_.as_deref().unwrap_or("")) || se.user.is_some() || se.role.is_some() {
                v.push(format!("SELinux: {at}"));
            }
        }
        let apparmor = sc.app_armor_profile.as_ref().or(pod.app_armor_profile.as_ref());
        if apparmor.is_some_and(|a| a.type_ == "Unconfined") {
            v.push(format!("AppArmor: {at}"));
        }
        // Restricted.
        if sc.allow_privilege_escalation != Some(false) {
            v.push(format!("Privilege Escalation: {at} must set allowPrivilegeEscalation: false"));
        }
        if sc.run_as_non_root.or(pod.run_as_non_root) != Some(true) {
            v.push(format!("Running as Non-root: {at}"));
        }
        if sc.run_as_user.or(pod.run_as_user) == Some(0) {
            v.push(format!("Running as Non-root user: {at}"));
        }
        match sc.seccomp_profile.as_ref().map(|p| p.type_.clone()).or(pod_seccomp.clone()) {
            Some(t) if t == "RuntimeDefault" || t == "Localhost" => {}
            other => v.push(format!("Seccomp: {at} has {other:?}")),
        }
        let caps = sc.capabilities.unwrap_or_default();
        if !caps.drop.iter().flatten().any(|d| d == "ALL") {
            v.push(format!("Capabilities: {at} must drop ALL"));
        }
        for add in caps.add.iter().flatten() {
            if add != "NET_BIND_SERVICE" {
                v.push(format!("Capabilities: {at} adds {add}"));
            }
        }
    }
    v
}

pub fn by_kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

/// The objects by (kind, name).
pub fn keyed(docs: &[Value]) -> BTreeMap<(String, String), Value> {
    docs.iter()
        .map(|d| {
            ((d["kind"].as_str().unwrap().to_string(), d["metadata"]["name"].as_str().unwrap().to_string()), d.clone())
        })
        .collect()
}
