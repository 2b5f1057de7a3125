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
import { ROOTS_SQL, outcomeJourneysSql } from '../analytics/outcome-journeys';

export interface CoverageRow {
  bucket: string;
  amount: number;
  facts: string | number;
}

/** Person of a stored conversion row `c`, as outcomesSql resolves it (r = ROOTS_SQL joined on c). */
const PERSON = "if(c.identity_id = '', concat('conversion:', toString(c.conversion_id)), if(r.root_id = '', c.identity_id, r.root_id))";

/** When a conversion row shows the relationship had begun: its stated start, else its own time. */
const BEGAN = 'least(c.occurred_at, ifNull(c.relationship_started_at, c.occurred_at))';

/**
 * Amount and fact count per bucket (params: journeyParams). The relationship of a fact began at
 * the earliest of: its own relationship_started_at and time, and those of every conversion of
 * the same person (through merges) or the same email on the website, at any time.
 */
export function coverageSql(): string {
  return `WITH
    tracking AS (
      SELECT minOrNull(started_at) AS began FROM touches WHERE website_id = {website:UUID}
    ),
    by_person AS (
      SELECT ${PERSON} AS person, toNullable(min(${BEGAN})) AS began
        FROM (SELECT * FROM conversions WHERE website_id = {website:UUID}) AS c
        LEFT JOIN ${ROOTS_SQL} AS r ON r.identity_id = c.identity_id
       GROUP BY person
    ),
    by_email AS (
      SELECT lower(trim(c.email)) AS email, toNullable(min(${BEGAN})) AS began
        FROM conversions AS c
       WHERE c.website_id = {website:UUID} AND trim(c.email) != ''
       GROUP BY email
    ),
    facts AS (
      SELECT j.value AS value,
             multiIf(
               notEmpty(j.journey), 'attributed',
               j.origin = 'import', 'imported_contact',
               (SELECT began FROM tracking) IS NOT NULL
                 AND least(ifNull(p.began, j.occurred_at), ifNull(e.began, j.occurred_at), ifNull(j.relationship_started_at, j.occurred_at), j.occurred_at)
                     < (SELECT began FROM tracking), 'predates_tracking',
               NOT j.has_visitor, 'no_visitor',
               'no_sessions'
             ) AS bucket
        FROM (${outcomeJourneysSql({ source: 'conversions', where: ['value > 0'], fields: [] })}) AS j
        LEFT JOIN by_person AS p ON p.person = j.person
        LEFT JOIN by_email AS e ON e.email = lower(trim(j.email))
    )
  SELECT bucket, round(sum(value), 6) AS amount, count() AS facts
    FROM facts
   GROUP BY bucket`;
}
