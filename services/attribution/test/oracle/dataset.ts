// The oracle's view of one website: people, sessions and conversions with their journeys, all
// recomputed from the classified events.
import { identityKeysOf, People } from './identity';
import { byStart, sessionsOf } from './sessions';
import { DAY_MS, LOOKBACK_DAYS, type OracleConversion, type OracleEvent, type OracleSession, type OracleWindow } from './types';

export const CONVERSION_TYPES: readonly string[] = ['conversion', 'purchase'];

export interface OracleDataset {
  events: readonly OracleEvent[];
  sessions: readonly OracleSession[];
  conversions: readonly OracleConversion[];
  people: People;
}

export function buildDataset(events: readonly OracleEvent[], lookbackDays = LOOKBACK_DAYS): OracleDataset {
  const people = new People(events);
  const sessions = sessionsOf(events, people);
  const touchesOf = new Map<string, OracleSession[]>();
  for (const s of sessions) touchesOf.set(s.person, [...(touchesOf.get(s.person) ?? []), s]);
  for (const list of touchesOf.values()) list.sort(byStart);

  const conversions = events
    .filter((e) => CONVERSION_TYPES.includes(e.event_type))
    .map((e): OracleConversion => {
      const person = people.personOf(e);
      const occurredMs = Date.parse(e.occurred_at);
      const touches = touchesOf.get(person) ?? [];
      return {
        id: e.event_id,
        person,
        occurredMs,
        revenue: e.written_back_value ?? e.revenue ?? 0,
        event_type: e.event_type,
        event_name: e.event_name,
        origin: e.conversion_origin ?? e.origin,
        relationshipStartedMs: e.relationship_started_at ? Date.parse(e.relationship_started_at) : null,
        hasIdentity: identityKeysOf(e).length > 0,
        hasAnonymousId: e.anonymous_id !== null && e.anonymous_id !== '',
        journey: touches.filter((t) => t.startMs <= occurredMs && t.startMs >= occurredMs - lookbackDays * DAY_MS),
        hadSessionBefore: touches.some((t) => t.startMs <= occurredMs),
      };
    });
  return { events, sessions, conversions, people };
}

export function inWindow(ms: number, w: OracleWindow): boolean {
  return ms >= w.fromMs && ms < w.toMs;
}

export function conversionsIn(d: OracleDataset, w: OracleWindow): OracleConversion[] {
  return d.conversions.filter((c) => inWindow(c.occurredMs, w));
}
