//! `dumbmonit rbac`: the read-only ServiceAccount, ClusterRole, binding and long-lived token Secret,
//! under the guide's names (ServiceAccount `dumbmonit`, ClusterRole and binding `dumbmonit-read`,
//! Secret `dumbmonit-token`), so that applying it after the guide's steps updates the same objects.

use crate::error::ConfigError;

/// The resources DumbMonit lists, by API group. Nothing else: no Secrets, no ConfigMaps.
pub const RULES: [(&str, &[&str]); 2] = [
    ("", &["nodes", "pods", "persistentvolumeclaims", "events"]),
    ("apps", &["deployments", "statefulsets", "daemonsets"]),
];

/// With `--optional`: the optional reads, each for what it brings (never `nodes/proxy`, which
/// runs commands through the kubelet).
pub const OPTIONAL_RULES: [(&str, &[&str]); 4] = [
    // Whether metrics-server and other aggregated APIs answer, and why not.
    ("apiregistration.k8s.io", &["apiservices"]),
    // CPU and memory used per node and per pod (what `kubectl top` shows).
    ("metrics.k8s.io", &["nodes", "pods"]),
    // Autoscalers that cannot scale.
    ("autoscaling", &["horizontalpodautoscalers"]),
    // Jobs that failed, CronJobs that stopped running.
    ("batch", &["jobs", "cronjobs"]),
];

/// A DNS-1123 label, as namespaces and these object names must be.
pub fn check_name(flag: &'static str, v: &str) -> Result<(), ConfigError> {
    let ok = !v.is_empty()
        && v.len() <= 63
        && v.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !v.starts_with('-')
        && !v.ends_with('-');
    if ok { Ok(()) } else { Err(ConfigError::NotAName { flag, value: v.to_string() }) }
}

/// The manifests, as one YAML stream for `kubectl apply -f -`.
pub fn manifests(namespace: &str, name: &str, optional: bool) -> Result<String, ConfigError> {
    check_name("--namespace", namespace)?;
    check_name("--name", name)?;
    let extra: &[(&str, &[&str])] = if optional { &OPTIONAL_RULES } else { &[] };
    let rules: String = RULES
        .iter()
        .chain(extra)
        .map(|(group, resources)| {
            let list = resources.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join(", ");
            format!("  - apiGroups: [\"{group}\"]\n    resources: [{list}]\n    verbs: [\"get\", \"list\"]\n")
        })
        .collect();
    Ok(format!(
        "# DumbMonit: read-only access to the health of this cluster.\n\
         # Apply: dumbmonit rbac | kubectl apply -f -\n\
         apiVersion: v1\n\
         kind: ServiceAccount\n\
         metadata:\n  name: {name}\n  namespace: {namespace}\n\
         ---\n\
         apiVersion: rbac.authorization.k8s.io/v1\n\
         kind: ClusterRole\n\
         metadata:\n  name: {name}-read\n\
         rules:\n{rules}\
         ---\n\
         apiVersion: rbac.authorization.k8s.io/v1\n\
         kind: ClusterRoleBinding\n\
         metadata:\n  name: {name}-read\n\
         roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: {name}-read\n\
         subjects:\n  - kind: ServiceAccount\n    name: {name}\n    namespace: {namespace}\n\
         ---\n\
         # A long-lived token: the token controller fills in data.token and data.ca.crt.\n\
         apiVersion: v1\n\
         kind: Secret\n\
         metadata:\n  name: {name}-token\n  namespace: {namespace}\n  annotations:\n    kubernetes.io/service-account.name: {name}\n\
         type: kubernetes.io/service-account-token\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(manifests("kube-system", "dumbmonit", false).is_ok());
        assert!(manifests("kube-system", "Dumb", false).is_err());
        assert!(manifests("a\nb: c", "x", false).is_err());
        assert!(manifests("", "x", false).is_err());
    }
}
