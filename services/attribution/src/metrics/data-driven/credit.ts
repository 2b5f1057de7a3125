// markov and shapley for GET /metrics: reads the window's journeys (journeys.sql.ts), computes each
// model's credit per channel, and says in words what was used. A model that cannot answer has no
// figures and a reason; its values are null, never zero.
import { CONVERSION, describeRemovalEffects, describeShapleyAccuracy, markovFromTransitions, NULL_END, shapleyCredits, START, transitionsOf, type Transition } from '@sightline/credit-models';
import type { ClickHouseStore } from '@sightline/kit';
import { DEFAULT_LOOKBACK_DAYS, type DataDrivenModelName } from '@sightline/proto-schemas';
import { UNATTRIBUTED } from '../../analytics/journey-fields';
import { convertingSetsSql, convertingTransitionsSql, nonConvertingTransitionsSql } from './journeys.sql';

const DAY_MS = 86_400_000;

export interface DataDrivenWindow {
  websiteId: string;
  from: Date;
  to: Date;
  excludeDirect: boolean;
}

/** One model's answer: credited conversions and revenue by channel (Unattributed included), or why there is none. */
export interface DataDrivenAnswer {
  credits: Map<string, { conversions: number; value: number }> | null;
  definition: string;
}

/** The window's journeys, as counts. */
export interface WindowJourneys {
  /** Conversions by their journey's channels: a sequence, or (as the service reads them) the distinct set; empty without a touch. */
  converting: { path: string[]; conversions: number; value: number }[];
  /** The converting journeys' Markov transitions; derived from `converting` when absent (which must then hold sequences). */
  convertingTransitions?: Transition[];
  nonConverting: Transition[];
}

/** The window's journeys; the transitions (converting and not) only `withTransitions` (markov). */
export async function readWindowJourneys(ch: ClickHouseStore, w: DataDrivenWindow, withTransitions: boolean): Promise<WindowJourneys> {
  const params = {
    website: w.websiteId, from: w.from, to: w.to, lookback_from: new Date(w.from.getTime() - DEFAULT_LOOKBACK_DAYS * DAY_MS),
    start_state: START, null_state: NULL_END, conversion_state: CONVERSION,
  };
  type TransitionRow = { from_state: string; to_state: string; n: number | string };
  const [converting, convertingSteps, nonConverting] = await Promise.all([
    ch.query<{ path: string[]; conversions: number | string; value: number | string }>(convertingSetsSql(w.excludeDirect), params),
    withTransitions ? ch.query<TransitionRow>(convertingTransitionsSql(w.excludeDirect), params) : Promise.resolve([]),
    withTransitions ? ch.query<TransitionRow>(nonConvertingTransitionsSql(w.excludeDirect), params) : Promise.resolve([]),
  ]);
  const transitions = (rows: TransitionRow[]): Transition[] => rows.map((r) => ({ from: r.from_state, to: r.to_state, count: Number(r.n) }));
  return {
    converting: converting.map((r) => ({ path: r.path, conversions: Number(r.conversions), value: Number(r.value) })),
    convertingTransitions: transitions(convertingSteps),
    nonConverting: transitions(nonConverting),
  };
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Conversions and revenue without a touch: Unattributed under every model. */
function unattributedOf(j: WindowJourneys): { conversions: number; value: number } {
  return j.converting.filter((r) => r.path.length === 0).reduce((a, r) => ({ conversions: a.conversions + r.conversions, value: a.value + r.value }), { conversions: 0, value: 0 });
}

function withUnattributed(credits: Map<string, { conversions: number; value: number }>, j: WindowJourneys): Map<string, { conversions: number; value: number }> {
  const none = unattributedOf(j);
  if (none.conversions > 0) credits.set(UNATTRIBUTED, none);
  return credits;
}

export function markovAnswer(j: WindowJourneys, excludeDirect: boolean): DataDrivenAnswer {
  const touched = j.converting.filter((r) => r.path.length > 0);
  const conversions = touched.reduce((a, r) => a + r.conversions, 0);
  const value = touched.reduce((a, r) => a + r.value, 0);
  // Every non-converting journey with a touch leaves start once.
  const nullJourneys = j.nonConverting.filter((t) => t.from === START).reduce((a, t) => a + t.count, 0);
  const transitions = [...(j.convertingTransitions ?? transitionsOf(touched.map((r) => ({ path: r.path, conversions: r.conversions, nulls: 0 })))), ...j.nonConverting];
  const used = `Journeys used: ${plural(conversions, 'converting journey')} with a touch (the window's conversions) and ${plural(nullJourneys, 'non-converting journey')} (people with a session started in the window and no conversion in it; each their sessions in the ${DEFAULT_LOOKBACK_DAYS} days up to their last session of the window)${excludeDirect ? ', Direct touches dropped (a journey of only Direct stays Direct)' : ''}.`;
  const method = 'Method: first-order Markov chain start > channel > ... > conversion or null, transition probabilities from the observed transitions; a channel\'s removal effect is 1 - P(conversion without it) / P(conversion); credits are the removal effects normalised to sum to the converting journeys\' conversions and revenue. Conversions without a touch are Unattributed.';
  const result = markovFromTransitions(transitions);
  if (!result) {
    return { credits: null, definition: `markov: null. No converting journey with a touch in the window, so there is no conversion probability to remove from. ${used}` };
  }
  const credits = new Map([...result.shares].map(([c, share]) => [c, { conversions: share * conversions, value: share * value }]));
  return {
    credits: withUnattributed(credits, j),
    definition: `markov: ${method} ${used} Channels: ${plural(result.shares.size, 'channel')}; ${describeRemovalEffects(result, 'conversion')}`,
  };
}

export function shapleyAnswer(j: WindowJourneys, excludeDirect: boolean): DataDrivenAnswer {
  const touched = j.converting.filter((r) => r.path.length > 0);
  const conversions = touched.reduce((a, r) => a + r.conversions, 0);
  const used = `Journeys used: ${plural(conversions, 'converting journey')} with a touch (non-converting journeys do not change a coalition's conversions)${excludeDirect ? ', Direct touches dropped (a journey of only Direct stays Direct)' : ''}.`;
  const method = 'Method: Shapley value of each channel in the game whose coalition value is the conversions (and revenue) of the converting journeys whose channels all lie within the coalition; credits sum to those journeys\' conversions and revenue. Conversions without a touch are Unattributed.';
  const result = shapleyCredits(touched.map((r) => ({ channels: r.path, conversions: r.conversions, value: r.value })));
  if (!result) return { credits: null, definition: `shapley: null. No converting journey with a touch in the window, so every coalition is worth nothing. ${used}` };
  const how = describeShapleyAccuracy(result, { first: 'conversions', second: 'revenue' });
  return { credits: withUnattributed(new Map(result.credits), j), definition: `shapley: ${method} ${used} ${how}` };
}

/** Each requested data-driven model's answer over the window. */
export async function dataDrivenAnswers(ch: ClickHouseStore, w: DataDrivenWindow, models: readonly DataDrivenModelName[]): Promise<Map<DataDrivenModelName, DataDrivenAnswer>> {
  const journeys = await readWindowJourneys(ch, w, models.includes('markov'));
  return new Map(models.map((m) => [m, m === 'markov' ? markovAnswer(journeys, w.excludeDirect) : shapleyAnswer(journeys, w.excludeDirect)]));
}
