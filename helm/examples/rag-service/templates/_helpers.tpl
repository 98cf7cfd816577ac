{{- define "rag-service.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "rag-service.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "rag-service.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{ include "rag-service.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Pod grace period. Native sidecars are stopped after the app container has exited, inside
the same grace period, so the drain times add up; classic sidecars get SIGTERM together
with the app, so the longer one is enough.
*/}}
{{- define "rag-service.terminationGracePeriodSeconds" -}}
{{- $app := .Values.terminationGracePeriodSeconds | int }}
{{- $ragpulse := include "ragpulse.terminationGracePeriodSeconds" .Subcharts.ragpulse | int }}
{{- if .Values.ragpulse.sidecar.native }}
{{- add $app $ragpulse }}
{{- else }}
{{- max $app $ragpulse }}
{{- end }}
{{- end }}
