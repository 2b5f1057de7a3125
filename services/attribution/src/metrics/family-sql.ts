// One SQL statement per metric family of GET /metrics. Each returns rows of group keys (k_date,
// k0..k3) and the family's base figures; metrics.rpc.ts turns them into the requested metrics.
import type { AttributionModelName, DimensionName } from '@sightline/proto-schemas';
import { outcomeJourneysSql, outcomesSql, ROOTS_SQL, touchField, touchFieldsIn, unattributedTouch } from '../analytics/outcome-journeys';
import { groupKeys, whereSql, type Conditions } from './conditions';
import type { MetricsQuery } from './request';

export interface FamilySql extends Conditions {
  keys: string[];
}

const DAY_OF = (column: string): string => `toString(toDate(${column}, {tz:String}))`;
const MS = (column: string): string => `toUnixTimestamp64Milli(${column})`;
const HALF_LIFE_MS = 7 * 86_400_000;

/**
 * The GROUP BY of a family query. With several grouping sets (for example the rows and the window
 * totals) one pass computes them all; `g_mask` (ClickHouse grouping(): a bit per key, set when the
 * key is aggregated away) tells the sets apart.
 */
function grouping(keys: string[], sets: readonly (readonly string[])[] | undefined): { columns: string[]; clause: string } {
  if (keys.length === 0) return { columns: [], clause: '' };
  if (!sets || sets.length <= 1) return { columns: [], clause: `GROUP BY ${keys.join(', ')}` };
  return {
    columns: [`grouping(${keys.join(', ')}) AS g_mask`],
    clause: `GROUP BY GROUPING SETS (${sets.map((set) => `(${set.join(', ')})`).join(', ')})`,
  };
}

/** Figures over touch_events: each event once (by id); a visitor or session counts when the session started in the window. */
const EVENT_FIGURES: Record<string, string> = {
  visitors: "uniqExactIf(e.person, e.person != '' AND e.session_id != '' AND e.session_started_at >= {from:DateTime64(3, 'UTC')}) AS visitors",
  sessions: "uniqExactIf(e.session_id, e.session_id != '' AND e.session_started_at >= {from:DateTime64(3, 'UTC')}) AS sessions",
  pageviews: "uniqExactIf(e.event_id, e.event_type = 'pageview') AS pageviews",
  events: 'uniqExact(e.event_id) AS events',
};

/** The same visitors and sessions over `touches` (one row per session and identity: about a fifth of the rows). */
const SESSION_FIGURES: Record<string, string> = {
  visitors: "uniqExactIf(e.person, e.person != '') AS visitors",
  sessions: 'uniqExact(e.session_id) AS sessions',
};

/** Columns `touches` has under the names touch_events uses (session attributes). */
const SESSION_COLUMNS: ReadonlySet<string> = new Set([
  'session_id', 'identity_id', 'channel', 'source', 'medium', 'campaign', 'term', 'content', 'referrer_domain', 'landing_page',
  'device_type', 'browser', 'operating_system', 'country', 'region', 'city', 'is_paid', 'ad_platform',
]);

const columnsIn = (text: string): string[] => [...new Set([...text.matchAll(/\be\.([a-z_]+)/g)].map((m) => m[1] as string))].filter((c) => c !== 'person');

/**
 * visitors, sessions, pageviews, events. Only the figures asked for are computed and only the
 * columns they read are scanned (a column store's cost is the columns it reads); visitors and
 * sessions by session attributes read the sessions (`touches`), anything needing events reads
 * touch_events. Both count a session (and its person) when the session started in the window.
 */
export function trafficSql(q: MetricsQuery, dims: readonly DimensionName[], daily: boolean, figures: readonly string[], sets?: readonly (readonly string[])[]): FamilySql {
  const where = whereSql(q, 'traffic', 'e.is_paid');
  const probe = groupKeys(dims, 'traffic', null);
  const bySessions = figures.every((f) => f in SESSION_FIGURES)
    && columnsIn([...probe.select, where.sql].join(' ')).every((c) => SESSION_COLUMNS.has(c));
  const table = bySessions ? 'touches' : 'touch_events';
  const time = bySessions ? 'started_at' : 'occurred_at';
  const { select, names } = groupKeys(dims, 'traffic', daily ? DAY_OF(`e.${time}`) : null);
  const groups = grouping(names, sets);
  const aggregates = figures.map((f) => (bySessions ? SESSION_FIGURES : EVENT_FIGURES)[f] as string);
  const text = [...select, ...aggregates, where.sql].join(' ');
  const needsPerson = text.includes('e.person');
  const scanned = [...new Set([...columnsIn(text), ...(needsPerson ? ['identity_id'] : [])])];
  const rows = `SELECT ${scanned.length > 0 ? scanned.join(', ') : '1 AS one'} FROM ${table}
       WHERE website_id = {website:UUID} AND ${time} >= {from:DateTime64(3, 'UTC')} AND ${time} < {to:DateTime64(3, 'UTC')}`;
  const source = needsPerson
    ? `(SELECT ev.*, if(r.root_id = '', ev.identity_id, r.root_id) AS person
         FROM (${rows}) AS ev
         LEFT JOIN ${ROOTS_SQL} AS r ON r.identity_id = ev.identity_id)`
    : `(${rows})`;
  const sql = `SELECT ${[...select, ...groups.columns, ...aggregates].join(',\n  ')}
FROM ${source} AS e
WHERE ${where.sql}
${groups.clause}`;
  return { sql, params: where.params, keys: names };
}

/** Weight of touch i of n under each model (x is the touch tuple, tj the journey or [Unattributed]). */
export const MODEL_WEIGHT: Record<AttributionModelName, string> = {
  first_touch: 'if(i = 1, 1., 0.)',
  last_touch: 'if(i = length(tj), 1., 0.)',
  linear: '1. / length(tj)',
  u_shaped: 'multiIf(length(tj) = 1, 1., length(tj) = 2, 0.5, i = 1 OR i = length(tj), 0.4, 0.2 / (length(tj) - 2))',
  time_decay: `if(n = 0, 1., pow(0.5, (${MS('occurred_at')} - ${MS(touchField('x', 'started_at'))}) / ${HALF_LIFE_MS}) / decay_sum)`,
};

/** The outcome rows with their journeys (carrying the touch fields `reads` uses) and the columns credited filters read. */
function creditedOutcomes(q: MetricsQuery, reads: string): string {
  const fields = touchFieldsIn(reads);
  const source = q.stages.length > 0 ? 'milestones' : 'conversions';
  const where = q.stages.length > 0 ? ['stage IN {stages:Array(String)}'] : [];
  const usesCrm = q.filters.some((f) => f.dimension === 'crm_stage' || f.dimension === 'crm_account_stage');
  const crm = usesCrm
    ? `LEFT JOIN (
        SELECT if(r.root_id = '', m.identity_id, r.root_id) AS crm_person, argMax(toString(m.stage), m.occurred_at) AS crm_stage,
               argMaxIf(toString(m.stage), m.occurred_at, m.company_id != '') AS crm_account_stage
          FROM (SELECT * FROM milestones WHERE website_id = {website:UUID} AND identity_id != '') AS m
          LEFT JOIN ${ROOTS_SQL} AS r ON r.identity_id = m.identity_id
         GROUP BY crm_person
      ) AS crm ON crm.crm_person = j.person`
    : '';
  return `SELECT j.*, length(j.journey) AS n, if(n = 0, [${unattributedTouch(fields)}], j.journey) AS tj,
       arraySum(y -> pow(0.5, (${MS('j.occurred_at')} - ${MS(touchField('y', 'started_at'))}) / ${HALF_LIFE_MS}), j.journey) AS decay_sum,
       (SELECT min(started_at) FROM touches WHERE website_id = {website:UUID}) AS tracking_started_at
       ${usesCrm ? ', crm.crm_stage AS crm_stage, crm.crm_account_stage AS crm_account_stage' : ''}
  FROM (${outcomeJourneysSql({ source, where, fields })}) AS j
  ${crm}`;
}

/**
 * Credited figures: per model m, `m__credit` (sum of weights) and `m__value` (weighted revenue);
 * `influenced` (distinct outcomes touching the group) and `converters` (distinct people).
 */
export function creditSql(q: MetricsQuery, dims: readonly DimensionName[], daily: boolean, sets?: readonly (readonly string[])[]): FamilySql {
  const { select, names } = groupKeys(dims, 'credit', daily ? DAY_OF('occurred_at') : null);
  const groups = grouping(names, sets);
  const where = whereSql(q, 'credit', touchField('x', 'is_paid'));
  const perModel = q.models.flatMap((m) => [
    `sum(${MODEL_WEIGHT[m]}) AS ${m}__credit`,
    `sum(${MODEL_WEIGHT[m]} * value) AS ${m}__value`,
  ]);
  const columns = [...select, ...groups.columns, ...perModel, 'uniqExact(outcome_id) AS influenced', 'uniqExact(person) AS converters'].join(',\n  ');
  const sql = `SELECT ${columns}
FROM (${creditedOutcomes(q, columns + where.sql)})
ARRAY JOIN tj AS x, arrayEnumerate(tj) AS i
WHERE ${where.sql}
${groups.clause}`;
  return { sql, params: { ...where.params, stages: q.stages }, keys: names };
}

/**
 * Customers: people with a paid outcome (value > 0) in the window, grouped by the acquiring touch
 * (first touch of their first paid outcome ever). Run with from = the start of history and
 * win_from = the window start, so lifetime figures see every earlier payment.
 */
export function customerSql(q: MetricsQuery, dims: readonly DimensionName[], sets?: readonly (readonly string[])[]): FamilySql {
  const { select, names } = groupKeys(dims, 'customer', null);
  const groups = grouping(names, sets);
  const where = whereSql(q, 'customer', touchField('x', 'is_paid'));
  const columns = [...select, ...groups.columns,
    'count() AS customers', 'sum(p_ltv) AS lifetime_value', 'sum(p_orders) AS orders', 'countIf(p_orders > 1) AS repeaters',
    'sum(p_window_revenue) AS window_revenue', "countIf(first_paid_at >= {win_from:DateTime64(3, 'UTC')}) AS new_customers",
    "sumIf(p_ltv, first_paid_at >= {win_from:DateTime64(3, 'UTC')}) AS new_ltv"].join(',\n  ');
  const fields = touchFieldsIn(columns + where.sql);
  const sql = `SELECT ${columns}
FROM (
  SELECT person, min(occurred_at) AS first_paid_at, sum(value) AS p_ltv, count() AS p_orders,
         sumIf(value, occurred_at >= {win_from:DateTime64(3, 'UTC')}) AS p_window_revenue,
         countIf(occurred_at >= {win_from:DateTime64(3, 'UTC')}) AS in_window,
         argMin(if(empty(journey), ${unattributedTouch(fields)}, journey[1]), occurred_at) AS x
    FROM (${outcomeJourneysSql({ source: 'conversions', where: ['value > 0'], fields })})
   GROUP BY person
  HAVING in_window > 0
)
WHERE ${where.sql}
${groups.clause}`;
  return { sql, params: where.params, keys: names };
}

/**
 * Retention curve: cohorts are people by the month (website timezone) of their first paid
 * outcome; the window selects cohorts, every payment up to now counts. Run with from = the
 * start of history, to = now, win_from/win_to = the window.
 */
export function cohortSql(): FamilySql {
  const sql = `SELECT formatDateTime(cohort_month, '%Y-%m') AS k0, toUInt32(dateDiff('month', cohort_month, month)) AS k_period,
       sum(value) AS cohort_mrr, uniqExact(person) AS customers
  FROM (
    SELECT person, value, toStartOfMonth(occurred_at, {tz:String}) AS month,
           min(toStartOfMonth(occurred_at, {tz:String})) OVER (PARTITION BY person) AS cohort_month,
           min(occurred_at) OVER (PARTITION BY person) AS first_paid_at
      FROM (${outcomesSql({ source: 'conversions', where: ['value > 0'] })})
  )
 WHERE first_paid_at >= {win_from:DateTime64(3, 'UTC')} AND first_paid_at < {win_to:DateTime64(3, 'UTC')}
 GROUP BY k0, k_period
 ORDER BY k0, k_period`;
  return { sql, params: {}, keys: ['k0', 'k_period'] };
}
