//! `dumbmonit rbac`: the read-only ServiceAccount, ClusterRole, binding and long-lived token Secret,
//! under the guide's names (ServiceAccount `dumbmonit`, ClusterRole and binding `dumbmonit-read`,
//! Secret `dumbmonit-token`), so that applying it after the guide's steps updates the same objects.
//! With `--watch`, the same rules also grant `watch`, for watch mode.

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

/// The group never watched, even in watch mode: the Metrics API is read every interval (its
/// figures are samples of the moment).
pub const NOT_WATCHED: &str = "metrics.k8s.io";

/// The header's lines with `--watch`: what it grants, and with `--optional` what it does not.
const WATCH_LINE: &str =
    "# Also the watch verb, for watch mode (watch = true): list-then-watch instead of a list every interval.\n";
const NOT_WATCHED_LINE: &str = "# Not on the Metrics API (metrics.k8s.io): it is read every interval, never watched.\n";

/// A DNS-1123 label, as namespaces and these object names must be.
pub fn check_name(flag: &'static str, v: &str) -> Result<(), ConfigError> {
    let ok = !v.is_empty()
        && v.len() <= 63
        && v.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !v.starts_with('-')
        && !v.ends_with('-');
    if ok { Ok(()) } else { Err(ConfigError::NotAName { flag, value: v.to_string() }) }
}

/// The manifests, as one YAML stream for `kubectl apply -f -`: get and list on the rules (and on
/// the optional ones), and with `watch` the watch verb too, but on [`NOT_WATCHED`].
pub fn manifests(namespace: &str, name: &str, optional: bool, watch: bool) -> Result<String, ConfigError> {
    check_name("--namespace", namespace)?;
    check_name("--name", name)?;
    let extra: &[(&str, &[&str])] = if optional { &OPTIONAL_RULES } else { &[] };
    let rules: String = RULES
        .iter()
        .chain(extra)
        .map(|(group, resources)| {
            let list = resources.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join(", ");
            let verbs = if watch && *group != NOT_WATCHED { r#""get", "list", "watch""# } else { r#""get", "list""# };
            format!("  - apiGroups: [\"{group}\"]\n    resources: [{list}]\n    verbs: [{verbs}]\n")
        })
        .collect();
    let watch_line = if watch { WATCH_LINE } else { "" };
    let not_watched_line = if watch && optional { NOT_WATCHED_LINE } else { "" };
    Ok(format!(
        "# DumbMonit: read-only access to the health of this cluster.\n\
         {watch_line}{not_watched_line}\
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

    /// `dumbmonit rbac` as it has always printed it, byte for byte: the guide's contract.
    const PLAIN: &str = r#"# DumbMonit: read-only access to the health of this cluster.
# Apply: dumbmonit rbac | kubectl apply -f -
apiVersion: v1
kind: ServiceAccount
metadata:
  name: dumbmonit
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: dumbmonit-read
rules:
  - apiGroups: [""]
    resources: ["nodes", "pods", "persistentvolumeclaims", "events"]
    verbs: ["get", "list"]
  - apiGroups: ["apps"]
    resources: ["deployments", "statefulsets", "daemonsets"]
    verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: dumbmonit-read
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: dumbmonit-read
subjects:
  - kind: ServiceAccount
    name: dumbmonit
    namespace: kube-system
---
# A long-lived token: the token controller fills in data.token and data.ca.crt.
apiVersion: v1
kind: Secret
metadata:
  name: dumbmonit-token
  namespace: kube-system
  annotations:
    kubernetes.io/service-account.name: dumbmonit
type: kubernetes.io/service-account-token
"#;

    /// The ClusterRole's rules: (group, resources, verbs).
    fn rules(yaml: &str) -> Vec<(String, Vec<String>, Vec<String>)> {
        let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(yaml).expect("valid YAML");
        let role = docs.iter().find(|d| d["kind"] == "ClusterRole").expect("a ClusterRole");
        let strings = |v: &serde_json::Value| -> Vec<String> {
            v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
        };
        role["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (strings(&r["apiGroups"]).concat(), strings(&r["resources"]), strings(&r["verbs"])))
            .collect()
    }

    #[test]
    fn names_are_checked() {
        assert!(manifests("kube-system", "dumbmonit", false, false).is_ok());
        assert!(manifests("kube-system", "Dumb", false, false).is_err());
        assert!(manifests("a\nb: c", "x", false, false).is_err());
        assert!(manifests("", "x", false, true).is_err());
    }

    #[test]
    fn without_watch_the_output_is_as_it_always_was() {
        assert_eq!(manifests("kube-system", "dumbmonit", false, false).unwrap(), PLAIN);
        assert!(!manifests("kube-system", "dumbmonit", true, false).unwrap().contains("watch"));
    }

    #[test]
    fn watch_is_added_to_the_same_rules_but_the_metrics_api() {
        for optional in [false, true] {
            let plain = manifests("kube-system", "dumbmonit", optional, false).unwrap();
            let watched = manifests("kube-system", "dumbmonit", optional, true).unwrap();
            let (before, after) = (rules(&plain), rules(&watched));
            assert_eq!(before.len(), if optional { 6 } else { 2 });
            assert_eq!(before.len(), after.len(), "the same rules");
            for ((group, resources, verbs), (g, r, v)) in before.iter().zip(&after) {
                assert_eq!((group, resources), (g, r), "the same groups and resources");
                assert_eq!(verbs, &["get", "list"]);
                if group == NOT_WATCHED {
                    assert_eq!(v, &["get", "list"], "the Metrics API is read every interval, never watched");
                } else {
                    assert_eq!(v, &["get", "list", "watch"], "{group}");
                }
            }
            // Nothing else changes: the header says why, and the verbs are the only other lines.
            let header: Vec<&str> = watched.lines().take_while(|l| l.starts_with('#')).collect();
            assert_eq!(header[0], "# DumbMonit: read-only access to the health of this cluster.");
            assert!(header[1].starts_with("# Also the watch verb, for watch mode (watch = true)"), "{header:?}");
            assert_eq!(header.iter().any(|l| l.contains("metrics.k8s.io")), optional, "{header:?}");
            let undone = watched.replace(", \"watch\"]", "]");
            let kept: Vec<&str> = undone
                .lines()
                .filter(|l| ![WATCH_LINE, NOT_WATCHED_LINE].contains(&format!("{l}\n").as_str()))
                .collect();
            assert_eq!(kept, plain.lines().collect::<Vec<_>>());
        }
        let named = manifests("monitoring", "dm", false, true).unwrap();
        assert!(named.contains("  name: dm-read\n") && named.contains("    namespace: monitoring\n"));
    }
}
