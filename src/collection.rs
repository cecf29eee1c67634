//! The collections a cycle reads, named once for every room: the reads (`kube`, `collect`), the
//! errors that name them (`error`), the recordings and the metrics' `collection` label.

/// What one collection is, to every room.
#[derive(Debug)]
pub struct About {
    /// The name in messages and in the `collection` label.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Follow {
    /// Not followed: read at each interval cycle (`/version`, the Metrics API, whose figures
    /// are samples of the moment).
    No,
    /// Followed whole.
    Whole,
    /// Followed outside the ignored namespaces (the same field selector as a LIST cycle's).
    OutsideIgnored,
    /// Its Warning events only, in every namespace (a Node's events may be recorded in an
    /// ignored one).
    Warnings,
}

/// What one cycle reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Collection {
    Version,
    Nodes,
    Pods,
    Deployments,
    StatefulSets,
    DaemonSets,
    PersistentVolumeClaims,
    Events,
    // The optional reads (see `collect::optional`): not among the eight.
    ApiServices,
    NodeMetrics,
    PodMetrics,
    Hpas,
    Jobs,
    CronJobs,
}

impl Collection {
    pub const OPTIONAL: [Collection; 6] = [
        Collection::ApiServices,
        Collection::NodeMetrics,
        Collection::PodMetrics,
        Collection::Hpas,
        Collection::Jobs,
        Collection::CronJobs,
    ];

    pub const ALL: [Collection; 8] = [
        Collection::Version,
        Collection::Nodes,
        Collection::Pods,
        Collection::Deployments,
        Collection::StatefulSets,
        Collection::DaemonSets,
        Collection::PersistentVolumeClaims,
        Collection::Events,
    ];

    /// Every collection, in the order of the table (and of the enum).
    pub const EVERY: [Collection; 14] = [
        Collection::Version,
        Collection::Nodes,
        Collection::Pods,
        Collection::Deployments,
        Collection::StatefulSets,
        Collection::DaemonSets,
        Collection::PersistentVolumeClaims,
        Collection::Events,
        Collection::ApiServices,
        Collection::NodeMetrics,
        Collection::PodMetrics,
        Collection::Hpas,
        Collection::Jobs,
        Collection::CronJobs,
    ];

    /// What the collection is, to every room: its row of the one table.
    pub fn about(self) -> &'static About {
        use Collection::*;
        use Follow::*;
        const fn row(
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
        const VERSION: About = row("version", "/version", ("", ""), "/version", false, false, No);
        const NODES: About = row("nodes", "nodes", ("NodeList", "v1"), "/api/v1/nodes", false, false, Whole);
        const PODS: About = row("pods", "pods", ("PodList", "v1"), "/api/v1/pods", true, false, OutsideIgnored);
        const DEPLOYMENTS: About = row(
            "deployments",
            "deployments.apps",
            ("DeploymentList", "apps/v1"),
            "/apis/apps/v1/deployments",
            true,
            false,
            OutsideIgnored,
        );
        const STATEFULSETS: About = row(
            "statefulsets",
            "statefulsets.apps",
            ("StatefulSetList", "apps/v1"),
            "/apis/apps/v1/statefulsets",
            true,
            false,
            OutsideIgnored,
        );
        const DAEMONSETS: About = row(
            "daemonsets",
            "daemonsets.apps",
            ("DaemonSetList", "apps/v1"),
            "/apis/apps/v1/daemonsets",
            true,
            false,
            OutsideIgnored,
        );
        const CLAIMS: About = row(
            "persistentvolumeclaims",
            "persistentvolumeclaims",
            ("PersistentVolumeClaimList", "v1"),
            "/api/v1/persistentvolumeclaims",
            true,
            false,
            OutsideIgnored,
        );
        const EVENTS: About = row("events", "events", ("EventList", "v1"), "/api/v1/events", true, false, Warnings);
        const APISERVICES: About = row(
            "apiservices",
            "apiservices.apiregistration.k8s.io",
            ("APIServiceList", "apiregistration.k8s.io/v1"),
            "/apis/apiregistration.k8s.io/v1/apiservices",
            false,
            true,
            Whole,
        );
        const NODE_METRICS: About = row(
            "node_metrics",
            "nodes.metrics.k8s.io",
            ("NodeMetricsList", "metrics.k8s.io/v1beta1"),
            "/apis/metrics.k8s.io/v1beta1/nodes",
            false,
            true,
            No,
        );
        const POD_METRICS: About = row(
            "pod_metrics",
            "pods.metrics.k8s.io",
            ("PodMetricsList", "metrics.k8s.io/v1beta1"),
            "/apis/metrics.k8s.io/v1beta1/pods",
            true,
            true,
            No,
        );
        const HPAS: About = row(
            "hpas",
            "horizontalpodautoscalers.autoscaling",
            ("HorizontalPodAutoscalerList", "autoscaling/v2"),
            "/apis/autoscaling/v2/horizontalpodautoscalers",
            true,
            true,
            Whole,
        );
        const JOBS: About =
            row("jobs", "jobs.batch", ("JobList", "batch/v1"), "/apis/batch/v1/jobs", true, true, Whole);
        const CRONJOBS: About = row(
            "cronjobs",
            "cronjobs.batch",
            ("CronJobList", "batch/v1"),
            "/apis/batch/v1/cronjobs",
            true,
            true,
            Whole,
        );
        match self {
            Version => &VERSION,
            Nodes => &NODES,
            Pods => &PODS,
            Deployments => &DEPLOYMENTS,
            StatefulSets => &STATEFULSETS,
            DaemonSets => &DAEMONSETS,
            PersistentVolumeClaims => &CLAIMS,
            Events => &EVENTS,
            ApiServices => &APISERVICES,
            NodeMetrics => &NODE_METRICS,
            PodMetrics => &POD_METRICS,
            Hpas => &HPAS,
            Jobs => &JOBS,
            CronJobs => &CRONJOBS,
        }
    }

    /// One of the optional reads (see [`Collection::OPTIONAL`]).
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
        assert_eq!(Collection::Pods.path_in("team-a"), "/api/v1/namespaces/team-a/pods");
        assert_eq!(Collection::Deployments.path_in("team-a"), "/apis/apps/v1/namespaces/team-a/deployments");
        assert_eq!(Collection::PodMetrics.path_in("b"), "/apis/metrics.k8s.io/v1beta1/namespaces/b/pods");
        assert_eq!(Collection::CronJobs.path_in("b"), "/apis/batch/v1/namespaces/b/cronjobs");
        let cluster: Vec<Collection> =
            Collection::ALL.into_iter().chain(Collection::OPTIONAL).filter(|c| !c.namespaced()).collect();
        assert_eq!(cluster, [Collection::Version, Collection::Nodes, Collection::ApiServices, Collection::NodeMetrics]);
    }

    #[test]
    fn the_lists_of_collections_agree_with_the_table() {
        let optional: Vec<Collection> = Collection::EVERY.into_iter().filter(|c| c.optional()).collect();
        assert_eq!(optional, Collection::OPTIONAL);
        let core: Vec<Collection> = Collection::EVERY.into_iter().filter(|c| !c.optional()).collect();
        assert_eq!(core, Collection::ALL);
        let mut sorted = Collection::EVERY;
        sorted.sort();
        assert_eq!(sorted, Collection::EVERY, "in the enum's order");
        assert_eq!(Collection::Deployments.rbac(), ("apps", "deployments"));
        assert_eq!(Collection::PodMetrics.rbac(), ("metrics.k8s.io", "pods"));
        assert_eq!(Collection::Events.rbac(), ("", "events"));
    }
}
