// The raw events table in ingest's own ClickHouse database.
import type { ClickHouseStore } from '@sightline/kit';
import type { ClassifiedEventV1 } from '@sightline/proto-schemas';

export class EventsRepo {
  constructor(private readonly ch: ClickHouseStore) {}

  /**
   * Inserts the events not stored yet, in one block. Which are stored is read first (a range read on
   * the primary key), because after a crash a redelivered batch may be coalesced with different
   * neighbours; the token then only guards an immediate retry of this very insert.
   */
  async insertNew(token: string, workspaceId: string, websiteId: string, events: ClassifiedEventV1[]): Promise<number> {
    if (events.length === 0) return 0;
    const stored = await this.storedIds(websiteId, events);
    const fresh = stored.size === 0 ? events : events.filter((e) => !stored.has(e.event_id));
    if (fresh.length > 0) await this.ch.insert('events', fresh.map((e) => toRow(workspaceId, websiteId, e)), { dedupToken: token });
    return fresh.length;
  }

  private async storedIds(websiteId: string, events: ClassifiedEventV1[]): Promise<Set<string>> {
    let from = events[0]?.occurred_at as string;
    let to = from;
    for (const e of events) {
      if (e.occurred_at < from) from = e.occurred_at;
      if (e.occurred_at > to) to = e.occurred_at;
    }
    const rows = await this.ch.query<{ id: string }>(
      `SELECT toString(event_id) AS id FROM events
        WHERE website_id = {website:UUID} AND occurred_at BETWEEN {from:DateTime64(3)} AND {to:DateTime64(3)}
          AND event_id IN {ids:Array(UUID)}`,
      { website: websiteId, from: clickhouseTime(from), to: clickhouseTime(to), ids: events.map((e) => e.event_id) },
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Distinct events of a website, and stored rows (rows > events means duplicates awaiting merge). */
  async stats(websiteId: string): Promise<{ events: number; rows: number }> {
    const rows = await this.ch.query<{ events: string; rows: string }>(
      'SELECT toString(uniqExact(event_id)) AS events, toString(count()) AS rows FROM events WHERE website_id = {website:UUID}',
      { website: websiteId },
    );
    return { events: Number(rows[0]?.events ?? 0), rows: Number(rows[0]?.rows ?? 0) };
  }

  /** Events of one identity in time order, one row per event id (journeys and tests). */
  async eventsOfIdentity(websiteId: string, identityId: string): Promise<Record<string, unknown>[]> {
    return this.ch.query(
      `SELECT toString(event_id) AS event_id, event_type, event_name, toString(occurred_at) AS occurred_at,
              anonymous_id, session_id, channel, session_channel, session_landing_page, page
         FROM events WHERE website_id = {website:UUID} AND identity_id = {identity:String}
        ORDER BY occurred_at, event_id LIMIT 1 BY event_id`,
      { website: websiteId, identity: identityId },
    );
  }
}

/** ISO 8601 to the `YYYY-MM-DD hh:mm:ss.sss` form DateTime64 parameters take (UTC). */
function clickhouseTime(iso: string): string {
  return iso.replace('T', ' ').replace('Z', '');
}

function toRow(workspaceId: string, websiteId: string, e: ClassifiedEventV1): Record<string, unknown> {
  const s = e.session;
  return {
    event_id: e.event_id,
    workspace_id: workspaceId,
    website_id: websiteId,
    origin: e.origin,
    event_type: e.event_type,
    event_name: e.event_name ?? '',
    occurred_at: e.occurred_at,
    received_at: e.received_at,
    anonymous_id: e.anonymous_id ?? '',
    identity_id: e.identity_id ?? '',
    email_hash: e.email_hash ?? '',
    session_id: e.session_id ?? '',
    revenue: e.revenue,
    currency: e.currency ?? '',
    properties: JSON.stringify(e.properties),
    url: e.url ?? '',
    hostname: e.hostname ?? '',
    page: e.page ?? '',
    title: e.title ?? '',
    referrer: e.referrer ?? '',
    referrer_domain: e.referrer_domain ?? '',
    screen: e.screen ?? '',
    source: e.source ?? '',
    medium: e.medium ?? '',
    campaign: e.campaign ?? '',
    term: e.term ?? '',
    content: e.content ?? '',
    channel: e.channel,
    channel_rule: e.channel_rule,
    click_ids: e.click_ids,
    browser: e.browser ?? '',
    operating_system: e.operating_system ?? '',
    device_type: e.device_type ?? '',
    country: e.country ?? '',
    region: e.region ?? '',
    city: e.city ?? '',
    session_started_at: s?.started_at ?? null,
    session_landing_page: s?.landing_page ?? '',
    session_channel: s?.channel ?? '',
    session_source: s?.source ?? '',
    session_medium: s?.medium ?? '',
    session_campaign: s?.campaign ?? '',
    session_referrer_domain: s?.referrer_domain ?? '',
  };
}
