// GET /attribution/coverage: how much of the window's recorded revenue could be attributed, and
// why the rest could not. Classification and sums run in ClickHouse (coverage.sql.ts); every
// bucket is answered, zero when empty, in the fixed order of COVERAGE_BUCKETS.
import type { ClickHouseStore } from '@sightline/kit';
import { COVERAGE_BUCKETS, DEFAULT_LOOKBACK_DAYS, EXPECTED_COVERAGE_BUCKETS, type ApiRequest, type ApiResponse } from '@sightline/proto-schemas';
import { analyticsContext, metaOf, type AnalyticsMeta, type WindowQuery } from '../analytics/context';
import { coverageSql, type CoverageRow } from './coverage.sql';

export type CoverageBucket = (typeof COVERAGE_BUCKETS)[number];

export interface CoverageEntry {
  bucket: CoverageBucket;
  amount: number;
  facts: number;
  share: number;
  expected: boolean;
}

export interface CoverageBody {
  data: CoverageEntry[];
  meta: AnalyticsMeta;
}

const EXPECTED: readonly string[] = EXPECTED_COVERAGE_BUCKETS;

export function coverageRpcHandlers(ch: ClickHouseStore) {
  return {
    'attribution.getAttributionCoverage': async (request: ApiRequest<WindowQuery>): Promise<ApiResponse<CoverageBody>> => {
      const ctx = analyticsContext(request);
      const rows = await ch.query<CoverageRow>(
        coverageSql(),
        { website: ctx.website.id, from: ctx.from, to: ctx.to },
      );
      const byBucket = new Map(rows.map((r) => [r.bucket, r]));
      const total = rows.reduce((sum, r) => sum + Number(r.amount), 0);
      const data = COVERAGE_BUCKETS.map((bucket): CoverageEntry => {
        const row = byBucket.get(bucket);
        const amount = row ? Number(row.amount) : 0;
        return { bucket, amount, facts: row ? Number(row.facts) : 0, share: total > 0 ? amount / total : 0, expected: EXPECTED.includes(bucket) };
      });
      const amountOf = (bucket: CoverageBucket): number => data.find((d) => d.bucket === bucket)?.amount ?? 0;
      const meta = metaOf(ctx, {
        row_count: data.length,
        truncated: false,
        definitions: DEFINITIONS,
        total_amount: roundMoney(total),
        total_facts: data.reduce((sum, d) => sum + d.facts, 0),
        expected_gap_amount: roundMoney(amountOf('predates_tracking') + amountOf('imported_contact')),
        worth_investigating_amount: roundMoney(amountOf('no_visitor') + amountOf('no_sessions')),
        lookback_days: DEFAULT_LOOKBACK_DAYS,
      });
      return { status: 200, body: { data, meta } };
    },
  };
}

/** Sums of sums pick up binary noise (0.1 + 0.2); amounts keep six decimals, as the SQL does. */
function roundMoney(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

const DEFINITIONS: Record<string, string> = {
  amount: 'Recorded revenue of the facts in the bucket, in the website currency. A revenue fact is a conversion in the window whose value is above zero; a sales value written back through PATCH /contacts replaces the tracked revenue. These are recorded revenue facts: they do not tie line for line to /metrics credit, which spreads revenue across touches and counts milestones separately.',
  facts: 'Revenue facts in the bucket.',
  share: 'amount divided by the recorded revenue of every bucket.',
  expected: 'True for permanent facts (attributed, predates_tracking, imported_contact); false for no_visitor and no_sessions, which indicate a tracking or identity problem.',
  attributed: `The fact has a journey: the person (every merged device) had a session in the ${DEFAULT_LOOKBACK_DAYS} days up to it.`,
  imported_contact: 'No journey, and the conversion was imported from a system of record (origin import), so it never passed through the tracker.',
  predates_tracking: 'No journey, and the customer relationship began before the website\'s first tracked session. The relationship began at the earliest of the conversion\'s relationship_started_at and the first conversion known for the same person or email (at any time), not at the payment date. A website with no tracked session yet has no tracking start, so nothing predates it.',
  no_visitor: 'No journey and no identity at all: the conversion could not be tied to any visitor (for example a server-side event without anonymous_id or email).',
  no_sessions: `No journey although a visitor is known: the person had no session in the ${DEFAULT_LOOKBACK_DAYS} days up to the fact (never tracked, or only earlier sessions outside the lookback).`,
  precedence: 'Each fact is in exactly one bucket, the first that applies: attributed, imported_contact, predates_tracking, no_visitor, no_sessions.',
  expected_gap_amount: 'meta: amount of predates_tracking plus imported_contact, revenue that is expected to lack a journey.',
  worth_investigating_amount: 'meta: amount of no_visitor plus no_sessions, revenue that lacks a journey for a reason worth fixing.',
};
