// Builders of classified events and revenue milestones for tests: a person's journey written as a
// few fields per event, the rest filled as ingest would (session attributes, ids).
import { createHash, randomUUID } from 'node:crypto';
import type { ClassifiedEventV1, IngestWebsiteV1, MilestoneReachedV1, SessionAttributesV1 } from '@sightline/proto-schemas';

export interface EventSpec {
  /** identity id (the person as ingest resolved it). */
  person: string;
  /** ms since epoch, or ISO. */
  at: number | string;
  type?: string;
  name?: string | null;
  page?: string | null;
  url?: string | null;
  text?: string;
  email?: string | null;
  session?: string | null;
  sessionStartedAt?: number | string;
  channel?: string;
  source?: string | null;
  campaign?: string | null;
  country?: string | null;
  device?: string | null;
  id?: string;
}

const iso = (t: number | string): string => (typeof t === 'number' ? new Date(t).toISOString() : new Date(t).toISOString());

export function website(domain = `funnels-${randomUUID().slice(0, 8)}.test`): IngestWebsiteV1 {
  return { id: randomUUID(), workspace_id: randomUUID(), domain, timezone: 'UTC', currency: 'EUR' };
}

export function classified(spec: EventSpec, site: IngestWebsiteV1): ClassifiedEventV1 {
  const type = spec.type ?? 'pageview';
  const page = spec.page === undefined ? (type === 'pageview' ? '/' : null) : spec.page;
  const url = spec.url === undefined ? (page ? `https://${site.domain}${page}` : null) : spec.url;
  const email = spec.email ?? null;
  const sessionId = spec.session === undefined ? `s-${spec.person}` : spec.session;
  const session: SessionAttributesV1 | null = sessionId === null ? null : {
    started_at: iso(spec.sessionStartedAt ?? spec.at),
    landing_page: page,
    channel: spec.channel ?? 'Direct',
    source: spec.source ?? null,
    medium: null,
    campaign: spec.campaign ?? null,
    term: null,
    content: null,
    referrer_domain: null,
    click_ids: {},
  };
  return {
    event_id: spec.id ?? randomUUID(),
    origin: 'tracker',
    event_type: type,
    event_name: spec.name ?? null,
    occurred_at: iso(spec.at),
    received_at: iso(spec.at),
    anonymous_id: spec.person,
    email,
    email_hash: email ? createHash('sha256').update(email.trim().toLowerCase()).digest('hex') : null,
    phone: null,
    revenue: null,
    currency: null,
    properties: spec.text !== undefined ? { text: spec.text } : {},
    url,
    referrer: null,
    title: page ? `Title ${page}` : null,
    screen: null,
    hostname: site.domain,
    page,
    referrer_domain: null,
    source: spec.source ?? null,
    medium: null,
    campaign: spec.campaign ?? null,
    term: null,
    content: null,
    channel: spec.channel ?? 'Direct',
    channel_rule: 'test',
    campaign_key: '',
    click_ids: {},
    browser: 'Firefox',
    operating_system: 'Linux',
    device_type: spec.device ?? 'desktop',
    country: spec.country ?? 'DE',
    region: null,
    city: null,
    identity_id: spec.person,
    session_id: sessionId,
    session,
  };
}

export function milestone(site: IngestWebsiteV1, spec: { stage: string; at: number | string; person?: string; email?: string; id?: string }): MilestoneReachedV1 {
  return {
    milestone_id: spec.id ?? `test:${randomUUID()}`,
    website_id: site.id,
    workspace_id: site.workspace_id,
    stage: spec.stage,
    occurred_at: iso(spec.at),
    identity_id: spec.person ?? null,
    email: spec.email ?? null,
    amount: null,
    currency: null,
  };
}

export const T0 = Date.parse('2025-06-02T00:00:00.000Z');
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;
