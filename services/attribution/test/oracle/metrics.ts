// What GET /metrics should answer: credited conversions and revenue per dimension value under each
// model, and the plain counts (visitors, sessions, pageviews, conversions) of a window.
import { conversionsIn, inWindow, type OracleDataset } from './dataset';
import { modelWeights } from './models';
import { UNATTRIBUTED, type OracleSession, type OracleWindow, type RuleModel } from './types';

export const EMPTY_LABEL = '(none)';

export const TOUCH_DIMENSIONS = ['channel', 'source', 'medium', 'campaign'] as const;
export type TouchDimension = (typeof TOUCH_DIMENSIONS)[number];

export interface Credit {
  conversions: number;
  revenue: number;
}

export interface CreditedMetrics {
  /** Keyed by the dimension value. */
  rows: Map<string, Credit>;
  totals: Credit;
}

/** The label of a touch: its value, `(none)` when empty (meta.definitions.labels). */
export function touchLabel(touch: OracleSession, dimension: TouchDimension): string {
  const value = touch[dimension];
  return value === null || value === '' ? EMPTY_LABEL : value;
}

/**
 * Each conversion's credit spread over its touches' values; a conversion with no touch is
 * Unattributed. excludeDirect: Direct touches leave the journey first, unless it has only Direct.
 */
export function creditedMetrics(d: OracleDataset, w: OracleWindow, model: RuleModel, dimension: TouchDimension, excludeDirect = false): CreditedMetrics {
  const rows = new Map<string, Credit>();
  const add = (label: string, share: number, revenue: number) => {
    const row = rows.get(label) ?? { conversions: 0, revenue: 0 };
    row.conversions += share;
    row.revenue += share * revenue;
    rows.set(label, row);
  };
  const totals: Credit = { conversions: 0, revenue: 0 };
  for (const c of conversionsIn(d, w)) {
    totals.conversions += 1;
    totals.revenue += c.revenue;
    if (c.journey.length === 0) {
      add(UNATTRIBUTED, 1, c.revenue);
      continue;
    }
    const others = c.journey.filter((t) => t.channel !== 'Direct');
    const journey = excludeDirect && others.length > 0 ? others : c.journey;
    const weights = modelWeights(model, journey.map((t) => t.startMs), c.occurredMs, journey.map((t) => t.channel));
    journey.forEach((t, i) => add(touchLabel(t, dimension), weights[i] as number, c.revenue));
  }
  return { rows, totals };
}

export interface PlainMetrics {
  visitors: number;
  sessions: number;
  pageviews: number;
  conversions: number;
}

/**
 * visitors: distinct people with a session started in the window; sessions: sessions started in
 * the window; pageviews: page view events in the window; conversions: conversions in the window.
 */
export function plainMetrics(d: OracleDataset, w: OracleWindow): PlainMetrics {
  const started = d.sessions.filter((s) => inWindow(s.startMs, w));
  return {
    visitors: new Set(started.map((s) => s.person)).size,
    sessions: started.length,
    pageviews: d.events.filter((e) => e.event_type === 'pageview' && inWindow(Date.parse(e.occurred_at), w)).length,
    conversions: conversionsIn(d, w).length,
  };
}
