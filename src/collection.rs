//! The collections a cycle reads, named for every room: the reads (`kube`, `collect`), the
//! errors that name them (`error`), the recordings and the metrics' `collection` label.
//!
//! A collection is a handle on its one description ([`About`]). The core reads (the guide's
//! role) and the Metrics API are described here; every other optional kind describes itself in
//! its own file under `collect/kinds/` and is listed once in that room's registry.

/// What one collection is, to every room.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct About {
    /// The name in messages, in recordings and in the `collection` label.
    pub name: &'static str,
    /// The resource as RBAC and the API server name it: `deployments.apps`, `pods`.
    pub resource: &'static str,
    /// The `kind` and `apiVersion` of its List.
    pub list_kind: &'static str,
    pub api_version: &'static str,
    /// Its List's path, cluster-wide.
    pub path: &'static str,
    /// Its objects live in namespaces.
    pub namespaced: bool,
    /// Read only where granted (`dumbmonit rbac --optional`), not by the guide's role.
    pub optional: bool,
    /// How watch mode follows it.
    pub follow: Follow,
}

/// How watch mode follows a collection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Follow {
    /// Not followed: read at each interval cycle (`/version`, the Metrics API, whose figures
    /// are samples of the moment).
    No,
    /// Followed whole.
    Whole,
    /// Followed whole, its changes left to the next cycle rather than starting one: what
    /// changes every few seconds as a matter of course (a leader's lease, renewed every two).
    Quietly,
    /// Followed outside the ignored namespaces (the same field selector as a LIST cycle's).
    OutsideIgnored,
    /// Its Warning events only, in every namespace (a Node's events may be recorded in an
    /// ignored one).
    Warnings,
}

/// What one cycle reads: a handle on the collection's description. Two handles are the same
/// collection when they describe the same one (names are unique: `collect::kinds` tests it).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Collection(&'static About);

impl std::fmt::Debug for Collection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

/// One row of the table, in the order of [`About`]'s fields.
pub(crate) const fn row(
    name: &'static str,
    resource: &'static str,
    list: (&'static str, &'static str),
    path: &'static str,
    namespaced: bool,
    optional: bool,
    follow: Follow,
) -> About {
    About { name, resource, list_kind: list.0, api_version: list.1, path, namespaced, optional, follow }
}

impl Collection {
    /// The handle on a description (a kind's own, in `collect/kinds/`).
    pub const fn of(about: &'static About) -> Collection {
        Collection(about)
    }

    pub const VERSION: Collection =
        Collection(&row("version", "/version", ("", ""), "/version", false, false, Follow::No));
    pub const NODES: Collection =
        Collection(&row("nodes", "nodes", ("NodeList", "v1"), "/api/v1/nodes", false, false, Follow::Whole));
    pub const PODS: Collection =
        Collection(&row("pods", "pods", ("PodList", "v1"), "/api/v1/pods", true, false, Follow::OutsideIgnored));
    pub const DEPLOYMENTS: Collection = Collection(&row(
        "deployments",
        "deployments.apps",
        ("DeploymentList", "apps/v1"),
        "/apis/apps/v1/deployments",
        true,
        false,
        Follow::OutsideIgnored,
    ));
    pub const STATEFULSETS: Collection = Collection(&row(
        "statefulsets",
        "statefulsets.apps",
        ("StatefulSetList", "apps/v1"),
        "/apis/apps/v1/statefulsets",
        true,
        false,
        Follow::OutsideIgnored,
    ));
    pub const DAEMONSETS: Collection = Collection(&row(
        "daemonsets",
        "daemonsets.apps",
        ("DaemonSetList", "apps/v1"),
        "/apis/apps/v1/daemonsets",
        true,
        false,
        Follow::OutsideIgnored,
    ));
    pub const PVCS: Collection = Collection(&row(
        "persistentvolumeclaims",
        "persistentvolumeclaims",
        ("PersistentVolumeClaimList", "v1"),
        "/api/v1/persistentvolumeclaims",
        true,
        false,
        Follow::OutsideIgnored,
    ));
    pub const EVENTS: Collection =
        Collection(&row("events", "events", ("EventList", "v1"), "/api/v1/events", true, false, Follow::Warnings));
    // The optional reads read together (see `collect::run`): the APIServices, then the Metrics
    // API when its APIService is not down.
    pub const APISERVICES: Collection = Collection(&row(
        "apiservices",
        "apiservices.apiregistration.k8s.io",
        ("APIServiceList", "apiregistration.k8s.io/v1"),
        "/apis/apiregistration.k8s.io/v1/apiservices",
        false,
        true,
        Follow::Whole,
    ));
    pub const NODE_METRICS: Collection = Collection(&row(
        "node_metrics",
        "nodes.metrics.k8s.io",
        ("NodeMetricsList", "metrics.k8s.io/v1beta1"),
        "/apis/metrics.k8s.io/v1beta1/nodes",
        false,
        true,
        Follow::No,
    ));
    pub const POD_METRICS: Collection = Collection(&row(
        "pod_metrics",
        "pods.metrics.k8s.io",
        ("PodMetricsList", "metrics.k8s.io/v1beta1"),
        "/apis/metrics.k8s.io/v1beta1/pods",
        true,
        true,
        Follow::No,
    ));

    /// The core reads, the guide's role: a cycle succeeds only when all eight do.
    pub const ALL: [Collection; 8] = [
        Collection::VERSION,
        Collection::NODES,
        Collection::PODS,
        Collection::DEPLOYMENTS,
        Collection::STATEFULSETS,
        Collection::DAEMONSETS,
        Collection::PVCS,
        Collection::EVENTS,
    ];

    /// The optional reads described here (the others are `collect::kinds`'s).
    pub const METRICS_GROUP: [Collection; 3] =
        [Collection::APISERVICES, Collection::NODE_METRICS, Collection::POD_METRICS];

    /// What the collection is, to every room: its row.
    pub fn about(self) -> &'static About {
        self.0
    }

    /// One of the optional reads.
    pub fn optional(self) -> bool {
        self.about().optional
    }

    /// The name used in messages and in the `collection` label.
    pub fn name(self) -> &'static str {
        self.about().name
    }

    /// The resource as RBAC and the API server name it (`deployments.apps`).
    pub fn resource(self) -> &'static str {
        self.about().resource
    }

    /// The API group and the resource, as a role's rule names them: `("apps", "deployments")`,
    /// `("", "pods")`.
    pub fn rbac(self) -> (&'static str, &'static str) {
        match self.resource().split_once('.') {
            Some((resource, group)) => (group, resource),
            None => ("", self.resource()),
        }
    }

    /// The `kind` and `apiVersion` of the List.
    pub fn list_kind(self) -> (&'static str, &'static str) {
        (self.about().list_kind, self.about().api_version)
    }

    pub fn path(self) -> &'static str {
        self.about().path
    }

    /// Whether its objects live in namespaces (read by namespace with namespaced access); nodes,
    /// APIServices, the nodes' usage and `/version` are the cluster's.
    pub fn namespaced(self) -> bool {
        self.about().namespaced
    }

    /// The path of its List in one namespace (`/api/v1/namespaces/NS/pods`); a namespace is a
    /// DNS label, checked where it is configured.
    pub fn path_in(self, namespace: &str) -> String {
        let path = self.path();
        let Some((api, resource)) = path.rsplit_once('/') else { return path.to_string() };
        format!("{api}/namespaces/{namespace}/{resource}")
    }
}

#[cfg(test)]
mod tests {
    use super::Collection;

    #[test]
    fn a_namespaced_list_has_the_namespace_before_its_resource() {
        assert_eq!(Collection::PODS.path_in("team-a"), "/api/v1/namespaces/team-a/pods");
        assert_eq!(Collection::DEPLOYMENTS.path_in("team-a"), "/apis/apps/v1/namespaces/team-a/deployments");
        assert_eq!(Collection::POD_METRICS.path_in("b"), "/apis/metrics.k8s.io/v1beta1/namespaces/b/pods");
        let cluster: Vec<Collection> =
            Collection::ALL.into_iter().chain(Collection::METRICS_GROUP).filter(|c| !c.namespaced()).collect();
        assert_eq!(
            cluster,
            [Collection::VERSION, Collection::NODES, Collection::APISERVICES, Collection::NODE_METRICS]
        );
    }

    #[test]
    fn the_core_is_the_guides_role_and_a_role_names_group_and_resource() {
        assert!(Collection::ALL.iter().all(|c| !c.optional()));
        assert!(Collection::METRICS_GROUP.iter().all(|c| c.optional()));
        assert_eq!(Collection::DEPLOYMENTS.rbac(), ("apps", "deployments"));
        assert_eq!(Collection::POD_METRICS.rbac(), ("metrics.k8s.io", "pods"));
        assert_eq!(Collection::EVENTS.rbac(), ("", "events"));
        assert_eq!(format!("{:?}", Collection::PVCS), "persistentvolumeclaims");
        assert_ne!(Collection::NODES, Collection::NODE_METRICS);
    }
}
