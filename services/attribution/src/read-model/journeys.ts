// Outcome rows of the read model, computed from the facts journeys.sql.ts reads. The rules (the
// oracle in test/oracle restates them independently):
// - an outcome's person is its identity's merge root; an outcome without an identity is a person
//   of its own;
// - a touch is one session of the person: rows of a session under several identity ids combine
//   (earliest start; each attribute, equal on every row of a session, taken as the smallest value
//   so the pick never depends on read order);
// - a touch is in the journey when outcome_time - lookback <= started_at <= outcome_time, and
//   touches are ordered by (started_at, session_id);
// - relationship_began (conversions): the earliest own time or stated relationship start among
//   the conversion and every conversion of the same person or email on the website.
import { TOUCH_FIELDS, type TouchField } from '../analytics/journey-fields';
import type { OutcomeFact, TouchRow } from './journeys.sql';

const DAY_MS = 86_400_000;

type AttributeField = Exclude<TouchField, 'started_at' | 'session_id'>;
const ATTRIBUTES = TOUCH_FIELDS.filter((f): f is AttributeField => f !== 'started_at' && f !== 'session_id');

/** One touch of a person: a session, with the attributes of its rows. */
export interface Touch {
  started_ms: number;
  session_id: string;
  attributes: Record<AttributeField, string | number>;
}

const smaller = (a: string | number, b: string | number): string | number => (a < b ? a : b);

/** Each person's touches, oldest first (ties by session id), from the session rows of their identities. */
export function touchesByPerson(rows: readonly TouchRow[], personOf: (identityId: string) => string): Map<string, Touch[]> {
  const sessions = new Map<string, Map<string, Touch>>();
  for (const row of rows) {
    const person = personOf(row.identity_id);
    const own = sessions.get(person) ?? new Map<string, Touch>();
    sessions.set(person, own);
    const sessionId = String(row.session_id);
    const started = Number(row.started_ms);
    const seen = own.get(sessionId);
    if (!seen) {
      const attributes = {} as Record<AttributeField, string | number>;
      for (const f of ATTRIBUTES) attributes[f] = f === 'is_paid' ? Number(row[f]) : String(row[f]);
      own.set(sessionId, { started_ms: started, session_id: sessionId, attributes });
      continue;
    }
    seen.started_ms = Math.min(seen.started_ms, started);
    for (const f of ATTRIBUTES) seen.attributes[f] = smaller(seen.attributes[f], f === 'is_paid' ? Number(row[f]) : String(row[f]));
  }
  const out = new Map<string, Touch[]>();
  for (const [person, own] of sessions) {
    out.set(person, [...own.values()].sort((a, b) => a.started_ms - b.started_ms || (a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : 0)));
  }
  return out;
}

/** The person of an outcome: its identity's, or a person of its own without one. */
export function outcomePerson(o: Pick<OutcomeFact, 'kind' | 'outcome_id' | 'identity_id'>, personOf: (identityId: string) => string): string {
  return o.identity_id === '' ? `${o.kind}:${o.outcome_id}` : personOf(o.identity_id);
}

export interface JourneyInputs {
  websiteId: string;
  workspaceId: string;
  outcomes: readonly OutcomeFact[];
  personOf: (identityId: string) => string;
  touches: Map<string, Touch[]>;
  /** Earliest relationship start per person (`p:<person>`) and per email key (`e:<email>`), epoch ms. */
  began: Map<string, number>;
  lookbackDays: number;
  /** The version written with the rows (microsecond text, see version.ts). */
  computedAt: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** outcome_journeys rows, one per outcome, with the journey as parallel arrays. */
export function journeyRows(input: JourneyInputs): Record<string, unknown>[] {
  const lookbackMs = input.lookbackDays * DAY_MS;
  return input.outcomes.map((o) => {
    const occurred = Number(o.occurred_ms);
    const person = outcomePerson(o, input.personOf);
    const journey = (input.touches.get(person) ?? []).filter((t) => t.started_ms <= occurred && t.started_ms >= occurred - lookbackMs);
    const row: Record<string, unknown> = {
      website_id: input.websiteId,
      workspace_id: input.workspaceId,
      kind: o.kind,
      occurred_at: iso(occurred),
      outcome_id: o.outcome_id,
      identity_id: o.identity_id,
      person,
      value: Number(o.value),
      event_type: o.event_type,
      event_name: o.event_name,
      stage: o.stage,
      email: o.email,
      origin: o.origin,
      relationship_started_at: o.relationship_started_ms === null ? null : iso(Number(o.relationship_started_ms)),
      relationship_began: iso(o.kind === 'conversion' ? relationshipBegan(o, person, input.began) : occurred),
      has_visitor: o.identity_id === '' ? 0 : 1,
      touches: journey.length,
      j_started_at: journey.map((t) => iso(t.started_ms)),
      j_session_id: journey.map((t) => t.session_id),
      computed_at: input.computedAt,
    };
    for (const f of ATTRIBUTES) row[`j_${f}`] = journey.map((t) => t.attributes[f]);
    return row;
  });
}

function relationshipBegan(o: OutcomeFact, person: string, began: Map<string, number>): number {
  const occurred = Number(o.occurred_ms);
  const own = o.relationship_started_ms === null ? occurred : Math.min(occurred, Number(o.relationship_started_ms));
  const email = o.email.trim().toLowerCase();
  return Math.min(own, began.get(`p:${person}`) ?? own, email === '' ? own : began.get(`e:${email}`) ?? own);
}
