// Gathers the numbers alerts watch, the way GET /metrics answers them, over the bus (the same
// attribution.getMetrics the gateway calls). Many alerts ask for the same window with the same
// filters: their metrics are merged into one request per (website, window, filters), so a scheduling
// minute with a thousand alerts costs a few queries, not a thousand. Each query runs inside the
// workspace's analytics cap (analytics-slots.ts): it waits for a slot of the gatherer's share, and no
// more than that share of one workspace's queries run at once here.
import { RpcRemoteError, RpcTimeoutError, type RemoteProblem, type ServiceBus } from '@sightline/kit';
import { previousWindow, resolveWindow } from '@sightline/periods';
import { DEFAULT_PERIOD, LIST_SEPARATOR, type ApiRequest, type MetricName } from '@sightline/proto-schemas';
import { FUNNEL_CONVERSION, type GatherQuery } from '../spec/spec';
import type { AnalyticsSlots } from './analytics-slots';

export interface WorkspaceSnapshot {
  id: string;
  name: string;
  timezone: string;
  currency: string;
  plan: ApiRequest['workspace']['plan'];
}

export interface WebsiteSnapshot {
  id: string;
  domain: string;
  timezone: string;
  currency: string;
}

/** What one alert asks for. */
export interface GatherAsk {
  key: string;
  workspace: WorkspaceSnapshot;
  website: WebsiteSnapshot;
  gather: Record<string, GatherQuery>;
  /** Figures also read for the window just before (as long in local calendar days: previousWindowOf). */
  previous: readonly string[];
}

export interface Window {
  from: string;
  to: string;
}

export interface Figure {
  name: string;
  /** The /metrics metric, or funnel_conversion. */
  metric: MetricName | typeof FUNNEL_CONVERSION;
  period: string;
  filters: string[];
  value: number | null;
  window: Window;
  previous?: { value: number | null; window: Window };
}

/** A gather that failed; `problem` when the owning service refused the query itself (a 4xx problem). */
export type GatherResult = { ok: true; figures: Record<string, Figure> } | { ok: false; error: string; problem?: RemoteProblem };

export interface GatherStats {
  asks: number;
  figures: number;
  /** getMetrics requests actually sent. */
  queries: number;
}

interface Slot {
  website: WebsiteSnapshot;
  workspace: WorkspaceSnapshot;
  window: Window;
  filters: string[];
  metrics: Set<MetricName>;
  /** Set for a funnel's conversion (funnels.getFunnelSteps) instead of /metrics. */
  funnel?: string;
  result?: { values: Record<string, number | null> } | { error: string; problem?: RemoteProblem };
}

export function filterStrings(query: GatherQuery): string[] {
  return (query.filters ?? []).map((f) => `${f.field}:${f.op}:${f.values.join(LIST_SEPARATOR)}`).sort();
}

export function windowOf(query: GatherQuery, timezone: string, now: Date): Window {
  const w = resolveWindow({ period: query.period ?? DEFAULT_PERIOD, timezone, now });
  return { from: w.from, to: w.to };
}

/** The window just before, as long in local days (or wall-clock time): a DST change shifts it by no hour. */
export function previousWindowOf(window: Window, timezone: string): Window {
  return previousWindow(window, timezone);
}

/**
 * The /metrics query behind figures, as a link a person (or a client) can open: one query for all
 * of them when they share the period and filters, else the first one's.
 */
export function metricsLink(publicUrl: string, domain: string, queries: readonly GatherQuery[]): string {
  const first = queries[0] as GatherQuery;
  if (first.funnel !== undefined) {
    const params = new URLSearchParams({ website: domain, period: first.period ?? DEFAULT_PERIOD, compare_days: 'previous' });
    return `${publicUrl.replace(/\/$/, '')}/v1/funnels/${first.funnel}/steps?${params.toString()}`;
  }
  const key = (q: GatherQuery): string => JSON.stringify([q.period ?? DEFAULT_PERIOD, filterStrings(q)]);
  const same = queries.every((q) => key(q) === key(first));
  const metrics = same ? [...new Set(queries.flatMap((q) => (q.metric ? [q.metric] : [])))] : [first.metric];
  const params = new URLSearchParams({ website: domain, metrics: metrics.join(','), period: first.period ?? DEFAULT_PERIOD });
  for (const f of filterStrings(first)) params.append('filter', f);
  return `${publicUrl.replace(/\/$/, '')}/v1/metrics?${params.toString()}`;
}

export interface Gatherer {
  gather(asks: readonly GatherAsk[], now: Date): Promise<{ results: Map<string, GatherResult>; stats: GatherStats }>;
}

export interface GathererOptions {
  /** Queries sent at once, all workspaces together. */
  concurrency: number;
  /** Queries of one workspace sent at once: the share of its analytics slots background work may hold. */
  perWorkspace: number;
  timeoutMs: number;
  slots: AnalyticsSlots;
}

export function createGatherer(bus: ServiceBus<'automations'>, options: GathererOptions): Gatherer {
  return {
    async gather(asks, now) {
      const slots = new Map<string, Slot>();
      const slotOf = (ask: GatherAsk, window: Window, filters: string[], funnel: string | undefined): Slot => {
        const key = JSON.stringify([ask.website.id, window.from, window.to, filters, funnel ?? null]);
        let slot = slots.get(key);
        if (!slot) {
          slot = { website: ask.website, workspace: ask.workspace, window, filters, metrics: new Set(), ...(funnel ? { funnel } : {}) };
          slots.set(key, slot);
        }
        return slot;
      };
      // Plan: each figure points at its slot (and its previous window's).
      const plans = asks.map((ask) => {
        const entries = Object.entries(ask.gather).map(([name, query]) => {
          const filters = filterStrings(query);
          const window = windowOf(query, ask.website.timezone, now);
          const current = slotOf(ask, window, filters, query.funnel);
          if (query.metric) current.metrics.add(query.metric);
          const previous = ask.previous.includes(name) ? slotOf(ask, previousWindowOf(window, ask.website.timezone), filters, query.funnel) : null;
          if (query.metric) previous?.metrics.add(query.metric);
          return { name, query, filters, current, previous };
        });
        return { ask, entries };
      });

      const queue = [...slots.values()];
      const running = new Map<string, number>();
      // The next query whose workspace is below its share; a worker that finds none stops (a busy
      // workspace's own workers take its remaining queries).
      const next = (): Slot | undefined => {
        const i = queue.findIndex((s) => (running.get(s.workspace.id) ?? 0) < options.perWorkspace);
        return i < 0 ? undefined : queue.splice(i, 1)[0];
      };
      const worker = async (): Promise<void> => {
        for (let slot = next(); slot; slot = next()) {
          const ws = slot.workspace.id;
          running.set(ws, (running.get(ws) ?? 0) + 1);
          try {
            slot.result = await runInSlot(bus, options, slot);
          } finally {
            running.set(ws, (running.get(ws) ?? 1) - 1);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, queue.length)) }, worker));

      const results = new Map<string, GatherResult>();
      for (const { ask, entries } of plans) {
        const figures: Record<string, Figure> = {};
        let error: { error: string; problem?: RemoteProblem } | null = null;
        for (const e of entries) {
          const cur = e.current.result;
          const prev = e.previous?.result;
          if (!cur || 'error' in cur) {
            error = cur && 'error' in cur ? cur : { error: 'not gathered' };
            break;
          }
          if (prev && 'error' in prev) {
            error = prev;
            break;
          }
          const key = e.query.metric ?? FUNNEL_CONVERSION;
          figures[e.name] = {
            name: e.name,
            metric: key,
            period: e.query.period ?? DEFAULT_PERIOD,
            filters: e.filters,
            value: cur.values[key] ?? null,
            window: e.current.window,
            ...(e.previous && prev ? { previous: { value: prev.values[key] ?? null, window: e.previous.window } } : {}),
          };
        }
        results.set(ask.key, error === null ? { ok: true, figures } : { ok: false, ...error });
      }
      return { results, stats: { asks: asks.length, figures: plans.reduce((n, p) => n + p.entries.length, 0), queries: slots.size } };
    },
  };
}

/** One query, holding one of the workspace's analytics slots while it runs. */
async function runInSlot(bus: ServiceBus<'automations'>, options: GathererOptions, slot: Slot): Promise<Slot['result']> {
  const lease = await options.slots.acquire(slot.workspace.id);
  if (!lease) return { error: `the workspace's analytics queries stayed at their limit for ${Math.round(options.slots.waitMs / 1000)} s` };
  try {
    return await runSlot(bus, slot, options.timeoutMs);
  } finally {
    await lease.release();
  }
}

async function runSlot(bus: ServiceBus<'automations'>, slot: Slot, timeoutMs: number): Promise<Slot['result']> {
  if (slot.funnel) return runFunnelSlot(bus, slot, timeoutMs);
  const request: ApiRequest = {
    operation: 'getMetrics',
    request_id: `automations-gather-${Date.now().toString(36)}`,
    workspace: slot.workspace,
    website: slot.website,
    key: { id: 'automations', scopes: [] },
    params: {},
    query: { metrics: [...slot.metrics].sort(), ...(slot.filters.length > 0 ? { filter: slot.filters } : {}), from: slot.window.from, to: slot.window.to },
    body: null,
    headers: {},
  };
  try {
    const response = await bus.call('attribution.getMetrics', request, { timeoutMs });
    const body = response.body as { data?: Record<string, unknown>[] };
    const row = body.data?.[0] ?? {};
    const values: Record<string, number | null> = {};
    for (const metric of slot.metrics) {
      const v = row[metric];
      values[metric] = typeof v === 'number' ? v : v === null || v === undefined ? null : Number(v);
    }
    return { values };
  } catch (error) {
    if (error instanceof RpcRemoteError) return { error: `${error.problem.kind}: ${error.problem.detail}`, problem: error.problem };
    if (error instanceof RpcTimeoutError) return { error: `attribution did not answer within ${timeoutMs} ms` };
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** A funnel's conversion over the window: the last step's share of the people who entered (null when nobody did). */
async function runFunnelSlot(bus: ServiceBus<'automations'>, slot: Slot, timeoutMs: number): Promise<Slot['result']> {
  const request: ApiRequest = {
    operation: 'getFunnelSteps',
    request_id: `automations-gather-${Date.now().toString(36)}`,
    workspace: slot.workspace,
    website: slot.website,
    key: { id: 'automations', scopes: [] },
    params: { id: slot.funnel as string },
    query: { from: slot.window.from, to: slot.window.to },
    body: null,
    headers: {},
  };
  try {
    const response = await bus.call('funnels.getFunnelSteps', request, { timeoutMs });
    const steps = (response.body as { data?: { conv_vs_first?: number | null }[] }).data ?? [];
    const last = steps[steps.length - 1];
    return { values: { [FUNNEL_CONVERSION]: typeof last?.conv_vs_first === 'number' ? last.conv_vs_first : null } };
  } catch (error) {
    if (error instanceof RpcRemoteError) return { error: `${error.problem.kind}: ${error.problem.detail}`, problem: error.problem };
    if (error instanceof RpcTimeoutError) return { error: `funnels did not answer within ${timeoutMs} ms` };
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
