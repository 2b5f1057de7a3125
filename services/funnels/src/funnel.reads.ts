// Funnel reads: GET /funnels/{id}/steps (with an optional comparison window) and
// GET /funnels/{id}/breakdown, answered from the read model when the funnel's attempts are built
// (one query for every window), else from the events (one query per window); funnel.sql.ts.
import { ProblemError, type ClickHouseStore } from '@sightline/kit';
import { resolveWindow, type ResolvedWindow } from '@sightline/periods';
import { ATTRIBUTION_MODELS, DEFAULT_LOOKBACK_DAYS, MAX_WINDOW_DAYS, type RuleModelName, type ApiRequest } from '@sightline/proto-schemas';
import type { FunnelDefinition } from './definition';
import { attemptsBreakdownQuery, attemptsStepsQuery, breakdownQuery, DAY_MS, stepsQuery, TOTAL_MARK, type AttemptsRef, type FunnelWindow, type ReadScope } from './funnel.sql';

export interface StepRow {
  index: number;
  name: string;
  reached: number;
  conv_vs_prev: number | null;
  conv_vs_first: number | null;
  median_seconds_from_previous: number | null;
}

export interface Counts {
  entered: number;
  completed: number;
  conversion_rate: number | null;
}

export interface BreakdownRow {
  value: string;
  models: Partial<Record<RuleModelName, Counts>>;
  /** Set on the row that folds the values beyond `limit`. */
  other?: true;
}

export interface WindowQuery {
  period?: string;
  from?: string;
  to?: string;
}

/** The request window resolved in the website timezone (invalid-window, window-too-large as problems). */
export function windowOf(request: ApiRequest<WindowQuery>, now?: Date): ResolvedWindow {
  if (!request.website) throw new Error(`${request.operation} needs a resolved website`);
  const { period, from, to } = request.query;
  return resolveWindow({
    timezone: request.website.timezone,
    ...(period !== undefined ? { period } : {}),
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
    ...(now ? { now } : {}),
  });
}

export const msWindow = (w: ResolvedWindow): FunnelWindow => ({ fromMs: Date.parse(w.from), toMs: Date.parse(w.to) });

/** The comparison window: the preceding one of equal length, or the same one shifted back N days. */
export function comparisonWindow(window: FunnelWindow, compareDays: string): FunnelWindow {
  if (compareDays === 'previous') return { fromMs: 2 * window.fromMs - window.toMs, toMs: window.fromMs };
  const days = /^[1-9][0-9]*$/.test(compareDays) ? Number(compareDays) : NaN;
  if (!(days >= 1 && days <= MAX_WINDOW_DAYS)) {
    throw new ProblemError('invalid-request', {
      detail: `compare_days ${JSON.stringify(compareDays)} is neither "previous" nor a number of days from 1 to ${MAX_WINDOW_DAYS}.`,
      remediation: `Send compare_days=previous, or a whole number of days from 1 to ${MAX_WINDOW_DAYS}.`,
    });
  }
  return { fromMs: window.fromMs - days * DAY_MS, toMs: window.toMs - days * DAY_MS };
}

interface StepsRow {
  reached_counts: (number | string)[];
  median_seconds: (number | string | null)[];
}

/**
 * Steps of each window (the comparison window runs beside the period, in parallel): from the read
 * model's attempts (`ref`) or, while they are being built (`ref` null), from the events.
 */
export async function computeSteps(ch: ClickHouseStore, definition: FunnelDefinition, windows: readonly FunnelWindow[], scope: ReadScope, ref: AttemptsRef | null): Promise<StepRow[][]> {
  return Promise.all(windows.map(async (window) => {
    const { sql, params } = ref ? attemptsStepsQuery(definition, ref, window, scope) : stepsQuery(definition, window, scope);
    const [row] = await ch.query<StepsRow>(sql, params);
    return stepRows(definition, row);
  }));
}

function stepRows(definition: FunnelDefinition, row: StepsRow | undefined): StepRow[] {
  const reached = (row?.reached_counts ?? definition.steps.map(() => 0)).map(Number);
  const medians = row?.median_seconds ?? [];
  return definition.steps.map((step, index) => {
    const here = reached[index] as number;
    const previous = index === 0 ? null : (reached[index - 1] as number);
    const first = reached[0] as number;
    const median = index === 0 || here === 0 || definition.step_order === 'any_order' ? null : Number(medians[index - 1]);
    return {
      index,
      name: step.name,
      reached: here,
      conv_vs_prev: previous === null || previous === 0 ? null : here / previous,
      conv_vs_first: first === 0 ? null : here / first,
      median_seconds_from_previous: median === null || !Number.isFinite(median) ? null : median,
    };
  });
}

export interface Breakdown {
  rows: BreakdownRow[];
  totals: { entered: number; completed: number };
  truncated: boolean;
}

const counts = (entered: number, completed: number): Counts => ({ entered, completed, conversion_rate: entered > 0 ? completed / entered : null });

/** Breakdown of a window, from the read model's attempts (`ref`) or, while they are built, from the events. */
export async function computeBreakdown(
  ch: ClickHouseStore, definition: FunnelDefinition, window: FunnelWindow, scope: ReadScope, dimension: string, models: readonly RuleModelName[], limit: number,
  ref: AttemptsRef | null,
): Promise<Breakdown> {
  const { sql, params } = ref ? attemptsBreakdownQuery(definition, ref, window, scope, dimension, models) : breakdownQuery(definition, window, scope, dimension, models);
  const raw = await ch.query<Record<string, string | number>>(sql, params);
  const total = raw.find((r) => r['value'] === TOTAL_MARK);
  const totals = { entered: Math.round(Number(total?.['e0'] ?? 0)), completed: Math.round(Number(total?.['c0'] ?? 0)) };
  // An empty value is reported as (none), together with any value spelled so.
  const merged = new Map<string, { e: number[]; c: number[] }>();
  for (const r of raw) {
    if (r['value'] === TOTAL_MARK) continue;
    const value = r['value'] === '' ? '(none)' : String(r['value']);
    const row = merged.get(value) ?? { e: models.map(() => 0), c: models.map(() => 0) };
    models.forEach((_, i) => {
      (row.e[i] as number) += Number(r[`e${i}`]);
      (row.c[i] as number) += Number(r[`c${i}`]);
    });
    merged.set(value, row);
  }
  const values = [...merged.entries()]
    .map(([value, r]) => ({ value, e: r.e, c: r.c }))
    // Rows no model credits are absent, as a value nobody touched.
    .filter((r) => r.e.some((x) => x > 0))
    .sort((a, b) => (b.e[0] as number) - (a.e[0] as number) || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  const kept = values.slice(0, limit);
  const folded = values.slice(limit);
  const rows: BreakdownRow[] = kept.map((r) => ({ value: r.value, models: Object.fromEntries(models.map((m, i) => [m, counts(r.e[i] as number, r.c[i] as number)])) }));
  if (folded.length > 0) {
    rows.push({
      value: 'Other',
      other: true,
      models: Object.fromEntries(models.map((m, i) => [m, counts(folded.reduce((s, r) => s + (r.e[i] as number), 0), folded.reduce((s, r) => s + (r.c[i] as number), 0))])),
    });
  }
  return { rows, totals, truncated: folded.length > 0 };
}

/** What each figure of a steps answer means, for meta.definitions. */
export function stepDefinitions(definition: FunnelDefinition): Record<string, string> {
  const order = {
    sequential: 'Steps in the given order; other events may happen between them.',
    strict: 'Steps in the given order, each the person\'s very next tracked event after the previous step (identify calls are not counted as events).',
    any_order: 'Every step within the window, in any order; steps 0..k count as reached when distinct events fill each of them.',
  }[definition.step_order];
  return {
    reached: 'People who entered in the window (an event matching the first step, and the audience filter, inside the period) and satisfied this step and every earlier one, each step by a later event (events of the same millisecond count in step order), each event filling at most one step, all within window_days of the entry. Never increases from one step to the next.',
    conv_vs_prev: 'reached divided by the previous step\'s reached.',
    conv_vs_first: 'reached divided by the first step\'s reached.',
    median_seconds_from_previous: definition.step_order === 'any_order'
      ? 'Not given under any_order: the steps have no order, so no step-to-step time.'
      : 'Median seconds from the previous step to this one, over the people who reached this step (of each person, the attempt that first reached their furthest step; the mean of the two middle values for an even count).',
    scope: definition.scope === 'visitor'
      ? 'visitor: every person, anonymous or known, devices stitched together by the identity graph.'
      : 'user: only people known by an email or phone (from any of their events) or named by a revenue fact, with their whole stitched history.',
    step_order: `${definition.step_order}: ${order}`,
    window_days: `Each later step at most ${definition.window_days} × 24 hours after the first (inclusive); steps may fall after the end of the period, so people who entered near its end may still convert.`,
  };
}

export function breakdownDefinitions(models: readonly RuleModelName[], dimension: string): Record<string, string> {
  const credited = {
    first_touch: 'the first touch (oldest session) in the lookback',
    last_touch: 'the last touch before entering (the session the person entered in, when it was a session)',
    linear: 'every touch in the lookback equally',
    u_shaped: '40% the first and 40% the last touch, 20% shared by those between (one touch 100%, two 50/50)',
    time_decay: 'every touch by recency before entering, halving every 7 days, normalised',
    last_non_direct: 'the last touch before entering whose channel is not Direct (the last touch when all are Direct)',
  } satisfies Record<RuleModelName, string>;
  return {
    entered: `Credit for people who entered the funnel, split across the ${dimension} of the touches (sessions) they started in the ${DEFAULT_LOOKBACK_DAYS} days up to entering; Unattributed when they had none; (none) for an empty value.`,
    completed: 'Credit for people who completed every step, with the same weights as entered (so completed ≤ entered on every row).',
    conversion_rate: 'completed / entered of the row.',
    ...Object.fromEntries(models.map((m) => [m, `${ATTRIBUTION_MODELS.find((d) => d.name === m)?.description ?? m} Here it credits ${credited[m]}.`])),
    Other: 'The values beyond `limit`, folded into one row (marked `other: true`) so that rows add up to totals.',
  };
}
