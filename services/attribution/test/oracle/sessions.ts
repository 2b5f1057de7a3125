// Sessions, restated from the documented rule (DESIGN.md, ingest README and classify README):
// per device (anonymous id), a hit opens a new session after more than 30 minutes without activity,
// or when it brings campaign parameters (UTM values, ad click ids) different from the session's.
// A hit with no campaign parameters continues the session. Server-side events have no session.
import type { People } from './identity';
import { SESSION_TIMEOUT_MS, type OracleEvent, type OracleSession } from './types';

/** The hit's campaign parameters as one comparable string; '' when it has none. */
export function campaignKeyOf(e: Pick<OracleEvent, 'url' | 'click_ids'>): string {
  const params: [string, string][] = [];
  if (e.url) {
    let search: URLSearchParams | null = null;
    try {
      search = new URL(e.url).searchParams;
    } catch {
      search = null;
    }
    for (const [name, raw] of search ?? []) {
      const key = name.toLowerCase();
      if (!key.startsWith('utm_')) continue;
      const value = key === 'utm_source' || key === 'utm_medium' ? raw.trim().toLowerCase() : raw.trim();
      if (value !== '') params.push([key, value]);
    }
  }
  for (const [name, value] of Object.entries(e.click_ids)) if (value !== '') params.push([`click:${name}`, value]);
  if (params.length === 0) return '';
  return JSON.stringify(params.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : 1)));
}

/**
 * Every session of the dataset. Hits are taken per device in time order (equal times keep the
 * order they were received in).
 */
export function sessionsOf(events: readonly OracleEvent[], people: People): OracleSession[] {
  const byDevice = new Map<string, { e: OracleEvent; ms: number; seq: number }[]>();
  events.forEach((e, seq) => {
    if (e.origin !== 'tracker' || !e.anonymous_id) return;
    const list = byDevice.get(e.anonymous_id) ?? [];
    list.push({ e, ms: Date.parse(e.occurred_at), seq });
    byDevice.set(e.anonymous_id, list);
  });
  const sessions: OracleSession[] = [];
  for (const [anonymousId, hits] of byDevice) {
    hits.sort((a, b) => a.ms - b.ms || a.seq - b.seq);
    const person = people.personOfAnonymousId(anonymousId);
    let current: OracleSession | null = null;
    for (const { e, ms } of hits) {
      const key = campaignKeyOf(e);
      const continues = current !== null && ms - current.lastMs <= SESSION_TIMEOUT_MS && (key === '' || key === current.campaignKey);
      if (current && continues) {
        current.lastMs = ms;
        current.eventIds.push(e.event_id);
        continue;
      }
      current = {
        id: e.ingest_session_id ?? `${anonymousId}@${ms}`,
        anonymous_id: anonymousId,
        person,
        startMs: ms,
        lastMs: ms,
        campaignKey: key,
        channel: e.channel,
        source: e.source,
        medium: e.medium,
        campaign: e.campaign,
        term: e.term,
        content: e.content,
        landing_page: e.page,
        eventIds: [e.event_id],
      };
      sessions.push(current);
    }
  }
  return sessions;
}

/** Touches sorted as journeys list them: start time, then session id. */
export function byStart(a: OracleSession, b: OracleSession): number {
  return a.startMs - b.startMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
