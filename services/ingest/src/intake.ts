// Turns what clients send — server-side events (POST /events) and tracker hits (POST /collect) —
// into classified events. Both go through the same classifier, so a server-side conversion and a
// browser hit are classified by identical rules. Identity and session are resolved later, in the
// pipeline, after the batch is safely on the bus.
import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { formatSchemaErrors, openApiDocument, type ClassifiedEventV1, type IngestWebsiteV1 } from '@sightline/proto-schemas';
import type { Classification, Classifier } from './classify/classify';
import { derivedUuid, normaliseEmail, normalisePhone, sha256Hex } from './identity-keys';

/** Event types that record a conversion (conversion.created). Others are behaviour. */
export const CONVERSION_EVENT_TYPES: ReadonlySet<string> = new Set(['conversion', 'purchase']);
/** Hits the tracker sends. */
export const TRACKER_EVENT_TYPES = ['pageview', 'outbound', 'form_submit', 'custom', 'identify'] as const;
/** Clock skew we tolerate before calling a timestamp "in the future". */
const FUTURE_TOLERANCE_MS = 10 * 60_000;

export interface EventError {
  index: number;
  detail: string;
}

export interface IntakeResult {
  events: ClassifiedEventV1[];
  errors: EventError[];
}

const ajv = new Ajv2020({ strict: false, allErrors: false });
addFormats(ajv);
const inboundSchema = (openApiDocument.components?.schemas as Record<string, object>)['InboundEvent'] as object;
const validateInbound = ajv.compile(inboundSchema);

interface InboundEvent {
  event_type?: string;
  event_name?: string;
  occurred_at?: string;
  email?: string;
  phone?: string;
  anonymous_id?: string;
  revenue?: number;
  currency?: string;
  properties?: Record<string, unknown>;
}

/**
 * Server-side events. With an idempotency key, event ids derive from it so a retried request
 * writes the same ids (stores deduplicate on them).
 */
export function intakeApiEvents(input: {
  events: unknown[];
  website: IngestWebsiteV1;
  classifier: Classifier;
  idempotencyKey: string | null;
  receivedAt: Date;
}): IntakeResult {
  const result: IntakeResult = { events: [], errors: [] };
  input.events.forEach((raw, index) => {
    if (!validateInbound(raw)) {
      result.errors.push({ index, detail: formatSchemaErrors(validateInbound.errors) });
      return;
    }
    const event = raw as InboundEvent;
    const occurredAt = event.occurred_at ? new Date(event.occurred_at) : input.receivedAt;
    if (occurredAt.getTime() > input.receivedAt.getTime() + FUTURE_TOLERANCE_MS) {
      result.errors.push({ index, detail: `occurred_at ${event.occurred_at} is in the future` });
      return;
    }
    let phone: string | null = null;
    if (event.phone !== undefined) {
      phone = normalisePhone(event.phone);
      if (!phone) {
        result.errors.push({ index, detail: 'phone is not a valid international number; send it in E.164 form such as +442079460958' });
        return;
      }
    }
    if (event.revenue !== undefined && event.revenue < 0) {
      result.errors.push({ index, detail: 'revenue must not be negative; send refunds as their own event type' });
      return;
    }
    const properties = event.properties ?? {};
    const text = (name: string) => (typeof properties[name] === 'string' ? (properties[name] as string) : null);
    // Server-side events may carry the page and campaign context they came from.
    const utm = Object.fromEntries(
      (['source', 'medium', 'campaign', 'term', 'content'] as const).flatMap((k) => (text(`utm_${k}`) ? [[k, text(`utm_${k}`) as string]] : [])),
    );
    const classification = input.classifier.classify({ url: text('url'), referrer: text('referrer'), userAgent: null, ip: null, siteDomain: input.website.domain, utm });
    const email = event.email ? normaliseEmail(event.email) : null;
    result.events.push(
      classifiedEvent({
        event_id: input.idempotencyKey ? derivedUuid(input.website.id, input.idempotencyKey, String(index)) : randomUUID(),
        origin: 'api',
        event_type: event.event_type ?? 'custom',
        event_name: event.event_name ?? null,
        occurred_at: occurredAt,
        received_at: input.receivedAt,
        anonymous_id: event.anonymous_id ?? null,
        email,
        phone,
        revenue: event.revenue ?? null,
        currency: event.revenue !== undefined ? (event.currency ?? input.website.currency) : (event.currency ?? null),
        properties,
        url: text('url'),
        referrer: text('referrer'),
        title: text('title'),
        screen: null,
        classification,
      }),
    );
  });
  return result;
}

interface TrackerHit {
  id?: unknown;
  type?: unknown;
  name?: unknown;
  ts?: unknown;
  url?: unknown;
  referrer?: unknown;
  title?: unknown;
  screen?: unknown;
  props?: unknown;
  email?: unknown;
}

/** Tracker hits. Bots are dropped; malformed hits are counted as rejected and otherwise ignored. */
export function intakeTrackerHits(input: {
  body: unknown;
  website: IngestWebsiteV1;
  ip: string | null;
  userAgent: string | null;
  classifier: Classifier;
  receivedAt: Date;
}): { events: ClassifiedEventV1[]; rejected: number; bot: boolean } {
  const body = input.body as { aid?: unknown; events?: unknown } | null;
  const hits = Array.isArray(body?.events) ? (body.events as TrackerHit[]) : [];
  const aid = typeof body?.aid === 'string' && body.aid.length > 0 && body.aid.length <= 200 ? body.aid : null;
  if (!aid || hits.length === 0 || hits.length > 50) return { events: [], rejected: Math.max(hits.length, 1), bot: false };

  const events: ClassifiedEventV1[] = [];
  let rejected = 0;
  for (const hit of hits) {
    const type = typeof hit.type === 'string' ? hit.type : '';
    const url = typeof hit.url === 'string' && hit.url.length <= 4000 ? hit.url : null;
    const id = typeof hit.id === 'string' && /^[0-9a-f-]{36}$/i.test(hit.id) ? hit.id.toLowerCase() : null;
    if (!(TRACKER_EVENT_TYPES as readonly string[]).includes(type) || !url || !id || typeof hit.ts !== 'number') {
      rejected += 1;
      continue;
    }
    const referrer = typeof hit.referrer === 'string' && hit.referrer !== '' ? hit.referrer.slice(0, 4000) : null;
    const classification = input.classifier.classify({ url, referrer, userAgent: input.userAgent, ip: input.ip, siteDomain: input.website.domain });
    if (classification.bot) return { events: [], rejected: 0, bot: true };
    // A browser clock far ahead is not believed; historical timestamps are (replays, backfills).
    const ts = hit.ts > input.receivedAt.getTime() + FUTURE_TOLERANCE_MS ? input.receivedAt.getTime() : hit.ts;
    const email = type === 'identify' && typeof hit.email === 'string' && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(hit.email) ? normaliseEmail(hit.email) : null;
    events.push(
      classifiedEvent({
        event_id: id,
        origin: 'tracker',
        event_type: type,
        event_name: typeof hit.name === 'string' ? hit.name.slice(0, 200) : null,
        occurred_at: new Date(ts),
        received_at: input.receivedAt,
        anonymous_id: aid,
        email,
        phone: null,
        revenue: null,
        currency: null,
        properties: hit.props && typeof hit.props === 'object' && !Array.isArray(hit.props) ? (hit.props as Record<string, unknown>) : {},
        url,
        referrer,
        title: typeof hit.title === 'string' ? hit.title.slice(0, 500) : null,
        screen: typeof hit.screen === 'string' && /^\d{1,5}x\d{1,5}$/.test(hit.screen) ? hit.screen : null,
        classification,
      }),
    );
  }
  return { events, rejected, bot: false };
}

function classifiedEvent(input: {
  event_id: string;
  origin: 'tracker' | 'api';
  event_type: string;
  event_name: string | null;
  occurred_at: Date;
  received_at: Date;
  anonymous_id: string | null;
  email: string | null;
  phone: string | null;
  revenue: number | null;
  currency: string | null;
  properties: Record<string, unknown>;
  url: string | null;
  referrer: string | null;
  title: string | null;
  screen: string | null;
  classification: Classification;
}): ClassifiedEventV1 {
  const c = input.classification;
  return {
    event_id: input.event_id,
    origin: input.origin,
    event_type: input.event_type,
    event_name: input.event_name,
    occurred_at: input.occurred_at.toISOString(),
    received_at: input.received_at.toISOString(),
    anonymous_id: input.anonymous_id,
    email: input.email,
    email_hash: input.email ? sha256Hex(input.email) : null,
    phone: input.phone,
    revenue: input.revenue,
    currency: input.currency,
    properties: input.properties,
    url: input.url,
    referrer: input.referrer,
    title: input.title,
    screen: input.screen,
    hostname: c.hostname,
    page: c.page,
    referrer_domain: c.referrer_domain,
    source: c.source,
    medium: c.medium,
    campaign: c.campaign,
    term: c.term,
    content: c.content,
    channel: c.channel,
    channel_rule: c.channel_rule,
    campaign_key: c.campaign_key,
    click_ids: c.click_ids as Record<string, string>,
    browser: c.browser,
    operating_system: c.operating_system,
    device_type: c.device_type,
    country: c.country,
    region: c.region,
    city: c.city,
    identity_id: null,
    session_id: null,
    session: null,
  };
}
