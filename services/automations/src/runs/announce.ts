// automation.ran, written to the outbox in the transaction that settles the run, so the change feed
// hears of every run that reached its end, once per end; and the payload of automation.created|
// updated|deleted, written with the change it announces.
import type { Outbox, SqlExecutor } from '@sightline/kit';
import type { AutomationChangeV1, AutomationField, AutomationRanV1 } from '@sightline/proto-schemas';
import type { AlertRow } from '../alerts/alerts.repo';
import { deliveryCount, type RunRow } from './runs.repo';

export function alertChange(alert: AlertRow, fields: AutomationField[], now: Date): AutomationChangeV1 {
  return {
    automation_id: alert.id, website_id: alert.website_id, workspace_id: alert.workspace_id, name: alert.name, status: alert.status, fields,
    changed_at: now.toISOString(),
  };
}

export async function announceRun(tx: SqlExecutor, outbox: Outbox<'automations'>, run: RunRow): Promise<void> {
  const alert = (await tx.query<{ name: string; website_id: string; workspace_id: string }>(
    'SELECT name, website_id, workspace_id FROM automations WHERE id = $1',
    [run.automation_id],
  )).rows[0];
  if (!alert) return;
  const payload: AutomationRanV1 = {
    automation_id: run.automation_id,
    run_id: run.id,
    website_id: alert.website_id,
    workspace_id: alert.workspace_id,
    name: alert.name,
    trigger: run.trigger,
    test: run.test,
    status: run.status,
    deliveries: await deliveryCount(tx, run.id),
    ran_at: (run.finished_at ?? run.started_at).toISOString(),
  };
  await outbox.add(tx, { type: 'automation.ran', source: 'automations', workspace_id: alert.workspace_id, website_id: alert.website_id, payload });
}
