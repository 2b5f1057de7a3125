// What the API shows of an alert, a run and a delivery. A key lacking a scope the alert's output
// needs (access/output-scopes.ts) sees the alert with what it gathered redacted: those fields null,
// and `redacted` naming the missing scopes and the fields.
import { missingScopes, outputScopesOf } from '../access/output-scopes';
import type { DeliveryRow, RunRow } from '../runs/runs.repo';
import type { AlertRow } from './alerts.repo';

/** The fields that can carry what an alert gathered, by where they are shown. */
export const REDACTED_ALERT_FIELDS = ['state.last_value'] as const;
export const REDACTED_RUN_FIELDS = ['runs[].subject', 'runs[].compose_note', 'runs[].deliveries[].error'] as const;

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** An alert as a key holding `scopes` may see it. */
export function presentAlert(a: AlertRow, scopes: readonly string[]) {
  const output = outputScopesOf(a);
  const missing = missingScopes(output, scopes);
  return {
    id: a.id,
    name: a.name,
    template_id: a.template_id,
    status: a.status,
    status_reason: a.status_reason,
    spec: a.spec,
    website_id: a.website_id,
    timezone: a.timezone,
    currency: a.currency,
    state: {
      firing: a.firing,
      last_evaluated_at: iso(a.last_evaluated_at),
      last_value: missing.length > 0 ? null : a.last_value,
      next_run_at: a.status === 'active' ? iso(a.next_run_at) : null,
    },
    created_at: a.created_at.toISOString(),
    updated_at: a.updated_at.toISOString(),
    output_scopes: output,
    redacted: missing.length > 0 ? { missing_scopes: missing, fields: [...REDACTED_ALERT_FIELDS] as string[] } : null,
  };
}

/** An alert with its recent runs, as a key holding `scopes` may see them. */
export function presentAlertDetail(a: AlertRow, runs: readonly { run: RunRow; deliveries: DeliveryRow[] }[], scopes: readonly string[]) {
  const alert = presentAlert(a, scopes);
  const redacted = alert.redacted ? { ...alert.redacted, fields: [...REDACTED_ALERT_FIELDS, ...REDACTED_RUN_FIELDS] } : null;
  return { ...alert, redacted, runs: runs.map((r) => presentRun(r.run, r.deliveries, redacted !== null)) };
}

/** `redact`: the error text, which can quote what a server made of the message, is withheld. */
export function presentDelivery(d: DeliveryRow, redact: boolean) {
  return {
    id: d.id,
    channel: d.channel,
    to: d.recipient,
    status: d.status,
    attempts: d.attempts,
    error: redact ? null : d.last_error,
    next_attempt_at: d.status === 'queued' ? d.next_attempt_at.toISOString() : null,
    sent_at: iso(d.sent_at),
  };
}

export function presentRun(run: RunRow, deliveries: DeliveryRow[], redact: boolean) {
  return {
    id: run.id,
    started_at: run.started_at.toISOString(),
    finished_at: iso(run.finished_at),
    status: run.status,
    test: run.test,
    trigger: run.trigger,
    subject: redact ? null : run.message.subject,
    composed_by: run.composed_by,
    compose_note: redact ? null : run.compose_note,
    link: run.link,
    deliveries: deliveries.map((d) => presentDelivery(d, redact)),
  };
}
