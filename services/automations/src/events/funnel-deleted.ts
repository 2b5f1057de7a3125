// A deleted funnel pauses every alert that gathers from it, with a reason the API shows
// (status_reason), instead of leaving it active and silent. Two ways in: funnel.deleted from the
// funnels service, and a gather that finds the funnel gone (a run, a test run), which covers an
// alert written while its funnel was being deleted. Setting the status through the API clears the
// reason; resuming with the deleted funnel still in the spec is refused (alerts.rpc.ts).
import type { MessageHandlerOf, Outbox, SqlStore } from '@sightline/kit';
import { DateTime } from 'luxon';
import type { Logger } from 'pino';
import { alertsGatheringFunnel, pauseWithReason, type AlertRow } from '../alerts/alerts.repo';
import type { GatherResult } from '../gather/gather';
import { alertChange } from '../runs/announce';

export interface FunnelPauseDeps {
  sql: SqlStore;
  outbox: Outbox<'automations'>;
  logger: Logger;
}

export function funnelGoneReason(funnelId: string, at: Date, timezone: string, known: 'deleted' | 'missing'): string {
  const day = DateTime.fromJSDate(at, { zone: timezone }).toFormat('yyyy-MM-dd');
  return known === 'deleted'
    ? `funnel ${funnelId} was deleted on ${day}; choose another funnel in spec.gather and set status to active`
    : `funnel ${funnelId} was found deleted on ${day}; choose another funnel in spec.gather and set status to active`;
}

/** The funnels an alert gathers from. */
export const funnelsOf = (alert: Pick<AlertRow, 'spec'>): string[] =>
  Object.values(alert.spec.gather ?? {}).flatMap((q) => (q.funnel ? [q.funnel] : []));

/** The funnel a failed gather found gone (funnels answered not-found), or null for any other failure. */
export function missingFunnel(alert: Pick<AlertRow, 'spec'>, result: GatherResult | undefined): string | null {
  if (!result || result.ok || result.problem?.kind !== 'not-found') return null;
  const funnels = funnelsOf(alert);
  const detail = result.problem.detail.toLowerCase();
  // funnels says "No funnel <id> on this website."; another not-found (a metrics query) is not a funnel's.
  return funnels.find((id) => detail.includes(id.toLowerCase())) ?? (detail.includes('funnel') ? funnels[0] ?? null : null);
}

/** Pauses the alerts with the reason and announces each that was active (automation.updated). */
export async function pauseAlerts(deps: FunnelPauseDeps, alerts: readonly AlertRow[], reason: (alert: AlertRow) => string, now: Date): Promise<number> {
  let paused = 0;
  for (const alert of alerts) {
    await deps.sql.transaction(async (tx) => {
      const done = await pauseWithReason(tx, alert.id, reason(alert), now);
      if (!done || done.was !== 'active') return;
      paused += 1;
      await deps.outbox.add(tx, { type: 'automation.updated', source: 'automations', workspace_id: done.alert.workspace_id, website_id: done.alert.website_id, payload: alertChange(done.alert, ['status'], now) });
    });
  }
  if (paused > 0) deps.outbox.wake();
  return paused;
}

export function funnelDeletedConsumer(deps: FunnelPauseDeps & { now: () => Date }): MessageHandlerOf<'funnel.deleted'> {
  return async (envelope) => {
    const { payload } = envelope;
    const alerts = await alertsGatheringFunnel(deps.sql, payload.website_id, payload.funnel_id);
    if (alerts.length === 0) return;
    const deletedAt = new Date(payload.changed_at);
    const paused = await pauseAlerts(deps, alerts, (a) => funnelGoneReason(payload.funnel_id, deletedAt, a.timezone, 'deleted'), deps.now());
    deps.logger.info({ funnel: payload.funnel_id, alerts: alerts.length, paused }, 'automations: a funnel was deleted; the alerts gathering from it are paused');
  };
}
