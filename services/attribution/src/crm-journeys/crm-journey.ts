// The journey of everyone on a CRM company or deal: the member list crm-sync last sent, each
// member tied to an identity, identities merged into people through the identity graph, then
// every session of those people in the `days` before now, oldest first, each saying whose it is.
// Sessions of different people interleave in time order, so the timeline reads as the account's.
import { ProblemError } from '@sightline/kit';
import { JOURNEY_DAYS, LIMITS } from '@sightline/proto-schemas';
import {
  CONVERSIONS_LISTED,
  EVENTS_PER_SESSION,
  syntheticSessions,
  toJourneySession,
  type ContactJourneyDeps,
  type JourneyEvent,
  type JourneySession,
} from '../contact-journey';
import type { IdentityGroup } from '../identity-merges.repo';
import type { CrmMembersRepo, CrmSubject, ResolvedMember } from './crm-members.repo';

const DAY_MS = 86_400_000;

export interface CrmJourneyDeps extends ContactJourneyDeps {
  members: CrmMembersRepo;
}

export interface CrmJourneyQuery {
  websiteId: string;
  workspaceId: string;
  subject: CrmSubject;
  subjectId: string;
  days?: number;
  limit?: number;
  /** The window ends here (exclusive); tests pin it. */
  now?: Date;
}

/** A session of the timeline with the member email of the person it belongs to (unmasked here). */
export interface CrmJourneySession extends JourneySession {
  identity_id: string;
  email: string | null;
}

/** One person on the subject: an identity group, with the emails of the members resolved to it. */
export interface CrmJourneyPerson {
  identity_id: string;
  emails: string[];
}

/** Why a timeline is empty when it is, beyond an ordinary quiet window. */
export type EmptyReason = 'no_members' | 'no_member_resolved';

export interface CrmJourney {
  subject: CrmSubject;
  subject_id: string;
  name: string | null;
  synced_at: string;
  members_total: number;
  members_unresolved: number;
  people: CrmJourneyPerson[];
  synthetic: boolean;
  sessions: CrmJourneySession[];
  window: { from: string; to: string };
  truncated: boolean;
  empty_reason: EmptyReason | null;
}

export async function crmJourney(deps: CrmJourneyDeps, query: CrmJourneyQuery): Promise<CrmJourney> {
  const membership = await deps.members.latest(query.websiteId, query.subject, query.subjectId);
  if (!membership) throw notFound(query.subject, query.subjectId);
  const days = journeyDays(query.days);
  const limit = Math.min(Math.max(1, Math.trunc(query.limit ?? LIMITS.contact_journey.default)), LIMITS.contact_journey.maximum);
  const to = query.now ?? new Date();
  const from = new Date(to.getTime() - days * DAY_MS);

  const resolved = await deps.members.resolve(query.websiteId, membership.members);
  const identityIds = [...new Set(resolved.flatMap((r) => (r.identityId ? [r.identityId] : [])))];
  const groups = await deps.merges.groupsOf(query.workspaceId, identityIds);
  const people = peopleOf(resolved, groups);
  const base = {
    subject: query.subject,
    subject_id: query.subjectId,
    name: membership.name,
    synced_at: membership.synced_at,
    members_total: membership.members.length,
    members_unresolved: resolved.filter((r) => r.identityId === null).length,
    people: [...people.values()].map(({ identity_id, emails }) => ({ identity_id, emails })),
    window: { from: from.toISOString(), to: to.toISOString() },
  };
  if (people.size === 0) {
    return { ...base, synthetic: false, sessions: [], truncated: false, empty_reason: membership.members.length === 0 ? 'no_members' : 'no_member_resolved' };
  }

  // Every identity id of every person: history stored under a merged-away id is still theirs.
  const personOf = new Map<string, PersonEntry>();
  for (const person of people.values()) for (const id of person.ids) personOf.set(id, person);
  const allIds = [...personOf.keys()];

  if (!(await deps.touches.hasSessions(query.websiteId, allIds))) {
    const rebuilt = await syntheticTimeline(deps, query.websiteId, allIds, personOf, from, to);
    return { ...base, synthetic: true, ...newest(rebuilt, limit), empty_reason: null };
  }

  const newestFirst = await deps.touches.sessionsOf({ websiteId: query.websiteId, identityIds: allIds, from, to, limit });
  const kept = newestFirst.slice(0, limit).reverse();
  const events = await deps.touches.eventsOf(query.websiteId, allIds, kept.map((s) => s.session_id), EVENTS_PER_SESSION);
  const bySession = new Map<string, JourneyEvent[]>();
  for (const { session_id: sessionId, ...event } of events) {
    const list = bySession.get(sessionId) ?? [];
    list.push(event);
    bySession.set(sessionId, list);
  }
  const sessions = kept.map((s): CrmJourneySession => {
    const person = personOf.get(s.identity_id) as PersonEntry;
    return { ...toJourneySession(s, person.identity_id, bySession.get(s.session_id) ?? []), identity_id: person.identity_id, email: person.emails[0] ?? null };
  });
  return { ...base, synthetic: false, sessions, truncated: newestFirst.length > limit, empty_reason: null };
}

interface PersonEntry extends CrmJourneyPerson {
  /** Every identity id of the person's group. */
  ids: string[];
}

/** Members grouped into people (one per identity group), ordered by identity id. */
function peopleOf(resolved: readonly ResolvedMember[], groups: Map<string, IdentityGroup>): Map<string, PersonEntry> {
  const people = new Map<string, PersonEntry>();
  for (const r of resolved) {
    if (!r.identityId) continue;
    const group = groups.get(r.identityId) ?? { canonical: r.identityId, members: [r.identityId] };
    const person = people.get(group.canonical) ?? { identity_id: group.canonical, emails: [], ids: group.members };
    if (r.email !== '' && !person.emails.includes(r.email)) person.emails.push(r.email);
    people.set(group.canonical, person);
  }
  for (const person of people.values()) person.emails.sort();
  return new Map([...people.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Without any browsing history for any of the people, the timeline is rebuilt from the stored
 * first and last touches of their conversions in the window (as the contact journey does): one
 * entry per distinct touch of a person, no events.
 */
async function syntheticTimeline(
  deps: CrmJourneyDeps,
  websiteId: string,
  allIds: string[],
  personOf: Map<string, PersonEntry>,
  from: Date,
  to: Date,
): Promise<CrmJourneySession[]> {
  const conversions = await deps.conversions.ofIdentities(websiteId, allIds, from, to, CONVERSIONS_LISTED);
  const entries = new Map<string, CrmJourneySession>();
  for (const c of conversions) {
    const person = personOf.get(c.identity_id ?? '');
    if (!person) continue;
    for (const entry of syntheticSessions(c, person.identity_id, from, to)) {
      const key = [person.identity_id, entry.started_at, entry.channel, entry.source, entry.medium, entry.campaign].join('\u0000');
      if (!entries.has(key)) entries.set(key, { ...entry, identity_id: person.identity_id, email: person.emails[0] ?? null });
    }
  }
  return [...entries.values()].sort((a, b) => a.started_at.localeCompare(b.started_at) || a.identity_id.localeCompare(b.identity_id));
}

/** The newest `limit` entries of an oldest-first list, still oldest first. */
function newest(entries: CrmJourneySession[], limit: number): { sessions: CrmJourneySession[]; truncated: boolean } {
  return { sessions: entries.slice(Math.max(0, entries.length - limit)), truncated: entries.length > limit };
}

/** `days` as the OpenAPI document bounds it; the gateway checks first, this guards direct callers. */
function journeyDays(days: number | undefined): number {
  if (days === undefined) return JOURNEY_DAYS.default;
  if (!Number.isInteger(days) || days < JOURNEY_DAYS.minimum || days > JOURNEY_DAYS.maximum) {
    throw new ProblemError('window-too-large', {
      detail: `days must be a whole number from ${JOURNEY_DAYS.minimum} to ${JOURNEY_DAYS.maximum}; got ${days}.`,
      remediation: `Send days between ${JOURNEY_DAYS.minimum} and ${JOURNEY_DAYS.maximum}, or leave it out for ${JOURNEY_DAYS.default}.`,
    });
  }
  return days;
}

function notFound(subject: CrmSubject, id: string): ProblemError {
  const list = subject === 'company' ? 'GET /companies' : 'GET /deals';
  return new ProblemError('not-found', {
    detail: `No ${subject} ${id} on this website.`,
    remediation: `Check the id against ${list} and the website parameter. Companies and deals come from a connected CRM: connect one (or wait for its first sync) if ${list} is empty.`,
  });
}
