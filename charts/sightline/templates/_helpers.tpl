{{/*
Names, labels, the checks that stop a render with a clear message, and the shared pieces of every
Deployment.
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

{{/* Selector labels of one component's pods. Call with (dict "root" $ "name" $name). */}}
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

{{- /* The Secret key of the /metrics token: secrets.metricsTokenKey, "metrics-token" when secrets.metricsToken is a value, else none (scrapes then use the admin token). */}}
{{- define "sightline.metricsTokenKey" -}}
{{- if .Values.secrets.metricsTokenKey }}{{ .Values.secrets.metricsTokenKey }}{{- else if and .Values.secrets.metricsToken (not .Values.secrets.existingSecret) }}metrics-token{{- end }}
{{- end }}

{{- define "sightline.configMapName" -}}
{{- printf "%s-config" (include "sightline.fullname" .) }}
{{- end }}

{{/* Names of the objects rendered for managedStores (and of what their operators create). */}}
{{- define "sightline.pgClusterName" -}}
{{- printf "%s-pg" (include "sightline.fullname" .) }}
{{- end }}
{{- define "sightline.rabbitmqName" -}}
{{- printf "%s-rabbitmq" (include "sightline.fullname" .) }}
{{- end }}
{{/* Altinity names pods chi-<installation>-<cluster>-<shard>-<replica>-0: keep the name short. */}}
{{- define "sightline.clickhouseName" -}}
{{- printf "%s-ch" (include "sightline.fullname" . | trunc 30 | trimSuffix "-") }}
{{- end }}
{{- define "sightline.redisName" -}}
{{- printf "%s-redis" (include "sightline.fullname" .) }}
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

{{/* Whether a target seals credentials (CRM tokens, Slack bot tokens) and so gets SIGHTLINE_CREDENTIALS_KEY. */}}
{{- define "sightline.usesCredentialsKey" -}}
{{- if or (eq . "crm-sync") (eq . "automations") (eq . "all") }}true{{ end }}
{{- end }}

{{/* Whether this release runs a service that seals credentials (crm-sync, automations) in any form. */}}
{{- define "sightline.runsCrmSync" -}}
{{- if or .Values.embedded.enabled (index .Values.services "crm-sync").enabled .Values.services.automations.enabled }}true{{ end }}
{{- end }}

{{/* How one store is provided: "managed", "secretKeyRef", "url" or "" (none). Call with (list $ "amqp"). */}}
{{- define "sightline.storeSource" -}}
{{- $root := index . 0 }}
{{- $store := index . 1 }}
{{- $ext := index $root.Values.externalStores $store }}
{{- if (index $root.Values.managedStores $store).enabled }}managed
{{- else if $ext.secretKeyRef.name }}secretKeyRef
{{- else if $ext.url }}url
{{- end }}
{{- end }}

{{/*
Every rule the schema cannot express, checked once per render. Each failure says what to set.
*/}}
{{- define "sightline.validate" -}}
{{- $v := .Values }}
{{- /* Ingest replicas share the intake's partitions: more replicas than partitions would sit idle. */}}
{{- $ingest := index $v.services "ingest" }}
{{- if and $ingest $ingest.enabled (not $v.embedded.enabled) }}
{{- if gt (int $ingest.replicas) (int $v.config.busPartitions) }}
{{- fail (printf "services.ingest.replicas (%d) is more than config.busPartitions (%d): ingest replicas share the intake's partitions, so at most one replica per partition can work; raise config.busPartitions (with ingestion drained) or lower the replicas" (int $ingest.replicas) (int $v.config.busPartitions)) }}
{{- end }}
{{- if and $ingest.autoscaling.enabled (gt (int $ingest.autoscaling.maxReplicas) (int $v.config.busPartitions)) }}
{{- fail (printf "services.ingest.autoscaling.maxReplicas (%d) is more than config.busPartitions (%d): ingest replicas share the intake's partitions, so at most one replica per partition can work" (int $ingest.autoscaling.maxReplicas) (int $v.config.busPartitions)) }}
{{- end }}
{{- end }}
{{- $stores := list "amqp" "postgres" "clickhouse" "redis" }}
{{- /* Secrets: never generated, so they must come from values or from a Secret you manage. */}}
{{- if not $v.secrets.existingSecret }}
{{- range $field := list "adminToken" "cursorSecret" }}
{{- if not (index $v.secrets $field) }}
{{- fail (printf "secrets.%s is required (16+ characters, for example `openssl rand -hex 32`), or name a Secret you manage in secrets.existingSecret; the chart never generates secrets, so renders stay stable under helm template, Argo CD and Flux" $field) }}
{{- end }}
{{- end }}
{{- if and (include "sightline.runsCrmSync" .) (not $v.secrets.credentialsKey) }}
{{- fail "secrets.credentialsKey is required while crm-sync or automations runs (16+ characters, for example `openssl rand -hex 32`; keep it for the life of the install: CRM and Slack tokens are sealed under it), or name a Secret you manage in secrets.existingSecret" }}
{{- end }}
{{- end }}
{{- if $v.embedded.enabled }}
{{- range $store := $stores }}
{{- $ext := index $v.externalStores $store }}
{{- if or (index $v.managedStores $store).enabled $ext.url $ext.secretKeyRef.name }}
{{- fail (printf "embedded mode runs its own %s store: leave externalStores.%s and managedStores.%s unset, or set embedded.enabled=false" $store $store $store) }}
{{- end }}
{{- end }}
{{- else }}
{{- range $store := $stores }}
{{- $ext := index $v.externalStores $store }}
{{- $managed := (index $v.managedStores $store).enabled }}
{{- if and $managed (or $ext.url $ext.secretKeyRef.name) }}
{{- fail (printf "%s is set twice: use managedStores.%s.enabled or externalStores.%s, not both" $store $store $store) }}
{{- end }}
{{- if and $ext.secretKeyRef.name (not $ext.secretKeyRef.key) }}
{{- fail (printf "externalStores.%s.secretKeyRef.key is required with secretKeyRef.name" $store) }}
{{- end }}
{{- if and $ext.url (not $ext.secretKeyRef.name) $v.secrets.existingSecret }}
{{- fail (printf "externalStores.%s.url is kept in the chart's Secret, which is not created when secrets.existingSecret is set: put the URL in your Secret and use externalStores.%s.secretKeyRef" $store $store) }}
{{- end }}
{{- if not (include "sightline.storeSource" (list $ $store)) }}
{{- fail (printf "distributed mode needs a %s server: set externalStores.%s.url or externalStores.%s.secretKeyRef, or enable managedStores.%s (or run embedded.enabled=true)" $store $store $store $store) }}
{{- end }}
{{- end }}
{{- range $store := list "clickhouse" "redis" }}
{{- $m := index $v.managedStores $store }}
{{- if $m.enabled }}
{{- if and (not $m.existingSecret.name) (not $m.password) }}
{{- fail (printf "managedStores.%s needs a password: set managedStores.%s.password (URL-safe, 16+ characters) or managedStores.%s.existingSecret" $store $store $store) }}
{{- end }}
{{- if and $m.existingSecret.name (not $m.existingSecret.key) }}
{{- fail (printf "managedStores.%s.existingSecret.key is required with existingSecret.name" $store) }}
{{- end }}
{{- if and $m.password (not $m.existingSecret.name) $v.secrets.existingSecret }}
{{- fail (printf "managedStores.%s.password is kept in the chart's Secret, which is not created when secrets.existingSecret is set: use managedStores.%s.existingSecret" $store $store) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* A password of a managed store: the Secret and key holding it. Call with (list $ "redis"). */}}
{{- define "sightline.managedPasswordRef" -}}
{{- $root := index . 0 }}
{{- $store := index . 1 }}
{{- $m := index $root.Values.managedStores $store }}
{{- if $m.existingSecret.name }}
name: {{ $m.existingSecret.name }}
key: {{ $m.existingSecret.key }}
{{- else }}
name: {{ include "sightline.secretName" $root }}
key: {{ $store }}-password
{{- end }}
{{- end }}

{{/*
The bus and store URLs of a distributed process, as env entries. A URL built from an operator's
or a managed store's password reads the password into a helper variable first; Kubernetes expands
$(VAR) in a later value of the same container.
*/}}
{{- define "sightline.storeEnv" -}}
{{- $root := . }}
{{- $ns := .Release.Namespace }}
{{- range $store, $env := dict "amqp" "SIGHTLINE_AMQP_URL" "postgres" "SIGHTLINE_POSTGRES_URL" "clickhouse" "SIGHTLINE_CLICKHOUSE_URL" "redis" "SIGHTLINE_REDIS_URL" }}
{{- $source := include "sightline.storeSource" (list $root $store) }}
{{- $ext := index $root.Values.externalStores $store }}
{{- if eq $source "secretKeyRef" }}
- name: {{ $env }}
  valueFrom:
    secretKeyRef:
      name: {{ $ext.secretKeyRef.name }}
      key: {{ $ext.secretKeyRef.key }}
{{- else if eq $source "url" }}
- name: {{ $env }}
  valueFrom:
    secretKeyRef:
      name: {{ include "sightline.secretName" $root }}
      key: {{ $store }}-url
{{- else if and (eq $source "managed") (eq $store "postgres") }}
{{- /* CloudNativePG writes a complete connection URI for the database owner. */}}
- name: {{ $env }}
  valueFrom:
    secretKeyRef:
      name: {{ include "sightline.pgClusterName" $root }}-app
      key: uri
{{- else if and (eq $source "managed") (eq $store "amqp") }}
{{- /* The operator's default user; both values are URL-safe base64 it generates. */}}
{{- $name := include "sightline.rabbitmqName" $root }}
- name: RABBITMQ_USERNAME
  valueFrom:
    secretKeyRef:
      name: {{ $name }}-default-user
      key: username
- name: RABBITMQ_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $name }}-default-user
      key: password
- name: {{ $env }}
  value: {{ printf "amqp://$(RABBITMQ_USERNAME):$(RABBITMQ_PASSWORD)@%s.%s.svc:5672" $name $ns | quote }}
{{- else if and (eq $source "managed") (eq $store "clickhouse") }}
- name: CLICKHOUSE_PASSWORD
  valueFrom:
    secretKeyRef:
      {{- include "sightline.managedPasswordRef" (list $root "clickhouse") | trim | nindent 6 }}
- name: {{ $env }}
  value: {{ printf "http://%s:$(CLICKHOUSE_PASSWORD)@clickhouse-%s.%s.svc:8123" $root.Values.managedStores.clickhouse.username (include "sightline.clickhouseName" $root) $ns | quote }}
{{- else if and (eq $source "managed") (eq $store "redis") }}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      {{- include "sightline.managedPasswordRef" (list $root "redis") | trim | nindent 6 }}
- name: {{ $env }}
  value: {{ printf "redis://:$(REDIS_PASSWORD)@%s.%s.svc:6379" (include "sightline.redisName" $root) $ns | quote }}
{{- end }}
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
