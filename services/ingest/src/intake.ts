// Turns what clients send — server-side events (POST /events) and tracker hits (POST /collect) —
// into classified events. Both go through the same classifier, so a server-side conversion and a
// browser hit are classified by identical rules. Identity and session are resolved later, in the
// pipeline, after the batch is safely on the bus.
// Nothing accepted here may fail later for its content: every string and date passes the kit's
// input rules (what the stores can hold), and every event built is checked against the message
// schema it travels in before it is accepted: the bus checks the whole batch when it is published
// (once, not once here and again there), and only when it refuses does refusalsOf find which
// events to reject. A bad event is rejected with its index, the rest go on.
import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { addInputFormats, findInputFault, isStorableEpochMs, parseStorableTime, textFault } from '@sightline/kit';
import { formatSchemaErrors, openApiDocument, sharedSchemas, type ClassifiedEventV1, type IngestWebsiteV1 } from '@sightline/proto-schemas';
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
  /** The request index of each accepted event (parallel to `events`). */
  indexes: number[];
  errors: EventError[];
}

/**
 * Nesting an event (its properties) or a tracker hit (its props) may have. Below the gateway's bound
 * for a whole body (an event sits 2 levels down in it), so an event the gateway had to cut to carry
 * it is always rejected here.
 */
export const MAX_EVENT_DEPTH = 16;
const MAX_EMAIL_LENGTH = 320;

const ajv = new Ajv2020({ strict: false, allErrors: false, allowUnionTypes: true });
addFormats(ajv);
addInputFormats(ajv);
const inboundSchema = (openApiDocument.components?.schemas as Record<string, object>)['InboundEvent'] as object;
const validateInbound = ajv.compile(inboundSchema);
// The schema every classified event is published in (inside ingest.batch_received and events.classified).
const classifiedSchema = sharedSchemas.find((schema) => String(schema.$id).endsWith('/ingest/event.v1.schema.json'));
if (!classifiedSchema) throw new Error('proto-schemas has no ingest/event.v1 schema');
const validateClassified = ajv.compile(classifiedSchema as object);

/** Why a built event would not travel or be stored, or null. */
function unpublishable(event: ClassifiedEventV1): string | null {
  return validateClassified(event) ? null : `could not be stored as sent (${formatSchemaErrors(validateClassified.errors)})`;
}

/**
 * The events (by position) their message schema refuses, with why: asked only after the bus refused
 * a batch, to reject exactly those and publish the rest.
 */
export function refusalsOf(events: readonly ClassifiedEventV1[]): Map<number, string> {
  const refused = new Map<number, string>();
  events.forEach((event, i) => {
    const why = unpublishable(event);
    if (why) refused.set(i, `the event ${why}`);
  });
  return refused;
}

/**
 * What orders an event in the pipeline: its website and visitor (sessions are per visitor), else
 * the person (email hash, phone) or, for an event naming nobody, the event itself.
 */
export function orderingKey(websiteId: string, event: ClassifiedEventV1): string {
  return `${websiteId}:${event.anonymous_id ?? event.email_hash ?? event.phone ?? event.event_id}`;
}

/** `text` cut to at most `max` UTF-16 units without splitting a surrogate pair (a half pair is not Unicode). */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** True when `url` is an http(s) URL on the website's domain or one of its subdomains. */
export function onWebsite(url: string, domain: string): boolean {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return false;
    const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
    return host === domain || host.endsWith(`.${domain}`);
  } catch {
    return false;
  }
}

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
 * Server-side events. With an idempotency key (scoped to the API key that sent it), event ids
 * derive from it so a retried request writes the same ids (stores deduplicate on them).
 */
export function intakeApiEvents(input: {
  events: unknown[];
  website: IngestWebsiteV1;
  classifier: Classifier;
  idempotencyKey: string | null;
  receivedAt: Date;
}): IntakeResult {
  const result: IntakeResult = { events: [], indexes: [], errors: [] };
  input.events.forEach((raw, index) => {
    const fault = findInputFault(raw, { maxDepth: MAX_EVENT_DEPTH });
    if (fault) {
      const path = fault.path.length > 200 ? `${fault.path.slice(0, 200)}…` : fault.path;
      const limit = fault.rule === 'depth' ? ` (an event nests at most ${MAX_EVENT_DEPTH} levels, so properties at most ${MAX_EVENT_DEPTH - 1}: send flatter properties)` : '';
      result.errors.push({ index, detail: `${path || 'the event'} ${fault.reason}${limit}` });
      return;
    }
    if (!validateInbound(raw)) {
      result.errors.push({ index, detail: formatSchemaErrors(validateInbound.errors) });
      return;
    }
    const event = raw as InboundEvent;
    const occurredAt = event.occurred_at ? new Date(parseStorableTime(event.occurred_at) as number) : input.receivedAt;
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
    const built = classifiedEvent({
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
    });
    result.events.push(built);
    result.indexes.push(index);
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
  const aid = typeof body?.aid === 'string' && body.aid.length > 0 && body.aid.length <= 200 && textFault(body.aid) === null ? body.aid : null;
  if (!aid || hits.length === 0 || hits.length > 50) return { events: [], rejected: Math.max(hits.length, 1), bot: false };

  const events: ClassifiedEventV1[] = [];
  let rejected = 0;
  for (const hit of hits) {
    // A hit any of whose strings a store would refuse is rejected whole, as is one for another host.
    if (hit === null || typeof hit !== 'object' || Array.isArray(hit) || findInputFault(hit, { maxDepth: MAX_EVENT_DEPTH }) !== null) {
      rejected += 1;
      continue;
    }
    const type = typeof hit.type === 'string' ? hit.type : '';
    const url = typeof hit.url === 'string' && hit.url.length <= 4000 && onWebsite(hit.url, input.website.domain) ? hit.url : null;
    const id = typeof hit.id === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(hit.id) ? hit.id.toLowerCase() : null;
    if (!(TRACKER_EVENT_TYPES as readonly string[]).includes(type) || !url || !id || typeof hit.ts !== 'number' || !isStorableEpochMs(hit.ts)) {
      rejected += 1;
      continue;
    }
    const referrer = typeof hit.referrer === 'string' && hit.referrer !== '' ? clip(hit.referrer, 4000) : null;
    const classification = input.classifier.classify({ url, referrer, userAgent: input.userAgent, ip: input.ip, siteDomain: input.website.domain });
    if (classification.bot) return { events: [], rejected: 0, bot: true };
    // The gateway has already timed a browser's hits by its own clock; a replay with an API key
    // (backfill) keeps its historical times. A clock far ahead is never believed.
    const ts = hit.ts > input.receivedAt.getTime() + FUTURE_TOLERANCE_MS ? input.receivedAt.getTime() : hit.ts;
    const email = type === 'identify' && typeof hit.email === 'string' && hit.email.length <= MAX_EMAIL_LENGTH && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(hit.email) ? normaliseEmail(hit.email) : null;
    const built = classifiedEvent({
      event_id: id,
      origin: 'tracker',
      event_type: type,
      event_name: typeof hit.name === 'string' && hit.name !== '' ? clip(hit.name, 200) : null,
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
      title: typeof hit.title === 'string' ? clip(hit.title, 500) : null,
      screen: typeof hit.screen === 'string' && /^\d{1,5}x\d{1,5}$/.test(hit.screen) ? hit.screen : null,
      classification,
    });
    events.push(built);
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
