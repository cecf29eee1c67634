//! `dumbmonit manifests agent`: the objects of the kustomize bases `deploy/rbac` and
//! `deploy/agent`, with the user's values filled in, ready for `kubectl apply -f -`. They are
//! rendered from the very files of `deploy/`, embedded when the binary is built, the way
//! `kubectl kustomize` renders them with an overlay that sets the namespace, the image, the
//! ConfigMap's `server` and `cluster` and the Secret's `agent.token` (a test compares both).

use std::path::{Path, PathBuf};

use base64::Engine;

use crate::error::{AgentConfigError, ConfigError, FlagError};

const NAMESPACE: &str = include_str!("../deploy/rbac/namespace.yaml");
const RBAC: &str = include_str!("../deploy/rbac/rbac.yaml");
const DEPLOYMENT: &str = include_str!("../deploy/agent/deployment.yaml");
const NETWORK_POLICY: &str = include_str!("../deploy/agent/networkpolicy.yaml");

/// The namespace and image of the bases.
pub const BASE_NAMESPACE: &str = "dumbmonit";
pub const DEFAULT_IMAGE: &str = "dumbmonit:dev";

/// What `manifests agent` is told.
#[derive(Clone, Debug)]
pub struct AgentManifest {
    pub server: String,
    pub cluster: String,
    pub token_file: Option<PathBuf>,
    pub image: String,
    pub namespace: String,
    /// The agent follows the cluster by watch (`agent --watch`), its role with the verb.
    pub watch: bool,
    /// Namespaced access: a Role and RoleBinding in each of these namespaces instead of the
    /// ClusterRole, the agent run with `--namespace` for each, and no Namespace object (the
    /// agent runs in `namespace`, which exists).
    pub namespaces: Vec<String>,
}

/// The ClusterRole's rules with `watch` added where watch mode follows the rule's resources
/// (`rbac::watched`: not the Metrics API, nor the webhooks' backends).
fn with_watch(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len() + 64);
    let first = |line: &str, key: &str| -> Option<String> {
        let list = line.trim().strip_prefix(key)?.trim().strip_prefix("[\"")?;
        Some(list.split('"').next().unwrap_or_default().to_string())
    };
    let (mut group, mut resource) = (String::new(), String::new());
    for line in doc.split_inclusive('\n') {
        if let Some(g) = first(line, "- apiGroups:") {
            group = g;
        }
        if let Some(r) = first(line, "resources:") {
            resource = r;
        }
        if crate::rbac::watched(&group, &resource) && line.trim() == "verbs: [\"get\", \"list\"]" {
            out.push_str(&line.replace("[\"get\", \"list\"]", "[\"get\", \"list\", \"watch\"]"));
        } else {
            out.push_str(line);
        }
    }
    out
}

/// A YAML double-quoted scalar (JSON's string syntax is valid YAML).
fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// The YAML documents of a file, without its comments-only head.
fn documents(file: &str) -> impl Iterator<Item = String> + '_ {
    file.split("\n---\n").map(|d| {
        d.lines().skip_while(|l| l.starts_with('#') || l.trim().is_empty()).collect::<Vec<_>>().join("\n") + "\n"
    })
}

/// The token: read from its file, or made anew (32 random bytes, hex) and written to `path`
/// with mode 0600 so that it can be given to the server. Never printed.
fn token(m: &AgentManifest) -> Result<(String, Option<PathBuf>), ConfigError> {
    if let Some(f) = &m.token_file {
        let t = std::fs::read_to_string(f)
            .map_err(|source| FlagError::FlagFile { flag: "--agent-token-file", path: f.clone(), source })?
            .trim()
            .to_string();
        if t.len() < 16 || t.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(AgentConfigError::WeakAgentToken { path: f.clone() }.into());
        }
        return Ok((t, None));
    }
    let mut bytes = [0u8; 32];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .map_err(|_| AgentConfigError::NoRandom)?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let path = PathBuf::from(format!("{}.agent-token", m.cluster));
    write_private(&path, &token)?;
    Ok((token, Some(path)))
}

fn write_private(path: &Path, text: &str) -> Result<(), ConfigError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|source| AgentConfigError::WriteToken { path: path.to_path_buf(), source })?;
    f.write_all(format!("{text}\n").as_bytes())
        .map_err(|source| AgentConfigError::WriteToken { path: path.to_path_buf(), source }.into())
}

/// The server URL's port when it is not one the base's NetworkPolicy already allows.
fn extra_port(server: &str) -> Option<u16> {
    let uri: http::Uri = server.parse().ok()?;
    let port = uri.port_u16().unwrap_or(if uri.scheme_str() == Some("http") { 80 } else { 443 });
    (port != 443 && port != 6443).then_some(port)
}

/// The YAML stream, and the file a new token was written to (None when one was given).
pub fn agent(m: &AgentManifest) -> Result<(String, Option<PathBuf>), ConfigError> {
    crate::kube::check_name("--service-account-namespace", &m.namespace)?;
    for ns in &m.namespaces {
        crate::kube::check_name("--namespace", ns)?;
    }
    let namespaced = !m.namespaces.is_empty();
    if m.cluster.is_empty() || m.cluster.chars().any(|c| c.is_control() || c == '/') {
        return Err(FlagError::ClusterName.into());
    }
    crate::agent::push::Server::new(&m.server, None)?;
    if m.image.is_empty() || m.image.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(FlagError::Image { image: m.image.clone() }.into());
    }
    let (token, written) = token(m)?;
    let ns = &m.namespace;
    let in_ns = |doc: &str| doc.replace(&format!("namespace: {BASE_NAMESPACE}"), &format!("namespace: {ns}"));
    let mut docs: Vec<String> = Vec::new();
    if !namespaced {
        docs.extend(
            documents(NAMESPACE).map(|d| d.replace(&format!("  name: {BASE_NAMESPACE}\n"), &format!("  name: {ns}\n"))),
        );
    }
    let cluster_wide = |d: &String| d.contains("\nkind: ClusterRole\n") || d.contains("\nkind: ClusterRoleBinding\n");
    docs.extend(
        documents(RBAC)
            .filter(|d| !(namespaced && cluster_wide(d)))
            .map(|d| if m.watch { with_watch(&in_ns(&d)) } else { in_ns(&d) }),
    );
    if namespaced {
        docs.extend(crate::rbac::roles(&crate::rbac::distinct(&m.namespaces), ns, "dumbmonit", true));
    }
    let namespace_args: String = m.namespaces.iter().map(|n| format!("            - --namespace={n}\n")).collect();
    docs.push(format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dumbmonit-agent\n  namespace: {ns}\ndata:\n  cluster: {}\n  server: {}\n",
        quoted(&m.cluster),
        quoted(&m.server)
    ));
    docs.push(format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: dumbmonit-agent\n  namespace: {ns}\ntype: Opaque\ndata:\n  agent.token: {}\n",
        base64::engine::general_purpose::STANDARD.encode(token.as_bytes())
    ));
    docs.extend(
        documents(DEPLOYMENT)
            .map(|d| in_ns(&d).replace("image: dumbmonit\n", &format!("image: {}\n", quoted(&m.image))))
            .map(|d| {
                if m.watch {
                    d.replace("            - --in-cluster\n", "            - --in-cluster\n            - --watch\n")
                } else {
                    d
                }
            })
            .map(|d| {
                d.replace("            - --in-cluster\n", &format!("            - --in-cluster\n{namespace_args}"))
            }),
    );
    docs.extend(documents(NETWORK_POLICY).map(|d| {
        let d = in_ns(&d);
        match extra_port(&m.server) {
            None => d,
            Some(p) => d.replace(
                "        - port: 6443\n          protocol: TCP\n",
                &format!(
                    "        - port: 6443\n          protocol: TCP\n        - port: {p}\n          protocol: TCP\n"
                ),
            ),
        }
    }));
    let head = format!(
        "# DumbMonit relay agent for cluster {}, reporting to {}.\n# Apply: dumbmonit manifests agent ... | kubectl apply -f -\n",
        m.cluster.replace('\n', " "),
        m.server
    );
    Ok((head + &docs.join("---\n"), written))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(server: &str) -> AgentManifest {
        // A file of its own for each call: the tests run side by side.
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("dumbmonit-manifests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join(format!("t{n}"));
        std::fs::write(&f, "0123456789abcdef0123\n").unwrap();
        AgentManifest {
            server: server.into(),
            cluster: "edge: \"x\"".into(),
            token_file: Some(f),
            image: "registry.example/dumbmonit:1.0".into(),
            namespace: "monitoring".into(),
            watch: false,
            namespaces: Vec::new(),
        }
    }

    #[test]
    fn with_watch_the_agent_watches_and_its_role_has_the_verb_but_on_the_metrics_api() {
        let (plain, _) = agent(&given("https://dumbmonit.example.com")).unwrap();
        let (watching, _) = agent(&AgentManifest { watch: true, ..given("https://dumbmonit.example.com") }).unwrap();
        assert!(!plain.contains("watch"), "{plain}");
        assert!(watching.contains("            - --in-cluster\n            - --watch\n"), "{watching}");
        // The kind that exists only in tests (`collect::kinds::widget`) is not the contract.
        let shipped = |y: &str| {
            y.replace(
                "  - apiGroups: [\"example.com\"]\n    resources: [\"widgets\"]\n    verbs: [\"get\", \"list\", \"watch\"]\n",
                "",
            )
        };
        let watching = shipped(&watching);
        let verbs: Vec<&str> = watching.lines().filter(|l| l.trim_start().starts_with("verbs:")).collect();
        assert_eq!(verbs.len(), 12, "{watching}");
        assert_eq!(
            verbs.iter().filter(|l| l.contains("\"watch\"")).count(),
            9,
            "all rules but the Metrics API's and the webhooks' backends'"
        );
        let metrics = watching.split("- apiGroups: [\"metrics.k8s.io\"]").nth(1).unwrap();
        assert!(metrics.lines().nth(2).unwrap().trim() == "verbs: [\"get\", \"list\"]", "{metrics}");
        // The same rules as `rbac --optional --watch`, and as the component deploy/rbac/watch.
        let rbac = shipped(&crate::rbac::manifests("monitoring", "dumbmonit", true, true).unwrap());
        fn rules(y: &str) -> Vec<&str> {
            y.lines()
                .filter(|l| l.trim_start().starts_with("verbs:") || l.contains("apiGroups"))
                .map(str::trim)
                .collect()
        }
        assert_eq!(rules(&watching), rules(&rbac));
    }

    #[test]
    fn namespaced_the_agent_has_roles_in_its_namespaces_and_nothing_cluster_wide() {
        let m = AgentManifest {
            namespace: "team-a".into(),
            namespaces: vec!["team-a".into(), "team-b".into()],
            ..given("https://dumbmonit.example.com")
        };
        let (yaml, _) = agent(&m).unwrap();
        let kinds: Vec<&str> = yaml.lines().filter_map(|l| l.strip_prefix("kind: ")).collect();
        assert_eq!(
            kinds,
            [
                "ServiceAccount",
                "Role",
                "RoleBinding",
                "Role",
                "RoleBinding",
                "ConfigMap",
                "Secret",
                "Deployment",
                "NetworkPolicy"
            ],
            "no Namespace (the tenant's exists), no ClusterRole: {yaml}"
        );
        assert!(yaml.contains(
            "            - --in-cluster\n            - --namespace=team-a\n            - --namespace=team-b\n"
        ));
        assert!(yaml.contains("  name: dumbmonit-read\n  namespace: team-b\n"), "{yaml}");
        assert!(
            yaml.contains("\"batch\"") && !yaml.contains("\"nodes\""),
            "the optional reads in namespaces, no node: {yaml}"
        );
        assert!(!yaml.contains("namespace: dumbmonit\n") && !yaml.contains("namespace: monitoring\n"));
        let bad = AgentManifest { namespaces: vec!["Team".into()], ..m };
        assert!(agent(&bad).is_err());
    }

    #[test]
    fn values_are_filled_in_and_quoted() {
        let (yaml, written) = agent(&given("https://dumbmonit.example.com:8443")).unwrap();
        assert!(written.is_none());
        assert!(yaml.contains("  cluster: \"edge: \\\"x\\\"\"\n"), "{yaml}");
        assert!(yaml.contains("image: \"registry.example/dumbmonit:1.0\"\n"));
        assert!(yaml.contains("  agent.token: MDEyMzQ1Njc4OWFiY2RlZjAxMjM=\n"));
        assert!(yaml.contains("        - port: 8443\n"), "the server's port is let out");
        assert!(!yaml.contains("namespace: dumbmonit\n"));
        assert_eq!(yaml.lines().filter(|l| l.starts_with("kind: ")).count(), 8, "{yaml}");
        assert!(agent(&AgentManifest { namespace: "Bad".into(), ..given("https://x") }).is_err());
        assert!(agent(&given("http://monitor.example")).unwrap_err().to_string().contains("plain http://"));
    }
}
