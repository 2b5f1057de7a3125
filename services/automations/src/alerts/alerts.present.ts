// What the API shows of an alert, a run and a delivery.
import type { DeliveryRow, RunRow } from '../runs/runs.repo';
import type { AlertRow } from './alerts.repo';

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

export function presentAlert(a: AlertRow) {
  return {
    id: a.id,
    name: a.name,
    template_id: a.template_id,
    status: a.status,
    spec: a.spec,
    website_id: a.website_id,
    timezone: a.timezone,
    currency: a.currency,
    state: {
      firing: a.firing,
      last_evaluated_at: iso(a.last_evaluated_at),
      last_value: a.last_value,
      next_run_at: a.status === 'active' ? iso(a.next_run_at) : null,
    },
    created_at: a.created_at.toISOString(),
    updated_at: a.updated_at.toISOString(),
  };
}

export function presentDelivery(d: DeliveryRow) {
  return {
    id: d.id,
    channel: d.channel,
    to: d.recipient,
    status: d.status,
    attempts: d.attempts,
    error: d.last_error,
    next_attempt_at: d.status === 'queued' ? d.next_attempt_at.toISOString() : null,
    sent_at: iso(d.sent_at),
  };
}

export function presentRun(run: RunRow, deliveries: DeliveryRow[]) {
  return {
    id: run.id,
    started_at: run.started_at.toISOString(),
    finished_at: iso(run.finished_at),
    status: run.status,
    test: run.test,
    trigger: run.trigger,
    subject: run.message.subject,
    composed_by: run.composed_by,
    compose_note: run.compose_note,
    link: run.link,
    deliveries: deliveries.map(presentDelivery),
  };
}
