// Writes of the funnels facts (ClickHouse database `funnels`): events and sessions by identity,
// emails, identified ids, revenue facts. One insert per table per group of bus messages, each with
// a deduplication token derived from the messages, so a redelivered group writes nothing twice.
import { createHash } from 'node:crypto';
import type { ClickHouseStore } from '@sightline/kit';
import { REVENUE_EVENTS, type ClassifiedEventV1, type MilestoneReachedV1 } from '@sightline/proto-schemas';
import { EventTypesRepo } from './event-types.repo';

const REVENUE = new Set<string>(REVENUE_EVENTS);

/** SHA-256 of the normalised (trimmed, lower-case) email: the key ingest's identity graph uses. */
export function emailHash(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}

/** Click text of an event: its `text` property (custom events and outbound clicks that send one). */
function clickTextOf(event: ClassifiedEventV1): string {
  const text = event.properties['text'];
  return typeof text === 'string' ? text.trim() : '';
}

function eventRow(websiteId: string, e: ClassifiedEventV1): Record<string, unknown> {
  const s = e.session;
  return {
    website_id: websiteId,
    occurred_at: e.occurred_at,
    event_id: e.event_id,
    identity_id: e.identity_id ?? '',
    event_type: e.event_type,
    event_name: e.event_name ?? '',
    page: e.page ?? '',
    url: e.url ?? '',
    click_text: clickTextOf(e),
    hostname: e.hostname ?? '',
    page_title: e.title ?? '',
    session_id: e.session_id ?? '',
    // A session's attributes are its first hit's; an event without a session keeps its own.
    channel: s ? s.channel : e.channel,
    source: (s ? s.source : e.source) ?? '',
    medium: (s ? s.medium : e.medium) ?? '',
    campaign: (s ? s.campaign : e.campaign) ?? '',
    utm_term: (s ? s.term : e.term) ?? '',
    utm_content: (s ? s.content : e.content) ?? '',
    referrer_domain: (s ? s.referrer_domain : e.referrer_domain) ?? '',
    landing_page: s ? (s.landing_page ?? '') : (e.page ?? ''),
    country: e.country ?? '',
    region: e.region ?? '',
    city: e.city ?? '',
    device_type: e.device_type ?? '',
    browser: e.browser ?? '',
    operating_system: e.operating_system ?? '',
  };
}

const LOWER_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Larger for an earlier first hit: the version that keeps a session's earliest row. */
const LATEST_MS = 9_007_199_254_740_991;

/**
 * A session id as a 128-bit number ordered as the ids are: a lower-case UUID by its value, any
 * other id by its first 16 bytes (the same expression as migration 002's).
 */
export function sessionKey(id: string): string {
  if (LOWER_UUID.test(id)) return BigInt(`0x${id.replace(/-/g, '')}`).toString();
  const bytes = Buffer.alloc(16);
  Buffer.from(id, 'utf8').copy(bytes, 0, 0, 16);
  return BigInt(`0x${bytes.toString('hex')}`).toString();
}

/** One row per session and identity of the batch, from the session's earliest hit in it. */
function sessionRows(websiteId: string, events: readonly ClassifiedEventV1[]): Record<string, unknown>[] {
  const first = new Map<string, ClassifiedEventV1>();
  for (const e of events) {
    if (!e.session_id || !e.session || !e.identity_id) continue;
    const key = `${e.session_id}\u0000${e.identity_id}`;
    const seen = first.get(key);
    if (!seen || e.occurred_at < seen.occurred_at) first.set(key, e);
  }
  return [...first.values()].map((e) => {
    const s = e.session!;
    return {
      website_id: websiteId,
      identity_id: e.identity_id,
      started_at: s.started_at,
      session_id: e.session_id,
      session_key: sessionKey(e.session_id as string),
      first_hit_at: e.occurred_at,
      hit_rank: LATEST_MS - Date.parse(e.occurred_at),
      channel: s.channel,
      source: s.source ?? '',
      medium: s.medium ?? '',
      campaign: s.campaign ?? '',
      utm_term: s.term ?? '',
      utm_content: s.content ?? '',
      referrer_domain: s.referrer_domain ?? '',
      landing_page: s.landing_page ?? '',
      country: e.country ?? '',
      region: e.region ?? '',
      city: e.city ?? '',
      device_type: e.device_type ?? '',
      browser: e.browser ?? '',
      operating_system: e.operating_system ?? '',
    };
  });
}

export class ProjectionRepo {
  /** Websites already recorded in workspace_websites by this process. */
  private readonly knownWebsites = new Set<string>();

  private readonly types: EventTypesRepo;

  constructor(private readonly ch: ClickHouseStore) {
    this.types = new EventTypesRepo(ch);
  }

  /** Events that name a person, their sessions, and which identities are known by email or phone. */
  async insertEvents(token: string, workspaceId: string, websiteId: string, all: readonly ClassifiedEventV1[]): Promise<void> {
    // An event without any identifier belongs to nobody: no funnel can count it.
    const events = all.filter((e) => e.identity_id);
    if (events.length === 0) return;
    if (!this.knownWebsites.has(websiteId)) {
      await this.ch.insert('workspace_websites', [{ workspace_id: workspaceId, website_id: websiteId }]);
      this.knownWebsites.add(websiteId);
    }
    await this.ch.insert('identity_events', events.map((e) => eventRow(websiteId, e)), { dedupToken: `${token}:events` });
    const sessions = sessionRows(websiteId, events);
    if (sessions.length > 0) await this.ch.insert('identity_sessions', sessions, { dedupToken: `${token}:sessions` });
    const emails = new Map<string, Record<string, unknown>>();
    const identified = new Map<string, Record<string, unknown>>();
    for (const e of events) {
      const id = e.identity_id as string;
      if (e.email_hash) emails.set(`${e.email_hash}\u0000${id}`, { workspace_id: workspaceId, email_hash: e.email_hash, identity_id: id });
      if (e.email_hash || e.phone) identified.set(id, { workspace_id: workspaceId, identity_id: id });
    }
    if (emails.size > 0) await this.ch.insert('emails', [...emails.values()], { dedupToken: `${token}:emails` });
    if (identified.size > 0) await this.ch.insert('identified', [...identified.values()], { dedupToken: `${token}:identified` });
    await this.types.record(websiteId, events.map((e) => e.event_type));
  }

  /** Revenue facts among the milestones (other stages are not subscription lifecycle events); returns those kept. */
  async insertMilestones(token: string, milestones: readonly MilestoneReachedV1[]): Promise<MilestoneReachedV1[]> {
    const kept = milestones.filter((m) => REVENUE.has(m.stage) && (m.identity_id || m.email));
    const rows = kept.map((m) => ({
      website_id: m.website_id,
      occurred_at: m.occurred_at,
      milestone_id: m.milestone_id,
      stage: m.stage,
      identity_id: m.identity_id ?? '',
      email_hash: m.email ? emailHash(m.email) : '',
      amount: m.amount ?? null,
      currency: m.currency ?? '',
    }));
    if (rows.length > 0) await this.ch.insert('revenue_events', rows, { dedupToken: `${token}:revenue` });
    return kept;
  }

  /** The websites of a workspace that sent events. */
  async websitesOf(workspaceId: string): Promise<string[]> {
    const rows = await this.ch.query<{ w: string }>('SELECT DISTINCT toString(website_id) AS w FROM workspace_websites WHERE workspace_id = {workspace:UUID}', { workspace: workspaceId });
    return rows.map((r) => r.w);
  }

  /** Custom event types the website has sent, bounded (the catalog a step's event_type may name, beyond the known ones). */
  eventTypes(websiteId: string): Promise<string[]> {
    return this.types.list(websiteId);
  }
}
