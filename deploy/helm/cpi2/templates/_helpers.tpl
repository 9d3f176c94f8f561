{{/* Names and labels shared by every object of the chart. */}}
{{- define "cpi2.name" -}}
{{- printf "%s" .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{- define "cpi2.labels" -}}
app.kubernetes.io/name: cpi2
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The fields of the non-comment lines of a .conf file of the repository (files/ links to
     schemas/topics.conf and stack/kafka/acls.conf), one list of fields per line, as JSON. */}}
{{- define "cpi2.confRows" -}}
{{- $rows := list -}}
{{- range $line := splitList "\n" . -}}
{{- $l := trim (regexReplaceAll "#.*$" $line "") -}}
{{- if $l -}}
{{- $rows = append $rows (regexSplit "\\s+" $l -1) -}}
{{- end -}}
{{- end -}}
{{- toJson $rows -}}
{{- end -}}

{{/* The ClickHouse the schema job, the loader and Grafana use: its URL, and the Secret of its
     user's password. */}}
{{- define "cpi2.clickhouseURL" -}}
{{- if .Values.clickhouse.url -}}{{ .Values.clickhouse.url }}{{- else if .Values.clickhouse.enabled -}}http://{{ include "cpi2.name" . }}-clickhouse:8123{{- else -}}{{ fail "clickhouse.enabled is false and no clickhouse.url names an existing ClickHouse" }}{{- end -}}
{{- end -}}

{{- define "cpi2.clickhouseSecret" -}}
{{- .Values.clickhouse.passwordSecret | default (printf "%s-clickhouse" (include "cpi2.name" .)) -}}
{{- end -}}
