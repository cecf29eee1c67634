//! The collections a cycle reads, named once for every room: the reads (`kube`, `collect`), the
//! errors that name them (`error`), the recordings and the metrics' `collection` label.

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

    /// One of the optional reads (see [`Collection::OPTIONAL`]).
    pub fn optional(self) -> bool {
        Collection::OPTIONAL.contains(&self)
    }

    /// The name used in messages and in the `collection` label.
    pub fn name(self) -> &'static str {
        match self {
            Collection::Version => "version",
            Collection::Nodes => "nodes",
            Collection::Pods => "pods",
            Collection::Deployments => "deployments",
            Collection::StatefulSets => "statefulsets",
            Collection::DaemonSets => "daemonsets",
            Collection::PersistentVolumeClaims => "persistentvolumeclaims",
            Collection::Events => "events",
            Collection::ApiServices => "apiservices",
            Collection::NodeMetrics => "node_metrics",
            Collection::PodMetrics => "pod_metrics",
            Collection::Hpas => "hpas",
            Collection::Jobs => "jobs",
            Collection::CronJobs => "cronjobs",
        }
    }

    /// The resource as RBAC and the API server name it (`deployments.apps`).
    pub fn resource(self) -> &'static str {
        match self {
            Collection::Version => "/version",
            Collection::Deployments => "deployments.apps",
            Collection::StatefulSets => "statefulsets.apps",
            Collection::DaemonSets => "daemonsets.apps",
            Collection::ApiServices => "apiservices.apiregistration.k8s.io",
            Collection::NodeMetrics => "nodes.metrics.k8s.io",
            Collection::PodMetrics => "pods.metrics.k8s.io",
            Collection::Hpas => "horizontalpodautoscalers.autoscaling",
            Collection::Jobs => "jobs.batch",
            Collection::CronJobs => "cronjobs.batch",
            other => other.name(),
        }
    }

    /// The `kind` and `apiVersion` of the List.
    pub fn list_kind(self) -> (&'static str, &'static str) {
        match self {
            Collection::Version => ("", ""),
            Collection::Nodes => ("NodeList", "v1"),
            Collection::Pods => ("PodList", "v1"),
            Collection::Deployments => ("DeploymentList", "apps/v1"),
            Collection::StatefulSets => ("StatefulSetList", "apps/v1"),
            Collection::DaemonSets => ("DaemonSetList", "apps/v1"),
            Collection::PersistentVolumeClaims => ("PersistentVolumeClaimList", "v1"),
            Collection::Events => ("EventList", "v1"),
            Collection::ApiServices => ("APIServiceList", "apiregistration.k8s.io/v1"),
            Collection::NodeMetrics => ("NodeMetricsList", "metrics.k8s.io/v1beta1"),
            Collection::PodMetrics => ("PodMetricsList", "metrics.k8s.io/v1beta1"),
            Collection::Hpas => ("HorizontalPodAutoscalerList", "autoscaling/v2"),
            Collection::Jobs => ("JobList", "batch/v1"),
            Collection::CronJobs => ("CronJobList", "batch/v1"),
        }
    }

    pub fn path(self) -> &'static str {
        match self {
            Collection::Version => "/version",
            Collection::Nodes => "/api/v1/nodes",
            Collection::Pods => "/api/v1/pods",
            Collection::Deployments => "/apis/apps/v1/deployments",
            Collection::StatefulSets => "/apis/apps/v1/statefulsets",
            Collection::DaemonSets => "/apis/apps/v1/daemonsets",
            Collection::PersistentVolumeClaims => "/api/v1/persistentvolumeclaims",
            Collection::Events => "/api/v1/events",
            Collection::ApiServices => "/apis/apiregistration.k8s.io/v1/apiservices",
            Collection::NodeMetrics => "/apis/metrics.k8s.io/v1beta1/nodes",
            Collection::PodMetrics => "/apis/metrics.k8s.io/v1beta1/pods",
            Collection::Hpas => "/apis/autoscaling/v2/horizontalpodautoscalers",
            Collection::Jobs => "/apis/batch/v1/jobs",
            Collection::CronJobs => "/apis/batch/v1/cronjobs",
        }
    }

    /// Whether its objects live in namespaces (read by namespace with namespaced access); nodes,
    /// APIServices, the nodes' usage and `/version` are the cluster's.
    pub fn namespaced(self) -> bool {
        !matches!(self, Collection::Version | Collection::Nodes | Collection::ApiServices | Collection::NodeMetrics)
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
}
