{{/*
The ragpulse container, shared by the standalone Deployment and the sidecar templates.
Call with (dict "ctx" <ragpulse chart context> "sidecar" <bool>); renders one list item.
*/}}
{{- define "ragpulse.container" -}}
{{- $ := .ctx }}
{{- $sidecar := .sidecar }}
{{- $port := include "ragpulse.httpPort" $ | int }}
{{- $p := $.Values.probes -}}
- name: ragpulse
  image: {{ include "ragpulse.image" $ | quote }}
  imagePullPolicy: {{ $.Values.image.pullPolicy }}
  {{- if and $sidecar $.Values.sidecar.native }}
  restartPolicy: Always
  {{- end }}
  args: ["run"]
  ports:
    - name: ragpulse-http
      containerPort: {{ $port }}
      protocol: TCP
    {{- with include "ragpulse.adminPort" $ }}
    # admin actions (bearer token); reachable from the network only if admin.host is not loopback
    - name: ragpulse-admin
      containerPort: {{ . }}
      protocol: TCP
    {{- end }}
  env:
    - name: RAGPULSE_CONFIG
      value: /etc/ragpulse/config.yaml
    # faust's data directory defaults to the working directory; the root fs is read-only
    - name: FAUST_DATADIR
      value: /tmp/ragpulse-data
    {{- with $.Values.secrets }}
    {{- if .kafkaSaslPasswordKey }}
    - name: RAGPULSE_KAFKA__SASL_PASSWORD
      valueFrom:
        secretKeyRef:
          name: {{ .existingSecret | quote }}
          key: {{ .kafkaSaslPasswordKey | quote }}
    {{- end }}
    {{- if .judgeApiKeyKey }}
    - name: RAGPULSE_JUDGE__API_KEY
      valueFrom:
        secretKeyRef:
          name: {{ .existingSecret | quote }}
          key: {{ .judgeApiKeyKey | quote }}
    {{- end }}
    {{- /* secret judge headers / query parameters: each from a Secret key into its own
    variable, named in RAGPULSE_JUDGE__HEADERS_FROM_ENV / _QUERY_FROM_ENV (values never here) */}}
    {{- range $kind, $items := dict "HEADER" (.judgeHeaders | default list) "QUERY" (.judgeQuery | default list) }}
    {{- if $items }}
    {{- $names := dict }}
    {{- range $i, $item := $items }}
    {{- $var := printf "RAGPULSE_JUDGE_%s_%d" $kind $i }}
    {{- $_ := set $names (ternary $item.header $item.param (eq $kind "HEADER")) $var }}
    - name: {{ $var }}
      valueFrom:
        secretKeyRef:
          name: {{ $item.secretName | default $.Values.secrets.existingSecret | quote }}
          key: {{ $item.key | quote }}
    {{- end }}
    - name: {{ ternary "RAGPULSE_JUDGE__HEADERS_FROM_ENV" "RAGPULSE_JUDGE__QUERY_FROM_ENV" (eq $kind "HEADER") }}
      value: {{ $names | toJson | quote }}
    {{- end }}
    {{- end }}
    {{- if .adminTokenKey }}
    - name: RAGPULSE_SERVER__ADMIN__TOKEN
      valueFrom:
        secretKeyRef:
          name: {{ include "ragpulse.adminTokenSecret" $ | quote }}
          key: {{ .adminTokenKey | quote }}
    {{- end }}
    {{- end }}
    {{- with $.Values.extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $.Values.extraEnvFrom }}
  envFrom:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if or (not $sidecar) $.Values.sidecar.startupProbe }}
  startupProbe:
    httpGet:
      path: /healthz
      port: ragpulse-http
    periodSeconds: {{ $p.startup.periodSeconds }}
    timeoutSeconds: {{ $p.startup.timeoutSeconds }}
    failureThreshold: {{ $p.startup.failureThreshold }}
  {{- end }}
  livenessProbe:
    httpGet:
      path: /healthz
      port: ragpulse-http
    periodSeconds: {{ $p.liveness.periodSeconds }}
    timeoutSeconds: {{ $p.liveness.timeoutSeconds }}
    failureThreshold: {{ $p.liveness.failureThreshold }}
  {{- if or (not $sidecar) $.Values.sidecar.readinessProbe }}
  readinessProbe:
    httpGet:
      path: /readyz
      port: ragpulse-http
    periodSeconds: {{ $p.readiness.periodSeconds }}
    timeoutSeconds: {{ $p.readiness.timeoutSeconds }}
    failureThreshold: {{ $p.readiness.failureThreshold }}
  {{- end }}
  resources:
    {{- toYaml $.Values.resources | nindent 4 }}
  securityContext:
    {{- toYaml $.Values.securityContext | nindent 4 }}
  volumeMounts:
    - name: ragpulse-config
      mountPath: /etc/ragpulse
      readOnly: true
    - name: ragpulse-tmp
      mountPath: /tmp
    {{- with $.Values.extraVolumeMounts }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}

{{/* The volumes the container mounts: the config ConfigMap and the /tmp emptyDir. */}}
{{- define "ragpulse.volumes" -}}
- name: ragpulse-config
  configMap:
    name: {{ include "ragpulse.fullname" . }}
- name: ragpulse-tmp
  {{- $tmp := dict }}
  {{- with .Values.tmpDir.medium }}{{ $_ := set $tmp "medium" . }}{{ end }}
  {{- with .Values.tmpDir.sizeLimit }}{{ $_ := set $tmp "sizeLimit" . }}{{ end }}
  emptyDir: {{- toYaml $tmp | nindent 4 }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}
