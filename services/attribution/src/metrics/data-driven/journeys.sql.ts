// The journeys markov and shapley read, aggregated in ClickHouse to one row per distinct channel
// sequence (so what reaches the service is the number of distinct paths, not of journeys).
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

/** Distinct channel sequences of the window's conversions (params: website, from, to). */
export function convertingPathsSql(excludeDirect: boolean): string {
  return `SELECT ${channels('j_channel', excludeDirect)} AS path, count() AS conversions, sum(value) AS value
  FROM (${outcomeRowsSql({ source: 'conversions', fields: ['channel'] })})
 GROUP BY path`;
}

/** Distinct channel sequences of the window's non-converting journeys, counted (params: website, from, to, lookback_from). */
export function nonConvertingPathsSql(excludeDirect: boolean): string {
  return `SELECT ${channels('sequence', excludeDirect)} AS path, count() AS journeys
  FROM (
    SELECT person_key, max(started_at) AS last_at,
           arrayMap(s -> s.3, arrayFilter(s -> s.1 >= last_at - toIntervalDay(${DEFAULT_LOOKBACK_DAYS}), arraySort(groupArray((started_at, session_id, toString(channel)))))) AS sequence
      FROM traffic_sessions FINAL
     WHERE website_id = {website:UUID} AND started_at >= {lookback_from:${TIME}} AND started_at < {to:${TIME}}
     GROUP BY person_key
    HAVING person_key != 0 AND last_at >= {from:${TIME}}
       AND person_key NOT IN (
         SELECT reinterpretAsUInt128(sipHash128(person)) FROM outcome_journeys FINAL
          WHERE website_id = {website:UUID} AND kind = 'conversion' AND occurred_at >= {from:${TIME}} AND occurred_at < {to:${TIME}}
       )
  )
 GROUP BY path`;
}
