{{/*
Sidecar mode: named templates the RAG service's chart includes into its own pod spec.
Declare ragpulse as a dependency, set `ragpulse.mode: sidecar` in the parent's values and
call each template with the subchart's context, `.Subcharts.ragpulse`:

  template:
    metadata:
      labels:      {{- include "ragpulse.sidecar.podLabels" .Subcharts.ragpulse | nindent 8 }}
      annotations: {{- include "ragpulse.sidecar.podAnnotations" .Subcharts.ragpulse | nindent 8 }}
    spec:
      initContainers: {{- include "ragpulse.sidecar.initContainers" .Subcharts.ragpulse | nindent 8 }}
      containers:
        - name: app ...
        {{- include "ragpulse.sidecar.containers" .Subcharts.ragpulse | nindent 8 }}
      volumes: {{- include "ragpulse.sidecar.volumes" .Subcharts.ragpulse | nindent 8 }}

and, in the RAG service's own NetworkPolicy for those pods (this chart renders none in
sidecar mode: the pod and its policy belong to the RAG service):

  ingress: {{- include "ragpulse.sidecar.networkPolicyIngress" .Subcharts.ragpulse | nindent 4 }}

Exactly one of initContainers / containers renders the ragpulse container, chosen by
`sidecar.native`. Full example: helm/examples/rag-service.
*/}}

{{- define "ragpulse.sidecar.check" -}}
{{- if ne .Values.mode "sidecar" }}
{{- fail "the ragpulse.sidecar.* templates need the ragpulse subchart in sidecar mode: set ragpulse.mode=sidecar in the parent chart's values" }}
{{- end }}
{{- include "ragpulse.validate" . }}
{{- end }}

{{/* Native sidecar (Kubernetes >= 1.29): the container with restartPolicy: Always. */}}
{{- define "ragpulse.sidecar.initContainers" -}}
{{- include "ragpulse.sidecar.check" . }}
{{- if .Values.sidecar.native }}
{{- if not (semverCompare ">=1.29.0-0" .Capabilities.KubeVersion.Version) }}
{{- fail (printf "sidecar.native needs Kubernetes >= 1.29 (this cluster: %s): set ragpulse.sidecar.native=false for a classic sidecar container" .Capabilities.KubeVersion.Version) }}
{{- end }}
{{- include "ragpulse.container" (dict "ctx" . "sidecar" true) }}
{{- end }}
{{- end }}

{{/* Classic sidecar: a second entry in the pod's containers. */}}
{{- define "ragpulse.sidecar.containers" -}}
{{- include "ragpulse.sidecar.check" . }}
{{- if not .Values.sidecar.native }}
{{- include "ragpulse.container" (dict "ctx" . "sidecar" true) }}
{{- end }}
{{- end }}

{{- define "ragpulse.sidecar.volumes" -}}
{{- include "ragpulse.volumes" . }}
{{- end }}

{{/* Pod labels: the PodMonitor's default selector matches them (value: the release). */}}
{{- define "ragpulse.sidecar.podLabels" -}}
{{ include "ragpulse.sidecarLabelKey" . }}: {{ .Release.Name | quote }}
{{- end }}

{{/* Pod annotations: roll the pods when the ragpulse config changes. */}}
{{- define "ragpulse.sidecar.podAnnotations" -}}
checksum/ragpulse-config: {{ include "ragpulse.configChecksum" . }}
{{- end }}

{{/* Ingress rules for the ragpulse ports (networkPolicy.metrics / admin / extraIngress),
for the RAG service's own NetworkPolicy: a YAML list to append to its `ingress`. */}}
{{- define "ragpulse.sidecar.networkPolicyIngress" -}}
{{- include "ragpulse.sidecar.check" . }}
{{- include "ragpulse.networkPolicyIngress" . }}
{{- end }}
