// What GET /attribution/coverage should answer, from the rules its meta.definitions state: a
// revenue fact is a conversion in the window with a value above zero, put in the first bucket that
// applies of attributed, imported_contact, predates_tracking, no_visitor, no_sessions.
import { conversionsIn, type OracleDataset } from './dataset';
import type { OracleConversion, OracleWindow } from './types';

export const COVERAGE_BUCKETS = ['attributed', 'predates_tracking', 'imported_contact', 'no_visitor', 'no_sessions'] as const;
export type CoverageBucket = (typeof COVERAGE_BUCKETS)[number];

export interface CoverageRow {
  amount: number;
  facts: number;
}

/**
 * - attributed: the conversion has a journey;
 * - imported_contact: imported from a system of record (origin import);
 * - predates_tracking: the relationship began (the earliest time any of the person's conversions
 *   occurred or states as its relationship start, at any time) before the website's first tracked
 *   session; a website without sessions has no tracking start;
 * - no_visitor: the conversion carries no identity at all;
 * - no_sessions: a visitor is known but has no session in the lookback.
 */
export function bucketOf(c: OracleConversion, d: OracleDataset, trackingStartMs: number | null): CoverageBucket {
  if (c.journey.length > 0) return 'attributed';
  if (c.origin === 'import') return 'imported_contact';
  const mine = d.conversions.filter((o) => o.person === c.person);
  const relationshipStartMs = Math.min(c.relationshipStartedMs ?? Infinity, ...mine.map((o) => Math.min(o.occurredMs, o.relationshipStartedMs ?? Infinity)));
  if (trackingStartMs !== null && relationshipStartMs < trackingStartMs) return 'predates_tracking';
  if (!c.hasIdentity) return 'no_visitor';
  return 'no_sessions';
}

export function expectedCoverage(d: OracleDataset, w: OracleWindow): Map<CoverageBucket, CoverageRow> {
  const rows = new Map<CoverageBucket, CoverageRow>(COVERAGE_BUCKETS.map((b) => [b, { amount: 0, facts: 0 }]));
  const trackingStartMs = d.sessions.length > 0 ? Math.min(...d.sessions.map((s) => s.startMs)) : null;
  for (const c of conversionsIn(d, w)) {
    if (!(c.revenue > 0)) continue;
    const row = rows.get(bucketOf(c, d, trackingStartMs)) as CoverageRow;
    row.amount += c.revenue;
    row.facts += 1;
  }
  return rows;
}
