//! `dumbmonit rbac`: the read-only ServiceAccount, ClusterRole, binding and long-lived token Secret,
//! under the guide's names (ServiceAccount `dumbmonit`, ClusterRole and binding `dumbmonit-read`,
//! Secret `dumbmonit-token`), so that applying it after the guide's steps updates the same objects.
//! With `--watch`, the same rules also grant `watch`, for watch mode.

use crate::collection::Collection;
use crate::error::ConfigError;

/// A role's rule: an API group and its resources.
pub type Grant = (&'static str, Vec<&'static str>);

/// The collections' resources by API group, each group where it first comes among the
/// collections (`collect::kinds::every`: the core, the Metrics API's group, the registry).
/// A group's resources that watch mode never follows get a rule of their own (without the watch
/// verb).
fn grouped(collections: impl Iterator<Item = Collection>) -> Vec<Grant> {
    let mut rules: Vec<Grant> = Vec::new();
    for c in collections {
        let (group, resource) = c.rbac();
        let followed = watched(group, resource);
        match rules.iter_mut().find(|(g, rs)| *g == group && watched(g, rs[0]) == followed) {
            Some((_, resources)) => resources.push(resource),
            None => rules.push((group, vec![resource])),
        }
    }
    rules
}

/// What a role reads: the core reads (`optional` false) or the optional ones, cluster-wide or
/// in a namespace (a Role cannot grant what is the cluster's: nodes, APIServices, the nodes'
/// usage). `/version` is every account's.
fn reads(optional: bool, in_namespace: bool) -> Vec<Grant> {
    // The webhooks' backends are read only after the webhook configurations, which are the
    // cluster's: a Role has no use for them.
    let in_role = |c: &Collection| c.namespaced() && !crate::collect::backends::GROUP.contains(c);
    grouped(
        crate::collect::kinds::every()
            .into_iter()
            .filter(|c| *c != Collection::VERSION && c.optional() == optional && (!in_namespace || in_role(c))),
    )
}

/// Whether watch mode follows `resource` of `group`, and so whether `--watch` grants the watch
/// verb on it: not the Metrics API, nor the webhooks' Services and EndpointSlices.
pub fn watched(group: &str, resource: &str) -> bool {
    crate::collect::kinds::every()
        .into_iter()
        .any(|c| c.rbac() == (group, resource) && c.about().follow != crate::collection::Follow::No)
}

/// The resources DumbMonit lists, by API group. Nothing else: no Secrets, no ConfigMaps.
pub fn rules() -> Vec<Grant> {
    reads(false, false)
}

/// With `--optional`: the optional reads, each for what it brings (never `nodes/proxy`, which
/// runs commands through the kubelet): whether metrics-server and other aggregated APIs
/// answer; CPU and memory used per node and per pod (what `kubectl top` shows); autoscalers
/// that cannot scale; Jobs that failed, CronJobs that stopped running.
pub fn optional_rules() -> Vec<Grant> {
    reads(true, false)
}

/// The header's lines with `--watch`: what it grants, and with `--optional` what it does not.
const WATCH_LINE: &str =
    "# Also the watch verb, for watch mode (watch = true): list-then-watch instead of a list every interval.\n";
const NOT_WATCHED_LINE: &str = "# Not on the Metrics API (metrics.k8s.io), nor on services and endpointslices (the admission webhooks' backends): they are read at each cycle, never watched.\n";

use crate::kube::check_name;

/// The manifests, as one YAML stream for `kubectl apply -f -`: get and list on the rules (and on
/// the optional ones), and with `watch` the watch verb too, where [`watched`].
pub fn manifests(namespace: &str, name: &str, optional: bool, watch: bool) -> Result<String, ConfigError> {
    check_name("--service-account-namespace", namespace)?;
    check_name("--name", name)?;
    let extra = if optional { optional_rules() } else { Vec::new() };
    let rules: String = rules()
        .iter()
        .chain(&extra)
        .map(|(group, resources)| {
            let list = resources.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join(", ");
            let verbs =
                if watch && watched(group, resources[0]) { r#""get", "list", "watch""# } else { r#""get", "list""# };
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

/// Namespaced access (`--namespace`, repeatable): the ServiceAccount in `sa_namespace`, a Role
/// `NAME-read` with get and list on what a namespaced read uses and its RoleBinding in each
/// namespace, and the token Secret; no ClusterRole. The header gives the `kubectl auth can-i`
/// checks to run once applied.
pub fn namespaced(
    namespaces: &[String],
    sa_namespace: &str,
    name: &str,
    optional: bool,
) -> Result<String, ConfigError> {
    for ns in namespaces {
        check_name("--namespace", ns)?;
    }
    check_name("--service-account-namespace", sa_namespace)?;
    check_name("--name", name)?;
    let granted = distinct(namespaces);
    let who = format!("system:serviceaccount:{sa_namespace}:{name}");
    let first = granted.first().copied().unwrap_or(sa_namespace);
    let outside = ["kube-system", "default", "kube-public"]
        .into_iter()
        .find(|n| !granted.contains(n))
        .unwrap_or("kube-node-lease");
    let flags: String = granted.iter().map(|ns| format!(" --namespace {ns}")).collect();
    let mut out = format!(
        "# DumbMonit: read-only access to the health of namespace{} {} (namespaced access: no node, nothing cluster-wide).\n\
         # Apply: dumbmonit rbac{flags} | kubectl apply -f -\n\
         # Then check (yes, no, no):\n\
         #   kubectl auth can-i list pods -n {first} --as={who}\n\
         #   kubectl auth can-i list pods -n {outside} --as={who}\n\
         #   kubectl auth can-i list secrets -n {first} --as={who}\n\
         apiVersion: v1\n\
         kind: ServiceAccount\n\
         metadata:\n  name: {name}\n  namespace: {sa_namespace}\n",
        if granted.len() == 1 { "" } else { "s" },
        granted.join(", "),
    );
    for doc in roles(&granted, sa_namespace, name, optional) {
        out.push_str("---\n");
        out.push_str(&doc);
    }
    out.push_str(&format!(
        "---\n\
         # A long-lived token: the token controller fills in data.token and data.ca.crt.\n\
         apiVersion: v1\n\
         kind: Secret\n\
         metadata:\n  name: {name}-token\n  namespace: {sa_namespace}\n  annotations:\n    kubernetes.io/service-account.name: {name}\n\
         type: kubernetes.io/service-account-token\n"
    ));
    Ok(out)
}

/// Each namespace once, in the order given.
pub fn distinct(namespaces: &[String]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for ns in namespaces {
        if !out.contains(&ns.as_str()) {
            out.push(ns);
        }
    }
    out
}

/// A Role `NAME-read` and its RoleBinding to the ServiceAccount in each namespace, each a YAML
/// document: get and list on what a namespaced read uses (and, with `optional`, the optional
/// reads that live in namespaces).
pub fn roles(namespaces: &[&str], sa_namespace: &str, name: &str, optional: bool) -> Vec<String> {
    let extra = if optional { reads(true, true) } else { Vec::new() };
    let rules: String = reads(false, true)
        .iter()
        .chain(&extra)
        .map(|(group, resources)| {
            let list = resources.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join(", ");
            format!("  - apiGroups: [\"{group}\"]\n    resources: [{list}]\n    verbs: [\"get\", \"list\"]\n")
        })
        .collect();
    let mut docs = Vec::new();
    for ns in namespaces {
        docs.push(format!(
            "apiVersion: rbac.authorization.k8s.io/v1\n\
             kind: Role\n\
             metadata:\n  name: {name}-read\n  namespace: {ns}\n\
             rules:\n{rules}"
        ));
        docs.push(format!(
            "apiVersion: rbac.authorization.k8s.io/v1\n\
             kind: RoleBinding\n\
             metadata:\n  name: {name}-read\n  namespace: {ns}\n\
             roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: {name}-read\n\
             subjects:\n  - kind: ServiceAccount\n    name: {name}\n    namespace: {sa_namespace}\n"
        ));
    }
    docs
}

/// The `kubectl auth can-i` checks a namespaced manifest's header gives: (arguments, answer).
pub fn can_i_checks(yaml: &str) -> Vec<(Vec<String>, bool)> {
    let lines: Vec<&str> = yaml.lines().take_while(|l| l.starts_with('#')).collect();
    let answers: Vec<bool> = lines
        .iter()
        .find_map(|l| l.strip_prefix("# Then check (").and_then(|r| r.strip_suffix("):")))
        .map(|a| a.split(", ").map(|w| w == "yes").collect())
        .unwrap_or_default();
    let commands = lines.iter().filter_map(|l| l.strip_prefix("#   kubectl "));
    commands.zip(answers).map(|(c, yes)| (c.split_whitespace().map(str::to_string).collect(), yes)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resources_never_watched_are_the_metrics_api_and_the_webhooks_backends() {
        use crate::collect::backends::{ENDPOINTSLICES, SERVICES};
        let never = [Collection::NODE_METRICS, Collection::POD_METRICS, SERVICES, ENDPOINTSLICES];
        for c in crate::collect::kinds::every().into_iter().filter(|c| *c != Collection::VERSION) {
            let (group, resource) = c.rbac();
            assert_eq!(watched(group, resource), !never.contains(&c), "{}", c.name());
        }
        // Services are of the core group, whose other resources are watched: a rule of their own.
        let optional = optional_rules();
        assert!(optional.contains(&("", vec!["services"])), "{optional:?}");
        assert!(optional.contains(&("discovery.k8s.io", vec!["endpointslices"])), "{optional:?}");
    }

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
            // The kind that exists only in tests (`collect::kinds::widget`) is not the contract.
            .filter(|(group, _, _)| group != "example.com")
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
            assert_eq!(before.len(), if optional { 12 } else { 2 });
            assert_eq!(before.len(), after.len(), "the same rules");
            for ((group, resources, verbs), (g, r, v)) in before.iter().zip(&after) {
                assert_eq!((group, resources), (g, r), "the same groups and resources");
                assert_eq!(verbs, &["get", "list"]);
                if !super::watched(group, &resources[0]) {
                    assert_eq!(v, &["get", "list"], "the Metrics API and the webhooks' backends are never watched");
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

    #[test]
    fn namespaced_access_is_a_role_and_binding_in_each_namespace_and_no_cluster_role() {
        let ns = |v: &[&str]| v.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let yaml = namespaced(&ns(&["team-a", "team-b", "team-a"]), "team-a", "dumbmonit", false).unwrap();
        let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&yaml).expect("valid YAML");
        let kinds: Vec<(&str, &str)> =
            docs.iter().map(|d| (d["kind"].as_str().unwrap(), d["metadata"]["namespace"].as_str().unwrap())).collect();
        assert_eq!(
            kinds,
            [
                ("ServiceAccount", "team-a"),
                ("Role", "team-a"),
                ("RoleBinding", "team-a"),
                ("Role", "team-b"),
                ("RoleBinding", "team-b"),
                ("Secret", "team-a"),
            ]
        );
        let role = &docs[3];
        let resources: Vec<&str> = role["rules"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["resources"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()))
            .collect();
        assert_eq!(
            resources,
            ["pods", "persistentvolumeclaims", "events", "deployments", "statefulsets", "daemonsets"]
        );
        assert!(!yaml.contains("nodes") && !yaml.contains("secrets\""), "{yaml}");
        assert_eq!(docs[4]["subjects"][0]["namespace"], "team-a");
        assert_eq!(docs[4]["roleRef"]["kind"], "Role");
        let checks = can_i_checks(&yaml);
        let who = "--as=system:serviceaccount:team-a:dumbmonit";
        assert_eq!(
            checks,
            [
                (ns(&["auth", "can-i", "list", "pods", "-n", "team-a", who]), true),
                (ns(&["auth", "can-i", "list", "pods", "-n", "kube-system", who]), false),
                (ns(&["auth", "can-i", "list", "secrets", "-n", "team-a", who]), false),
            ]
        );
        let optional = namespaced(&ns(&["kube-system"]), "monitoring", "dm", true).unwrap();
        assert!(optional.contains("horizontalpodautoscalers") && optional.contains("\"metrics.k8s.io\""));
        assert!(optional.contains("can-i list pods -n default "), "a namespace outside the grant: {optional}");
        assert!(namespaced(&ns(&["Team"]), "x", "dm", false).is_err());
    }
}
