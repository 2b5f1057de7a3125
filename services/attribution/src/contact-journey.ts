// The journey of one contact (one conversion): every session of the person (all devices, through
// identity merges) that started in the `days` before the conversion, oldest first, each with what
// happened in it, plus the person's conversions in the same window. The window is anchored at the
// conversion, so an old contact still shows the path that led to it.
import { ProblemError } from '@sightline/kit';
import type { ConversionRow, ConversionsRepo, StoredTouch } from './conversions.repo';
import type { IdentityMergesRepo } from './identity-merges.repo';
import type { SessionRow, TouchesRepo } from './touches.repo';

export const DEFAULT_JOURNEY_DAYS = 365;
export const DEFAULT_JOURNEY_LIMIT = 2000;
export const MAX_JOURNEY_LIMIT = 5000;
/** Events listed per session; a longer session says so with events_truncated. */
export const EVENTS_PER_SESSION = 1000;
/** Conversions listed beside the timeline. */
export const CONVERSIONS_LISTED = 1000;
const DAY_MS = 86_400_000;

export interface JourneyEvent {
  event_id: string;
  occurred_at: string;
  event_type: string;
  event_name: string | null;
  page: string | null;
  revenue: number | null;
}

export interface JourneySession {
  session_id: string | null;
  identity_id: string | null;
  anonymous_id: string | null;
  started_at: string;
  ended_at: string | null;
  channel: string;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  term: string | null;
  content: string | null;
  landing_page: string | null;
  referrer_domain: string | null;
  click_ids: Record<string, string>;
  device_type: string | null;
  country: string | null;
  pageviews: number;
  event_count: number;
  events: JourneyEvent[];
  events_truncated: boolean;
  /** Synthetic timelines only: which stored touch this entry was rebuilt from. */
  touch?: 'first' | 'last';
}

export interface JourneyConversion {
  conversion_id: string;
  occurred_at: string;
  event_type: string;
  event_name: string | null;
  revenue: number | null;
  currency: string | null;
}

export interface ContactJourney {
  contact_id: string;
  identity_id: string | null;
  synthetic: boolean;
  sessions: JourneySession[];
  conversions: JourneyConversion[];
  window: { from: string; to: string };
  truncated: boolean;
}

export interface ContactJourneyDeps {
  touches: TouchesRepo;
  conversions: ConversionsRepo;
  merges: IdentityMergesRepo;
}

export interface ContactJourneyQuery {
  websiteId: string;
  contactId: string;
  days?: number;
  limit?: number;
}

export async function contactJourney(deps: ContactJourneyDeps, query: ContactJourneyQuery): Promise<ContactJourney> {
  const conversion = await deps.conversions.find(query.websiteId, query.contactId);
  if (!conversion) {
    throw new ProblemError('not-found', {
      detail: `No contact ${query.contactId} on this website.`,
      remediation: 'Check the id against GET /contacts (a contact is one conversion), and the website parameter.',
    });
  }
  const days = query.days ?? DEFAULT_JOURNEY_DAYS;
  const limit = Math.min(Math.max(1, Math.trunc(query.limit ?? DEFAULT_JOURNEY_LIMIT)), MAX_JOURNEY_LIMIT);
  // `to` is exclusive: one millisecond past the conversion keeps the conversion's own instant in.
  const to = new Date(Date.parse(conversion.occurred_at) + 1);
  const from = new Date(to.getTime() - 1 - days * DAY_MS);
  const window = { from: from.toISOString(), to: to.toISOString() };

  const group = conversion.identity_id ? await deps.merges.groupOf(conversion.workspace_id, conversion.identity_id) : null;
  const hasHistory = group ? await deps.touches.hasSessions(query.websiteId, group.members) : false;
  if (!group || !hasHistory) {
    return {
      contact_id: conversion.conversion_id,
      identity_id: group?.canonical ?? null,
      synthetic: true,
      sessions: syntheticSessions(conversion, group?.canonical ?? null, from, to),
      conversions: group
        ? (await deps.conversions.ofIdentities(query.websiteId, group.members, from, to, CONVERSIONS_LISTED)).map(toJourneyConversion)
        : [toJourneyConversion(conversion)],
      window,
      truncated: false,
    };
  }

  const newestFirst = await deps.touches.sessionsOf({ websiteId: query.websiteId, identityIds: group.members, from, to, limit });
  const truncated = newestFirst.length > limit;
  const kept = newestFirst.slice(0, limit).reverse();
  const events = await deps.touches.eventsOf(query.websiteId, group.members, kept.map((s) => s.session_id), EVENTS_PER_SESSION);
  const bySession = new Map<string, JourneyEvent[]>();
  for (const { session_id: sessionId, ...event } of events) {
    const list = bySession.get(sessionId) ?? [];
    list.push(event);
    bySession.set(sessionId, list);
  }
  const conversions = await deps.conversions.ofIdentities(query.websiteId, group.members, from, to, CONVERSIONS_LISTED);
  return {
    contact_id: conversion.conversion_id,
    identity_id: group.canonical,
    synthetic: false,
    sessions: kept.map((s) => toJourneySession(s, group.canonical, bySession.get(s.session_id) ?? [])),
    conversions: conversions.map(toJourneyConversion),
    window,
    truncated,
  };
}

export function toJourneySession(s: SessionRow, canonical: string, events: JourneyEvent[]): JourneySession {
  return {
    session_id: s.session_id,
    identity_id: canonical,
    anonymous_id: s.anonymous_id === '' ? null : s.anonymous_id,
    started_at: s.started_at,
    ended_at: s.ended_at,
    channel: s.channel,
    source: s.source,
    medium: s.medium,
    campaign: s.campaign,
    term: s.term,
    content: s.content,
    landing_page: s.landing_page,
    referrer_domain: s.referrer_domain,
    click_ids: s.click_ids,
    device_type: s.device_type,
    country: s.country,
    pageviews: s.pageviews,
    event_count: s.event_count,
    events: events.slice(0, EVENTS_PER_SESSION),
    events_truncated: events.length > EVENTS_PER_SESSION,
  };
}

/**
 * Without browsing history the timeline is rebuilt from the conversion's stored first and last
 * touch (when any is known): one entry per distinct touch in the window, no events.
 */
export function syntheticSessions(conversion: ConversionRow, identityId: string | null, from: Date, to: Date): JourneySession[] {
  const entries: JourneySession[] = [];
  const add = (touch: StoredTouch | null, which: 'first' | 'last'): void => {
    if (!touch) return;
    const at = touch.at ?? conversion.occurred_at;
    const ms = Date.parse(at);
    if (ms < from.getTime() || ms >= to.getTime()) return;
    const same = entries.find((e) => e.started_at === at && e.channel === touch.channel && e.source === touch.source && e.campaign === touch.campaign);
    if (same) return;
    entries.push({
      session_id: null,
      identity_id: identityId,
      anonymous_id: null,
      started_at: at,
      ended_at: null,
      channel: touch.channel,
      source: touch.source,
      medium: touch.medium,
      campaign: touch.campaign,
      term: null,
      content: null,
      landing_page: null,
      referrer_domain: null,
      click_ids: {},
      device_type: null,
      country: null,
      pageviews: 0,
      event_count: 0,
      events: [],
      events_truncated: false,
      touch: which,
    });
  };
  add(conversion.first_touch, 'first');
  add(conversion.last_touch, 'last');
  return entries.sort((a, b) => a.started_at.localeCompare(b.started_at));
}

function toJourneyConversion(c: ConversionRow): JourneyConversion {
  return {
    conversion_id: c.conversion_id,
    occurred_at: c.occurred_at,
    event_type: c.event_type,
    event_name: c.event_name,
    revenue: c.revenue,
    currency: c.currency,
  };
}
