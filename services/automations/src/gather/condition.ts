// A threshold condition over gathered figures: the number it compares (the figure itself, or its
// change against the previous period), and whether it holds.
import type { Condition } from '../spec/spec';
import type { Figure } from './gather';

export interface Evaluation {
  holds: boolean;
  /** The number compared with condition.value (null when it cannot be computed). */
  measured: number | null;
  /** Why it could not be computed (a missing figure, no baseline). */
  note: string | null;
}

export function evaluate(condition: Condition, figures: Record<string, Figure>): Evaluation {
  const figure = figures[condition.figure];
  if (!figure || figure.value === null) return { holds: false, measured: null, note: `${condition.figure} has no value` };
  let measured = figure.value;
  if ((condition.compare ?? 'value') === 'previous_period') {
    const previous = figure.previous?.value ?? null;
    if (previous === null) return { holds: false, measured: null, note: `${condition.figure} has no value for the previous period` };
    if ((condition.change ?? 'percent') === 'percent') {
      if (previous === 0) return { holds: false, measured: null, note: `${condition.figure} was 0 in the previous period: no baseline for a per-cent change` };
      measured = ((figure.value - previous) / Math.abs(previous)) * 100;
    } else {
      measured = figure.value - previous;
    }
  }
  return { holds: compare(measured, condition.op, condition.value), measured, note: null };
}

export function compare(a: number, op: Condition['op'], b: number): boolean {
  switch (op) {
    case 'gt': return a > b;
    case 'gte': return a >= b;
    case 'lt': return a < b;
    case 'lte': return a <= b;
  }
}
