// The journeys markov and shapley read, aggregated in ClickHouse (so what reaches the service is a
// few hundred rows, not one per journey): converting journeys by distinct channel sequence,
// non-converting ones as counted Markov transitions.
//
// Converting journeys: the window's conversions as the read model keeps them (outcome_journeys),
// each its journey's channels in order; a conversion without a touch is the empty sequence (it is
// credited to Unattributed, as under every model).
//
// Non-converting journeys: people (identity roots) with a session that started in the window and
// no conversion in the window. Each has one journey: their sessions that started in the lookback up
// to their last session of the window (last - lookback <= started_at <= last), ordered by (start,
// session id) like a converting journey, read from the read model's sessions layout
// (traffic_sessions, one row per session with its person resolved). Sessions without a visitor
// have no person and are left out.
import { DEFAULT_LOOKBACK_DAYS, DIRECT_CHANNEL } from '@sightline/proto-schemas';
import { outcomeRowsSql } from '../../analytics/outcome-rows.sql';

const TIME = "DateTime64(3, 'UTC')";

/** A journey's channels with Direct dropped, unless it has nothing but Direct (exclude_direct). */
function channels(column: string, excludeDirect: boolean): string {
  if (!excludeDirect) return column;
  return `if(arrayExists(c -> c != '${DIRECT_CHANNEL}', ${column}), arrayFilter(c -> c != '${DIRECT_CHANNEL}', ${column}), ${column})`;
}

/**
 * The window's conversions by the set of channels of their journey (sorted, each once; empty
 * without a touch), counted with their value (params: website, from, to). What shapley and the
 * totals need: the order of touches plays no part in them.
 */
export function convertingSetsSql(excludeDirect: boolean): string {
  return `SELECT arraySort(arrayDistinct(${channels('j_channel', excludeDirect)})) AS path, count() AS conversions, sum(value) AS value
  FROM (${outcomeRowsSql({ source: 'conversions', fields: ['channel'] })})
 GROUP BY path`;
}

/** The window's converting journeys with a touch as Markov transitions, counted (params: website, from, to, start_state, end_state). */
export function convertingTransitionsSql(excludeDirect: boolean): string {
  return `SELECT step.1 AS from_state, step.2 AS to_state, count() AS n
  FROM (SELECT ${channels('j_channel', excludeDirect)} AS path FROM (${outcomeRowsSql({ source: 'conversions', fields: ['channel'] })}) WHERE length(path) > 0)
  ARRAY JOIN arrayZip(arrayPushFront(path, {start_state:String}), arrayPushBack(path, {conversion_state:String})) AS step
 GROUP BY from_state, to_state`;
}

/**
 * The window's non-converting journeys as Markov transitions, counted (params: website, from, to,
 * lookback_from): start > first channel, each channel > the next, last channel > null. Only the
 * transitions leave ClickHouse: a first-order chain needs nothing else, and there are at most
 * (channels + 1)^2 of them however many people there are.
 */
export function nonConvertingTransitionsSql(excludeDirect: boolean): string {
  return `SELECT step.1 AS from_state, step.2 AS to_state, count() AS n
  FROM (
    SELECT ${channels('sequence', excludeDirect)} AS path
      FROM (
        SELECT person_key, max(started_at) AS last_at,
               arrayMap(s -> s.3, arrayFilter(s -> s.1 >= last_at - toIntervalDay(${DEFAULT_LOOKBACK_DAYS}), arraySort(groupArray((started_at, session_id, toString(channel)))))) AS sequence
          FROM traffic_sessions FINAL
         WHERE website_id = {website:UUID} AND started_at >= {lookback_from:${TIME}} AND started_at < {to:${TIME}}
           -- Only people active in the window and without a conversion in it: their sessions are
           -- the only ones grouped (filtered before grouping, since the person is the group key).
           AND person_key IN (
             SELECT person_key FROM traffic_sessions
              WHERE website_id = {website:UUID} AND started_at >= {from:${TIME}} AND started_at < {to:${TIME}} AND person_key != 0
           )
           AND person_key NOT IN (
             SELECT reinterpretAsUInt128(sipHash128(person)) FROM outcome_journeys FINAL
              WHERE website_id = {website:UUID} AND kind = 'conversion' AND occurred_at >= {from:${TIME}} AND occurred_at < {to:${TIME}}
           )
         GROUP BY person_key
        HAVING last_at >= {from:${TIME}}
      )
     WHERE length(path) > 0
  )
  ARRAY JOIN arrayZip(arrayPushFront(path, {start_state:String}), arrayPushBack(path, {null_state:String})) AS step
 GROUP BY from_state, to_state
 -- As the traffic reads of traffic_sessions do (family.sql.ts): FINAL within each month's partition.
 SETTINGS do_not_merge_across_partitions_select_final = 1`;
}
