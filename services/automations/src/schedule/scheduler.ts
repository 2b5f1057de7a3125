// The scheduling tick (every minute by default): runs the schedule and threshold alerts whose cron
// time has come, and sends the digests whose hour or day has ended.
//
// Once across replicas: a tick takes a lease in the KV store (Redis when distributed) for its time
// slot, so one replica does a slot's work and the others skip it. Correctness does not rest on the
// lease: each alert's cron time is claimed in Postgres in the transaction that records its run (the
// next_run_at guard), and a run's trigger key is unique, so even two replicas that both got to an
// alert (a lease that expired mid-tick, clocks apart) make one run. A replica that dies mid-tick
// leaves the alerts it had not reached due, and the next tick runs them.
import type { KvStore, SqlStore } from '@sightline/kit';
import { DateTime } from 'luxon';
import type { Logger } from 'pino';
import { advanceQuietSlots, advanceSlot, digestAlerts, dueAlerts, type AlertRow, type QuietSlot } from '../alerts/alerts.repo';
import { evaluate, type Evaluation } from '../gather/condition';
import type { GatherAsk, Gatherer, GatherResult } from '../gather/gather';
import { insertPrepared, prepareRun, type RunMakerDeps } from '../runs/run-maker';
import { nextRunAfter } from '../spec/cron';
import { pacingOf } from '../spec/spec';
import type { CatalogType } from '../spec/event-catalog';
import { periodStart } from '../events/events.consumers';
import { funnelGoneReason, missingFunnel, pauseAlerts } from '../events/funnel-deleted';

export interface TickStats {
  started_at: string;
  duration_ms: number;
  /** Alerts whose cron time had come. */
  due: number;
  evaluated: number;
  fired: number;
  recovered: number;
  scheduled: number;
  digests: number;
  /** getMetrics requests the tick sent (alerts asking for the same window share one). */
  queries: number;
  failed: number;
}

export interface SchedulerDeps {
  sql: SqlStore;
  kv: KvStore;
  logger: Logger;
  gatherer: Gatherer;
  runs: RunMakerDeps;
  owner: string;
  now: () => Date;
  /** How long a tick's lease lasts; also the longest a tick may take before another may redo its slot. */
  leaseMs: number;
  kick: () => void;
}

export interface Scheduler {
  /** One tick now; null when another replica holds this slot's lease. */
  tick(): Promise<TickStats | null>;
  lastTick(): TickStats | null;
}

const MAX_DUE_PER_TICK = 10_000;
class SlotTaken extends Error {}

export function createScheduler(deps: SchedulerDeps): Scheduler {
  let last: TickStats | null = null;
  let running: Promise<TickStats | null> | null = null;

  const tick = async (): Promise<TickStats | null> => {
    const started = deps.now();
    // One slot per second: replicas ticking on the same cron meet on the same key.
    const slotKey = `automations:tick:${Math.floor(started.getTime() / 1000)}`;
    if (!(await deps.kv.set(slotKey, deps.owner, { ifAbsent: true, ttlMs: deps.leaseMs }))) return null;
    const t0 = Date.now();
    const stats: TickStats = { started_at: started.toISOString(), duration_ms: 0, due: 0, evaluated: 0, fired: 0, recovered: 0, scheduled: 0, digests: 0, queries: 0, failed: 0 };
    const due = await dueAlerts(deps.sql, started, MAX_DUE_PER_TICK);
    stats.due = due.length;
    if (due.length > 0) {
      const asks: GatherAsk[] = due.filter((a) => a.spec.gather).map((a) => ({
        key: a.id, workspace: a.workspace, website: a.website, gather: a.spec.gather ?? {},
        previous: a.kind === 'threshold'
          ? (a.spec.condition?.compare === 'previous_period' ? [a.spec.condition.figure] : [])
          : Object.keys(a.spec.gather ?? {}),
      }));
      const { results, stats: g } = await deps.gatherer.gather(asks, started);
      stats.queries = g.queries;
      let queued = false;
      const quiet: QuietSlot[] = [];
      for (const alert of due) {
        try {
          const outcome = await runDue(deps, alert, results.get(alert.id), started, quiet);
          if (outcome === 'fired') stats.fired += 1;
          if (outcome === 'recovered') stats.recovered += 1;
          if (outcome === 'scheduled') stats.scheduled += 1;
          if (alert.kind === 'threshold') stats.evaluated += 1;
          queued = queued || outcome === 'fired' || outcome === 'recovered' || outcome === 'scheduled';
        } catch (error) {
          stats.failed += 1;
          deps.logger.error({ err: error, automation: alert.id }, 'automations: a due alert failed; it stays due for the next tick');
        }
      }
      await advanceQuietSlots(deps.sql, quiet);
      if (queued) deps.kick();
    }
    stats.digests = await flushDigests(deps, started);
    if (stats.digests > 0) deps.kick();
    stats.duration_ms = Date.now() - t0;
    last = stats;
    return stats;
  };

  return {
    tick() {
      // One tick at a time in a process: a slow one is not overtaken by the next.
      if (running) return running.then(() => null);
      running = tick().finally(() => {
        running = null;
      });
      return running;
    },
    lastTick: () => last,
  };
}

type DueOutcome = 'fired' | 'recovered' | 'scheduled' | 'quiet' | 'skipped';

async function runDue(deps: SchedulerDeps, alert: AlertRow, gathered: GatherResult | undefined, now: Date, quiet: QuietSlot[]): Promise<DueOutcome> {
  const slot = alert.next_run_at as Date;
  const cron = alert.spec.trigger.kind === 'event' ? null : alert.spec.trigger.cron;
  const next = cron === null ? null : nextRunAfter(cron, alert.timezone, now);
  const gone = missingFunnel(alert, gathered);
  if (gone !== null) {
    // Its funnel was deleted: paused with the reason (status_reason) rather than skipped silently at every cron time.
    await pauseAlerts({ sql: deps.sql, outbox: deps.runs.outbox, logger: deps.logger }, [alert], (a) => funnelGoneReason(gone, now, a.timezone, 'missing'), now);
    return 'skipped';
  }
  if (gathered && !gathered.ok) {
    // The numbers could not be read: this cron time passes without a message (the log says why).
    deps.logger.warn({ automation: alert.id, error: gathered.error }, 'automations: gather failed; this cron time is skipped');
    await claimOnly(deps, alert, slot, next);
    return 'skipped';
  }
  const figures = gathered?.ok ? gathered.figures : undefined;

  if (alert.kind === 'schedule') {
    const pacing = pacingOf(alert.spec);
    const key = pacing === 'each' ? `schedule:${slot.toISOString()}` : `schedule:${pacing}:${periodStart(pacing, slot, alert.timezone).toISOString()}`;
    const prepared = await prepareRun(deps.runs, { alert, trigger: 'schedule', triggerKey: key, test: false, ...(figures ? { figures } : {}) });
    let made = false;
    const claimed = await inTx(deps, async (tx) => {
      if (!(await advanceSlot(tx, alert.id, slot, next))) throw new SlotTaken();
      // null: this period's message was sent already (hourly / daily pacing).
      made = (await insertPrepared(tx, deps.runs, prepared, now)) !== null;
    });
    return !claimed ? 'skipped' : made ? 'scheduled' : 'quiet';
  }

  // Threshold: a message only when the condition starts or stops holding.
  const condition = alert.spec.condition;
  if (!condition || !figures) {
    await claimOnly(deps, alert, slot, next);
    return 'skipped';
  }
  const evaluation: Evaluation = evaluate(condition, figures);
  // A number that cannot be computed (no value, no baseline) leaves the state as it was.
  const unknown = evaluation.measured === null;
  const transition = unknown ? null : evaluation.holds && !alert.firing ? 'threshold' : !evaluation.holds && alert.firing ? 'recovery' : null;
  const state = { firing: unknown ? alert.firing : evaluation.holds, value: evaluation.measured, evaluatedAt: now };
  if (transition === null) {
    // Nothing to send: the state is written with the tick's other quiet evaluations, in one statement.
    quiet.push({ id: alert.id, slot, next, firing: state.firing, value: state.value, evaluatedAt: now });
    return 'quiet';
  }
  const prepared = await prepareRun(deps.runs, { alert, trigger: transition, triggerKey: `${transition}:${slot.toISOString()}`, test: false, figures, evaluation });
  const done = await inTx(deps, async (tx) => {
    if (!(await advanceSlot(tx, alert.id, slot, next, state))) throw new SlotTaken();
    await insertPrepared(tx, deps.runs, prepared, now);
  });
  return done ? (transition === 'threshold' ? 'fired' : 'recovered') : 'skipped';
}

/** Runs `fn` in a transaction; false when another replica had claimed the slot first (rolled back). */
async function inTx(deps: SchedulerDeps, fn: Parameters<SqlStore['transaction']>[0]): Promise<boolean> {
  try {
    await deps.sql.transaction(fn);
    return true;
  } catch (error) {
    if (error instanceof SlotTaken) return false;
    throw error;
  }
}

async function claimOnly(deps: SchedulerDeps, alert: AlertRow, slot: Date, next: Date | null): Promise<void> {
  await inTx(deps, async (tx) => {
    if (!(await advanceSlot(tx, alert.id, slot, next))) throw new SlotTaken();
  });
}

/** Sends the digest of every hour or day that has ended and has events waiting; returns how many. */
async function flushDigests(deps: SchedulerDeps, now: Date): Promise<number> {
  let sent = 0;
  for (const alert of await digestAlerts(deps.sql)) {
    const pacing = pacingOf(alert.spec);
    const periods = (await deps.sql.query<{ period_start: Date }>('SELECT DISTINCT period_start FROM digest_events WHERE automation_id = $1 ORDER BY period_start', [alert.id])).rows;
    for (const { period_start: start } of periods) {
      const mode = pacing === 'each' ? 'daily' : pacing;
      const end = new Date(periodEnd(mode, start, alert.timezone));
      if (end > now) continue;
      const events = (await deps.sql.query<{ message_id: string; event: { type: CatalogType; payload: unknown; occurredAt: string } }>(
        'SELECT message_id, event FROM digest_events WHERE automation_id = $1 AND period_start = $2 ORDER BY received_at, message_id',
        [alert.id, start],
      )).rows;
      if (alert.status === 'paused' || pacing === 'each') {
        // Paused (or no longer a digest): the waiting events are dropped, as a paused alert ignores events.
        await deps.sql.query('DELETE FROM digest_events WHERE automation_id = $1 AND period_start = $2', [alert.id, start]);
        continue;
      }
      const prepared = await prepareRun(deps.runs, {
        alert, trigger: 'digest', triggerKey: `digest:${start.toISOString()}`, test: false,
        digest: { events: events.map((e) => e.event), from: start.toISOString(), to: end.toISOString() },
      });
      await deps.sql.transaction(async (tx) => {
        await insertPrepared(tx, deps.runs, prepared, now);
        await tx.query('DELETE FROM digest_events WHERE automation_id = $1 AND period_start = $2 AND message_id = ANY($3::text[])', [alert.id, start, events.map((e) => e.message_id)]);
      });
      sent += 1;
    }
  }
  return sent;
}

function periodEnd(mode: 'hourly' | 'daily', start: Date, timezone: string): number {
  return DateTime.fromJSDate(start, { zone: timezone }).plus(mode === 'hourly' ? { hours: 1 } : { days: 1 }).toMillis();
}
