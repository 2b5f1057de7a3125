// The SQL of GET /funnels/{id}/breakdown. The people who entered in the window (from the read
// model's attempts, or from the events while those are built; funnel.sql.ts) are joined to their
// session lists (person_touches), and each person's touches are the sessions started in the
// lookback up to entering, Direct ones dropped under exclude_direct. Then either
// - rule credit (`ruleCreditSql`): each model's weight of each touch, summed per dimension value;
// - journeys (`journeysSql`), for markov and shapley: the counted transitions and channel sets of
//   those touch sequences, which breakdown.data-driven.ts turns into credit.
import { START } from '@sightline/credit-models';
import { DEFAULT_LOOKBACK_DAYS, DIRECT_CHANNEL, type RuleModelName } from '@sightline/proto-schemas';
import type { FunnelDefinition } from './definition';
import {
  DAY_MS, IDENTIFIED_CTE, KEY_MASK, needsIdentified, Params, peopleSql, personFilter, REVENUE_FACTS_CTE, ROOTS_CTE,
  type AttemptsRef, type CompiledQuery, type FunnelWindow, type ReadScope,
} from './funnel.sql';

/** A journey's touches: sessions started in the lookback up to entering; time_decay halves every 7 days. */
const LOOKBACK_MS = DEFAULT_LOOKBACK_DAYS * DAY_MS;
const HALF_LIFE_MS = 7 * DAY_MS;
/** Session columns the breakdown reads, by dimension name. */
const TOUCH_COLUMNS: Record<string, string> = {
  channel: 'channel', source: 'source', medium: 'medium', campaign: 'campaign', utm_term: 'utm_term', utm_content: 'utm_content',
  referrer_domain: 'referrer_domain', landing_page: 'landing_page', country: 'country', region: 'region', city: 'city',
  device_type: 'device_type', browser: 'browser', operating_system: 'operating_system',
};

/** What a breakdown read computes. */
export interface BreakdownAsk {
  dimension: string;
  /** Rule models weighed per touch (may be empty when only data-driven models were asked for). */
  rules: readonly RuleModelName[];
  /** Whether markov or shapley were asked for: the journeys are read too (dimension is channel). */
  journeys: boolean;
  excludeDirect: boolean;
}

/** A breakdown read: rule credit and journeys, each only when asked for. */
export interface BreakdownQueries {
  rules: CompiledQuery | null;
  journeys: CompiledQuery | null;
}

/**
 * Each model's weight of touch `i` (1-based, in order) of a person's `n` touches (starting at `t`,
 * entering at `entry`, time-decay weights summing to `decay_sum`), as row-level expressions after
 * the touches are spread into rows (cheaper than lambdas over arrays).
 */
const MODEL_WEIGHTS: Record<RuleModelName, string> = {
  first_touch: 'toFloat64(i = 1)',
  last_touch: 'toFloat64(i = n)',
  linear: '1. / n',
  u_shaped: 'multiIf(n = 1, 1., n = 2, 0.5, i = 1 OR i = n, 0.4, 0.2 / (n - 2))',
  time_decay: `exp2((t - entry) / ${HALF_LIFE_MS}) / decay_sum`,
  // lnd: position of the last touch whose channel is not Direct (0 when all are Direct: then the last).
  last_non_direct: 'toFloat64(i = if(lnd = 0, n, lnd))',
};

/** A row value marking the totals row of a breakdown (a NUL cannot be a dimension value). */
export const TOTAL_MARK = '\u0000total';
const TOTAL_SQL = TOTAL_MARK.replace('\u0000', '\\0');
/** The chain's first state (credit-models' START) and the state after a journey's last touch (no channel has a NUL). */
export const JOURNEY_START = START;
export const JOURNEY_END = '\u0000end';

/**
 * The CTEs `entered` (person_key, entry ms, done), `touched` (their session lists) and `credited`:
 * per entered person, `touches` (kept touches), `n` (at least 1), `starts` and `vals` (the kept
 * touches' start ms and dimension values; one pseudo touch valued Unattributed at the entry when
 * none) and `lnd`, `decay_sum` for the rule weights. `candidates`, when given, is a cheap superset
 * of the entered people that limits which session lists are read.
 */
function touchesSql(enteredSql: string, candidates: string | null, ask: BreakdownAsk, params: Params): string {
  const column = TOUCH_COLUMNS[ask.dimension];
  if (!column) throw new Error(`no session column for dimension ${ask.dimension}`);
  params.values['lookback_ms'] = LOOKBACK_MS;
  const direct = `'${DIRECT_CHANNEL}'`;
  // exclude_direct: a touch stays unless its channel is Direct and some touch of the journey is not.
  const kept = (array: string) => (ask.excludeDirect ? `arrayFilter((x, k) -> k, ${array}, keep)` : array);
  return `
entered AS (${enteredSql}),
touched AS (
  SELECT e.entry AS entry, e.done AS done, t.starts AS all_starts, t.${column} AS all_values, t.channel AS all_channels
    FROM (SELECT person_key, starts, ${[...new Set([column, 'channel'])].join(', ')} FROM person_touches FINAL
           WHERE website_id = {website:UUID}${candidates ? ` AND person_key IN (${candidates})` : ''}) AS t
    RIGHT JOIN entered AS e ON t.person_key = e.person_key
),
credited AS (
  SELECT entry, done,
         arrayFirstIndex(x -> entry - x <= {lookback_ms:Int64}, all_starts) AS after, if(after = 0, length(all_starts) + 1, after) AS first_in,
         arrayLastIndex(x -> x <= entry, all_starts) AS last_in,
         greatest(0, last_in - first_in + 1) AS in_lookback,
         arraySlice(all_channels, first_in, in_lookback) AS lookback_channels,
         ${ask.excludeDirect ? `arrayMap(c -> c != ${direct} OR NOT arrayExists(x -> x != ${direct}, lookback_channels), lookback_channels) AS keep,` : ''}
         ${kept('arraySlice(all_starts, first_in, in_lookback)')} AS kept_starts,
         ${kept('arraySlice(all_values, first_in, in_lookback)')} AS kept_values,
         ${kept('lookback_channels')} AS kept_channels,
         length(kept_starts) AS touches, greatest(touches, 1) AS n,
         if(touches = 0, [entry], kept_starts) AS starts,
         if(touches = 0, ['Unattributed'], kept_values) AS vals,
         ${ask.rules.includes('last_non_direct') ? `arrayLastIndex(c -> c != ${direct}, kept_channels) AS lnd,` : ''}
         arraySum(arrayMap(x -> exp2((x - entry) / ${HALF_LIFE_MS}), starts)) AS decay_sum
    FROM touched
)`;
}

/** Per dimension value, each rule model's entering (e<m>) and completing (c<m>) credit; the TOTAL_MARK row carries the people. */
function ruleCreditSql(models: readonly RuleModelName[]): string {
  const columns = models.length > 0 ? models.map((_, m) => `sum(w${m}) AS e${m}, sumIf(w${m}, done) AS c${m}`).join(', ') : 'count() AS e0, countIf(done) AS c0';
  const weights = models.map((model, m) => `, if(i > n, 1., toFloat64(${MODEL_WEIGHTS[model]})) AS w${m}`).join('');
  const touches = models.length > 0
    ? `ARRAY JOIN arrayPushBack(vals, '${TOTAL_SQL}') AS value, arrayPushBack(starts, 0) AS t, arrayEnumerate(arrayPushBack(starts, 0)) AS i`
    : `ARRAY JOIN ['${TOTAL_SQL}'] AS value`;
  return `
SELECT value, ${columns}
  FROM (SELECT done, value${weights} FROM credited ${touches})
 GROUP BY value
SETTINGS use_index_for_in_with_subqueries = 0`;
}

/**
 * The entered people's journeys, counted: `step` rows are transitions (JOURNEY_START > first
 * touch > ... > last touch > JOURNEY_END) with the journeys making them; `set` rows the distinct
 * channels of a journey; `none` the people without a touch; `total` everyone. `entered` counts
 * rows, `completed` those of people who completed.
 */
function journeysSql(params: Params): string {
  params.values['journey_start'] = JOURNEY_START;
  params.values['journey_end'] = JOURNEY_END;
  const item = (kind: string, from: string, to: string, channels: string) => `tuple('${kind}', ${from}, ${to}, ${channels})`;
  const noChannels = 'CAST([] AS Array(String))';
  return `
SELECT item.1 AS kind, item.2 AS from_state, item.3 AS to_state, item.4 AS channels, count() AS entered, countIf(done) AS completed
  FROM (
    SELECT done, arrayPushBack(
             if(touches = 0, [${item('none', "''", "''", noChannels)}],
                arrayPushBack(
                  arrayMap((f, t) -> ${item('step', 'f', 't', noChannels)}, arrayPushFront(vals, {journey_start:String}), arrayPushBack(vals, {journey_end:String})),
                  ${item('set', "''", "''", 'arraySort(arrayDistinct(vals))')})),
             ${item('total', "''", "''", noChannels)}) AS items
      FROM credited
  )
  ARRAY JOIN items AS item
 GROUP BY item
SETTINGS use_index_for_in_with_subqueries = 0`;
}

function queriesOf(prefix: string, enteredSql: string, candidates: string | null, ask: BreakdownAsk, params: Params): BreakdownQueries {
  const ctes = `WITH ${prefix}${touchesSql(enteredSql, candidates, ask, params)}`;
  const needRules = ask.rules.length > 0 || !ask.journeys;
  return {
    rules: needRules ? { sql: `${ctes}${ruleCreditSql(ask.rules)}`, params: params.values } : null,
    journeys: ask.journeys ? { sql: `${ctes}${journeysSql(params)}`, params: params.values } : null,
  };
}

/** Breakdown of one window from the events (the people of the window, each with their furthest attempt). */
export function breakdownQueries(definition: FunnelDefinition, window: FunnelWindow, ctx: ReadScope, ask: BreakdownAsk): BreakdownQueries {
  const params = new Params();
  const { sql, shape } = peopleSql(definition, window, ctx, params);
  const entered = `SELECT reinterpretAsUInt128(sipHash128(person)) AS person_key, entry, reached >= ${shape.steps} AS done FROM people WHERE reached >= 1`;
  return queriesOf(`${sql},`, entered, null, ask, params);
}

/** Breakdown of one window from the read model (each person's best attempt entering in the window). */
export function attemptsBreakdownQueries(definition: FunnelDefinition, ref: AttemptsRef, window: FunnelWindow, ctx: ReadScope, ask: BreakdownAsk): BreakdownQueries {
  const params = new Params();
  Object.assign(params.values, {
    website: ctx.websiteId, workspace: ctx.workspaceId, funnel: ref.funnelId, generation: ref.generation,
    entry_from: new Date(window.fromMs), entry_to: new Date(window.toMs),
  });
  const filter = personFilter(definition, 'person_key', true);
  const inWindow = `funnel_id = {funnel:UUID} AND generation = {generation:UInt32}
     AND entry_ts >= {entry_from:DateTime64(3, 'UTC')} AND entry_ts < {entry_to:DateTime64(3, 'UTC')}`;
  const entered = `SELECT person_key, max(pick) AS pk, toInt64(bitShiftRight(bitAnd(pk, toUInt256('${KEY_MASK}')), 79)) AS entry,
         bitShiftRight(pk, 244) >= ${definition.steps.length} AS done
    FROM funnel_attempts FINAL
   WHERE ${inWindow}
     ${filter ? `AND ${filter}` : ''}
   GROUP BY person_key`;
  // The sessions to read: of anyone with an attempt in the window (a cheaper superset of entered).
  const candidates = `SELECT person_key FROM funnel_attempts WHERE ${inWindow}`;
  const prefix = needsIdentified(definition) ? `${ROOTS_CTE},\n${REVENUE_FACTS_CTE},\n${IDENTIFIED_CTE},` : '';
  return queriesOf(prefix, entered, candidates, ask, params);
}
