# The one sentence and the counters (pages, `check`, notifications), and the text of `check`,
# `top` and `replay`.

count-nodes-not-ready = { $count } { $count ->
    [one] node
   *[other] nodes
} not ready
count-pods-crashlooping = { $count } { $count ->
    [one] pod
   *[other] pods
} crash-looping
count-nodes-under-pressure = { $count } { $count ->
    [one] node
   *[other] nodes
} under pressure
count-pods-blocked = { $count } { $count ->
    [one] pod
   *[other] pods
} blocked
count-pods-pending = { $count } { $count ->
    [one] pod
   *[other] pods
} pending
count-pods-failed = { $count } { $count ->
    [one] pod
   *[other] pods
} failed
count-pods-not-ready = { $count } { $count ->
    [one] pod
   *[other] pods
} not ready
count-workloads-missing-replicas = { $count } { $count ->
    [one] workload
   *[other] workloads
} missing replicas
count-claims-stuck = { $count } { $count ->
    [one] claim
   *[other] claims
} stuck
count-pods-stuck-terminating = { $count } { $count ->
    [one] pod
   *[other] pods
} stuck terminating
count-rollouts-stuck = { $count } { $count ->
    [one] rollout
   *[other] rollouts
} stuck
count-control-plane-down = { $count } control-plane { $count ->
    [one] component stopped
   *[other] components stopped
}
count-webhooks-refusing = { $count } admission { $count ->
    [one] webhook
   *[other] webhooks
} unreachable (refusing changes)
count-webhooks-skipped = { $count } admission { $count ->
    [one] webhook
   *[other] webhooks
} unreachable (letting changes through)
count-pdbs-short = { $count } disruption { $count ->
    [one] budget
   *[other] budgets
} short of healthy pods
count-quotas-full = { $count } { $count ->
    [one] quota
   *[other] quotas
} full
count-volumes-in-error = { $count } { $count ->
    [one] volume
   *[other] volumes
} in error
count-nodes-full = { $count } { $count ->
    [one] node
   *[other] nodes
} full of pods
count-daemonsets-misscheduled = { $count } { $count ->
    [one] DaemonSet on nodes it should not be on
   *[other] DaemonSets on nodes they should not be on
}
count-jobs-too-long = { $count } { $count ->
    [one] job
   *[other] jobs
} running for over 12 hours
count-quotas-overcommitted = quotas promising over 1.5 times the cluster's { $count ->
    [one] CPU or memory
   *[other] CPU and memory
}
count-overcommitted = { $count ->
    [one] requests
   *[other] CPU and memory requests
} past what the cluster holds without its largest node
count-jobs-failed = { $count } { $count ->
    [one] job
   *[other] jobs
} failed
count-cronjobs-missed = { $count } { $count ->
    [one] cron job missed its runs
   *[other] cron jobs missed their runs
}
count-kubelets-skew = { $count } { $count ->
    [one] kubelet
   *[other] kubelets
} outside the version skew
certificate-expires = { $certificate ->
    [serving] API server
   *[client] client
} certificate expires { in-days }
healthy-with-nodes = Healthy: { $nodes } { $nodes ->
    [one] node
   *[other] nodes
} ready, { $pods } { $pods ->
    [one] pod
   *[other] pods
}
healthy = Healthy: { $pods } { $pods ->
    [one] pod
   *[other] pods
}
watched-in = { $said } (watched in { $count } { $count ->
    [one] namespace
   *[other] namespaces
})
cannot-be-read-with = Cannot be read: { $error }
waiting = Waiting for the first cycle
counters-nodes = { $nodes } { $nodes ->
    [one] node
   *[other] nodes
} ({ $ready } ready){", "}
counters = { $pods } { $pods ->
    [one] pod
   *[other] pods
} ({ $running } running, { $pending } pending, { $failed } failed), { $workloads } { $workloads ->
    [one] workload
   *[other] workloads
}, { $claims } { $claims ->
    [one] claim
   *[other] claims
}, { $events } { $events ->
    [one] warning event
   *[other] warning events
} in the last hour

## `check`'s text report
text-version-unknown = unknown version
text-cluster = Cluster { $address } ({ $version }): { $counters }
text-col-name = NAME
text-col-ready = READY
text-col-pressure = PRESSURE
text-col-scheduling = SCHEDULING
text-col-kubelet = KUBELET
text-col-why = WHY
text-col-pod = POD
text-col-state = STATE
text-col-restarts = RESTARTS
text-col-workload = WORKLOAD
text-col-unavailable = UNAVAILABLE
text-col-updated = UPDATED
text-col-claim = CLAIM
text-col-phase = PHASE

## `top`: kubectl top's columns, and what DumbMonit adds
top-requests = What the pods request and limit, per node (read from the pods; no Metrics API needed):
top-overcommitted = limits overcommitted

## A pod's problems
pod-crash-looping = crash-looping
pod-blocked = blocked ({ $reason })
pod-pending = pending
pod-failed = failed
pod-stuck-terminating = stuck terminating
pod-not-ready = not ready

## What the optional reads found
metrics-api-available = Metrics API available
metrics-api-not-installed = Metrics API not available: it is not installed (no APIService { $apiservice }; metrics-server is not deployed)
metrics-api-not-granted = Metrics API not read: the service account may not list { $resource } (`dumbmonit rbac --optional` grants it)
metrics-api-not-read = Metrics API not read
access-none = none
access-watched-in = Watched in { $count } { $count ->
    [one] namespace
   *[other] namespaces
} (namespaced access): { $read }
access-nodes-hidden = Nodes are not visible with this token (namespaced access): node health is not watched
access-node-events-hidden = Events about nodes are not visible with this token (namespaced access): they are recorded in namespace default
access-not-visible = Not visible with this token (namespaced access): { $kinds }
text-apiservice = APIService { $name } ({ $service }) is not Available: { $why }
text-hpa = HPA { $namespace }/{ $name } cannot scale: { $reason }: { $message }
text-certificate = { certificate-what } expires on { $date } ({ in-days })
text-control-plane = { $component } has not renewed its leader lease for { $seconds } s: { $what }
text-webhook = { $kind ->
    [mutating] Mutating
   *[other] Validating
} webhook { $configuration }/{ $webhook }: { webhook-unavailable-why }
webhook-unavailable-why = { $reach ->
    [no-service] its Service { $service } does not exist
    [no-port] its Service { $service } has no such port
   *[other] its Service { $service } has no ready endpoint on that port
}: { $policy ->
    [Ignore] the API server lets through unchecked
   *[other] the API server refuses
} { $operations } of { $resources } { $scoped ->
    [yes] in the namespaces matching { $selector }
   *[other] in every namespace
}.
text-pdb = PodDisruptionBudget { $namespace }/{ $name } has { $current } healthy pods of the { $desired } it needs: a node drain would hang on it
text-quota = Quota { $namespace }/{ $name }: { $resource } { $level ->
    [exceeded] over its limit
    [full] fully used, what needs more is refused
   *[other] almost full
} ({ $used } used of { $hard })
text-pv = PersistentVolume { $name } is { $phase }
text-not-granted = Not granted to this service account: { $resources } (`dumbmonit rbac --optional` adds them)
text-node-pods = Node { $node } runs { $pods } of the { $capacity } pods it may run
text-misscheduled = DaemonSet { $namespace }/{ $name } has { $count } pods on nodes it should not run on
text-job-long = Job { $namespace }/{ $name } has run for { $hours } hours without completing
text-generation = { $kind } { $namespace }/{ $name }: its controller has not seen its last change (generation ahead by { $lag })
text-job = { $of ->
    [none] Job { $namespace }/{ $name } failed: { $why }
   *[other] Job { $namespace }/{ $name } (CronJob { $owner }) failed: { $why }
}
text-cronjob = CronJob { $namespace }/{ $name } missed its runs: { $why }

## The reasons of a why that are ours (the cluster's own words are said as they are).
exit-meaning = { $kind ->
    [ok] exited successfully (and was restarted: check the restart policy or the command)
    [usage] misuse of a shell command or bad arguments
    [noexec] the command cannot be executed (permissions, or not an executable)
    [notfound] command not found (check the image's entrypoint and command)
    [oom] SIGKILL: out of memory, the container went over its memory limit
    [kill] SIGKILL: killed, by the out-of-memory killer or for not stopping within its grace period
    [term] SIGTERM: told to stop, e.g. killed after failing its liveness probe
    [segv] SIGSEGV: segmentation fault
    [abrt] SIGABRT: aborted
    [int] SIGINT: interrupted
    [range] exit status out of range, or a fatal error before the application started
    [signal] killed by signal { $signal }
   *[other] application error
}
why-node-no-ready = the node lists no Ready condition
why-condition-true = { $condition } is True
why-tainted = tainted { $taint }{ $lost ->
    [yes] : the node controller has lost the node
   *[no] {""}
}
why-kubelet-skew = kubelet { $kubelet } is outside the supported skew from the API server { $server } (at most 3 minor versions older, never newer)
why-pod-is = pod { $pod } is { $problems }
why-used-by = used by pod { $pod }
why-claim-first-consumer = waiting for its first consumer
why-claim-provisioner = waiting for the external provisioner { $provisioner }
why-claim-any-provisioner = waiting for its external provisioner
why-last-exit = { $container }: last exit code { $code }{ $reason }: { $meaning }
why-crashloop-no-exit = { $container }: crash-looping, no last termination recorded
why-exit = { $container }: exit code { $code }{ $reason }: { $meaning }{ $has_message ->
    [yes] : { $message }
   *[no] {""}
}
why-containers-not-ready = containers not ready: { $containers }
why-finalizers = waits for its finalizers: { $finalizers }
why-node-down = its node { $node } is not ready: the kubelet cannot confirm that the containers stopped
why-no-progress = its update has made no progress for { $minutes } min: { $updated } of { $desired } replicas updated
why-past-grace = past its grace period: the kubelet has not confirmed that its containers stopped
why-cronjob-missed = { $scheduled ->
    [never] never scheduled since its creation { $ago } ago
   *[last] last scheduled { $ago } ago
}, while { $schedule } runs it every { $every }: check the kube-controller-manager and the CronJob's events
duration-words = { $unit ->
    [days] { $count } days
    [h] { $count } h
    [min] { $count } min
   *[s] { $count } s
}

## Messages to chat and pagers (Slack, PagerDuty): what changed, in a word or two.
notify-firing = Firing
notify-resolved = Resolved after { $duration }
notify-reminder = Still firing, for { $duration }
notify-escalated = Escalated to { $severity }
notify-acknowledged = Acknowledged by { $who }
notify-more = { $summary }, and { $count } more
notify-runbook = Runbook
notify-pages = { $cluster } on DumbMonit
notify-test-summary = A test notification from DumbMonit, sent by { $who }
notify-test-description = If you read this, the notifier { $notifier } reaches you.
