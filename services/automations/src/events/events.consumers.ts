// Event triggers: every change message of the catalog is matched against the website's active
// event alerts. pacing each: a run per event (the message id is its trigger key, so a redelivered
// message makes no second run). hourly / daily: the event waits in digest_events for the digest of
// its period (schedule/digests.ts). funnel.deleted pauses the alerts that gather from the funnel
// (funnel-deleted.ts).
import type { ConsumerMap, Envelope, SqlStore } from '@sightline/kit';
import { DateTime } from 'luxon';
import type { Logger } from 'pino';
import { eventAlerts, rememberEvent, type AlertRow } from '../alerts/alerts.repo';
import type { Gatherer } from '../gather/gather';
import { insertPrepared, prepareRun, type RunMakerDeps } from '../runs/run-maker';
import { CATALOG_TYPES, type CatalogType } from '../spec/event-catalog';
import { maxAgeMsOf, pacingOf } from '../spec/spec';
import { matches } from './filters';
import { funnelDeletedConsumer, funnelGoneReason, missingFunnel, pauseAlerts } from './funnel-deleted';

export interface EventConsumerDeps {
  sql: SqlStore;
  logger: Logger;
  gatherer: Gatherer;
  runs: RunMakerDeps;
  now: () => Date;
  /** Called after runs were committed: the worker sends them now. */
  kick: () => void;
}

export function periodStart(mode: 'hourly' | 'daily', at: Date, timezone: string): Date {
  return DateTime.fromJSDate(at, { zone: timezone }).startOf(mode === 'hourly' ? 'hour' : 'day').toJSDate();
}

export function eventConsumers(deps: EventConsumerDeps): ConsumerMap<'automations'> {
  const handle = async (envelope: Envelope): Promise<void> => {
    const type = envelope.type as CatalogType;
    const payload = envelope.payload as { website_id?: string; occurred_at?: string; changed_at?: string };
    const websiteId = envelope.website_id ?? payload.website_id;
    if (!websiteId) return;
    const occurredAt = payload.occurred_at ?? payload.changed_at ?? envelope.occurred_at;
    // max_age: an event that happened longer ago than the alert cares for (a backfill) is skipped.
    const age = deps.now().getTime() - Date.parse(occurredAt);
    const fresh = (a: AlertRow): boolean => {
      const max = maxAgeMsOf(a.spec);
      return max === null || !(age > max);
    };
    const alerts = (await eventAlerts(deps.sql, websiteId, type)).filter((a) => matches(type, envelope.payload, a.spec.filters) && fresh(a));
    if (alerts.length === 0) return;
    const event = { type, payload: envelope.payload, occurredAt };
    await rememberEvent(deps.sql, alerts.map((a) => a.id), { type, payload: envelope.payload, occurred_at: occurredAt });
    let queued = false;
    for (const alert of alerts) {
      const pacing = pacingOf(alert.spec);
      if (pacing !== 'each') {
        await deps.sql.query(
          `INSERT INTO digest_events (automation_id, message_id, period_start, event, received_at) VALUES ($1, $2, $3, $4::jsonb, $5)
           ON CONFLICT (automation_id, message_id) DO NOTHING`,
          [alert.id, envelope.id, periodStart(pacing, deps.now(), alert.timezone), JSON.stringify(event), deps.now()],
        );
        continue;
      }
      queued = (await runForEvent(deps, alert, envelope.id, event)) || queued;
    }
    if (queued) deps.kick();
  };
  const pauseDeps = { sql: deps.sql, outbox: deps.runs.outbox, logger: deps.logger, now: deps.now };
  return {
    ...(Object.fromEntries(CATALOG_TYPES.map((type) => [type, handle])) as Omit<ConsumerMap<'automations'>, 'funnel.deleted'>),
    'funnel.deleted': funnelDeletedConsumer(pauseDeps),
  };
}

async function runForEvent(deps: EventConsumerDeps, alert: AlertRow, messageId: string, event: { type: CatalogType; payload: unknown; occurredAt: string }): Promise<boolean> {
  let figures;
  if (alert.spec.gather) {
    const { results } = await deps.gatherer.gather([{ key: alert.id, workspace: alert.workspace, website: alert.website, gather: alert.spec.gather, previous: [] }], deps.now());
    const result = results.get(alert.id);
    const gone = missingFunnel(alert, result);
    if (gone !== null) {
      // Its funnel was deleted: paused with the reason (status_reason), this event is not sent.
      await pauseAlerts({ sql: deps.sql, outbox: deps.runs.outbox, logger: deps.logger }, [alert], (a) => funnelGoneReason(gone, deps.now(), a.timezone, 'missing'), deps.now());
      return false;
    }
    // The event is the news; a number that could not be read is left out rather than holding it back.
    if (result?.ok) figures = result.figures;
    else deps.logger.warn({ automation: alert.id, error: result && !result.ok ? result.error : 'none' }, 'automations: gather failed for an event alert; sending without figures');
  }
  const prepared = await prepareRun(deps.runs, { alert, trigger: 'event', triggerKey: `event:${messageId}`, test: false, event, ...(figures ? { figures } : {}) });
  const inserted = await deps.sql.transaction((tx) => insertPrepared(tx, deps.runs, prepared, deps.now()));
  return inserted !== null;
}
