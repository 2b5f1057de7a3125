// What GET /paths should answer: one row per distinct ordered sequence of touch labels.
import { conversionsIn, type OracleDataset } from './dataset';
import { touchLabel, type TouchDimension } from './metrics';
import { UNATTRIBUTED, type OracleSession, type OracleWindow } from './types';

export const TRUNCATION_MARKER = '...';

export interface PathRow {
  path: string[];
  outcomes: number;
  revenue: number;
  share: number;
}

export function pathOf(journey: readonly OracleSession[], step: TouchDimension, maxTouches: number): string[] {
  if (journey.length === 0) return [UNATTRIBUTED];
  const labels = journey.map((t) => touchLabel(t, step));
  return labels.length > maxTouches ? [...labels.slice(0, maxTouches), TRUNCATION_MARKER] : labels;
}

/** Keyed by JSON of the path. share = outcomes / all outcomes in the window. */
export function expectedPaths(d: OracleDataset, w: OracleWindow, step: TouchDimension, maxTouches: number): Map<string, PathRow> {
  const conversions = conversionsIn(d, w);
  const rows = new Map<string, PathRow>();
  for (const c of conversions) {
    const path = pathOf(c.journey, step, maxTouches);
    const key = JSON.stringify(path);
    const row = rows.get(key) ?? { path, outcomes: 0, revenue: 0, share: 0 };
    row.outcomes += 1;
    row.revenue += c.revenue;
    rows.set(key, row);
  }
  for (const row of rows.values()) row.share = row.outcomes / conversions.length;
  return rows;
}
