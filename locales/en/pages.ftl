# The pages: overview, Cluster panel, the cluster form, audit, refusals. Arguments are escaped by
# the pages (maud), never here.

nav-clusters = Clusters
colon = {": "}
never = never
ago = { $unit ->
    [now] just now
    [s] { $n } s ago
    [min] { $n } min ago
    [h] { $n } h ago
   *[days] { $n } days ago
}
not-found = Not found
refused = Not allowed
refused-not-admin = Adding, editing and removing clusters needs the admin role.
not-saved = Not saved.

## The overview
overview-title = Clusters
count-clusters = { $count } { $count ->
    [one] cluster
   *[other] clusters
}
count-status = { $count } { $status }
filter-name =
    .placeholder = cluster name contains
    .label = Cluster name contains
filter = Filter
col-cluster = Cluster
col-status = Status
col-nodes-ready = Nodes ready
col-pods = Pods
col-firing = Firing alerts
col-last-good = Last good cycle
cannot-be-read = Cannot be read
no-cluster = No cluster is configured.
no-cluster-matches = No cluster matches.
add-cluster = Add a cluster
silences-link = Silences and maintenance
page-of = Page { $page } of { $pages }
previous = previous
next = next

## The Cluster panel
version-unknown = version unknown
last-cycle = last cycle
added-on-pages = Added on the pages
edit-or-remove = Edit or remove
from-file = From the configuration file (changed there, not on the pages)
through-agent = Read through its agent · last report
in-maintenance = in maintenance until { $until }
nothing-notified = nothing of this cluster is notified
cannot-be-read-sentence = Cannot be read.
last-good-data = The data below is the last good data, from { $time } ({ $ago }).
never-read = No cycle has read this cluster yet.
silence-all = Silence all its alerts…
and-more = and { $count } more
more-nodes = and { $count } { $count ->
    [one] more node
   *[other] more nodes
} Ready, without pressure
more-reasons = and { $count } more reasons
nodes-title = Nodes
col-node = Node
col-pressure = Pressure
col-scheduling = Scheduling
col-kubelet = Kubelet
col-why = Why
cordoned = cordoned
pods-title = Pods needing attention ({ $count })
col-pod = Pod
col-state = State
col-restarts = Restarts
workloads-title = Workloads missing replicas ({ $count })
col-workload = Workload
col-unavailable = Unavailable
rollouts-title = Stuck rollouts ({ $count })
col-updated = Updated
claims-title = Stuck claims ({ $count })
col-claim = Claim
events-title = Warning events in the last hour, by reason
alerts-title = Alerts ({ $count })
col-alert = Alert
col-severity = Severity
col-object = Object
col-summary = Summary
col-since = Since
alert-firing = firing
alert-pending = pending
silence-one = Silence…
acknowledge-one = Acknowledge…
acknowledged-by = acknowledged by { $by } at { $at }
silenced-until = silenced until { $until } by { $by }
silenced-by = silenced by { $by }

## The cluster form
edit-cluster = Edit { $name }
form-name = Name
form-names = Names
form-through-agent = Read through its agent: the agent holds the connection settings, and keeps its token.
form-address = API server address
form-token = Service-account token
    .keep = leave empty to keep the current token
    .kept-while = The stored token is kept only while the address, port, CA and certificate choice stay as they are; when one changes, enter the token again.
form-ca = Cluster CA certificate
    .formats = (base64 or PEM)
form-insecure = Accept an unverifiable certificate
form-watch = Follow by watch (list-then-watch; needs the watch verb: dumbmonit rbac --watch)
form-timeout = Timeout per request
    .range = (100ms to 10m)
form-ignored = Ignored namespaces
form-namespaces = Only these namespaces (namespaced access; empty: the whole cluster)
form-interval = Interval
    .range = (1s to 24h)
form-test = Test
form-save = Save
form-remove = Remove { $name }
form-agent-title = Or read it through an agent
form-agent-why = For a cluster this server cannot reach: an agent in the cluster reads it and pushes each cycle here. This makes the agent's token and shows, once, the command to run in the cluster.
form-agent-create = Create the agent's token
tested-read = The cluster was read.
tested-nothing-saved = Nothing is saved until Save.
tested-failed = Test failed.

## Changes made on the pages
audit-page = Changes
audit-title = Changes made on the pages
audit-none = No change yet.
col-when = When
col-who = Who
col-what = What
