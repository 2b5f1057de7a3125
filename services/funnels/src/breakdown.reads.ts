// GET /funnels/{id}/breakdown: the rule models' credit and, for markov and shapley, the journeys
// (breakdown.sql.ts) of one window, from the read model when the funnel's attempts are built, else
// from the events; merged into one row per dimension value, values past `limit` folded into Other.
import type { ClickHouseStore } from '@sightline/kit';
import {
  ATTRIBUTION_MODELS, DATA_DRIVEN_MODEL_NAMES, DEFAULT_LOOKBACK_DAYS, RULE_MODEL_NAMES,
  type AttributionModelName, type DataDrivenModelName, type RuleModelName,
} from '@sightline/proto-schemas';
import { funnelDataDriven, journeysOf, type ColumnCredit, type FunnelModelAnswer, type JourneyRow } from './breakdown.data-driven';
import { attemptsBreakdownQueries, breakdownQueries, TOTAL_MARK } from './breakdown.sql';
import type { FunnelDefinition } from './definition';
import type { AttemptsRef, FunnelWindow, ReadScope } from './funnel.sql';

/** A model's figures on one row; entered and completed are null when the model cannot answer them (meta.definitions says why). */
export interface Counts {
  entered: number | null;
  completed: number | null;
  conversion_rate: number | null;
}

export interface BreakdownRow {
  value: string;
  models: Partial<Record<AttributionModelName, Counts>>;
  /** Set on the row that folds the values beyond `limit`. */
  other?: true;
}

export interface Breakdown {
  rows: BreakdownRow[];
  totals: { entered: number; completed: number };
  truncated: boolean;
  /** What markov and shapley used and found, by model (meta.definitions). */
  dataDriven: Map<DataDrivenModelName, FunnelModelAnswer>;
}

export interface BreakdownRequest {
  dimension: string;
  models: readonly AttributionModelName[];
  excludeDirect: boolean;
  limit: number;
}

const isRule = (m: string): m is RuleModelName => (RULE_MODEL_NAMES as readonly string[]).includes(m);
const isDataDriven = (m: string): m is DataDrivenModelName => (DATA_DRIVEN_MODEL_NAMES as readonly string[]).includes(m);

/** An empty value is reported as (none), together with any value spelled so. */
const label = (value: unknown): string => (value === '' ? '(none)' : String(value));

const add = (column: Map<string, number>, value: string, n: number) => column.set(value, (column.get(value) ?? 0) + n);

/** Breakdown of a window, from the read model's attempts (`ref`) or, while they are built, from the events. */
export async function computeBreakdown(
  ch: ClickHouseStore, definition: FunnelDefinition, window: FunnelWindow, scope: ReadScope, request: BreakdownRequest, ref: AttemptsRef | null,
): Promise<Breakdown> {
  const { models, limit } = request;
  const rules = models.filter(isRule);
  const dataDriven = models.filter(isDataDriven);
  const ask = { dimension: request.dimension, rules, journeys: dataDriven.length > 0, excludeDirect: request.excludeDirect };
  const queries = ref ? attemptsBreakdownQueries(definition, ref, window, scope, ask) : breakdownQueries(definition, window, scope, ask);
  const [ruleRows, journeyRows] = await Promise.all([
    queries.rules ? ch.query<Record<string, string | number>>(queries.rules.sql, queries.rules.params) : Promise.resolve([]),
    queries.journeys ? ch.query<JourneyRow>(queries.journeys.sql, queries.journeys.params) : Promise.resolve([]),
  ]);

  const entered = new Map<AttributionModelName, ColumnCredit>();
  const completed = new Map<AttributionModelName, ColumnCredit>();
  rules.forEach((model, i) => {
    const e = new Map<string, number>();
    const c = new Map<string, number>();
    for (const r of ruleRows) {
      if (r['value'] === TOTAL_MARK) continue;
      add(e, label(r['value']), Number(r[`e${i}`]));
      add(c, label(r['value']), Number(r[`c${i}`]));
    }
    entered.set(model, e);
    completed.set(model, c);
  });
  const journeys = journeysOf(journeyRows);
  const answers = funnelDataDriven(journeys, dataDriven, request.excludeDirect);
  // The people who entered and completed: the rule query's TOTAL_MARK row, else the journeys' count.
  const totalRow = ruleRows.find((r) => r['value'] === TOTAL_MARK);
  const totals = totalRow ? { entered: Math.round(Number(totalRow['e0'] ?? 0)), completed: Math.round(Number(totalRow['c0'] ?? 0)) } : journeys.totals;
  const relabel = (column: ColumnCredit): ColumnCredit => (column ? [...column].reduce((m, [v, n]) => add(m, label(v), n), new Map<string, number>()) : null);
  for (const [model, answer] of answers) {
    entered.set(model, relabel(answer.entered));
    completed.set(model, relabel(answer.completed));
  }

  const values = new Set<string>();
  for (const column of entered.values()) for (const v of column?.keys() ?? []) values.add(v);
  const rows = [...values]
    .map((value) => ({
      value,
      e: models.map((m) => { const col = entered.get(m); return col ? (col.get(value) ?? 0) : null; }),
      c: models.map((m) => { const col = completed.get(m); return col ? (col.get(value) ?? 0) : null; }),
    }))
    // Rows no model credits are absent, as a value nobody touched.
    .filter((r) => r.e.some((x) => x !== null && x > 0))
    .sort((a, b) => (b.e[0] ?? 0) - (a.e[0] ?? 0) || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  const kept = rows.slice(0, limit);
  const folded = rows.slice(limit);
  const countsOf = (e: (number | null)[], c: (number | null)[]) => Object.fromEntries(models.map((m, i) => [m, counts(e[i] ?? null, c[i] ?? null)]));
  const out: BreakdownRow[] = kept.map((r) => ({ value: r.value, models: countsOf(r.e, r.c) }));
  if (folded.length > 0) {
    // A column that cannot answer stays null on Other too.
    const fold = (column: Map<AttributionModelName, ColumnCredit>, pick: (r: (typeof rows)[number]) => (number | null)[]) =>
      models.map((m, i) => (column.get(m) === null ? null : folded.reduce((s, r) => s + (pick(r)[i] ?? 0), 0)));
    out.push({ value: 'Other', other: true, models: countsOf(fold(entered, (r) => r.e), fold(completed, (r) => r.c)) });
  }
  return { rows: out, totals, truncated: folded.length > 0, dataDriven: answers };
}

function counts(entered: number | null, completed: number | null): Counts {
  return { entered, completed, conversion_rate: entered !== null && completed !== null && entered > 0 ? completed / entered : null };
}

/** What each figure of a breakdown means, for meta.definitions. */
export function breakdownDefinitions(models: readonly AttributionModelName[], dimension: string, excludeDirect: boolean, dataDriven: ReadonlyMap<DataDrivenModelName, FunnelModelAnswer>): Record<string, string> {
  const credited = {
    first_touch: 'the first touch (oldest session) in the lookback',
    last_touch: 'the last touch before entering (the session the person entered in, when it was a session)',
    linear: 'every touch in the lookback equally',
    u_shaped: '40% the first and 40% the last touch, 20% shared by those between (one touch 100%, two 50/50)',
    time_decay: 'every touch by recency before entering, halving every 7 days, normalised',
    last_non_direct: 'the last touch before entering whose channel is not Direct (the last touch when all are Direct)',
  } satisfies Record<RuleModelName, string>;
  const described = (m: AttributionModelName): string => {
    const base = ATTRIBUTION_MODELS.find((d) => d.name === m)?.description ?? m;
    return isRule(m) ? `${base} Here it credits ${credited[m]}.` : `${base} Here: ${dataDriven.get(m)?.definition ?? ''}`;
  };
  return {
    entered: `Credit for people who entered the funnel, split across the ${dimension} of the touches (sessions) they started in the ${DEFAULT_LOOKBACK_DAYS} days up to entering; Unattributed when they had none; (none) for an empty value. null under a data-driven model that cannot answer (its definition says why).`,
    completed: 'Credit for people who completed every step: under the rule models with the same weights as entered (so completed ≤ entered on every row); under markov and shapley by their own game for completing (see each).',
    conversion_rate: 'completed / entered of the row; null when entered is 0 or either is null.',
    ...(excludeDirect ? { exclude_direct: 'Direct touches were dropped from every journey before any model weighed it (the remaining touches renormalised); a journey of only Direct touches stayed Direct.' } : {}),
    ...Object.fromEntries(models.map((m) => [m, described(m)])),
    Other: 'The values beyond `limit`, folded into one row (marked `other: true`) so that rows add up to totals.',
  };
}
