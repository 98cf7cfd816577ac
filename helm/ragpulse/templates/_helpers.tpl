{{/* Names, labels and derived values shared by every template. */}}

{{- define "ragpulse.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ragpulse.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ragpulse.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ragpulse.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ragpulse.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "ragpulse.labels" -}}
helm.sh/chart: {{ include "ragpulse.chart" . }}
{{ include "ragpulse.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: {{ .Values.mode }}
{{- end }}

{{- define "ragpulse.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ragpulse.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ragpulse.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/* The HTTP port ragpulse listens on (config.server.port, default 9108). */}}
{{- define "ragpulse.httpPort" -}}
{{- dig "server" "port" 9108 (.Values.config | default dict) | int }}
{{- end }}

{{/* "true" when the admin actions are on (config.server.admin.enabled), else "". */}}
{{- define "ragpulse.adminEnabled" -}}
{{- if dig "server" "admin" "enabled" false (.Values.config | default dict) }}true{{ end }}
{{- end }}

{{/* The separate admin port (config.server.admin.port) when the actions are on and have
one; "" when they are off or share the metrics port. */}}
{{- define "ragpulse.adminPort" -}}
{{- if include "ragpulse.adminEnabled" . }}
{{- $port := dig "server" "admin" "port" nil (.Values.config | default dict) }}
{{- if not (kindIs "invalid" $port) }}{{ $port | int }}{{ end }}
{{- end }}
{{- end }}

{{/* The Secret holding the admin token: secrets.adminTokenSecret, else secrets.existingSecret. */}}
{{- define "ragpulse.adminTokenSecret" -}}
{{- .Values.secrets.adminTokenSecret | default .Values.secrets.existingSecret }}
{{- end }}

{{/* Namespaces allowed to scrape: networkPolicy.metrics.namespaceSelector when set, else the
namespace named networkPolicy.metrics.namespace, else ({}) every namespace. */}}
{{- define "ragpulse.metricsNamespaceSelector" -}}
{{- $m := .Values.networkPolicy.metrics }}
{{- if $m.namespaceSelector }}
{{- toYaml $m.namespaceSelector }}
{{- else if $m.namespace }}
matchLabels:
  kubernetes.io/metadata.name: {{ $m.namespace | quote }}
{{- else }}
{}
{{- end }}
{{- end }}

{{/*
NetworkPolicy ingress rules for the ragpulse ports (a YAML list): config.server.port from
networkPolicy.metrics, the admin actions (their own port, else the metrics port) from
networkPolicy.admin.from, then networkPolicy.extraIngress. Used by the standalone policy
and, in sidecar mode, by "ragpulse.sidecar.networkPolicyIngress".
*/}}
{{- define "ragpulse.networkPolicyIngress" -}}
{{- $np := .Values.networkPolicy }}
{{- $port := include "ragpulse.httpPort" . }}
- ports:
    - port: {{ $port }}
      protocol: TCP
  from:
    - namespaceSelector:
        {{- include "ragpulse.metricsNamespaceSelector" . | nindent 8 }}
      {{- with $np.metrics.podSelector }}
      podSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- if and (include "ragpulse.adminEnabled" .) $np.admin.from }}
- ports:
    - port: {{ include "ragpulse.adminPort" . | default $port }}
      protocol: TCP
  from:
    {{- toYaml $np.admin.from | nindent 4 }}
{{- end }}
{{- with $np.extraIngress }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The drain deadline after SIGTERM (config.shutdown_timeout_s, default 20). */}}
{{- define "ragpulse.shutdownTimeout" -}}
{{- dig "shutdown_timeout_s" 20 (.Values.config | default dict) | float64 }}
{{- end }}

{{/* terminationGracePeriodSeconds: explicit, else ceil(shutdown_timeout_s) + 10. */}}
{{- define "ragpulse.terminationGracePeriodSeconds" -}}
{{- $shutdown := include "ragpulse.shutdownTimeout" . | float64 }}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}
{{- add (ceil $shutdown | int) 10 }}
{{- else }}
{{- $grace := .Values.terminationGracePeriodSeconds | int }}
{{- if le ($grace | float64) $shutdown }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must exceed config.shutdown_timeout_s (%v): Kubernetes kills the container before ragpulse drains and commits" $grace $shutdown) }}
{{- end }}
{{- $grace }}
{{- end }}
{{- end }}

{{/* config.yaml as rendered into the ConfigMap (also hashed into a pod annotation). */}}
{{- define "ragpulse.configYaml" -}}
{{- $config := deepCopy (.Values.config | default dict) }}
{{- if eq .Values.mode "standalone" }}
{{- /* standalone: a stalled partition takes the replica out of readiness (not in sidecar
mode, where it would take the RAG pod out of its Service); an explicit value wins */}}
{{- $progress := get $config "progress" | default dict }}
{{- if not (hasKey $progress "readiness") }}
{{- $_ := set $progress "readiness" true }}
{{- end }}
{{- $_ := set $config "progress" $progress }}
{{- end }}
{{- if .Values.judgeCanaries }}
{{- /* the canary set from values, mounted with config.yaml; an explicit file wins */}}
{{- $judge := get $config "judge" | default dict }}
{{- $health := get $judge "health" | default dict }}
{{- $canaries := get $health "canaries" | default dict }}
{{- if not (get $canaries "file") }}
{{- $_ := set $canaries "file" "/etc/ragpulse/canaries.jsonl" }}
{{- end }}
{{- $_ := set $health "canaries" $canaries }}
{{- $_ := set $judge "health" $health }}
{{- $_ := set $config "judge" $judge }}
{{- end }}
{{- toYaml $config }}
{{- end }}

{{- define "ragpulse.configChecksum" -}}
{{- include "ragpulse.configYaml" . | sha256sum }}
{{- end }}

{{/* Label that marks a pod carrying the ragpulse sidecar (PodMonitor default selector). */}}
{{- define "ragpulse.sidecarLabelKey" -}}
ragpulse.io/sidecar
{{- end }}

{{/*
Paths under .path of .value (config.judge.backend, or the deprecated config.judge.options) that look like credentials, one a line:
a key named like one (case-insensitive, "-" as "_": authorization, cookie, password,
api_key, x-api-key, subscription-key, anything ending in _key or with secret, passwd,
credential or token in it, a part starting with auth; max_tokens is a count, not one) or
a literal "Bearer …" / "Basic …" value. The same rule as monitors/judges/settings.py.
*/}}
{{- define "ragpulse.credentialPaths" -}}
{{- $path := .path }}
{{- if kindIs "map" .value }}
{{- range $k, $v := .value }}
{{- $n := $k | toString | trim | lower | replace "-" "_" }}
{{- $hit := or (has $n (list "authorization" "proxy_authorization" "cookie" "key" "apikey" "password" "passwd")) (hasSuffix "_key" $n) (hasSuffix "apikey" $n) (contains "secret" $n) (contains "password" $n) (contains "passwd" $n) (contains "credential" $n) }}
{{- range splitList "_" $n }}
{{- if or (hasPrefix "auth" .) (and (contains "token" .) (ne . "tokens")) }}{{ $hit = true }}{{ end }}
{{- end }}
{{- if $hit }}
{{- printf "%s.%s\n" $path $k }}
{{- else }}
{{- include "ragpulse.credentialPaths" (dict "path" (printf "%s.%s" $path $k) "value" $v) }}
{{- end }}
{{- end }}
{{- else if kindIs "slice" .value }}
{{- range $i, $v := .value }}
{{- include "ragpulse.credentialPaths" (dict "path" (printf "%s.%d" $path $i) "value" $v) }}
{{- end }}
{{- else if kindIs "string" .value }}
{{- $s := .value | trim | lower }}
{{- if or (hasPrefix "bearer " $s) (hasPrefix "basic " $s) }}
{{- printf "%s\n" $path }}
{{- end }}
{{- end }}
{{- end }}

{{/* Fail early with a readable message on values the schema cannot express. */}}
{{- define "ragpulse.validate" -}}
{{- $config := .Values.config | default dict }}
{{- $kafka := get $config "kafka" | default dict }}
{{- $judge := get $config "judge" | default dict }}
{{- if and (kindIs "map" $kafka) (hasKey $kafka "sasl_password") }}
{{- fail "config.kafka.sasl_password must not be set in values: the chart never renders secrets. Put the password into a Secret and set secrets.existingSecret and secrets.kafkaSaslPasswordKey" }}
{{- end }}
{{- if and (kindIs "map" $judge) (hasKey $judge "api_key") }}
{{- fail "config.judge.api_key must not be set in values: the chart never renders secrets. Put the key into a Secret and set secrets.existingSecret and secrets.judgeApiKeyKey" }}
{{- end }}
{{- if kindIs "map" $judge }}
{{- $backend := get $judge "backend" | default dict }}
{{- $found := include "ragpulse.credentialPaths" (dict "path" "config.judge.options" "value" (get $judge "options" | default dict)) | trim }}
{{- if and (not $found) (kindIs "map" $backend) }}
{{- $found = include "ragpulse.credentialPaths" (dict "path" "config.judge.backend" "value" $backend) | trim }}
{{- end }}
{{- if $found }}
{{- fail (printf "%s looks like a credential (the value is not shown): the chart never renders secrets, and ragpulse refuses them in judge.backend. Put the value into a Secret and set secrets.judgeHeaders (a header, e.g. Azure's api-key), secrets.judgeQuery (a query parameter, e.g. subscription-key) or secrets.judgeApiKeyKey (the API key)" ($found | splitList "\n" | join ", ")) }}
{{- end }}
{{- end }}
{{- range $kind, $items := dict "judgeHeaders" (.Values.secrets.judgeHeaders | default list) "judgeQuery" (.Values.secrets.judgeQuery | default list) }}
{{- range $i, $item := $items }}
{{- if not (or $item.secretName $.Values.secrets.existingSecret) }}
{{- fail (printf "secrets.%s[%d] names a key of a Secret: set its secretName, or secrets.existingSecret" $kind $i) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and (or .Values.secrets.kafkaSaslPasswordKey .Values.secrets.judgeApiKeyKey) (not .Values.secrets.existingSecret) }}
{{- fail "secrets.kafkaSaslPasswordKey / secrets.judgeApiKeyKey name keys of a Secret: set secrets.existingSecret to its name" }}
{{- end }}
{{- $server := get $config "server" | default dict }}
{{- $admin := dict }}
{{- if kindIs "map" $server }}{{ $admin = get $server "admin" | default dict }}{{ end }}
{{- if and (kindIs "map" $admin) (hasKey $admin "token") }}
{{- fail "config.server.admin.token must not be set in values: the chart never renders secrets. Put the token into a Secret and set secrets.adminTokenKey (and secrets.adminTokenSecret or secrets.existingSecret)" }}
{{- end }}
{{- if and .Values.secrets.adminTokenKey (not (include "ragpulse.adminTokenSecret" .)) }}
{{- fail "secrets.adminTokenKey names a key of a Secret: set secrets.adminTokenSecret (or secrets.existingSecret) to its name" }}
{{- end }}
{{- if include "ragpulse.adminEnabled" . }}
{{- $fromEnv := false }}
{{- range .Values.extraEnv }}{{ if eq .name "RAGPULSE_SERVER__ADMIN__TOKEN" }}{{ $fromEnv = true }}{{ end }}{{ end }}
{{- if not (or .Values.secrets.adminTokenKey $fromEnv .Values.extraEnvFrom) }}
{{- fail "config.server.admin.enabled needs a bearer token: set secrets.adminTokenKey to its key in a Secret (secrets.adminTokenSecret, or secrets.existingSecret), which becomes RAGPULSE_SERVER__ADMIN__TOKEN" }}
{{- end }}
{{- if eq (include "ragpulse.adminPort" .) (include "ragpulse.httpPort" .) }}
{{- fail "config.server.admin.port must differ from config.server.port (leave it unset to serve the actions on the metrics port)" }}
{{- end }}
{{- end }}
{{- $_ := include "ragpulse.terminationGracePeriodSeconds" . }}
{{- if eq .Values.mode "standalone" }}
{{- $parts := .Values.inputTopicPartitions }}
{{- if not (kindIs "invalid" $parts) }}
{{- if gt (int .Values.replicaCount) (int $parts) }}
{{- fail (printf "replicaCount (%d) exceeds inputTopicPartitions (%d): consumers beyond the partition count stay idle" (int .Values.replicaCount) (int $parts)) }}
{{- end }}
{{- if and .Values.autoscaling.enabled (gt (int .Values.autoscaling.maxReplicas) (int $parts)) }}
{{- fail (printf "autoscaling.maxReplicas (%d) exceeds inputTopicPartitions (%d): consumers beyond the partition count stay idle" (int .Values.autoscaling.maxReplicas) (int $parts)) }}
{{- end }}
{{- end }}
{{- if and .Values.monitoring.serviceMonitor.enabled .Values.monitoring.podMonitor.enabled }}
{{- fail "enable monitoring.serviceMonitor or monitoring.podMonitor, not both: Prometheus would scrape every pod twice" }}
{{- end }}
{{- if and .Values.autoscaling.enabled (gt (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas)) }}
{{- fail "autoscaling.minReplicas must not exceed autoscaling.maxReplicas" }}
{{- end }}
{{- else if .Values.monitoring.serviceMonitor.enabled }}
{{- fail "monitoring.serviceMonitor needs mode=standalone (there is no ragpulse Service in sidecar mode): use monitoring.podMonitor" }}
{{- end }}
{{- end }}
