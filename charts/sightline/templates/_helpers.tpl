{{/*
Names, labels and the shared pieces of every Deployment.
*/}}

{{- define "sightline.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-scoped base name; per-service objects append "-<target>", so keep room for it. */}}
{{- define "sightline.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "sightline.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "sightline.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sightline.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "sightline.labels" -}}
helm.sh/chart: {{ include "sightline.chart" . }}
{{ include "sightline.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: sightline
{{- end }}

{{/* Selector labels of one service's pods. Call with (dict "root" $ "name" $name). */}}
{{- define "sightline.componentSelectorLabels" -}}
{{ include "sightline.selectorLabels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end }}

{{- define "sightline.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{- define "sightline.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "sightline.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "sightline.secretName" -}}
{{- default (printf "%s-secrets" (include "sightline.fullname" .)) .Values.secrets.existingSecret }}
{{- end }}

{{- define "sightline.configMapName" -}}
{{- printf "%s-config" (include "sightline.fullname" .) }}
{{- end }}

{{/*
The services this release runs, as name -> settings, written into the dict passed as .out:
every enabled entry of .Values.services, or the single "all" entry in embedded mode.
Usage: {{- $services := dict }}{{- $_ := include "sightline.collectServices" (dict "root" $ "out" $services) }}
*/}}
{{- define "sightline.collectServices" -}}
{{- if .root.Values.embedded.enabled }}
{{- $_ := set .out "all" .root.Values.embedded }}
{{- else }}
{{- range $name, $svc := .root.Values.services }}
{{- if $svc.enabled }}
{{- $_ := set $.out $name $svc }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* Whether a target serves the public API (and so gets the public port). */}}
{{- define "sightline.servesPublic" -}}
{{- if or (eq . "gateway") (eq . "all") }}true{{ end }}
{{- end }}

{{/*
Full name of a bundled Bitnami subchart, computed the way its common.names.fullname does.
Call with (list $ "postgresql").
*/}}
{{- define "sightline.depFullname" -}}
{{- $root := index . 0 }}
{{- $chart := index . 1 }}
{{- $vals := index $root.Values $chart }}
{{- if $vals.fullnameOverride }}
{{- $vals.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default $chart $vals.nameOverride }}
{{- if contains $name $root.Release.Name }}
{{- $root.Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" $root.Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
One store URL variable for a store outside the chart: a key in a Secret of the operator's, or the
url value kept in this chart's Secret under "<store>-url", or nothing (embedded driver).
Call with (dict "root" $ "store" "amqp" "env" "SIGHTLINE_AMQP_URL").
*/}}
{{- define "sightline.externalStoreEnv" -}}
{{- $ext := index .root.Values.externalStores .store }}
{{- if $ext.secretKeyRef.name }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ $ext.secretKeyRef.name }}
      key: {{ $ext.secretKeyRef.key }}
{{- else if $ext.url }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ include "sightline.secretName" .root }}
      key: {{ .store }}-url
{{- end }}
{{- end }}

{{/*
The bus and store URLs. For a bundled subchart the password comes from the subchart's Secret into
a helper variable first, and Kubernetes expands $(VAR) in the URL that follows it, so generated
passwords work without copying them into values. Generated Bitnami passwords are alphanumeric and
need no URL escaping; escape any password you set yourself.
*/}}
{{- define "sightline.storeEnv" -}}
{{- $root := . }}
{{- if .Values.rabbitmq.enabled }}
{{- $auth := .Values.rabbitmq.auth }}
- name: RABBITMQ_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ default (include "sightline.depFullname" (list $root "rabbitmq")) $auth.existingPasswordSecret }}
      key: {{ default "rabbitmq-password" $auth.existingSecretPasswordKey }}
- name: SIGHTLINE_AMQP_URL
  value: {{ printf "amqp://%s:$(RABBITMQ_PASSWORD)@%s:5672" $auth.username (include "sightline.depFullname" (list $root "rabbitmq")) | quote }}
{{- else }}
{{- include "sightline.externalStoreEnv" (dict "root" $root "store" "amqp" "env" "SIGHTLINE_AMQP_URL") }}
{{- end }}
{{- if .Values.postgresql.enabled }}
{{- $auth := .Values.postgresql.auth }}
- name: POSTGRES_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ default (include "sightline.depFullname" (list $root "postgresql")) $auth.existingSecret }}
      key: {{ (($auth.secretKeys | default dict).userPasswordKey) | default "password" }}
- name: SIGHTLINE_POSTGRES_URL
  value: {{ printf "postgres://%s:$(POSTGRES_PASSWORD)@%s:5432/%s" $auth.username (include "sightline.depFullname" (list $root "postgresql")) $auth.database | quote }}
{{- else }}
{{- include "sightline.externalStoreEnv" (dict "root" $root "store" "postgres" "env" "SIGHTLINE_POSTGRES_URL") }}
{{- end }}
{{- if .Values.clickhouse.enabled }}
{{- $auth := .Values.clickhouse.auth }}
- name: CLICKHOUSE_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ default (include "sightline.depFullname" (list $root "clickhouse")) $auth.existingSecret }}
      key: {{ default "admin-password" $auth.existingSecretKey }}
- name: SIGHTLINE_CLICKHOUSE_URL
  value: {{ printf "http://%s:$(CLICKHOUSE_PASSWORD)@%s:8123" $auth.username (include "sightline.depFullname" (list $root "clickhouse")) | quote }}
{{- else }}
{{- include "sightline.externalStoreEnv" (dict "root" $root "store" "clickhouse" "env" "SIGHTLINE_CLICKHOUSE_URL") }}
{{- end }}
{{- if .Values.redis.enabled }}
{{- $auth := .Values.redis.auth }}
{{- $host := printf "%s-master" (include "sightline.depFullname" (list $root "redis")) }}
{{- if $auth.enabled }}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ default (include "sightline.depFullname" (list $root "redis")) $auth.existingSecret }}
      key: {{ default "redis-password" $auth.existingSecretPasswordKey }}
- name: SIGHTLINE_REDIS_URL
  value: {{ printf "redis://:$(REDIS_PASSWORD)@%s:6379" $host | quote }}
{{- else }}
- name: SIGHTLINE_REDIS_URL
  value: {{ printf "redis://%s:6379" $host | quote }}
{{- end }}
{{- else }}
{{- include "sightline.externalStoreEnv" (dict "root" $root "store" "redis" "env" "SIGHTLINE_REDIS_URL") }}
{{- end }}
{{- end }}

{{/* Grace period: preStop sleep + the process's own drain deadline + margin, unless set. */}}
{{- define "sightline.terminationGracePeriodSeconds" -}}
{{- if .Values.lifecycle.terminationGracePeriodSeconds }}
{{- .Values.lifecycle.terminationGracePeriodSeconds }}
{{- else }}
{{- add (int .Values.lifecycle.preStopSleepSeconds) (div (int .Values.config.shutdownTimeoutMs) 1000) 10 }}
{{- end }}
{{- end }}
