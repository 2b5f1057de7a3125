// automation.ran, written to the outbox in the transaction that settles the run, so the change feed
// hears of every run that reached its end, once per end.
import type { Outbox, SqlExecutor } from '@sightline/kit';
import type { AutomationRanV1 } from '@sightline/proto-schemas';
import { deliveryCount, type RunRow } from './runs.repo';

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
