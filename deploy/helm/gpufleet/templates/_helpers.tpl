{{/*
Names. Release "gpufleet" (what scripts/render-manifests uses) gives
gpufleet-agent, gpufleet-scheduler, gpufleet-metrics-api; another release name
gives <release>-gpufleet-agent etc.; fullnameOverride replaces the prefix.
*/}}
{{- define "gpufleet.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else if contains "gpufleet" .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-gpufleet" .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gpufleet.agent.name" -}}{{ include "gpufleet.fullname" . }}-agent{{- end -}}
{{- define "gpufleet.scheduler.name" -}}{{ include "gpufleet.fullname" . }}-scheduler{{- end -}}
{{- define "gpufleet.metricsApi.name" -}}{{ include "gpufleet.fullname" . }}-metrics-api{{- end -}}

{{/* The image, tag defaulting to the chart's appVersion. */}}
{{- define "gpufleet.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
Labels on every object. plainManifests (scripts/render-manifests) leaves out
the Helm-specific ones, since kubectl apply manages those files.
*/}}
{{- define "gpufleet.labels" -}}
app.kubernetes.io/part-of: gpufleet
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- if not .Values.plainManifests }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}
{{- end -}}

{{/* Selector labels of one component: include "gpufleet.selector" (list . "agent") */}}
{{- define "gpufleet.selector" -}}
{{- $ctx := index . 0 -}}
app.kubernetes.io/name: {{ include "gpufleet.fullname" $ctx }}-{{ index . 1 }}
{{- if not $ctx.Values.plainManifests }}
app.kubernetes.io/instance: {{ $ctx.Release.Name }}
{{- end }}
{{- end -}}

{{/*
Pod security context of a component: its own podSecurityContext when set
(it replaces the global one whole: no merging surprises with false values),
else the global podSecurityContext. include "gpufleet.podSecurityContext" (list . .Values.agent)
*/}}
{{- define "gpufleet.podSecurityContext" -}}
{{- $ctx := index . 0 -}}
{{- toYaml (default $ctx.Values.podSecurityContext (index . 1).podSecurityContext) -}}
{{- end -}}

{{/*
The ServiceAccount a component runs as and the chart's RBAC bindings name:
its serviceAccount.name, else the component's name, whether the chart creates
it (serviceAccount.create) or not; never the namespace's "default" account.
include "gpufleet.serviceAccountName" (list . "agent")
*/}}
{{- define "gpufleet.serviceAccountName" -}}
{{- $ctx := index . 0 -}}
{{- $c := index . 1 -}}
{{- default (include (printf "gpufleet.%s.name" $c) $ctx) (index $ctx.Values $c).serviceAccount.name -}}
{{- end -}}
