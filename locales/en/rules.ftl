# The alerts: each rule's title (shown on French pages and in `dumbmonit rules --lang`), the
# summary of an alert as DumbMonit raises it, and the annotations of `dumbmonit rules`.
# Arguments are plain text and counts; the pages escape what they interpolate.

severity-critical = critical
severity-warning = warning
severity-notice = notice

in-days = { $when ->
    [today] within a day
    [future] in { $days } { $days ->
        [one] day
       *[other] days
    }
   *[past] expired { $days } { $days ->
        [one] day
       *[other] days
    } ago
}

certificate-what = { $certificate ->
    [serving] The API server's serving certificate
   *[client] The client certificate DumbMonit authenticates with
}

rule-node-not-ready =
    .title = Kubernetes node not ready
    .summary = Node { $node } is not ready
    .prom-summary = Node { $node } is not ready
    .prom-description = The Ready condition of node { $node } is False, Unknown or missing.
rule-node-pressure =
    .title = Kubernetes node under pressure
    .summary = Node { $node } is under { $condition } pressure
    .prom-summary = Node { $node } is under { $condition } pressure
    .prom-description = Node { $node } reports { $condition } pressure.
rule-pod-crash-looping =
    .title = Kubernetes pod crash-looping
    .summary = Pod { $namespace }/{ $pod } is crash-looping
    .prom-summary = Pod { $namespace }/{ $pod } is crash-looping
    .prom-description = Pod { $namespace }/{ $pod } was seen in CrashLoopBackOff within the last 10 minutes, for 10 minutes.
rule-pod-pending =
    .title = Kubernetes pod stuck Pending
    .summary = Pod { $namespace }/{ $pod } is pending
    .prom-summary = Pod { $namespace }/{ $pod } is pending
    .prom-description = Pod { $namespace }/{ $pod } has been Pending for 15 minutes.
rule-pod-not-ready =
    .title = Kubernetes pod not ready
    .summary = Pod { $namespace }/{ $pod } is not ready
    .prom-summary = Pod { $namespace }/{ $pod } is not ready
    .prom-description = Pod { $namespace }/{ $pod }, of no Deployment, StatefulSet, DaemonSet or Job, has not been ready for 15 minutes.
rule-pod-restarting =
    .title = Kubernetes pod restarting
    .summary = Pod { $namespace }/{ $pod } restarted { $restarts } times in the last hour
    .prom-summary = Pod { $namespace }/{ $pod } restarted { $value } times in the last hour
    .prom-description = The containers of pod { $namespace }/{ $pod } restarted more than 5 times within the last hour, without crash-looping.
rule-workload-replicas-missing =
    .title = Kubernetes workload missing replicas
    .summary = { $kind } { $namespace }/{ $workload } is missing { $missing } of { $desired } replicas
    .prom-summary = { $kind } { $namespace }/{ $workload } has { $value } unavailable replica(s)
    .prom-description = { $kind } { $namespace }/{ $workload } has had unavailable replicas for 10 minutes.
    .prom-description-escalated = { $kind } { $namespace }/{ $workload } has had unavailable replicas for more than an hour.
rule-pvc-pending =
    .title = Kubernetes volume claim pending
    .summary = Claim { $namespace }/{ $pvc } is stuck in Pending
    .prom-summary = Claim { $namespace }/{ $pvc } is stuck in Pending
    .prom-description = Claim { $namespace }/{ $pvc } is Pending while a pod uses it or a Warning event names it, for 15 minutes.
rule-monitor-unreachable =
    .title = Monitoring unreachable
    .summary = Cluster { $cluster } cannot be read
    .prom-summary = Cluster { $cluster } cannot be read
    .prom-description = DumbMonit could not read the API server in two consecutive cycles.
rule-aggregated-api-unavailable =
    .title = Kubernetes aggregated API unavailable
    .summary = APIService { $apiservice } is not available
    .prom-summary = APIService { $apiservice } is not available
    .prom-description = The aggregated API { $apiservice } has not been Available for 5 minutes: the API server cannot reach service { $service }. See its condition with kubectl get apiservice { $apiservice } -o yaml.
rule-hpa-metrics-unavailable =
    .title = Kubernetes HPA without metrics
    .summary = HPA { $namespace }/{ $hpa } cannot scale: { $reason }
    .prom-summary = HPA { $namespace }/{ $hpa } cannot scale
    .prom-description = HPA { $namespace }/{ $hpa } has not been able to compute a replica count for 10 minutes (its ScalingActive condition is False).
rule-certificate-expiring =
    .title = Kubernetes API server certificate expiring soon
    .description = It is valid until { $until }. { $fix ->
        [serving-k3s] k3s renews the certificates that expire within 90 days when it restarts: restart k3s on each server node.
        [serving] Renew it (kubeadm: kubeadm certs renew apiserver, then restart the API server).
        [client-k3s] k3s's admin kubeconfig certificate lasts one year; k3s renews it when it restarts within 90 days of its end: restart k3s, then copy the new /etc/rancher/k3s/k3s.yaml.
       *[client] Renew it, or read with a service-account token instead (dumbmonit rbac).
    }
    .summary = { certificate-what } expires on { $date } ({ in-days })
    .prom-summary = The { $certificate } certificate of cluster { $cluster } expires in { $value }
    .prom-description = Renew it before it ends (k3s renews the certificates that expire within 90 days when it restarts).
rule-version-skew =
    .title = Kubernetes kubelet outside the version skew
    .description = A kubelet may be up to three minor versions older than the API server, never newer: upgrade the node (or, for a newer kubelet, the control plane first).
    .summary = Kubelet { $kubelet } on node { $node } is outside the supported skew from the API server { $version }
    .prom-summary = The kubelet of node { $node } is outside the supported version skew
    .prom-description = A kubelet may be up to three minor versions older than the API server, never newer.
rule-rollout-stuck =
    .title = Kubernetes rollout stuck
    .summary = The rollout of { $kind } { $namespace }/{ $workload } is stuck
    .prom-summary = The rollout of { $kind } { $namespace }/{ $workload } is stuck
    .prom-description = A Deployment past its progress deadline, or a StatefulSet or DaemonSet update without progress for 15 minutes.
rule-pod-stuck-terminating =
    .title = Kubernetes pod stuck terminating
    .summary = Pod { $namespace }/{ $pod } has been terminating for { $minutes } min past its grace period
    .prom-summary = Pod { $namespace }/{ $pod } has been terminating for { $value } past its grace period
    .prom-description = A finalizer, or a node that is not ready, keeps pod { $namespace }/{ $pod } from going.
rule-node-flapping =
    .title = Kubernetes node flapping
    .summary = Node { $node } is flapping: its Ready condition changed { $changes } times in 15 minutes
    .prom-summary = Node { $node } is flapping: its Ready condition changed { $value } times in 15 minutes
    .prom-description = The Ready condition of node { $node } keeps changing.
rule-job-failed =
    .title = Kubernetes Job failed
    .summary = { $of ->
        [none] Job { $namespace }/{ $job } failed
       *[other] Job { $namespace }/{ $job } (of CronJob { $owner }) failed
    }
    .prom-summary = Job { $namespace }/{ $job } failed
    .prom-description = Job { $namespace }/{ $job } (CronJob { $owner }) has its Failed condition True.
rule-cronjob-missed =
    .title = Kubernetes CronJob missed its runs
    .summary = CronJob { $namespace }/{ $cronjob } missed its runs
    .prom-summary = CronJob { $namespace }/{ $cronjob } missed its runs
    .prom-description = CronJob { $namespace }/{ $cronjob } last ran more than twice its schedule's period ago.

rule-control-plane-component-down =
    .title = Kubernetes control-plane component stopped
    .summary = { $component } has not renewed its leader lease for { $seconds } s
    .description = { $component ->
        [kube-scheduler] No new pod is scheduled: every pod created from now on stays Pending.
       *[other] Nothing the controllers do happens: Deployments, ReplicaSets and StatefulSets make no pods, Jobs and CronJobs do not run, the pods of a lost node are not evicted, Service endpoints are not updated, nothing is garbage-collected.
    } Its last leader was { $holder }.
    .prom-summary = { $component } has not renewed its leader lease for { $value }
    .prom-description = The leader lease of { $component } in kube-system has not been renewed for over a minute: the component has stopped or cannot reach the API server.
rule-hpa-maxed-out =
    .title = Kubernetes HPA at its maximum
    .summary = HPA { $namespace }/{ $hpa } has run at its maximum of { $max } replicas for 15 minutes
    .prom-summary = HPA { $namespace }/{ $hpa } runs at its maximum of { $value } replicas
    .prom-description = HPA { $namespace }/{ $hpa } has run at its maxReplicas for 15 minutes: it would scale out further if it could.
rule-hpa-replicas-mismatch =
    .title = Kubernetes HPA short of its desired replicas
    .summary = HPA { $namespace }/{ $hpa } wants { $desired } replicas and has had { $current } for 15 minutes
    .prom-summary = HPA { $namespace }/{ $hpa } has not reached its desired replicas
    .prom-description = HPA { $namespace }/{ $hpa } has wanted another replica count than it has, within its bounds, for 15 minutes without its count changing.
rule-pdb-not-enough-healthy =
    .title = Kubernetes disruption budget short of healthy pods
    .summary = PodDisruptionBudget { $namespace }/{ $pdb } has { $current } healthy pods of the { $desired } it needs
    .description = It covers { $expected } pods and allows { $allowed } disruptions: a node drain that must evict one of them waits until enough are healthy.
    .prom-summary = PodDisruptionBudget { $namespace }/{ $pdb } is short of healthy pods
    .prom-description = PodDisruptionBudget { $namespace }/{ $pdb } has had fewer healthy pods than it needs for 15 minutes: a node drain will hang on it.
rule-quota-almost-full =
    .title = Kubernetes quota almost full
    .summary = Quota { $namespace }/{ $resourcequota } is { $percent }% used for { $resource }
    .prom-summary = Quota { $namespace }/{ $resourcequota } is { $value } used for { $resource }
    .prom-description = ResourceQuota { $namespace }/{ $resourcequota } has used 90% or more of its { $resource } for 15 minutes.
rule-quota-fully-used =
    .title = Kubernetes quota fully used
    .summary = Quota { $namespace }/{ $resourcequota } is fully used for { $resource }: new objects that need more are refused
    .prom-summary = Quota { $namespace }/{ $resourcequota } is fully used for { $resource }
    .prom-description = ResourceQuota { $namespace }/{ $resourcequota } has used all of its { $resource } for 15 minutes: the API server refuses what would need more.
rule-quota-exceeded =
    .title = Kubernetes quota exceeded
    .summary = Quota { $namespace }/{ $resourcequota } is over its limit for { $resource } ({ $percent }%)
    .prom-summary = Quota { $namespace }/{ $resourcequota } is over its limit for { $resource } ({ $value })
    .prom-description = ResourceQuota { $namespace }/{ $resourcequota } has been over its { $resource } limit for 15 minutes (the limit was lowered under what exists).
rule-webhook-unavailable =
    .title = Kubernetes admission webhook unreachable
    .summary = { $kind ->
        [mutating] Mutating
       *[other] Validating
    } webhook { $configuration }/{ $webhook } cannot be reached ({ $policy ->
        [Ignore] its requests go through unchecked
       *[other] its requests are refused
    })
    .prom-summary = Admission webhook { $configuration }/{ $webhook } cannot be reached (failurePolicy { $failure_policy })
    .prom-description = The { $kind } webhook { $webhook } of { $configuration } has had no ready endpoint on its Service's port for 5 minutes: the API server refuses every request it intercepts (failurePolicy Fail), or lets it through unchecked (Ignore).

rule-pv-errors =
    .title = Kubernetes persistent volume in error
    .summary = PersistentVolume { $pv } is { $phase }
    .prom-summary = PersistentVolume { $pv } is { $phase }
    .prom-description = PersistentVolume { $pv } has been in phase { $phase } for 5 minutes.

rule-cpu-overcommit =
    .title = Kubernetes CPU requests past what the cluster holds
    .summary = The pods request { $requests } cores: { $nodes ->
        [one] more than its only node's { $allocatable }
       *[other] more than the { $room } its nodes hold without the largest ({ $allocatable } in all)
    }
    .prom-summary = CPU requests past what the cluster holds without its largest node
    .prom-description = The pods request more CPU than the nodes can give without the largest of them: if a node is lost, some pods cannot be scheduled again.
rule-memory-overcommit =
    .title = Kubernetes memory requests past what the cluster holds
    .summary = The pods request { $requests } of memory: { $nodes ->
        [one] more than its only node's { $allocatable }
       *[other] more than the { $room } its nodes hold without the largest ({ $allocatable } in all)
    }
    .prom-summary = Memory requests past what the cluster holds without its largest node
    .prom-description = The pods request more memory than the nodes can give without the largest of them: if a node is lost, some pods cannot be scheduled again.
rule-cpu-quota-overcommit =
    .title = Kubernetes CPU quotas past what the cluster has
    .summary = The namespaces' quotas promise { $hard } CPU, { $percent }% of the { $allocatable } the nodes give
    .prom-summary = CPU quotas promise { $value } of what the nodes give
    .prom-description = The hard CPU limits of the namespaces' quotas add up to more than 1.5 times the CPU the Ready, schedulable nodes give, for 5 minutes: the quotas cannot all be used.
rule-memory-quota-overcommit =
    .title = Kubernetes memory quotas past what the cluster has
    .summary = The namespaces' quotas promise { $hard } of memory, { $percent }% of the { $allocatable } the nodes give
    .prom-summary = Memory quotas promise { $value } of what the nodes give
    .prom-description = The hard memory limits of the namespaces' quotas add up to more than 1.5 times the memory the Ready, schedulable nodes give, for 5 minutes: the quotas cannot all be used.
rule-node-too-many-pods =
    .title = Kubernetes node full of pods
    .summary = Node { $node } runs { $pods } pods of the { $capacity } it may run
    .prom-summary = Node { $node } runs { $value } of the pods it may run
    .prom-description = Node { $node } has run 95% or more of its allocatable pods for 15 minutes: new pods will not fit on it.
rule-daemonset-misscheduled =
    .title = Kubernetes DaemonSet on nodes it should not be on
    .summary = DaemonSet { $namespace }/{ $workload } has { $count } pods on nodes it should not run on
    .description = Its node selector, affinity or the nodes' taints changed under pods that were already there: they keep running where the DaemonSet no longer belongs.
    .prom-summary = DaemonSet { $namespace }/{ $workload } has pods on nodes it should not run on
    .prom-description = DaemonSet { $namespace }/{ $workload } has had pods on nodes it should not run on for 15 minutes.
rule-generation-mismatch =
    .title = Kubernetes controller has not seen a change
    .summary = The controller of { $kind } { $namespace }/{ $workload } has not seen its last change
    .description = Its metadata.generation is ahead of status.observedGeneration: the change was accepted but nothing acts on it yet.{ $stopped ->
        [yes] {" "}kube-controller-manager has stopped: nothing will until it runs again.
       *[no] {""}
    }
    .prom-summary = The controller of { $kind } { $namespace }/{ $workload } has not seen its last change
    .prom-description = { $kind } { $namespace }/{ $workload } has had a generation its controller has not observed for 15 minutes: the change is not acted on.
rule-job-not-completed =
    .title = Kubernetes Job running too long
    .summary = Job { $namespace }/{ $job } has run for { $hours } hours without completing
    .prom-summary = Job { $namespace }/{ $job } has run for { $value } without completing
    .prom-description = Job { $namespace }/{ $job } has had active pods for more than 12 hours without completing.
rule-container-waiting =
    .title = Kubernetes container waiting
    .summary = A container of pod { $namespace }/{ $pod } has waited an hour: { $reason }
    .prom-summary = A container of pod { $namespace }/{ $pod } has waited an hour
    .prom-description = A container of pod { $namespace }/{ $pod }, which is not Pending, has waited for an hour (an image that cannot be pulled, a configuration error after a restart).

watchdog =
    .summary = DumbMonit is alive
    .description = This alert always fires while DumbMonit runs: a dead man's switch that stops hearing it knows the monitor has stopped.

pod-description = { $has_why ->
    [yes] { $why }; {""}
   *[no] {""}
}restarts: { $restarts }
quota-overcommit-description = the hard limits of every quota summed (each quota's smaller of the resource and its requests), against the Ready, schedulable nodes' allocatable
quota-description = { $used } used of { $hard }
overcommit-description = { $allocatable } allocatable on { $nodes } Ready, schedulable nodes, the largest { $largest }
