{{/* The objects' name: the release's when it contains the chart's. */}}
{{- define "kreact.fullname" -}}
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

{{/* The pods' labels, and the selectors': two releases never select each other's pods. */}}
{{- define "kreact.selectorLabels" -}}
app.kubernetes.io/name: {{ default .Chart.Name .Values.nameOverride }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kreact.labels" -}}
{{ include "kreact.selectorLabels" . }}
app.kubernetes.io/part-of: kreact
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ include "kreact.tag" . | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "kreact.tag" -}}
{{- default .Chart.AppVersion .Values.image.tag -}}
{{- end -}}

{{- define "kreact.caSecret" -}}
{{- default (printf "%s-admission-ca" (include "kreact.fullname" .)) .Values.admission.caSecret -}}
{{- end -}}

{{/* The command that prints rbac.generated for these values. */}}
{{- define "kreact.rbacCommand" -}}
kreact rbac -f RULES --name {{ include "kreact.fullname" . }} --namespace {{ .Release.Namespace }} --create-namespace=false
{{- if .Values.leaderElection.enabled }} --leader-elect{{ end }}
{{- if .Values.shards.enabled }} --shards{{ end }}
{{- if and .Values.admission.enabled (not .Values.admission.certManager.enabled) }} --admission-ca-secret {{ include "kreact.caSecret" . }}{{ end }}
{{- end -}}

{{/* Values that the schema cannot refuse on its own. */}}
{{- define "kreact.validate" -}}
{{- if and .Values.leaderElection.enabled .Values.shards.enabled -}}
{{- fail "leaderElection.enabled and shards.enabled exclude each other, as --leader-elect and --shards do: set leaderElection.enabled=false with shards" -}}
{{- end -}}
{{- if not .Values.rules -}}
{{- fail "no rule: give at least one rule file with --set-file rules.NAME=FILE (see the chart's README)" -}}
{{- end -}}
{{- if and .Values.rbac.create (not .Values.rbac.generated) -}}
{{- fail (printf "rbac.generated is empty: Helm cannot read the rules' scripts, so run\n  %s > rbac.yaml\nand pass --set-file rbac.generated=rbac.yaml (or rbac.create=false to apply the RBAC yourself)" (include "kreact.rbacCommand" .)) -}}
{{- end -}}
{{- end -}}
