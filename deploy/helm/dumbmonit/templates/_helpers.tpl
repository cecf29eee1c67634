{{/* The chart's name, the release's full name (the objects' names), and their labels. */}}
{{- define "dumbmonit.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "dumbmonit.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The workload's name: the full name for serve, FULLNAME-agent for the agent (as the kustomize
bases name them). */}}
{{- define "dumbmonit.workload" -}}
{{- if eq .Values.mode "agent" -}}
{{- printf "%s-agent" (include "dumbmonit.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- include "dumbmonit.fullname" . -}}
{{- end -}}
{{- end -}}

{{- define "dumbmonit.selectorLabels" -}}
app.kubernetes.io/name: {{ include "dumbmonit.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ .Values.mode }}
{{- end -}}

{{- define "dumbmonit.labels" -}}
{{ include "dumbmonit.selectorLabels" . }}
app.kubernetes.io/part-of: dumbmonit
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "dumbmonit.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "dumbmonit.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: with serviceAccount.create false, name the ServiceAccount the pod runs as" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "dumbmonit.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The Secret and key of the admin's password. */}}
{{- define "dumbmonit.adminSecret" -}}
{{- $e := .Values.admin.existingSecret -}}
{{- if $e.name -}}
{{- $e.name -}}
{{- else -}}
{{- printf "%s-admin" (include "dumbmonit.fullname" .) -}}
{{- end -}}
{{- end -}}
{{- define "dumbmonit.adminSecretKey" -}}
{{- default "password" .Values.admin.existingSecret.key -}}
{{- end -}}

{{/* The agent token's Secret and key. */}}
{{- define "dumbmonit.agentSecret" -}}
{{- $e := .Values.agent.existingSecret -}}
{{- if $e.name -}}
{{- $e.name -}}
{{- else -}}
{{- printf "%s-agent" (include "dumbmonit.fullname" .) -}}
{{- end -}}
{{- end -}}
{{- define "dumbmonit.agentSecretKey" -}}
{{- default "agent.token" .Values.agent.existingSecret.key -}}
{{- end -}}

{{/* Refusals that the schema cannot say: each names the value and says why. Included by every
workload template, so that nothing is rendered (nor installed) when one applies. */}}
{{- define "dumbmonit.validate" -}}
{{- $v := .Values -}}
{{- range $field, $ref := dict "admin.existingSecret" $v.admin.existingSecret "agent.existingSecret" $v.agent.existingSecret -}}
{{- if and $ref.name (not $ref.key) -}}
{{- fail (printf "%s.key: name the key of Secret %q that holds the value (%s.name is set, its key is not)" $field $ref.name $field) -}}
{{- end -}}
{{- if and $ref.key (not $ref.name) -}}
{{- fail (printf "%s.name: name the Secret that holds key %q (%s.key is set, the Secret is not)" $field $ref.key $field) -}}
{{- end -}}
{{- end -}}
{{- if and $v.rbac.watch $v.rbac.namespaces -}}
{{- fail "rbac.watch: namespaced access (rbac.namespaces) is read by lists, never watched, as `dumbmonit rbac --namespace` refuses --watch" -}}
{{- end -}}
{{- if and (eq $v.mode "agent") $v.agent.watch $v.rbac.create (not $v.rbac.watch) -}}
{{- fail "agent.watch: watch mode needs the watch verb: set rbac.watch to true as well" -}}
{{- end -}}
{{- if and $v.admin.enabled (not $v.existingConfigSecret) (hasKey (default dict $v.config.auth) "admin") -}}
{{- fail "config.auth.admin: the chart writes it from admin.* (admin.enabled is true); set admin.enabled to false to write your own" -}}
{{- end -}}
{{- if and $v.podDisruptionBudget.enabled (not (kindIs "invalid" $v.podDisruptionBudget.minAvailable)) -}}
{{- if not (kindIs "invalid" $v.podDisruptionBudget.maxUnavailable) -}}
{{- fail "podDisruptionBudget.minAvailable: give minAvailable or maxUnavailable, not both (set maxUnavailable to null)" -}}
{{- end -}}
{{- if and (not (kindIs "string" $v.podDisruptionBudget.minAvailable)) (ge (int $v.podDisruptionBudget.minAvailable) (int $v.replicaCount)) -}}
{{- fail (printf "podDisruptionBudget.minAvailable: %d of %d replicas would block every node drain" (int $v.podDisruptionBudget.minAvailable) (int $v.replicaCount)) -}}
{{- end -}}
{{- end -}}
{{- if and $v.ingress.enabled (not $v.ingress.hosts) -}}
{{- fail "ingress.hosts: ingress.enabled needs at least one host (- host: dumbmonit.example.com)" -}}
{{- end -}}
{{- if eq $v.mode "serve" -}}
{{- range $key := list "listen" "state_dir" -}}
{{- if and (not $v.existingConfigSecret) (hasKey $v.config $key) -}}
{{- fail (printf "config.%s: the chart sets it (the pod's port 8080 and its state volume); leave it out" $key) -}}
{{- end -}}
{{- end -}}
{{- if and $v.state.url $v.existingConfigSecret -}}
{{- fail "state.url: the chart writes [state] into its configuration; with existingConfigSecret, write it in your file" -}}
{{- end -}}
{{- if and $v.state.url (hasKey $v.config "secret_key_file") -}}
{{- fail "config.secret_key_file: with state.url the chart sets it (one key, shared by the replicas, in the Secret RELEASE-secret-key); leave it out" -}}
{{- end -}}
{{- if and $v.state.existingSecret.name (not $v.state.existingSecret.key) -}}
{{- fail (printf "state.existingSecret.key: name the key of Secret %q that holds the password" $v.state.existingSecret.name) -}}
{{- end -}}
{{- if and (gt (int $v.replicaCount) 1) (not $v.state.url) -}}
{{- $alertmanager := false -}}
{{- range $n := (default list $v.config.notifier) -}}
{{- if eq (toString (get $n "type")) "alertmanager" -}}{{- $alertmanager = true -}}{{- end -}}
{{- end -}}
{{- if and (not $alertmanager) (not $v.existingConfigSecret) -}}
{{- fail (printf "replicaCount: %d replicas would each send every notification: give config.notifier an Alertmanager (type = \"alertmanager\"), which deduplicates them, or keep one replica" (int $v.replicaCount)) -}}
{{- end -}}
{{- range $n := (default list $v.config.notifier) -}}
{{- if ne (toString (get $n "type")) "alertmanager" -}}
{{- fail (printf "replicaCount: %d replicas would each post to the %s notifier %q: with replicas, notify through Alertmanager only" (int $v.replicaCount) (toString (get $n "type")) (toString (default (get $n "type") (get $n "name")))) -}}
{{- end -}}
{{- end -}}
{{- if include "dumbmonit.admin" $ -}}
{{- fail (printf "replicaCount: %d replicas each have their own sessions and clusters added on the pages: set admin.enabled to false (keep the clusters in config) or keep one replica" (int $v.replicaCount)) -}}
{{- end -}}
{{- if $v.persistence.enabled -}}
{{- fail (printf "replicaCount: %d replicas need a state each, and the chart's claim is one: set persistence.enabled to false (each replica keeps its state in its pod, docs/scale.md) or keep one replica" (int $v.replicaCount)) -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- if not $v.agent.servers -}}
{{- fail "agent.servers: mode agent needs the URL of at least one DumbMonit server" -}}
{{- end -}}
{{- if and (not $v.agent.token) (not $v.agent.existingSecret.name) -}}
{{- fail "agent.token: mode agent needs its agent token (agent.token, or agent.existingSecret.name and .key)" -}}
{{- end -}}
{{- if gt (int $v.replicaCount) 1 -}}
{{- fail (printf "replicaCount: %d agents would push the same cluster %d times; an agent is one replica (give agent.servers several servers instead)" (int $v.replicaCount) (int $v.replicaCount)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* serve's configuration file: `config` with what the chart adds. */}}
{{- define "dumbmonit.configToml" -}}
{{- $v := .Values -}}
{{- $c := deepCopy $v.config -}}
{{- $fullname := include "dumbmonit.fullname" . -}}
{{- $_ := set $c "listen" "0.0.0.0:8080" -}}
{{- $_ := set $c "state_dir" "/var/lib/dumbmonit" -}}
{{- if $v.state.url -}}
{{- $state := dict "url" $v.state.url "sslmode" $v.state.sslmode "lease" $v.state.lease -}}
{{- if $v.state.existingSecret.name -}}{{- $_ := set $state "password_file" "/etc/dumbmonit/state/password" -}}{{- end -}}
{{- if $v.state.caSecret.name -}}{{- $_ := set $state "ca_file" "/etc/dumbmonit/state/ca.crt" -}}{{- end -}}
{{- $_ := set $c "state" $state -}}
{{- $_ := set $c "secret_key_file" "/etc/dumbmonit/secret-key/secret.key" -}}
{{- end -}}
{{- if $v.inCluster -}}
{{- $local := dict "name" $v.inClusterName "in_cluster" true -}}
{{- if $v.rbac.namespaces -}}{{- $_ := set $local "namespaces" $v.rbac.namespaces -}}{{- end -}}
{{- if $v.rbac.watch -}}{{- $_ := set $local "watch" true -}}{{- end -}}
{{- if $v.inClusterNamespaceLabels -}}{{- $_ := set $local "namespace_labels" $v.inClusterNamespaceLabels -}}{{- end -}}
{{- $clusters := list $local -}}
{{- $_ := set $c "cluster" (concat $clusters (default list (get $c "cluster"))) -}}
{{- end -}}
{{- $hosts := list $fullname (printf "%s.%s" $fullname .Release.Namespace) (printf "%s.%s.svc" $fullname .Release.Namespace) (printf "%s.%s.svc.%s" $fullname .Release.Namespace $v.clusterDomain) -}}
{{- if $v.ingress.enabled -}}
{{- range $h := $v.ingress.hosts -}}{{- $hosts = append $hosts $h.host -}}{{- end -}}
{{- end -}}
{{- $_ := set $c "allowed_hosts" (uniq (concat (default list (get $c "allowed_hosts")) $hosts)) -}}
{{- if include "dumbmonit.admin" . -}}
{{- $auth := default dict (get $c "auth") -}}
{{- $_ := set $auth "admin" (dict "username" $v.admin.username "password_file" "/etc/dumbmonit/admin/password") -}}
{{- $_ := set $c "auth" $auth -}}
{{- end -}}
{{- /* Helm reads every number of a values file as a float: 30 would be written 30.0, which
serve's integer fields (a port, seconds) refuse. A whole number is written as an integer. */ -}}
{{- regexReplaceAll "(?m)^(\\s*[A-Za-z0-9_-]+ = -?[0-9]+)\\.0$" (toToml $c) "${1}" -}}
{{- end -}}

{{/* The TCP ports the pod must reach besides DNS: the API server's (443, 6443), the ports of the
URLs it sends to (serve: the notifiers' and heartbeats'; the agent: the servers'), the email
notifiers' SMTP ports (587, or 465 with starttls = false, unless given), and
networkPolicy.egressPorts. */}}
{{- define "dumbmonit.egressPorts" -}}
{{- $v := .Values -}}
{{- $urls := list -}}
{{- if eq $v.mode "agent" -}}
{{- $urls = $v.agent.servers -}}
{{- else if not $v.existingConfigSecret -}}
{{- range $n := (default list $v.config.notifier) -}}
{{- range $key := list "url" "heartbeat_url" -}}
{{- with get $n $key -}}{{- $urls = append $urls . -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $ports := list 443 6443 -}}
{{- range $u := $urls -}}
{{- $url := urlParse (toString $u) -}}
{{- $port := regexFind "[0-9]+$" (regexFind ":[0-9]+$" $url.host) -}}
{{- if $port -}}{{- $ports = append $ports (atoi $port) -}}
{{- else if eq $url.scheme "http" -}}{{- $ports = append $ports 80 -}}
{{- end -}}
{{- end -}}
{{- if and (eq $v.mode "serve") (not $v.existingConfigSecret) -}}
{{- range $n := (default list $v.config.notifier) -}}
{{- if eq (toString (get $n "type")) "email" -}}
{{- $smtps := eq (toString (get $n "starttls")) "false" -}}
{{- $ports = append $ports (int (default (ternary 465 587 $smtps) (get $n "port"))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (eq $v.mode "serve") $v.state.url -}}
{{- $db := urlParse $v.state.url -}}
{{- $port := regexFind "[0-9]+$" (regexFind ":[0-9]+$" $db.host) -}}
{{- $ports = append $ports (ternary (atoi $port) 5432 (ne $port "")) -}}
{{- end -}}
{{- range $p := $v.networkPolicy.egressPorts -}}{{- $ports = append $ports (int $p) -}}{{- end -}}
{{- toJson (uniq $ports) -}}
{{- end -}}

{{/* "true" when the chart writes the administrator (admin.enabled, with its own configuration). */}}
{{- define "dumbmonit.admin" -}}
{{- if and .Values.admin.enabled (not .Values.existingConfigSecret) -}}true{{- end -}}
{{- end -}}
