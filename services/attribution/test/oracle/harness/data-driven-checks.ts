// The new models against the oracle, for the differential and property tests: last_non_direct,
// markov and shapley by channel in one request, and the five rule models with exclude_direct.
// Besides agreement, each model's rows must add up to its totals, and its totals to the window's
// conversions and revenue (or, for a model that cannot answer, every value null with a reason).
import {
  ATTRIBUTION_MODELS, conversionsIn, creditedMetrics, oracleJourneys, oracleMarkov, oracleShapley,
  type Credit, type OracleDataset, type OracleWindow, type RuleModel,
} from '../index';
import { compareKeyed, Differences } from './compare';

type Row = Record<string, unknown>;
export interface ModelsBody {
  data: Row[];
  totals?: Row;
  meta: Row;
}

/** Reads GET /metrics with these query values (the caller adds website and window), null when it failed (noted). */
export type MetricsReader = (query: Record<string, string>, diff: Differences) => Promise<ModelsBody | null>;

const DATA_DRIVEN_REQUEST = ['last_non_direct', 'markov', 'shapley'] as const;

function expectedFor(data: OracleDataset, w: OracleWindow, model: string, excludeDirect: boolean): { rows: Map<string, Credit> | null; totals: Credit } {
  if (model === 'markov') return oracleMarkov(oracleJourneys(data, w, excludeDirect));
  if (model === 'shapley') return oracleShapley(oracleJourneys(data, w, excludeDirect));
  return creditedMetrics(data, w, model as RuleModel, 'channel', excludeDirect);
}

const credit = (v: unknown): Record<string, number> => {
  const o = (v ?? {}) as Row;
  return { conversions: Number(o['conversions'] ?? NaN), revenue: Number(o['revenue'] ?? NaN) };
};

function compareModels(diff: Differences, body: ModelsBody, data: OracleDataset, w: OracleWindow, models: readonly string[], excludeDirect: boolean): void {
  const window = conversionsIn(data, w);
  const windowTotals = { conversions: window.length, revenue: window.reduce((a, c) => a + c.revenue, 0) };
  for (const model of models) {
    const expected = expectedFor(data, w, model, excludeDirect);
    const totals = (body.totals?.[model] ?? {}) as Row;
    if (expected.rows === null) {
      // Cannot answer: null everywhere, never zero, and meta says why.
      const values = [...body.data.map((r) => (r[model] ?? {}) as Row), totals].flatMap((r) => [r['conversions'], r['revenue']]);
      if (values.some((v) => v !== null)) diff.note(`${model}: the oracle cannot answer, the service gave ${JSON.stringify(values.filter((v) => v !== null).slice(0, 4))}`);
      if (!String((body.meta['definitions'] as Row | undefined)?.[model] ?? '').startsWith(`${model}: null.`)) diff.note(`${model}: meta.definitions.${model} gives no reason for the null`);
      continue;
    }
    const rows = new Map(body.data.map((r) => [String(r['channel']), credit(r[model])]));
    compareKeyed(diff, model, rows, new Map([...expected.rows].map(([k, v]) => [k, { ...v }])), ['conversions', 'revenue']);
    // Credits sum to the attributed totals, and those are the window's.
    const sum = [...rows.values()].reduce<Credit>((a, r) => ({ conversions: a.conversions + (r['conversions'] ?? 0), revenue: a.revenue + (r['revenue'] ?? 0) }), { conversions: 0, revenue: 0 });
    diff.number(`${model} sum of rows.conversions`, sum.conversions, windowTotals.conversions);
    diff.number(`${model} sum of rows.revenue`, sum.revenue, windowTotals.revenue);
    diff.number(`${model} totals.conversions`, credit(totals).conversions, windowTotals.conversions);
    diff.number(`${model} totals.revenue`, credit(totals).revenue, windowTotals.revenue);
  }
}

/** last_non_direct, markov and shapley by channel, with or without exclude_direct. */
export async function checkDataDriven(read: MetricsReader, context: string, data: OracleDataset, w: OracleWindow, excludeDirect: boolean): Promise<string[]> {
  const diff = new Differences(`${context} /metrics group_by=channel attribution=${DATA_DRIVEN_REQUEST.join(',')} exclude_direct=${excludeDirect}`);
  const body = await read({ metrics: 'conversions,revenue', group_by: 'channel', attribution: DATA_DRIVEN_REQUEST.join(','), exclude_direct: String(excludeDirect), limit: '1000' }, diff);
  if (body) compareModels(diff, body, data, w, DATA_DRIVEN_REQUEST, excludeDirect);
  return diff.lines;
}

/** The five rule models by channel with exclude_direct=true. */
export async function checkExcludeDirect(read: MetricsReader, context: string, data: OracleDataset, w: OracleWindow): Promise<string[]> {
  const diff = new Differences(`${context} /metrics group_by=channel attribution=${ATTRIBUTION_MODELS.join(',')} exclude_direct=true`);
  const body = await read({ metrics: 'conversions,revenue', group_by: 'channel', attribution: ATTRIBUTION_MODELS.join(','), exclude_direct: 'true', limit: '1000' }, diff);
  if (body) compareModels(diff, body, data, w, ATTRIBUTION_MODELS, true);
  return diff.lines;
}
