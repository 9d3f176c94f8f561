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
