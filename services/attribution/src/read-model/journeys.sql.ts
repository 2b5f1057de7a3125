// The reads a journey computation makes, each a plain statement over one table (so planning stays
// cheap for a consumer's batch of a few outcomes): the scope's outcomes, their people's touches by
// identity, and the relationship starts stated by the other conversions of the same people and
// emails. journeys.ts turns them into outcome_journeys rows.
import type { TouchField } from '../analytics/journey-fields';
import { TOUCH_FIELDS } from '../analytics/journey-fields';

/**
 * Which outcomes a computation covers: ids (read by key), or one slice of a time range, the slices
 * cut by a hash of the identity (so one person's outcomes, and the history read for them, mostly
 * fall in one slice).
 */
export type OutcomeScope =
  | { by: 'ids'; conversionIds: readonly string[]; milestoneIds: readonly string[] }
  | { by: 'range'; from: Date; to: Date; part: number; parts: number };

const TIME = "DateTime64(3, 'UTC')";

function scopeCondition(scope: OutcomeScope, id: string, ids: string): string {
  if (scope.by === 'ids') return `${id} IN ${ids}`;
  return `occurred_at >= {scope_from:${TIME}} AND occurred_at < {scope_to:${TIME}}
    AND cityHash64(if(identity_id = '', toString(${id}), identity_id)) % {scope_parts:UInt32} = {scope_part:UInt32}`;
}

export function scopeParams(scope: OutcomeScope): Record<string, unknown> {
  if (scope.by === 'ids') return { conversion_ids: [...scope.conversionIds], milestone_ids: [...scope.milestoneIds] };
  return { scope_from: scope.from, scope_to: scope.to, scope_part: scope.part, scope_parts: scope.parts };
}

/** An outcome as a journey computation reads it (times in epoch ms). */
export interface OutcomeFact {
  kind: 'conversion' | 'milestone';
  outcome_id: string;
  identity_id: string;
  occurred_ms: number;
  value: number;
  event_type: string;
  event_name: string;
  stage: string;
  email: string;
  origin: string;
  relationship_started_ms: number | null;
}

/**
 * The scope's conversions (params: website, scopeParams), each once, with its value: the newest
 * written-back sales value, else its revenue, else 0.
 */
export function scopeConversionsSql(scope: OutcomeScope): string {
  const where = scopeCondition(scope, 'conversion_id', '{conversion_ids:Array(UUID)}');
  return `SELECT 'conversion' AS kind, toString(c.conversion_id) AS outcome_id, c.identity_id AS identity_id,
       toUnixTimestamp64Milli(c.occurred_at) AS occurred_ms,
       toFloat64(ifNull(if(v.has_value = 1, v.sales_value, c.revenue), 0)) AS value,
       toString(c.event_type) AS event_type, c.event_name AS event_name, '' AS stage, c.email AS email, toString(c.origin) AS origin,
       if(c.relationship_started_at IS NULL, NULL, toUnixTimestamp64Milli(assumeNotNull(c.relationship_started_at))) AS relationship_started_ms
  FROM (
    SELECT * FROM conversions WHERE website_id = {website:UUID} AND ${where}
     ORDER BY conversion_id LIMIT 1 BY conversion_id
  ) AS c
  LEFT JOIN (
    -- tuple(): argMax skips NULL arguments, so a cleared sales value would revive the one before it.
    SELECT conversion_id, argMax(tuple(sales_value), changed_at).1 AS sales_value, 1 AS has_value
      FROM conversion_outcomes
     WHERE website_id = {website:UUID} AND conversion_id IN (SELECT conversion_id FROM conversions WHERE website_id = {website:UUID} AND ${where})
     GROUP BY conversion_id
    HAVING sales_value IS NOT NULL
  ) AS v ON v.conversion_id = c.conversion_id`;
}

/** The scope's milestones (params: website, scopeParams), each once; the value is the amount. */
export function scopeMilestonesSql(scope: OutcomeScope): string {
  return `SELECT 'milestone' AS kind, milestone_id AS outcome_id, identity_id, toUnixTimestamp64Milli(occurred_at) AS occurred_ms,
       toFloat64(ifNull(amount, 0)) AS value, '' AS event_type, '' AS event_name, toString(stage) AS stage, email, 'import' AS origin,
       CAST(NULL AS Nullable(Int64)) AS relationship_started_ms
  FROM milestones
 WHERE website_id = {website:UUID} AND ${scopeCondition(scope, 'milestone_id', '{milestone_ids:Array(String)}')}
 ORDER BY milestone_id LIMIT 1 BY milestone_id`;
}

/** A session row of one identity, as touches_by_identity holds it (started_at in epoch ms). */
export type TouchRow = { identity_id: string; started_ms: number } & Record<Exclude<TouchField, 'started_at'>, string | number>;

const TOUCH_COLUMNS = TOUCH_FIELDS.filter((f) => f !== 'started_at').map((f) => (f === 'is_paid' ? f : `toString(${f}) AS ${f}`));

/** Session rows of the identities (params: workspace, website, ids, touch_from, touch_to), started in [touch_from, touch_to]. */
export const TOUCHES_OF_IDENTITIES_SQL = `SELECT identity_id, toUnixTimestamp64Milli(started_at) AS started_ms, ${TOUCH_COLUMNS.join(', ')}
  FROM touches_by_identity
 WHERE workspace_id = {workspace:UUID} AND identity_id IN {ids:Array(String)} AND website_id = {website:UUID}
   AND started_at >= {touch_from:${TIME}} AND started_at <= {touch_to:${TIME}}`;

/** Earliest stated relationship start (epoch ms) per key among the website's conversions (params: workspace, website, keys). */
export const BEGAN_BY_KEY_SQL = `SELECT key, toUnixTimestamp64Milli(min(began)) AS began_ms
  FROM outcome_keys
 WHERE workspace_id = {workspace:UUID} AND key IN {keys:Array(String)} AND website_id = {website:UUID} AND kind = 'conversion'
 GROUP BY key`;
