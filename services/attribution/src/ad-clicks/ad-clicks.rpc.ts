// attribution.getAdClicks (internal; crm-sync calls it before it plans an ad-platform upload). A
// CRM stage (an MQL, a won deal) is reached weeks after the visit that came from an ad, and the
// conversion row contacts keeps only carries the click ids of its own event. The platforms match
// best on their click id, so crm-sync asks here for the ids the person's earlier visits carried:
// every identity id of the person (identity_roots) counts, and only events in [since, until].
// Per click id name the answer is the value seen last, with the time of the first event that
// carried it (the click itself: Meta's fbc wants that time).
import type { ClickHouseStore, RpcHandlerOf } from '@sightline/kit';
import type { AdClick, AdClicksRequest, AdClicksResponse } from '@sightline/proto-schemas';
import { isoFromClickHouse } from '../clickhouse-time';
import { personIds } from '../deal-touches/deal-touches.sql';

/** The response schema's maxItems: far more names than any tracker collects. */
export const MAX_CLICK_NAMES = 50;

export function adClicksRpcHandlers(ch: ClickHouseStore): { 'attribution.getAdClicks': RpcHandlerOf<'attribution.getAdClicks'> } {
  return { 'attribution.getAdClicks': (request) => adClicks(ch, request) };
}

export async function adClicks(ch: ClickHouseStore, request: AdClicksRequest): Promise<AdClicksResponse> {
  const since = new Date(request.since);
  const until = new Date(request.until);
  if (!(since.getTime() <= until.getTime())) return { clicks: [] };
  const ids = (await personIds(ch, request.workspace_id, [request.identity_id])).get(request.identity_id) ?? [request.identity_id];
  const rows = await ch.query<{ name: string; value: string; clicked_at: string }>(
    `SELECT name, argMax(value, last_at) AS value, toString(argMax(first_at, last_at)) AS clicked_at
       FROM (
         SELECT name, value, min(occurred_at) AS first_at, max(occurred_at) AS last_at
           FROM touch_events
          ARRAY JOIN mapKeys(click_ids) AS name, mapValues(click_ids) AS value
          WHERE website_id = {website:UUID} AND identity_id IN {ids:Array(String)}
            AND occurred_at >= {since:DateTime64(3, 'UTC')} AND occurred_at <= {until:DateTime64(3, 'UTC')}
            AND notEmpty(click_ids) AND value != ''
          GROUP BY name, value
       )
      GROUP BY name
      ORDER BY max(last_at) DESC, name
      LIMIT {limit:UInt32}`,
    { website: request.website_id, ids, since, until, limit: MAX_CLICK_NAMES },
  );
  return { clicks: rows.map((r): AdClick => ({ name: r.name, value: r.value, occurred_at: isoFromClickHouse(r.clicked_at) })) };
}
