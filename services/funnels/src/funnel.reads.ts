// Funnel reads: the request window, and GET /funnels/{id}/steps (with an optional comparison
// window), answered from the read model when the funnel's attempts are built (one query for every
// window), else from the events (one query per window); funnel.sql.ts. Breakdowns: breakdown.reads.ts.
import { ProblemError, type ClickHouseStore } from '@sightline/kit';
import { previousWindow, resolveWindow, shiftWindowDays, type ResolvedWindow } from '@sightline/periods';
import { MAX_WINDOW_DAYS, type ApiRequest } from '@sightline/proto-schemas';
import type { FunnelDefinition } from './definition';
import { attemptsStepsQuery, stepsQuery, type AttemptsRef, type FunnelWindow, type ReadScope } from './funnel.sql';

export interface StepRow {
  index: number;
  name: string;
  reached: number;
  conv_vs_prev: number | null;
  conv_vs_first: number | null;
  median_seconds_from_previous: number | null;
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

export const msWindow = (w: Pick<ResolvedWindow, 'from' | 'to'>): FunnelWindow => ({ fromMs: Date.parse(w.from), toMs: Date.parse(w.to) });

/**
 * The comparison window: the preceding one of equal length, or the same one shifted back N days,
 * both in local calendar days of the website timezone (equal milliseconds would be an hour off
 * across a daylight-saving change).
 */
export function comparisonWindow(window: ResolvedWindow, compareDays: string, timezone: string): FunnelWindow {
  if (compareDays === 'previous') return msWindow(previousWindow(window, timezone));
  const days = /^[1-9][0-9]*$/.test(compareDays) ? Number(compareDays) : NaN;
  if (!(days >= 1 && days <= MAX_WINDOW_DAYS)) {
    throw new ProblemError('invalid-request', {
      detail: `compare_days ${JSON.stringify(compareDays)} is neither "previous" nor a number of days from 1 to ${MAX_WINDOW_DAYS}.`,
      remediation: `Send compare_days=previous, or a whole number of days from 1 to ${MAX_WINDOW_DAYS}.`,
    });
  }
  return msWindow(shiftWindowDays(window, -days, timezone));
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
