// The three reads behind a page of deal touches, each one query for the whole page: the contacts
// (conversions) with the deal contacts' emails, the people of their identities (identity_roots),
// and each deal's earliest and latest session before it was created.
import type { ClickHouseStore } from '@sightline/kit';
import type { DealTouch } from '@sightline/proto-schemas';
import { isoFromClickHouse, isoOrNull } from '../clickhouse-time';
import { ROOTS_SQL } from '../analytics/journey-fields';

/** A conversion found by email, with the touches stored with it (imported contacts). */
export interface EmailContact {
  conversion_id: string;
  email: string;
  identity_id: string;
  occurred_at: string;
  stored_first: DealTouch | null;
  stored_last: DealTouch | null;
}

interface RawContact {
  conversion_id: string;
  email: string;
  identity_id: string;
  occurred_at: string;
  first_at: string | null;
  first_channel: string | null;
  first_source: string | null;
  first_medium: string | null;
  first_campaign: string | null;
  last_at: string | null;
  last_channel: string | null;
  last_source: string | null;
  last_medium: string | null;
  last_campaign: string | null;
}

const orNull = (value: string | null): string | null => (value === null || value === '' ? null : value);

/** A stored touch counts only with a time: without one it cannot be placed before a deal. */
function storedTouch(at: string | null, channel: string | null, source: string | null, medium: string | null, campaign: string | null): DealTouch | null {
  const occurredAt = isoOrNull(at);
  if (occurredAt === null || channel === null) return null;
  return { occurred_at: occurredAt, channel, source: orNull(source), medium: orNull(medium), campaign: orNull(campaign), referrer_domain: null, landing_page: null };
}

/** Conversions of the website whose email is one of `emails` (lower-cased), newest first. */
export async function contactsByEmail(ch: ClickHouseStore, websiteId: string, emails: readonly string[]): Promise<EmailContact[]> {
  if (emails.length === 0) return [];
  const rows = await ch.query<RawContact>(
    `SELECT toString(conversion_id) AS conversion_id, lower(trimBoth(email)) AS email, identity_id, toString(occurred_at) AS occurred_at,
            toString(first_touch_at) AS first_at, first_touch_channel AS first_channel, first_touch_source AS first_source,
            first_touch_medium AS first_medium, first_touch_campaign AS first_campaign,
            toString(last_touch_at) AS last_at, last_touch_channel AS last_channel, last_touch_source AS last_source,
            last_touch_medium AS last_medium, last_touch_campaign AS last_campaign
       FROM conversions
      WHERE website_id = {website:UUID} AND lower(trimBoth(email)) IN {emails:Array(String)}
      ORDER BY occurred_at DESC, conversion_id DESC
      LIMIT 1 BY conversion_id`,
    { website: websiteId, emails: [...emails] },
  );
  return rows.map((r) => ({
    conversion_id: r.conversion_id,
    email: r.email,
    identity_id: r.identity_id,
    occurred_at: isoFromClickHouse(r.occurred_at),
    stored_first: storedTouch(r.first_at, r.first_channel, r.first_source, r.first_medium, r.first_campaign),
    stored_last: storedTouch(r.last_at, r.last_channel, r.last_source, r.last_medium, r.last_campaign),
  }));
}

/**
 * Every identity id of the people of `identityIds`: each id's person is its merge root (itself
 * when never merged), and a person's ids are the root and every id whose root it is.
 * Returns identity id → the ids of its person (the id itself included).
 */
export async function personIds(ch: ClickHouseStore, workspaceId: string, identityIds: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (identityIds.length === 0) return out;
  const rows = await ch.query<{ identity_id: string; root_id: string }>(
    `WITH roots AS ${ROOTS_SQL}
     SELECT identity_id, root_id FROM roots
      WHERE identity_id IN {ids:Array(String)}
         OR root_id IN (SELECT root_id FROM roots WHERE identity_id IN {ids:Array(String)})`,
    { workspace: workspaceId, ids: [...identityIds] },
  );
  const rootOf = new Map(rows.filter((r) => r.root_id !== '').map((r) => [r.identity_id, r.root_id]));
  const person = (id: string): string => rootOf.get(id) ?? id;
  const members = new Map<string, Set<string>>();
  const add = (root: string, id: string): void => {
    const set = members.get(root) ?? new Set([root]);
    set.add(id);
    members.set(root, set);
  };
  for (const [id, root] of rootOf) add(root, id);
  for (const id of identityIds) add(person(id), id);
  for (const id of identityIds) out.set(id, [...(members.get(person(id)) ?? [id])].sort());
  return out;
}

/** One identity id of a deal's people, with the deal's creation time (ms) as the cutoff. */
export interface DealIdentity {
  dealId: string;
  identityId: string;
  cutoffMs: number;
}

type RawTouch = [startedAt: string, channel: string, source: string, medium: string, campaign: string, referrerDomain: string, landingPage: string];

function sessionTouch(t: RawTouch): DealTouch {
  return {
    occurred_at: isoFromClickHouse(t[0]),
    channel: t[1],
    source: orNull(t[2]),
    medium: orNull(t[3]),
    campaign: orNull(t[4]),
    referrer_domain: orNull(t[5]),
    landing_page: orNull(t[6]),
  };
}

/**
 * Per deal, the earliest and the latest session (ordered by start, then session id) of its
 * identities that started at or before its cutoff. Deals without such a session are absent.
 */
export async function sessionTouches(
  ch: ClickHouseStore,
  websiteId: string,
  pairs: readonly DealIdentity[],
): Promise<Map<string, { first: DealTouch; last: DealTouch }>> {
  const out = new Map<string, { first: DealTouch; last: DealTouch }>();
  if (pairs.length === 0) return out;
  const latest = new Date(Math.max(...pairs.map((p) => p.cutoffMs)));
  const touch = 'tuple(toString(t.started_at), t.channel, t.source, t.medium, t.campaign, t.referrer_domain, t.landing_page)';
  const rows = await ch.query<{ deal_id: string; first: RawTouch; last: RawTouch }>(
    `SELECT p.deal_id AS deal_id,
            argMin(${touch}, tuple(t.started_at, t.session_id)) AS first,
            argMax(${touch}, tuple(t.started_at, t.session_id)) AS last
       FROM (
         SELECT tupleElement(q, 1) AS deal_id, tupleElement(q, 2) AS identity_id, tupleElement(q, 3) AS cutoff_ms
           FROM (SELECT arrayJoin(arrayZip({deals:Array(String)}, {ids:Array(String)}, {cutoffs:Array(Int64)})) AS q)
       ) AS p
       INNER JOIN (
         SELECT identity_id, session_id, started_at, toString(channel) AS channel, source, medium, campaign, referrer_domain, landing_page
           FROM touches
          WHERE website_id = {website:UUID} AND identity_id IN {all_ids:Array(String)} AND started_at <= {latest:DateTime64(3, 'UTC')}
       ) AS t ON t.identity_id = p.identity_id
      WHERE toUnixTimestamp64Milli(t.started_at) <= p.cutoff_ms
      GROUP BY p.deal_id`,
    {
      website: websiteId,
      deals: pairs.map((p) => p.dealId),
      ids: pairs.map((p) => p.identityId),
      cutoffs: pairs.map((p) => p.cutoffMs),
      all_ids: [...new Set(pairs.map((p) => p.identityId))],
      latest,
    },
  );
  for (const r of rows) out.set(r.deal_id, { first: sessionTouch(r.first), last: sessionTouch(r.last) });
  return out;
}
