// GET /metrics (attribution.getMetrics): reads the request, runs one SQL pass per metric family
// that the requested metrics need (grouped, and ungrouped for window totals), and assembles rows.
import { settleFigureOrNull, type ClickHouseStore } from '@sightline/kit';
import { DATA_DRIVEN_MODEL_NAMES, type ApiRequest, type ApiResponse, type DataDrivenModelName, type MetricName } from '@sightline/proto-schemas';
import { DateTime } from 'luxon';
import { spendBy } from '../ads/spend';
import { analyticsContext, metaOf, type AnalyticsContext, type AnalyticsMeta } from '../analytics/context';
import { assertKnownStages } from '../analytics/stage-vocabulary';
import { dataDrivenAnswers, type DataDrivenAnswer } from './data-driven/credit';
import { metricsDefinitions } from './definitions';
import { CREDITED, INPUTS, METRIC_FAMILY, type MetricFamily } from './families';
import { bySessionAttributes, cohortSql, creditSql, customerSql, trafficSql, type FamilySql } from './family.sql';
import { readMetricsQuery, type MetricsQuery, type MetricsRawQuery } from './request';

/** Customer figures look back over every payment since this instant. */
const HISTORY_START = new Date('2000-01-01T00:00:00.000Z');
/** Safety bound on groups read back for ranking (a page dimension can have many values). */
const MAX_GROUPS = 100_000;

type Figures = Record<string, number>;
type Value = number | null;
export type MetricsRow = Record<string, string | number | null | Record<string, Value>>;

export interface MetricsBody {
  data: MetricsRow[];
  totals?: MetricsRow;
  meta: AnalyticsMeta;
}

interface Group {
  /** Key values: k_date, k0..k3 (and k_period for cohorts). */
  keys: Record<string, string>;
  figures: Figures;
}

export function metricsRpcHandlers(ch: ClickHouseStore) {
  return {
    'attribution.getMetrics': async (request: ApiRequest<MetricsRawQuery>): Promise<ApiResponse<MetricsBody>> => {
      const ctx = analyticsContext(request);
      const q = readMetricsQuery(ctx.request.query);
      if (q.stages.length > 0) await assertKnownStages(ch, ctx.workspaceId, q.stages);
      const body = q.groupBy[0] === 'cohort' ? await cohortAnswer(ch, ctx, q) : await metricsAnswer(ch, ctx, q);
      return { status: 200, body };
    },
  };
}

/** The traffic figures the requested metrics (and the inputs of ratios) read. */
function trafficFigures(q: MetricsQuery): string[] {
  const names = new Set<string>(q.metrics);
  for (const m of q.metrics) for (const input of INPUTS[m] ?? []) names.add(input);
  return ['visitors', 'sessions', 'pageviews', 'events'].filter((f) => names.has(f));
}

/** The distinct counts of the credit family the requested metrics (and the inputs of ratios) read. */
function creditCounts(q: MetricsQuery): ('influenced' | 'converters')[] {
  const names = new Set<string>(q.metrics);
  for (const m of q.metrics) for (const input of INPUTS[m] ?? []) names.add(input);
  return [...(names.has('influenced_conversions') ? ['influenced' as const] : []), ...(names.has('unique_converters') ? ['converters' as const] : [])];
}

/** The families the requested metrics (and the inputs of ratios) need. */
function familiesOf(q: MetricsQuery): Set<MetricFamily> {
  const names = new Set<MetricName>(q.metrics);
  for (const m of q.metrics) for (const input of INPUTS[m] ?? []) names.add(input);
  const families = new Set<MetricFamily>();
  for (const m of names) families.add(METRIC_FAMILY[m]);
  families.delete('ratio');
  return families;
}

function baseParams(ctx: AnalyticsContext<unknown>): Record<string, unknown> {
  return { website: ctx.website.id, workspace: ctx.workspaceId, from: ctx.from, to: ctx.to, tz: ctx.website.timezone };
}

/** Bit mask grouping() gives rows of `set`: a bit per key (first key highest), set when aggregated away. */
function maskOf(keys: readonly string[], set: readonly string[]): number {
  return keys.reduce((mask, key, i) => (set.includes(key) ? mask : mask | (1 << (keys.length - 1 - i))), 0);
}

/** Runs a family query; rows are split by grouping set (index into `sets`), keys outside the set dropped. */
async function run(ch: ClickHouseStore, family: FamilySql, params: Record<string, unknown>, sets: readonly (readonly string[])[]): Promise<Group[][]> {
  const rows = await ch.query<Record<string, unknown>>(`${family.sql}\nLIMIT ${MAX_GROUPS * sets.length}`, { ...params, ...family.params });
  const out: Group[][] = sets.map(() => []);
  const setByMask = new Map(sets.map((set, i) => [maskOf(family.keys, set), i]));
  for (const row of rows) {
    const index = sets.length > 1 ? setByMask.get(Number(row['g_mask'])) : 0;
    if (index === undefined) continue;
    const set = sets[index] as readonly string[];
    const keys: Record<string, string> = {};
    const figures: Figures = {};
    for (const [name, value] of Object.entries(row)) {
      if (name === 'g_mask') continue;
      if (family.keys.includes(name)) {
        if (set.includes(name)) keys[name] = String(value);
      } else {
        figures[name] = Number(value);
      }
    }
    out[index]?.push({ keys, figures });
  }
  return out;
}

/**
 * Runs every needed family once for all the grouping sets asked for (`sets`: subsets of the key
 * names k_date, k0..k3) and merges the families' figures by key, one map per set.
 */
async function gather(ch: ClickHouseStore, ctx: AnalyticsContext<unknown>, q: MetricsQuery, families: Set<MetricFamily>, sets: readonly (readonly string[])[]): Promise<Map<string, Group>[]> {
  const daily = sets.some((set) => set.includes('k_date'));
  const dims = sets.some((set) => set.some((k) => k !== 'k_date')) ? q.groupBy : [];
  const params = baseParams(ctx);
  // Independent queries run side by side (a ClickHouse server answers them at once; chDB runs one at
  // a time per connection) and are merged by group key.
  const jobs: Promise<Group[][]>[] = [];
  if (families.has('traffic')) {
    const figures = trafficFigures(q);
    const sessionFigures: string[] = figures.filter((f) => f === 'visitors' || f === 'sessions');
    // Visitors and sessions by session attributes come from the sessions layout even beside page views and events.
    const split = sessionFigures.length > 0 && sessionFigures.length < figures.length && bySessionAttributes(q, dims);
    for (const part of split ? [sessionFigures, figures.filter((f) => !sessionFigures.includes(f))] : [figures]) {
      jobs.push(run(ch, trafficSql(q, dims, daily, part, sets), params, sets));
    }
  }
  if (families.has('credit')) jobs.push(run(ch, creditSql(q, dims, daily, sets, creditCounts(q)), params, sets));
  if (families.has('customer') || (families.has('spend') && q.metrics.some((m) => m === 'cac' || m === 'ltv_cac'))) {
    jobs.push(run(ch, customerSql(q, dims, sets), { ...params, from: HISTORY_START, win_from: ctx.from }, sets));
  }
  const spendKey = q.groupBy[0] === 'platform' || q.groupBy[0] === 'ad_campaign' ? q.groupBy[0] : null;
  const spend = families.has('spend') ? spendBy(ch, { websiteId: ctx.website.id, from: ctx.from, to: ctx.to, by: spendKey ?? 'platform', timezone: ctx.website.timezone }) : null;
  const merged = sets.map(() => new Map<string, Group>());
  const add = (index: number, group: Group): void => {
    const map = merged[index] as Map<string, Group>;
    const key = JSON.stringify(group.keys);
    const existing = map.get(key);
    if (existing) Object.assign(existing.figures, group.figures);
    else map.set(key, { keys: group.keys, figures: { ...group.figures } });
  };
  for (const perSet of await Promise.all(jobs)) perSet.forEach((groups, i) => groups.forEach((g) => add(i, g)));
  if (spend) {
    const bySpend = await spend;
    const total = { spend: 0, impressions: 0, clicks: 0 };
    for (const s of bySpend.values()) {
      total.spend += s.spend;
      total.impressions += s.impressions;
      total.clicks += s.clicks;
    }
    sets.forEach((set, i) => {
      if (set.length === 0) add(i, { keys: {}, figures: total });
      else if (spendKey && set.length === 1 && set[0] === 'k0') for (const [label, s] of bySpend) add(i, { keys: { k0: label }, figures: { spend: s.spend, impressions: s.impressions, clicks: s.clicks } });
    });
  }
  return merged;
}

const DATA_DRIVEN: readonly string[] = DATA_DRIVEN_MODEL_NAMES;

/** Metrics whose value depends on the model (null for a model that could not answer). */
const BY_MODEL: ReadonlySet<MetricName> = new Set([...CREDITED, 'revenue_per_visitor', 'roas']);

/** markov and shapley over the window, when asked for (they need group_by=channel alone: request.ts). */
async function dataDriven(ch: ClickHouseStore, ctx: AnalyticsContext<unknown>, q: MetricsQuery): Promise<Map<DataDrivenModelName, DataDrivenAnswer>> {
  const models = q.models.filter((m): m is DataDrivenModelName => DATA_DRIVEN.includes(m));
  if (models.length === 0) return new Map();
  return dataDrivenAnswers(ch, { websiteId: ctx.website.id, from: ctx.from, to: ctx.to, excludeDirect: q.excludeDirect }, models);
}

/** Adds each answered model's credit by channel (k0) and its totals to the grouping sets' maps. */
function mergeDataDriven(results: Map<string, Group>[], sets: readonly (readonly string[])[], answers: Map<DataDrivenModelName, DataDrivenAnswer>): void {
  for (const [model, answer] of answers) {
    if (!answer.credits) continue;
    let conversions = 0;
    let value = 0;
    for (const c of answer.credits.values()) {
      conversions += c.conversions;
      value += c.value;
    }
    sets.forEach((set, i) => {
      const map = results[i] as Map<string, Group>;
      const put = (keys: Record<string, string>, figures: Figures): void => {
        const key = JSON.stringify(keys);
        const existing = map.get(key);
        if (existing) Object.assign(existing.figures, figures);
        else map.set(key, { keys, figures });
      };
      if (set.length === 0) put({}, { [`${model}__credit`]: conversions, [`${model}__value`]: value });
      else if (set.length === 1 && set[0] === 'k0') for (const [channel, c] of answer.credits as Map<string, { conversions: number; value: number }>) put({ k0: channel }, { [`${model}__credit`]: c.conversions, [`${model}__value`]: c.value });
    });
  }
}

const ratio = (numerator: number | undefined, denominator: number | undefined): Value =>
  denominator === undefined || denominator === 0 ? null : (numerator ?? 0) / denominator;

/** One metric's value from a group's figures (float noise settled); `model` picks the credited columns. */
function metricValue(metric: MetricName, f: Figures, model: string): Value {
  return settleFigureOrNull(rawMetricValue(metric, f, model));
}

function rawMetricValue(metric: MetricName, f: Figures, model: string): Value {
  const n = (name: string): number => f[name] ?? 0;
  switch (metric) {
    case 'visitors': case 'sessions': case 'pageviews': case 'events': return n(metric);
    case 'conversions': case 'milestones': return n(`${model}__credit`);
    case 'revenue': return n(`${model}__value`);
    case 'influenced_conversions': return n('influenced');
    case 'unique_converters': return n('converters');
    case 'customers': return n('customers');
    case 'lifetime_value': return n('lifetime_value');
    case 'avg_ltv': return ratio(f['lifetime_value'], f['customers']);
    case 'repeat_rate': return ratio(f['repeaters'], f['customers']);
    case 'avg_orders': return ratio(f['orders'], f['customers']);
    case 'revenue_per_customer': return ratio(f['window_revenue'], f['customers']);
    case 'conversion_rate': return ratio(f['converters'], f['visitors']);
    case 'pageviews_per_session': return ratio(f['pageviews'], f['sessions']);
    case 'revenue_per_visitor': return ratio(f[`${model}__value`], f['visitors']);
    case 'spend': case 'impressions': case 'clicks': return n(metric);
    case 'roas': return ratio(f[`${model}__value`], f['spend']);
    case 'cac': return ratio(f['spend'], f['new_customers']);
    case 'ltv_cac': {
      const cac = ratio(f['spend'], f['new_customers']);
      const ltv = ratio(f['new_ltv'], f['new_customers']);
      return cac === null || ltv === null || cac === 0 ? null : ltv / cac;
    }
    case 'cohort_mrr': return n('cohort_mrr');
  }
}

/** Metrics of a row: flat with one model; credited ones nested per model when several were asked. */
function metricsOf(q: MetricsQuery, f: Figures, hiddenModels: ReadonlySet<string> = new Set(), unanswered: ReadonlySet<string> = new Set()): MetricsRow {
  const row: MetricsRow = {};
  const nested = q.modelsExplicit && q.models.length > 1;
  const primary = q.models[0] as string;
  for (const metric of q.metrics) {
    if (nested && CREDITED.has(metric)) continue;
    row[metric] = unanswered.has(primary) && BY_MODEL.has(metric) ? null : metricValue(metric, f, primary);
  }
  if (nested) {
    for (const model of q.models) {
      const inner: Record<string, Value> = {};
      for (const metric of q.metrics) if (CREDITED.has(metric)) inner[metric] = hiddenModels.has(model) || unanswered.has(model) ? null : metricValue(metric, f, model);
      row[model] = inner;
    }
  }
  return row;
}

const label = (value: string | undefined): string => (value === undefined || value === '' ? '(none)' : value);

function keysOf(q: MetricsQuery, keys: Record<string, string>): MetricsRow {
  const row: MetricsRow = {};
  if (keys['k_date'] !== undefined) row['date'] = keys['k_date'];
  q.groupBy.forEach((d, i) => { row[d] = label(keys[`k${i}`]); });
  return row;
}

/** Ranking value of a group for one model: its first requested metric. */
function rankValue(q: MetricsQuery, g: Group, model: string): number {
  return metricValue(q.metrics[0] as MetricName, g.figures, model) ?? Number.NEGATIVE_INFINITY;
}

function byRank(q: MetricsQuery, model: string) {
  return (a: Group, b: Group): number => {
    const diff = rankValue(q, b, model) - rankValue(q, a, model);
    if (diff !== 0 && !Number.isNaN(diff)) return diff;
    return JSON.stringify(a.keys) < JSON.stringify(b.keys) ? -1 : 1;
  };
}

async function metricsAnswer(ch: ClickHouseStore, ctx: AnalyticsContext<MetricsRawQuery>, q: MetricsQuery): Promise<MetricsBody> {
  const families = familiesOf(q);
  const grouped = q.groupBy.length > 0;
  const definitions = metricsDefinitions(q);

  if (!grouped && !q.daily) {
    const total = (await gather(ch, ctx, q, families, [[]]))[0]?.get('{}') ?? { keys: {}, figures: {} };
    return { data: [metricsOf(q, total.figures)], meta: metaOf(ctx, { row_count: 1, truncated: false, definitions }) };
  }

  // One pass per family: the rows (by day when daily), the groups over the window, the totals.
  const dimKeys = q.groupBy.map((_, i) => `k${i}`);
  const sets: string[][] = q.daily ? [['k_date', ...dimKeys], ...(grouped ? [dimKeys] : []), []] : [dimKeys, []];
  const answers = dataDriven(ch, ctx, q);
  const results = await gather(ch, ctx, q, families, sets);
  const dataDrivenAnswered = await answers;
  mergeDataDriven(results, sets, dataDrivenAnswered);
  const unanswered = new Set([...dataDrivenAnswered].filter(([, a]) => !a.credits).map(([m]) => m as string));
  for (const [model, answer] of dataDrivenAnswered) definitions[model] = answer.definition;
  const dailyMap = q.daily ? (results[0] as Map<string, Group>) : new Map<string, Group>();
  const groupsMap = grouped ? (results[q.daily ? 1 : 0] as Map<string, Group>) : new Map<string, Group>();
  const totalsMap = results[results.length - 1] as Map<string, Group>;
  const totals = metricsOf(q, (totalsMap.get('{}') ?? { figures: {} }).figures, new Set(), unanswered);
  const groups = [...groupsMap.values()];
  const primary = q.models[0] as string;
  groups.sort(byRank(q, primary));
  const kept = grouped ? groups.slice(0, q.limit) : [];
  const truncated = grouped && groups.length > q.limit;

  // Several models: each ranks the groups by its own credit; a kept row beyond a model's own cut is null for it.
  const hiddenByGroup = new Map<string, Set<string>>();
  const truncatedModels: string[] = [];
  if (q.modelsExplicit && q.models.length > 1 && truncated) {
    for (const model of q.models.slice(1)) {
      const own = new Set([...groups].sort(byRank(q, model)).slice(0, q.limit).map((g) => JSON.stringify(g.keys)));
      let hidden = false;
      for (const g of kept) {
        const key = JSON.stringify(g.keys);
        if (own.has(key)) continue;
        hidden = true;
        const set = hiddenByGroup.get(key) ?? new Set<string>();
        set.add(model);
        hiddenByGroup.set(key, set);
      }
      if (hidden) truncatedModels.push(model);
    }
  }
  const multi = q.modelsExplicit && q.models.length > 1 ? { truncated_models: truncatedModels } : {};

  let data: MetricsRow[];
  if (!q.daily) {
    data = kept.map((g) => ({ ...keysOf(q, g.keys), ...metricsOf(q, g.figures, hiddenByGroup.get(JSON.stringify(g.keys)), unanswered) }));
  } else {
    const daily = [...dailyMap.values()];
    if (grouped) {
      const rank = new Map(kept.map((g, i) => [JSON.stringify(g.keys), i]));
      const withoutDate = (g: Group): string => { const { k_date: _date, ...rest } = g.keys; return JSON.stringify(rest); };
      data = daily
        .filter((g) => rank.has(withoutDate(g)))
        .sort((a, b) => ((a.keys['k_date'] ?? '') < (b.keys['k_date'] ?? '') ? -1 : (a.keys['k_date'] ?? '') > (b.keys['k_date'] ?? '') ? 1 : (rank.get(withoutDate(a)) ?? 0) - (rank.get(withoutDate(b)) ?? 0)))
        .map((g) => ({ ...keysOf(q, g.keys), ...metricsOf(q, g.figures) }));
    } else {
      const byDate = new Map(daily.map((g) => [g.keys['k_date'] as string, g]));
      data = daysOf(ctx).map((date) => ({ date, ...metricsOf(q, byDate.get(date)?.figures ?? {}) }));
    }
  }
  return {
    data,
    totals,
    meta: metaOf(ctx, { row_count: data.length, truncated, definitions, ...multi }),
  };
}

/** Every calendar day of the window in the website timezone, oldest first. */
function daysOf(ctx: AnalyticsContext<unknown>): string[] {
  const days: string[] = [];
  const end = DateTime.fromJSDate(ctx.to, { zone: ctx.website.timezone });
  for (let day = DateTime.fromJSDate(ctx.from, { zone: ctx.website.timezone }).startOf('day'); day < end; day = day.plus({ days: 1 })) {
    days.push(day.toISODate() as string);
  }
  return days;
}

async function cohortAnswer(ch: ClickHouseStore, ctx: AnalyticsContext<MetricsRawQuery>, q: MetricsQuery): Promise<MetricsBody> {
  const params = { ...baseParams(ctx), from: HISTORY_START, to: new Date(), win_from: ctx.from, win_to: ctx.to };
  const [groups = []] = await run(ch, cohortSql(), params, [['k0', 'k_period']]);
  const truncated = groups.length > q.limit;
  const data = groups.slice(0, q.limit).map((g) => {
    const row: MetricsRow = { cohort: g.keys['k0'] as string, period_index: Number(g.keys['k_period']) };
    for (const metric of q.metrics) row[metric] = metricValue(metric, g.figures, q.models[0] as string);
    return row;
  });
  const definitions = {
    ...metricsDefinitions(q),
    cohort: 'Month (YYYY-MM, website timezone) of the customer\'s first paid outcome. The window selects cohorts whose first payment falls in it; payments of every later month count.',
    period_index: 'Months since the cohort month; 0 is the cohort month itself.',
    customers: 'Customers of the cohort who paid in that period.',
  };
  return { data, meta: metaOf(ctx, { row_count: data.length, truncated, definitions }) };
}
