// markov and shapley in a funnel breakdown, from the entered people's counted journeys
// (breakdown.sql.ts `journeysSql`). Two outcomes are credited, each as its own game:
// - completing: the converting journeys are the people who completed, the non-converting ones the
//   people who entered and did not (the Markov chain ends in conversion or null);
// - entering: every entered person's journey converts (the chain has no null end, so a channel's
//   removal effect is the probability that a journey passes through it).
// People without a touch are Unattributed under both models, as under the rule models. A column
// (entered or completed) that no journey with a touch reaches is null on every row, with the
// reason in meta.definitions, never zero.
import { CONVERSION, describeRemovalEffects, describeShapleyAccuracy, markovFromTransitions, NULL_END, shapleyCredits, type Transition } from '@sightline/credit-models';
import { DEFAULT_LOOKBACK_DAYS, type DataDrivenModelName } from '@sightline/proto-schemas';
import { JOURNEY_END } from './breakdown.sql';

const UNATTRIBUTED = 'Unattributed';

/** One row of the journeys query. */
export interface JourneyRow {
  kind: 'step' | 'set' | 'none' | 'total';
  from_state: string;
  to_state: string;
  channels: string[];
  entered: number | string;
  completed: number | string;
}

export interface FunnelJourneys {
  /** Transitions between the chain's START, channels and JOURNEY_END, with the journeys making them and those of people who completed. */
  steps: { from: string; to: string; entered: number; completed: number }[];
  /** Each distinct set of channels of a journey with a touch, with its people. */
  sets: { channels: string[]; entered: number; completed: number }[];
  /** People without a touch. */
  none: { entered: number; completed: number };
  totals: { entered: number; completed: number };
}

export function journeysOf(rows: readonly JourneyRow[]): FunnelJourneys {
  const out: FunnelJourneys = { steps: [], sets: [], none: { entered: 0, completed: 0 }, totals: { entered: 0, completed: 0 } };
  for (const r of rows) {
    const counts = { entered: Number(r.entered), completed: Number(r.completed) };
    if (r.kind === 'step') out.steps.push({ from: r.from_state, to: r.to_state, ...counts });
    else if (r.kind === 'set') out.sets.push({ channels: r.channels, ...counts });
    else if (r.kind === 'none') out.none = counts;
    else out.totals = counts;
  }
  return out;
}

/** One column's credit by channel (Unattributed included), or null when the model cannot answer it. */
export type ColumnCredit = Map<string, number> | null;

export interface FunnelModelAnswer {
  entered: ColumnCredit;
  completed: ColumnCredit;
  definition: string;
}

function withUnattributed(credit: Map<string, number>, none: number): Map<string, number> {
  if (none > 0) credit.set(UNATTRIBUTED, (credit.get(UNATTRIBUTED) ?? 0) + none);
  return credit;
}

function usedOf(j: FunnelJourneys, excludeDirect: boolean): { entered: number; completed: number; text: string } {
  const entered = j.sets.reduce((a, s) => a + s.entered, 0);
  const completed = j.sets.reduce((a, s) => a + s.completed, 0);
  const text = `Journeys used: ${entered} of the people who entered had a touch, ${completed} of them completed (one journey each: their sessions in the ${DEFAULT_LOOKBACK_DAYS} days up to entering, oldest first${excludeDirect ? ', Direct touches dropped unless all are Direct' : ''}); ${j.none.entered} without a touch, credited to Unattributed.`;
  return { entered, completed, text };
}

/** The chain of one outcome: `completing` ends completed journeys in conversion and the rest in null; entering ends all in conversion. */
function chainOf(j: FunnelJourneys, completing: boolean): Transition[] {
  return j.steps.flatMap(({ from, to, entered, completed }): Transition[] => {
    if (to !== JOURNEY_END) return [{ from, to, count: entered }];
    if (!completing) return [{ from, to: CONVERSION, count: entered }];
    return [{ from, to: CONVERSION, count: completed }, { from, to: NULL_END, count: entered - completed }];
  });
}

export function funnelMarkov(j: FunnelJourneys, excludeDirect: boolean): FunnelModelAnswer {
  const used = usedOf(j, excludeDirect);
  const column = (completing: boolean, total: number): { credit: ColumnCredit; text: string } => {
    const name = completing ? 'completed' : 'entered';
    const result = total > 0 ? markovFromTransitions(chainOf(j, completing)) : null;
    if (!result) return { credit: null, text: `${name}: null, no person with a touch ${completing ? 'completed' : 'entered'}, so there is no probability to remove from.` };
    const credit = new Map([...result.shares].map(([c, share]) => [c, share * total]));
    return { credit: withUnattributed(credit, completing ? j.none.completed : j.none.entered), text: `${name}: ${describeRemovalEffects(result, completing ? 'completing' : 'entering')}` };
  };
  const entered = column(false, used.entered);
  const completed = column(true, used.completed);
  return {
    entered: entered.credit,
    completed: completed.credit,
    definition: 'markov: first-order Markov chain start > channel > ... per journey, each channel credited by its removal effect (1 - P(outcome without it) / P(outcome)), normalised to the outcome\'s people with a touch. completed: the chain ends in conversion for people who completed, in null for those who entered and did not. entered: every journey ends in conversion (people who never entered are not in a funnel\'s data), so a channel\'s removal effect is the probability that a journey passes through it. The two columns are normalised separately, so a row\'s completed can exceed its entered (and its conversion_rate exceed 1) when the channel weighs more in completing than in entering. '
      + `${used.text} ${entered.text} ${completed.text}`,
  };
}

export function funnelShapley(j: FunnelJourneys, excludeDirect: boolean): FunnelModelAnswer {
  const used = usedOf(j, excludeDirect);
  // One game with two payoffs: entering (the people of a channel set) and completing.
  const result = used.entered > 0 ? shapleyCredits(j.sets.map((s) => ({ channels: s.channels, conversions: s.entered, value: s.completed }))) : null;
  const method = 'shapley: the Shapley value of each channel in the game whose coalition value is the people whose journey\'s channels all lie within the coalition: those who entered (entered) and those who completed (completed); each column sums to its people with a touch, and completed never exceeds entered on a row.';
  if (!result) return { entered: null, completed: null, definition: `${method} ${used.text} null: no person with a touch entered, so every coalition is worth nothing.` };
  const how = describeShapleyAccuracy(result, { first: 'entered people', second: 'completed people' });
  const entered = withUnattributed(new Map([...result.credits].map(([c, v]) => [c, v.conversions])), j.none.entered);
  const completed = used.completed > 0 ? withUnattributed(new Map([...result.credits].map(([c, v]) => [c, v.value])), j.none.completed) : null;
  const completedText = completed ? '' : ' completed: null, no person with a touch completed, so every coalition is worth nothing.';
  return { entered, completed, definition: `${method} ${used.text} ${how}${completedText}` };
}

export function funnelDataDriven(j: FunnelJourneys, models: readonly DataDrivenModelName[], excludeDirect: boolean): Map<DataDrivenModelName, FunnelModelAnswer> {
  return new Map(models.map((m) => [m, m === 'markov' ? funnelMarkov(j, excludeDirect) : funnelShapley(j, excludeDirect)]));
}
