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
replicas-title = Replicas
replica-me = This replica, { $name }, reads { $owned } of the { $known } clusters it knows.
replica-other = { $name } reads { $count } clusters:
replica-unknown = Known only to other replicas (not in this replica's file): { $names }
replicas-freshness = As the database said at the last renewal of the leases (every { $seconds } s).
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

## What the optional reads say
certificate-expires-on = { certificate-what } expires on { $date } ({ in-days }).
jobs-title = Failed jobs ({ $count })
cronjobs-title = Cron jobs that missed their runs ({ $count })
col-schedule = Schedule
apiservices-title = Aggregated APIs not available
col-reason = Reason
col-message = Message
not-available = not available
hpas-title = Autoscalers ({ $count })
col-replicas-max = Replicas / max
hpa-at-max = at maxReplicas
hpa-cannot-scale = cannot scale
pdbs-title = Disruption budgets short of healthy pods ({ $count })
col-healthy = Healthy / needed
col-allowed = Disruptions allowed
quotas-title = Quotas 90% used or more ({ $count })
col-resource = Resource
col-used = Used / limit
quota-almost = almost full
quota-full = full: what needs more is refused
quota-exceeded = over its limit
volumes-title = Volumes in error ({ $count })
col-phase = Phase
hpa-mismatch = short of its desired { $desired }
not-granted = Not granted to this service account
    .optional = optional;
    .adds = adds them
optional-failed = Optional read failed
watch-not-granted = watch is not granted: read every interval
    .grants = grants it

## Requests and limits
capacity-title = Requests and limits against allocatable
capacity-busy-title = Nodes overcommitted or 90% requested ({ $count })
allocatable-unknown = allocatable unknown
col-cpu-used = CPU used
    .bar = CPU used
col-memory-used = Memory used
    .bar = memory used
col-cpu-requests = CPU requests
    .bar = CPU requests
col-cpu-limits = CPU limits
    .bar = CPU limits
col-memory-requests = Memory requests
    .bar = memory requests
col-memory-limits = Memory limits
    .bar = memory limits
col-overcommit = Overcommit
usage-bar = { $what }: { $percent }% of allocatable

## History
history-24h = History, last 24 hours
history-7d = History, last 7 days
range-24h = 24 hours
range-7d = 7 days
chart-nodes = Nodes ready
chart-pods = Pods by state
chart-crashlooping = Crash-looping pods
chart-events = Warning events in the last hour
chart-no-data = no data yet
series-nodes = nodes
series-ready = ready
series-running = running
series-pending = pending
series-failed = failed
series-crash-looping = crash-looping
series-warning-events = warning events
sparkline = restarts over 24 hours
    .range = restarts over 24 hours: { $min } to { $max }

demo-banner = Simulated cluster: this is DumbMonit's demo, no real cluster is watched.

## Silences, maintenance windows, acknowledgements
q-silences = Silences
q-silence = Silence
q-home = Silences live in Alertmanager { $name }: those made here are made there, and those made there (its UI, amtool, another replica) hold here too.
q-home-unread = Alertmanager's silences cannot be read.
    .kept = The silences last read from it stay in force.
q-no-silence = No silence.
q-page = { $from }–{ $to } of { $total }
q-previous = ‹ previous
q-next = next ›
q-not-applied-title = Alertmanager's silences not applied
q-not-applied = Not applied: too costly ({ $why })
q-col-matchers = Matchers
q-col-until = Until
q-col-by = By
q-col-comment = Comment
q-col-clusters = Clusters
q-state-pending = pending
q-state-active = active
q-state-expired = expired
q-state-scheduled = scheduled
q-no-end = no end
q-from-file = from the configuration file
q-edit = Edit
q-expire = Expire
q-new-silence = New silence
q-windows = Maintenance windows
q-no-window = No maintenance window.
q-for = for
q-end = End
q-new-window = New maintenance window
q-maintenance = Maintenance
q-matchers = Matchers, one a line (Alertmanager's syntax: name="value", name=~"regex", != and !~)
q-for-how-long = For (from now: 2h, 90m, 1d)
q-everything = Silence every alert these match, even if they match every alert of every cluster
q-silence-until = Silence until { $until }
q-new-end = Its new end is counted from now.
q-no-such-silence = No silence { $id } made on the pages or through the API.
q-not-expired = Not expired
q-no-such-alert = No alert { $print } now.
q-acknowledge = Acknowledge
    .meaning = Someone is on it: it is not escalated nor told again; the acknowledgement ends when the alert resolves. Other alerts are told as usual.
q-not-acknowledged = Not acknowledged
q-window-cluster = Cluster (a name, or clusters: {"{"}cluster=~"edge-.*"{"}"})
q-window-kinds = One-off: a start and an end (RFC 3339, such as 2026-12-06T02:00:00+01:00). Recurring: a cron schedule, its time zone and how long.
q-window-start = Start
q-window-end = End
q-window-schedule = Schedule (cron: minute hour day-of-month month day-of-week)
q-window-time-zone = Time zone (such as Europe/Paris; UTC when empty)
q-window-duration = Duration (2h, 90m)
q-not-ended = Not ended

## Why a change on the pages is refused, or what was entered is not kept
name-rule = up to 100 letters (a-z, A-Z), digits, '-', '_' and '.', not starting with '-', not only dots, and not "new"
form-error-read-only = This monitor is read-only: clusters are added in its configuration file. To add them here, give admins in the file's [auth.admin] section (bearer_token_file, or username with password_hash), then reload.
form-error-no-secret-key = The secret key (secret_key_file) could not be read or made, so tokens cannot be stored; the server's log says why.
form-error-not-admin = Adding, editing and removing clusters needs the admin role.
form-error-not-this-session = This form is not from this session (or it expired). Open the page again and send it from there.
form-error-from-the-file = Cluster { $name } comes from the configuration file: it is changed there, not on the pages.
form-error-not-added = No cluster named { $name } was added on the pages.
form-error-not-removed = Not removed: { $error }
form-error-name = Name: { $rule }
form-error-name-taken = Name: a cluster named { $name } is already watched
form-error-port = Port: a number from 1 to 65535 is expected
form-error-namespace = Namespaces: { $value } is not a namespace name (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit)
form-error-too-many-namespaces = Namespaces: { $count } namespaces; a cluster is read in at most { $most } (read the whole cluster instead)
form-error-namespaces-with-watch = Namespaces: namespaced access is read every interval, not followed by watch: untick one of them
form-error-no-address = Address: the API server's address is needed, for example https://k3s.lan:6443
form-error-address = Address: { $error }
form-error-duration = { $field }: a duration from { $range } is expected, such as 10s, 1m or 30
form-error-no-token-to-test = Service-account token: paste the token to test with
form-error-no-token-to-save = Service-account token: paste the token the cluster is read with
form-error-token-again = Service-account token: the address, port, CA or certificate choice changed, so the stored token is not sent: enter the token again
form-error-unsealable = The stored token cannot be unsealed: paste the token again
form-error-no-action = Choose Test or Save

## An agent's token, shown once
agent-for = Agent for { $name }
agent-run-this = Run this where kubectl reaches the cluster. The token is in it and is shown only now: it is stored sealed, and no page shows it again.
agent-page = The cluster's page
    .says = says when the agent's first report arrives.

## The help beside an error of the Test button (the error stays as the guide quotes it)
help-unauthorized = A token made by { $create } expires after an hour: use the token of the Secret that { $rbac } creates: { $get }.
help-forbidden = The service account may not read what the message names (403). Apply the read-only role again: { $apply } (and { $optional } for the optional reads).
help-unknown-authority = The cluster CA is missing, or it is not the one that signed the API server's certificate. Paste it as Cluster CA certificate: the { $file } of the token's Secret ({ $get }, base64 is fine), or on k3s { $k3s }.
help-wrong-name = The address { $host } is not among the names in the API server's certificate, which lists { $names }. Use one of those, or add the address to the certificate: on k3s, start the server with { $san }.
help-certificate-expired = The API server's certificate has expired or is not yet valid: check the clocks, and renew the certificate (k3s renews those that expire within 90 days when it restarts).
help-unreachable = Check the address and the port (6443 by default), and that this server can reach the API server.

## The rules as they are applied
rules-title = Rules
runbooks-title = Runbooks
rules-intro = Every built-in rule, its hold, its severity and what it reads, and the file's [[rule]] entries in force for it (the first whose matchers match an alert applies to it).
rules-col-for = Hold
rules-col-reads = Reads
rules-col-overrides = Tuned by the file
rules-off = off
rules-for = held { $for }
rules-escalate = warning after { $after }
rules-every-alert = every alert
rules-at-once = at once

## The notifiers' page
notifiers-title = Notifiers
notifiers-none = No notifier: alerts are shown here and told to no one.
col-notifier = Notifier
col-type = Type
col-where = Where
col-told = Told
col-sent = Sent
col-failed = Failed
col-refused = Refused
notifiers-told-all = every alert (it routes them itself)
notifiers-told-rest = what no notifier's matchers match
notifiers-told-severity = { $severity } and above
notifiers-each-change = each change alone
notifiers-grouped = grouped by { $labels }, told again every { $every }
notifiers-grouped-once = grouped by { $labels }, no reminders
notifiers-test = Send a test notification
notifiers-test-ok = { $name } took the test notification: { $answer }
notifiers-test-failed = { $name } did not take the test notification: { $error }
notifiers-no-such = No notifier is called { $name }.
