// Classified events and the sessions (touches) aggregated from them, in attribution's own
// ClickHouse database. Writes are one insert per bus message with the message id as its
// deduplication token; reads deduplicate by event id, so a duplicate that slipped past the token
// window changes no answer.
import type { ClickHouseStore } from '@sightline/kit';
import type { ClassifiedEventV1 } from '@sightline/proto-schemas';
import { isoFromClickHouse } from './clickhouse-time';
import type { SessionFact } from './read-model/read-model';
import { adPlatform, isPaid, type TouchSource } from './touch-attributes';

export interface SessionRow {
  session_id: string;
  identity_id: string;
  anonymous_id: string;
  started_at: string;
  ended_at: string;
  landing_page: string | null;
  channel: string;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  term: string | null;
  content: string | null;
  referrer_domain: string | null;
  click_ids: Record<string, string>;
  device_type: string | null;
  country: string | null;
  pageviews: number;
  event_count: number;
}

export interface SessionEventRow {
  event_id: string;
  session_id: string;
  occurred_at: string;
  event_type: string;
  event_name: string | null;
  page: string | null;
  revenue: number | null;
}

export interface SessionQuery {
  websiteId: string;
  identityIds: readonly string[];
  /** Sessions that started in [from, to). */
  from: Date;
  to: Date;
  /** At most this many sessions, the most recent ones. */
  limit: number;
}

interface RawSession {
  session_id: string;
  identity_id: string;
  anonymous_id: string;
  started_at: string;
  ended_at: string;
  landing_page: string;
  channel: string;
  source: string;
  medium: string;
  campaign: string;
  term: string;
  content: string;
  referrer_domain: string;
  click_ids: Record<string, string>;
  device_type: string;
  country: string;
  pageviews: number;
  event_count: number;
}

interface RawEvent {
  event_id: string;
  session_id: string;
  occurred_at: string;
  event_type: string;
  event_name: string;
  page: string;
  revenue: number | null;
}

const orNull = (value: string): string | null => (value === '' ? null : value);

export class TouchesRepo {
  constructor(private readonly ch: ClickHouseStore) {}

  /**
   * Stores a classified batch and its sessions (touches); `dedupToken` derives from the bus message
   * ids. Returns the sessions the batch carried, for the read model.
   */
  async insertEvents(dedupToken: string, workspaceId: string, websiteId: string, events: readonly ClassifiedEventV1[]): Promise<SessionFact[]> {
    if (events.length === 0) return [];
    await this.ch.insert('touch_events', events.map((e) => eventRow(workspaceId, websiteId, e)), { dedupToken });
    const touches = touchRows(workspaceId, websiteId, events);
    if (touches.length > 0) await this.ch.insert('touches', touches, { dedupToken: `${dedupToken}:touches` });
    return touches.map((t) => ({ identity_id: String(t['identity_id']), session_id: String(t['session_id']), started_ms: Date.parse(String(t['started_at'])) }));
  }

  /** Whether any session of these identities exists on the website, at any time. */
  async hasSessions(websiteId: string, identityIds: readonly string[]): Promise<boolean> {
    if (identityIds.length === 0) return false;
    const rows = await this.ch.query(
      'SELECT 1 FROM sessions WHERE website_id = {website:UUID} AND identity_id IN {ids:Array(String)} LIMIT 1',
      { website: websiteId, ids: [...identityIds] },
    );
    return rows.length > 0;
  }

  /**
   * Sessions of a group of identities (one person through merges), newest `limit + 1` first, so
   * the caller can tell whether more exist. Rows of one session under several identity ids combine.
   */
  async sessionsOf(query: SessionQuery): Promise<SessionRow[]> {
    if (query.identityIds.length === 0) return [];
    const rows = await this.ch.query<RawSession>(
      `SELECT session_id,
              argMax(identity_id, max_at) AS identity_id,
              any(anon) AS anonymous_id,
              toString(min(first_at)) AS started_at,
              toString(max(max_at)) AS ended_at,
              argMinMerge(landing_page) AS landing_page,
              argMinMerge(channel) AS channel,
              argMinMerge(source) AS source,
              argMinMerge(medium) AS medium,
              argMinMerge(campaign) AS campaign,
              argMinMerge(term) AS term,
              argMinMerge(content) AS content,
              argMinMerge(referrer_domain) AS referrer_domain,
              argMinMerge(click_ids) AS click_ids,
              argMinMerge(device_type) AS device_type,
              argMinMerge(country) AS country,
              uniqExactIfMerge(pageviews) AS pageviews,
              uniqExactMerge(events) AS event_count
         FROM (
           SELECT session_id, identity_id, anonymous_id AS anon, started_at AS first_at, ended_at AS max_at,
                  landing_page, channel, source, medium, campaign, term, content, referrer_domain,
                  click_ids, device_type, country, pageviews, events
             FROM sessions
            WHERE website_id = {website:UUID} AND identity_id IN {ids:Array(String)}
         )
        GROUP BY session_id
       HAVING min(first_at) >= {from:DateTime64(3, 'UTC')} AND min(first_at) < {to:DateTime64(3, 'UTC')}
        ORDER BY min(first_at) DESC, session_id DESC
        LIMIT {limit:UInt32}`,
      { website: query.websiteId, ids: [...query.identityIds], from: query.from, to: query.to, limit: query.limit + 1 },
    );
    return rows.map((r) => ({
      session_id: r.session_id,
      identity_id: r.identity_id,
      anonymous_id: r.anonymous_id,
      started_at: isoFromClickHouse(r.started_at),
      ended_at: isoFromClickHouse(r.ended_at),
      landing_page: orNull(r.landing_page),
      channel: r.channel,
      source: orNull(r.source),
      medium: orNull(r.medium),
      campaign: orNull(r.campaign),
      term: orNull(r.term),
      content: orNull(r.content),
      referrer_domain: orNull(r.referrer_domain),
      click_ids: r.click_ids,
      device_type: orNull(r.device_type),
      country: orNull(r.country),
      pageviews: Number(r.pageviews),
      event_count: Number(r.event_count),
    }));
  }

  /** Events of the given sessions in time order, one row per event id, at most `perSession + 1` each. */
  async eventsOf(websiteId: string, identityIds: readonly string[], sessionIds: readonly string[], perSession: number): Promise<SessionEventRow[]> {
    if (sessionIds.length === 0 || identityIds.length === 0) return [];
    const rows = await this.ch.query<RawEvent>(
      `SELECT toString(event_id) AS event_id, session_id, toString(occurred_at) AS occurred_at,
              toString(event_type) AS event_type, event_name, page, revenue
         FROM (
           SELECT event_id, session_id, occurred_at, event_type, event_name, page, revenue
             FROM touch_events
            WHERE website_id = {website:UUID} AND identity_id IN {ids:Array(String)}
              AND session_id IN {sessions:Array(String)}
            ORDER BY event_id
            LIMIT 1 BY event_id
         )
        ORDER BY session_id, occurred_at, event_id
        LIMIT {per:UInt32} BY session_id`,
      { website: websiteId, ids: [...identityIds], sessions: [...sessionIds], per: perSession + 1 },
    );
    return rows.map((r) => ({
      event_id: r.event_id,
      session_id: r.session_id,
      occurred_at: isoFromClickHouse(r.occurred_at),
      event_type: r.event_type,
      event_name: orNull(r.event_name),
      page: orNull(r.page),
      revenue: r.revenue === null ? null : Number(r.revenue),
    }));
  }
}

/** The session attributes an event carries (its own for an event without a session). */
function touchSourceOf(e: ClassifiedEventV1): TouchSource {
  const s = e.session;
  return s
    ? { channel: s.channel, source: s.source, medium: s.medium, click_ids: s.click_ids }
    : { channel: e.channel, source: e.source, medium: e.medium, click_ids: e.click_ids };
}

/** One row per (session, identity) of the batch, from the session's earliest hit in it. */
function touchRows(workspaceId: string, websiteId: string, events: readonly ClassifiedEventV1[]): Record<string, unknown>[] {
  const first = new Map<string, ClassifiedEventV1>();
  for (const e of events) {
    if (!e.session_id || !e.session) continue;
    const key = `${e.session_id}\u0000${e.identity_id ?? ''}`;
    const seen = first.get(key);
    if (!seen || e.occurred_at < seen.occurred_at) first.set(key, e);
  }
  return [...first.values()].map((e) => {
    const s = e.session!;
    const source = touchSourceOf(e);
    return {
      website_id: websiteId,
      workspace_id: workspaceId,
      session_id: e.session_id,
      identity_id: e.identity_id ?? '',
      started_at: s.started_at,
      channel: s.channel,
      source: s.source ?? '',
      medium: s.medium ?? '',
      campaign: s.campaign ?? '',
      term: s.term ?? '',
      content: s.content ?? '',
      referrer_domain: s.referrer_domain ?? '',
      landing_page: s.landing_page ?? '',
      device_type: e.device_type ?? '',
      browser: e.browser ?? '',
      operating_system: e.operating_system ?? '',
      country: e.country ?? '',
      region: e.region ?? '',
      city: e.city ?? '',
      is_paid: isPaid(source) ? 1 : 0,
      ad_platform: adPlatform(source),
      click_ids: s.click_ids,
    };
  });
}

function eventRow(workspaceId: string, websiteId: string, e: ClassifiedEventV1): Record<string, unknown> {
  const s = e.session;
  const source = touchSourceOf(e);
  return {
    event_id: e.event_id,
    workspace_id: workspaceId,
    website_id: websiteId,
    identity_id: e.identity_id ?? '',
    anonymous_id: e.anonymous_id ?? '',
    session_id: e.session_id ?? '',
    occurred_at: e.occurred_at,
    event_type: e.event_type,
    event_name: e.event_name ?? '',
    page: e.page ?? '',
    revenue: e.revenue,
    currency: e.currency ?? '',
    session_started_at: s?.started_at ?? null,
    // A session's attributes are its first hit's; an event without a session keeps its own.
    landing_page: s ? (s.landing_page ?? '') : (e.page ?? ''),
    channel: s ? s.channel : e.channel,
    source: (s ? s.source : e.source) ?? '',
    medium: (s ? s.medium : e.medium) ?? '',
    campaign: (s ? s.campaign : e.campaign) ?? '',
    term: (s ? s.term : e.term) ?? '',
    content: (s ? s.content : e.content) ?? '',
    referrer_domain: (s ? s.referrer_domain : e.referrer_domain) ?? '',
    click_ids: s ? s.click_ids : e.click_ids,
    device_type: e.device_type ?? '',
    country: e.country ?? '',
    hostname: e.hostname ?? '',
    page_title: e.title ?? '',
    browser: e.browser ?? '',
    operating_system: e.operating_system ?? '',
    region: e.region ?? '',
    city: e.city ?? '',
    is_paid: isPaid(source) ? 1 : 0,
    ad_platform: adPlatform(source),
  };
}
