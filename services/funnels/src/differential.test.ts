// Differential tests: datagen workspaces go through ingest into funnels (one in-process Sightline,
// embedded stores), and every steps and breakdown answer is compared with the independent oracle
// (../test/oracle) computed from what ingest published: every step order × scope on every seed,
// with repeated events (several page-view steps) and steps whose events share a timestamp.
import type { FunnelDefinition } from './definition';
import { oracleBreakdown, oracleSteps } from '../test/oracle/funnel';
import type { Models } from '../test/oracle/types';
import { WorkspaceLoader, type LoadedSite, type SeedSpec } from '../test/workspace';
import type { Json } from '../test/harness';

/** 20 small workspaces: 25 to 60 visitors over 20, 30 or 40 days. */
const SEEDS: readonly SeedSpec[] = Array.from({ length: Number(process.env['FUNNELS_SEEDS'] ?? 20) }, (_, i) => ({
  seed: 4101 + i * 13, days: [20, 30, 40][i % 3] as number, visitors: 25 + ((i * 17) % 36),
}));
const ORDERS = ['sequential', 'strict', 'any_order'] as const;
const SCOPES = ['visitor', 'user'] as const;
const TOLERANCE = 1e-9;
/** Reads at once: chDB answers them on parallel connections. */
const PARALLEL_READS = 3;

const FUNNELS: Record<string, { steps: FunnelDefinition['steps']; window_days: number; revenue?: true }> = {
  journey: {
    window_days: 7,
    steps: [
      { name: 'Any page', conditions: { event_type: 'pageview' } },
      { name: 'Pricing', conditions: { path_matches: '/pricing' } },
      { name: 'Form', conditions: { event_type: 'form_submit' } },
      { name: 'Signup', conditions: { event_type: 'conversion', event_name_matches: 'signup' } },
    ],
  },
  // tie_b and tie_a were sent at the very millisecond of a page view.
  ties: {
    window_days: 1,
    steps: [
      { name: 'Page', conditions: { event_type: 'pageview' } },
      { name: 'Tie B', conditions: { event_name_matches: 'tie_b' } },
      { name: 'Tie A', conditions: { event_name_matches: 'tie_a' } },
    ],
  },
  repeated: {
    window_days: 2,
    steps: [
      { name: 'Page 1', conditions: { event_type: 'pageview' } },
      { name: 'Page 2', conditions: { event_type: 'pageview' } },
      { name: 'Blog', conditions: { path_matches: '/blog*' } },
      { name: 'Page 3', conditions: { event_type: 'pageview' } },
    ],
  },
  revenue: {
    window_days: 60,
    revenue: true,
    steps: [
      { name: 'Signup', conditions: { event_type: 'conversion', event_name_matches: 'signup' } },
      { name: 'Trial', conditions: { source: 'revenue', revenue_event: 'trial_started' } },
      { name: 'Subscribed', conditions: { source: 'revenue', revenue_event: 'subscription_started' } },
    ],
  },
};

const close = (a: number | null, b: number | null) => (a === null || b === null ? a === b : Math.abs(a - b) <= TOLERANCE * Math.max(1, Math.abs(a), Math.abs(b)));

describe('funnels agree with the oracle on generated workspaces', () => {
  let loader: WorkspaceLoader;
  let sites: LoadedSite[] = [];

  beforeAll(async () => {
    loader = await WorkspaceLoader.start();
    sites = await loader.loadAll(SEEDS);
  }, 400_000);
  afterAll(async () => {
    await loader?.stop();
  }, 60_000);

  /** The site's window: the whole range for even seeds, its middle third with off-hour edges for odd ones. */
  const windowOf = (site: LoadedSite, i: number) => {
    const third = Math.floor((site.endMs - site.startMs) / 3);
    return i % 2 === 0
      ? { fromMs: site.startMs, toMs: site.endMs }
      : { fromMs: site.startMs + third + 7 * 3_600_000 + 13 * 60_000, toMs: site.startMs + 2 * third + 13 * 3_600_000 + 47 * 60_000 };
  };
  const raw = (w: { fromMs: number; toMs: number }) => ({ from: new Date(w.fromMs).toISOString(), to: new Date(w.toMs).toISOString() });

  it('loads every seed through ingest, and the data exercises the rules', async () => {
    expect(sites).toHaveLength(SEEDS.length);
    expect(await loader.harness.deadLetters()).toBe(0);
    const all = sites.flatMap((s) => s.oracle.events);
    // Several events of one person at the same millisecond, and people with many page views.
    const instants = new Map<string, number>();
    for (const e of all) instants.set(`${e.person}@${e.ts}`, (instants.get(`${e.person}@${e.ts}`) ?? 0) + 1);
    expect([...instants.values()].filter((n) => n >= 3).length).toBeGreaterThan(20);
    expect(sites.some((s) => s.oracle.facts.length > 0)).toBe(true);
    expect(sites.flatMap((s) => s.oracle.events).some((e) => e.type === 'conversion')).toBe(true);
  });

  it('steps agree for every step order × scope on every seed', async () => {
    const jobs = sites.flatMap((site, i) => Object.entries(FUNNELS).flatMap(([name, funnel]) => ORDERS.flatMap((step_order) => SCOPES
      // Refused combinations (revenue under strict or with user scope) are tested elsewhere.
      .filter((scope) => !(funnel.revenue && (step_order === 'strict' || scope === 'user')))
      .map((scope) => ({ site, window: windowOf(site, i), definition: { name, scope, step_order, window_days: funnel.window_days, filters: {}, steps: funnel.steps } as FunnelDefinition })))));
    const results = await mapLimit(jobs, PARALLEL_READS, async ({ site, window, definition }) => {
      const created = await loader.harness.create(site.website, { ...definition });
      const got = await loader.harness.steps(site.website, String(created['id']), raw(window));
      const want = oracleSteps(definition, window, site.oracle);
      const where = `seed ${site.spec.seed} ${definition.name} ${definition.step_order}/${definition.scope}`;
      const mismatches = want.flatMap((w, k) => {
        const g = got.data[k] as Json;
        return g['reached'] === w.reached && close(g['median_seconds_from_previous'] as number | null, w.median)
          ? []
          : [`${where} step ${k}: service ${g['reached']} (${g['median_seconds_from_previous']}s), oracle ${w.reached} (${w.median}s)`];
      });
      return { mismatches, converting: (want[want.length - 1]?.reached ?? 0) > 0 };
    });
    expect(results.flatMap((r) => r.mismatches)).toEqual([]);
    expect(results.length).toBeGreaterThanOrEqual(SEEDS.length * 14);
    // The comparison is not vacuous: most funnels have people reaching the last step.
    expect(results.filter((r) => r.converting).length).toBeGreaterThan(results.length / 3);
  }, 300_000);

  it('breakdown credit agrees under all six rule models (five per request), by channel and by source', async () => {
    const mismatches: string[] = [];
    for (const [i, site] of sites.entries()) {
      // The limit of five models per request: every other site swaps time_decay for last_non_direct.
      const models: Models[] = ['first_touch', 'last_touch', 'linear', 'u_shaped', i % 2 === 0 ? 'time_decay' : 'last_non_direct'];
      const window = windowOf(site, i);
      const dimension = i % 2 === 0 ? 'channel' : 'source';
      const step_order = ORDERS[i % 3] as FunnelDefinition['step_order'];
      const definition: FunnelDefinition = { name: 'b', scope: 'visitor', step_order, window_days: 7, filters: {}, steps: FUNNELS['journey']!.steps };
      const created = await loader.harness.create(site.website, { ...definition });
      const got = await loader.harness.breakdown(site.website, String(created['id']), { ...raw(window), dimension, models: models.join(','), limit: '500' });
      const want = oracleBreakdown(definition, window, site.oracle, dimension, models);
      if (got.totals.entered !== want.entered || got.totals.completed !== want.completed) mismatches.push(`seed ${site.spec.seed}: totals ${JSON.stringify(got.totals)} vs ${want.entered}/${want.completed}`);
      const values = new Set([...want.credit.keys(), ...got.data.map((r) => String(r['value']))]);
      for (const value of values) {
        const row = got.data.find((r) => r['value'] === value);
        for (const model of models) {
          const g = (row?.[model] as { entered: number; completed: number } | undefined) ?? { entered: 0, completed: 0 };
          const [we, wc] = want.credit.get(value)?.get(model) ?? [0, 0];
          if (!close(g.entered, we) || !close(g.completed, wc)) mismatches.push(`seed ${site.spec.seed} ${dimension}=${value} ${model}: service ${g.entered}/${g.completed}, oracle ${we}/${wc}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  }, 300_000);
  it('markov and shapley agree beside three rule models, with and without exclude_direct, and every model sums to the totals', async () => {
    const models: Models[] = ['markov', 'shapley', 'linear', 'last_non_direct', 'time_decay'];
    const mismatches: string[] = [];
    let answered = 0;
    for (const [i, site] of sites.entries()) {
      const window = windowOf(site, i);
      const excludeDirect = i % 2 === 1;
      const step_order = ORDERS[(i + 1) % 3] as FunnelDefinition['step_order'];
      // Two steps, so that most seeds have people who complete (the completing column answers).
      const definition: FunnelDefinition = { name: 'dd', scope: 'visitor', step_order, window_days: 7, filters: {}, steps: FUNNELS['journey']!.steps.slice(0, 2) };
      const created = await loader.harness.create(site.website, { ...definition });
      const got = await loader.harness.breakdown(site.website, String(created['id']), { ...raw(window), dimension: 'channel', models: models.join(','), limit: '500', ...(excludeDirect ? { exclude_direct: 'true' } : {}) });
      const want = oracleBreakdown(definition, window, site.oracle, 'channel', models, { excludeDirect });
      const where = `seed ${site.spec.seed}${excludeDirect ? ' exclude_direct' : ''}`;
      if (got.totals.entered !== want.entered || got.totals.completed !== want.completed) mismatches.push(`${where}: totals ${JSON.stringify(got.totals)} vs ${want.entered}/${want.completed}`);
      const values = new Set([...want.credit.keys(), ...got.data.map((r) => String(r['value']))]);
      for (const model of models) {
        for (const value of values) {
          const g = (got.data.find((r) => r['value'] === value)?.[model] as { entered: number | null; completed: number | null } | undefined) ?? { entered: 0, completed: 0 };
          const [we, wc] = want.credit.get(value)?.get(model) ?? [0, 0];
          if (!close(g.entered, we) || !close(g.completed, wc)) mismatches.push(`${where} channel=${value} ${model}: service ${g.entered}/${g.completed}, oracle ${we}/${wc}`);
        }
        // Credits sum to the people they credit: every answered column adds up to the totals.
        for (const [column, total] of [['entered', got.totals.entered], ['completed', got.totals.completed]] as const) {
          const cells = got.data.map((r) => (r[model] as Record<string, number | null>)[column] ?? null);
          if (cells.every((c) => c === null)) continue;
          const sum = cells.reduce<number>((a, c) => a + (c ?? 0), 0);
          if (!close(sum, total)) mismatches.push(`${where} ${model} ${column}: rows sum to ${sum}, totals ${total}`);
        }
      }
      if (got.data.some((r) => typeof (r['markov'] as Json)['completed'] === 'number' && (r['value'] !== 'Unattributed'))) answered += 1;
    }
    expect(mismatches).toEqual([]);
    // The comparison is not vacuous: markov answers completing on most seeds.
    expect(answered).toBeGreaterThan(SEEDS.length * 0.75);
  }, 300_000);
});

/** Runs `fn` over `items`, `parallel` at a time, results in input order. */
async function mapLimit<T, R>(items: readonly T[], parallel: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  }));
  return out;
}
