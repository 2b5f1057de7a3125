// One SQL statement per metric family of GET /metrics. Each returns rows of group keys (k_date,
// k0..k3) and the family's base figures; metrics.rpc.ts turns them into the requested metrics.
// Credited and customer figures read the read model's outcome rows (analytics/outcome-rows.sql.ts);
// visitors and sessions read traffic_sessions; page views and events read traffic_events.
import { DIRECT_CHANNEL, RULE_MODEL_NAMES, type DimensionName, type RuleModelName } from '@sightline/proto-schemas';
import { ROOTS_SQL, touchField, touchFieldsIn, unattributedValue } from '../analytics/journey-fields';
import { HALF_LIFE_MS, outcomeRowsSql, outcomeTouchesSql, TRACKING_STARTED_SQL } from '../analytics/outcome-rows.sql';
import { groupKeys, whereSql, type Conditions } from './conditions';
import type { MetricsQuery } from './request';

export interface FamilySql extends Conditions {
  keys: string[];
}

const DAY_OF = (column: string): string => `toString(toDate(${column}, {tz:String}))`;
const MS = (column: string): string => `toUnixTimestamp64Milli(${column})`;

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

/**
 * Figures over traffic_events (read with FINAL: one row per event id); a visitor or session counts
 * when the session started in the window.
 */
const EVENT_FIGURES: Record<string, string> = {
  visitors: "uniqExactIf(e.person, e.person != '' AND e.session_id != '' AND e.session_started_at >= {from:DateTime64(3, 'UTC')}) AS visitors",
  sessions: "uniqExactIf(e.session_id, e.session_id != '' AND e.session_started_at >= {from:DateTime64(3, 'UTC')}) AS sessions",
  pageviews: "countIf(e.event_type = 'pageview') AS pageviews",
  events: 'count() AS events',
};

/**
 * Visitors and sessions over traffic_sessions (one row per session, its visitor resolved). person_key
 * is the 128-bit hash uniqExact would take of the person string, stored (0: no visitor): the count is the same.
 */
const SESSION_FIGURES: Record<string, string> = {
  visitors: 'uniqExactIf(e.person_key, e.person_key != 0) AS visitors',
  sessions: 'count() AS sessions',
};

/** Columns traffic_sessions has under the names traffic_events uses (session attributes). */
const SESSION_COLUMNS: ReadonlySet<string> = new Set([
  'session_id', 'identity_id', 'channel', 'source', 'medium', 'campaign', 'term', 'content', 'referrer_domain', 'landing_page',
  'device_type', 'browser', 'operating_system', 'country', 'region', 'city', 'is_paid', 'ad_platform',
]);

const columnsIn = (text: string): string[] => [...new Set([...text.matchAll(/\be\.([a-z_]+)/g)].map((m) => m[1] as string))].filter((c) => c !== 'person');

/** Whether the request's traffic dimensions and filters are all session attributes (traffic_sessions answers visitors and sessions). */
export function bySessionAttributes(q: MetricsQuery, dims: readonly DimensionName[]): boolean {
  const probe = groupKeys(dims, 'traffic', null);
  return columnsIn([...probe.select, whereSql(q, 'traffic', 'e.is_paid').sql].join(' ')).every((c) => SESSION_COLUMNS.has(c));
}

/**
 * visitors, sessions, pageviews, events (those in `figures`). Only the columns the query reads are
 * scanned (a column store's cost is the columns it reads). Visitors and sessions by session
 * attributes read traffic_sessions; anything needing events reads traffic_events. Both count a
 * session (and its person) when the session started in the window.
 */
export function trafficSql(q: MetricsQuery, dims: readonly DimensionName[], daily: boolean, figures: readonly string[], sets?: readonly (readonly string[])[]): FamilySql {
  const where = whereSql(q, 'traffic', 'e.is_paid');
  const bySessions = figures.every((f) => f in SESSION_FIGURES) && bySessionAttributes(q, dims);
  const time = bySessions ? 'started_at' : 'occurred_at';
  const { select, names } = groupKeys(dims, 'traffic', daily ? DAY_OF(`e.${time}`) : null);
  const groups = grouping(names, sets);
  const aggregates = figures.map((f) => (bySessions ? SESSION_FIGURES : EVENT_FIGURES)[f] as string);
  const text = [...select, ...aggregates, where.sql].join(' ');
  const window = `website_id = {website:UUID} AND ${time} >= {from:DateTime64(3, 'UTC')} AND ${time} < {to:DateTime64(3, 'UTC')}`;
  let source: string;
  if (bySessions) {
    const scanned = columnsIn(text);
    // Only the key filters the window before FINAL; the rest applies to the newest row of each session.
    source = `(SELECT ${scanned.length > 0 ? scanned.join(', ') : '1 AS one'} FROM traffic_sessions FINAL WHERE ${window}
               SETTINGS do_not_merge_across_partitions_select_final = 1)`;
  } else {
    const needsPerson = text.includes('e.person');
    const scanned = [...new Set([...columnsIn(text), ...(needsPerson ? ['identity_id'] : [])])];
    // Only the key filters the window before FINAL (an event's time never changes).
    const rows = `SELECT ${scanned.length > 0 ? scanned.join(', ') : '1 AS one'} FROM traffic_events FINAL WHERE ${window}
                  SETTINGS do_not_merge_across_partitions_select_final = 1`;
    source = needsPerson
      ? `(SELECT ev.*, if(r.root_id = '', ev.identity_id, r.root_id) AS person
           FROM (${rows}) AS ev
           LEFT JOIN ${ROOTS_SQL} AS r ON r.identity_id = ev.identity_id)`
      : `(${rows})`;
  }
  const sql = `SELECT ${[...select, ...groups.columns, ...aggregates].join(',\n  ')}
FROM ${source} AS e
WHERE ${where.sql}
${groups.clause}`;
  return { sql, params: where.params, keys: names };
}

/** Weight of touch i of a journey of tn touches under each model (n = 0: the one Unattributed touch). */
export const MODEL_WEIGHT: Record<RuleModelName, string> = {
  first_touch: 'if(i = 1, 1., 0.)',
  last_touch: 'if(i = tn, 1., 0.)',
  linear: '1. / tn',
  u_shaped: 'multiIf(tn = 1, 1., tn = 2, 0.5, i = 1 OR i = tn, 0.4, 0.2 / (tn - 2))',
  time_decay: `if(n = 0, 1., pow(0.5, (${MS('occurred_at')} - ${MS(touchField('x', 'started_at'))}) / {half_life_ms:Float64}) / decay_sum)`,
  // lnd_i: position of the last touch that is not Direct (0 when every touch is Direct: then the last).
  last_non_direct: 'if(i = if(lnd_i = 0, tn, lnd_i), 1., 0.)',
};

const RULE_MODELS: readonly string[] = RULE_MODEL_NAMES;

/** The requested models a per-touch weight answers (markov and shapley are computed apart, data-driven/). */
export function ruleModelsOf(q: MetricsQuery): RuleModelName[] {
  return q.models.filter((m): m is RuleModelName => RULE_MODELS.includes(m));
}

/** Latest CRM stage of each person (for the crm_stage filters), joined to the outcome row `o`. */
const CRM_JOIN = `LEFT JOIN (
        SELECT if(r.root_id = '', m.identity_id, r.root_id) AS crm_person, argMax(toString(m.stage), m.occurred_at) AS crm_stage,
               argMaxIf(toString(m.stage), m.occurred_at, m.company_id != '') AS crm_account_stage
          FROM (SELECT * FROM milestones WHERE website_id = {website:UUID} AND identity_id != '') AS m
          LEFT JOIN ${ROOTS_SQL} AS r ON r.identity_id = m.identity_id
         GROUP BY crm_person
      ) AS crm ON crm.crm_person = o.person`;

/**
 * Credited figures: per model m, `m__credit` (sum of weights) and `m__value` (weighted revenue);
 * with `counts`, `influenced` (distinct outcomes touching the group) and `converters` (distinct people).
 */
export function creditSql(q: MetricsQuery, dims: readonly DimensionName[], daily: boolean, sets?: readonly (readonly string[])[], counts: readonly ('influenced' | 'converters')[] = []): FamilySql {
  const { select, names } = groupKeys(dims, 'credit', daily ? DAY_OF('occurred_at') : null);
  const groups = grouping(names, sets);
  const where = whereSql(q, 'credit', touchField('x', 'is_paid'));
  const models = ruleModelsOf(q);
  const perModel = models.flatMap((m) => [
    `sum(${MODEL_WEIGHT[m]}) AS ${m}__credit`,
    `sum(${MODEL_WEIGHT[m]} * value) AS ${m}__value`,
  ]);
  // Distinct counts cost a hash set over every touch: only when asked for.
  const distinct = counts.map((c) => (c === 'influenced' ? 'uniqExact(outcome_id) AS influenced' : 'uniqExact(person) AS converters'));
  const columns = [...select, ...groups.columns, ...perModel, ...distinct].join(',\n  ');
  const reads = columns + where.sql;
  const usesCrm = q.filters.some((f) => f.dimension === 'crm_stage' || f.dimension === 'crm_account_stage');
  const lastNonDirect = models.includes('last_non_direct') ? `,\n           arrayLastIndex(c -> c != '${DIRECT_CHANNEL}', tj_channel) AS lnd_i` : '';
  const extra = `${reads.includes('tracking_started_at') ? `,\n           ${TRACKING_STARTED_SQL} AS tracking_started_at` : ''}${usesCrm ? ',\n           crm.crm_stage AS crm_stage, crm.crm_account_stage AS crm_account_stage' : ''}${lastNonDirect}`;
  // First and last touch credit, without counts over every touch, needs only each journey's two ends.
  const endpoints = counts.length === 0 && models.every((m) => m === 'first_touch' || m === 'last_touch');
  // last_non_direct and exclude_direct look at every touch's channel, whatever the grouping.
  const fields = [...new Set([...touchFieldsIn(reads), ...(lastNonDirect !== '' || q.excludeDirect ? ['channel' as const] : [])])];
  const scan = q.stages.length > 0
    ? { source: 'milestones' as const, where: ['stage IN {stages:Array(String)}'], fields }
    : { source: 'conversions' as const, fields };
  const sql = `SELECT ${columns}
FROM (${outcomeTouchesSql(scan, { endpoints, excludeDirect: q.excludeDirect, extraColumns: extra, joins: usesCrm ? CRM_JOIN : '' })})
WHERE ${where.sql}
${groups.clause}`;
  return { sql, params: { ...where.params, stages: q.stages, half_life_ms: HALF_LIFE_MS }, keys: names };
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
  const firstTouch = fields.map((f) => `argMin(if(n = 0, ${unattributedValue(f)}, j_${f}[1]), occurred_at) AS ${touchField('x', f)}`);
  const sql = `SELECT ${columns}
FROM (
  SELECT person, min(occurred_at) AS first_paid_at, sum(value) AS p_ltv, count() AS p_orders,
         sumIf(value, occurred_at >= {win_from:DateTime64(3, 'UTC')}) AS p_window_revenue,
         countIf(occurred_at >= {win_from:DateTime64(3, 'UTC')}) AS in_window${firstTouch.map((c) => `,\n         ${c}`).join('')}
    FROM (${outcomeRowsSql({ source: 'conversions', where: ['value > 0'], fields })})
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
      FROM (${outcomeRowsSql({ source: 'conversions', where: ['value > 0'] })})
  )
 WHERE first_paid_at >= {win_from:DateTime64(3, 'UTC')} AND first_paid_at < {win_to:DateTime64(3, 'UTC')}
 GROUP BY k0, k_period
 ORDER BY k0, k_period`;
  return { sql, params: {}, keys: ['k0', 'k_period'] };
}
