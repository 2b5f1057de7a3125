// The SQL of GET /attribution/coverage: every revenue fact of the window (a conversion whose value,
// written-back sales value included, is above zero) classified into one bucket, summed per bucket
// in ClickHouse.
//
// Precedence, first match wins:
//   attributed        the fact has a journey (a touch in the lookback)
//   imported_contact  origin = 'import' (came from a system of record, never through the tracker)
//   predates_tracking the customer relationship began before the website's first tracked session
//   no_visitor        no identity at all
//   no_sessions       an identity, but no session in the lookback
// A journey beats every explanation for lacking one. Of the two permanent explanations the origin
// is a recorded fact and the relationship start is inferred, so the origin wins. Permanent
// explanations beat the two problem buckets, so only unexplained revenue is worth investigating.
import { outcomeRowsSql, TRACKING_STARTED_SQL } from '../analytics/outcome-rows.sql';

export interface CoverageRow {
  bucket: string;
  amount: number;
  facts: string | number;
}

/**
 * Amount and fact count per bucket (params: website, from, to). When the relationship of a fact
 * began (the earliest of its own time and relationship_started_at and those of every conversion of
 * the same person, through merges, or the same email on the website, at any time) is kept by the
 * read model as relationship_began.
 */
export function coverageSql(): string {
  return `SELECT bucket, round(sum(value), 6) AS amount, count() AS facts
    FROM (
      SELECT value,
             multiIf(
               n > 0, 'attributed',
               origin = 'import', 'imported_contact',
               tracking_began IS NOT NULL AND relationship_began < tracking_began, 'predates_tracking',
               has_visitor = 0, 'no_visitor',
               'no_sessions'
             ) AS bucket
        FROM (${outcomeRowsSql({ source: 'conversions', where: ['value > 0'] })}) AS o
        CROSS JOIN (SELECT ${TRACKING_STARTED_SQL} AS tracking_began) AS tracking
    )
   GROUP BY bucket`;
}
