// Sessions of browsing hits, per visitor (anonymous id): a new session starts after 30 minutes
// without activity or when a hit brings campaign parameters different from the session's. A
// session is a touch; its attributes are those of its first hit. Visitor state lives in the KV
// store and is read and written once per batch (getMany/setMany), never per event. The in-process KV
// (embedded mode) bounds it by count: it keeps the visitors written most recently.
import type { KvStore } from '@sightline/kit';
import type { ClassifiedEventV1, SessionAttributesV1 } from '@sightline/proto-schemas';
import { derivedUuid } from './identity-keys';

export const SESSION_TIMEOUT_MS = 30 * 60_000;
/** Visitor state is kept a day past the last hit; older visitors start a new session anyway. */
const STATE_TTL_MS = 24 * 3600_000 + SESSION_TIMEOUT_MS;

interface VisitorState {
  id: string;
  start: number;
  last: number;
  campaign: string;
  attrs: SessionAttributesV1;
}

export class Sessionizer {
  constructor(private readonly kv: KvStore) {}

  /**
   * Assigns session_id and session to the batch's tracker hits (server-side events have none).
   * Replaying a batch gives the same sessions: a hit inside the visitor's current session keeps
   * it, and session ids derive from (website, visitor, start time).
   */
  async assign(websiteId: string, events: ClassifiedEventV1[]): Promise<void> {
    const hits = events
      .filter((e) => e.origin === 'tracker' && e.anonymous_id)
      .sort((a, b) => a.occurred_at.localeCompare(b.occurred_at));
    if (hits.length === 0) return;
    const visitors = [...new Set(hits.map((e) => e.anonymous_id as string))];
    const keys = visitors.map((v) => `session:${websiteId}:${v}`);
    const stored = await this.kv.getMany(keys);
    const states = new Map<string, VisitorState>();
    visitors.forEach((v, i) => {
      const raw = stored[i];
      if (raw) states.set(v, JSON.parse(raw) as VisitorState);
    });
    const changed = new Set<string>();

    for (const hit of hits) {
      const visitor = hit.anonymous_id as string;
      const ts = Date.parse(hit.occurred_at);
      const state = states.get(visitor);
      if (state && ts >= state.start && ts <= state.last) {
        apply(hit, state);
        continue;
      }
      if (state && ts < state.start) {
        // A late hit older than the visitor's current session: a session of its own, state untouched.
        apply(hit, newSession(websiteId, visitor, hit, ts));
        continue;
      }
      const sameCampaign = hit.campaign_key === '' || hit.campaign_key === state?.campaign;
      if (state && ts - state.last <= SESSION_TIMEOUT_MS && sameCampaign) {
        state.last = ts;
        apply(hit, state);
      } else {
        const next = newSession(websiteId, visitor, hit, ts);
        states.set(visitor, next);
        apply(hit, next);
      }
      changed.add(visitor);
    }
    if (changed.size > 0) {
      // Evictable: the in-process KV keeps only its most recently written visitors (a visitor it
      // dropped starts a new session on the next hit); Redis keeps each for the TTL.
      await this.kv.setMany(
        [...changed].map((v) => [`session:${websiteId}:${v}`, JSON.stringify(states.get(v))]),
        { ttlMs: STATE_TTL_MS, evictable: true },
      );
    }
  }
}

function newSession(websiteId: string, visitor: string, hit: ClassifiedEventV1, ts: number): VisitorState {
  return {
    id: derivedUuid(websiteId, visitor, String(ts)),
    start: ts,
    last: ts,
    campaign: hit.campaign_key,
    attrs: {
      started_at: hit.occurred_at,
      landing_page: hit.page,
      channel: hit.channel,
      source: hit.source,
      medium: hit.medium,
      campaign: hit.campaign,
      term: hit.term,
      content: hit.content,
      referrer_domain: hit.referrer_domain,
      click_ids: hit.click_ids,
    },
  };
}

function apply(hit: ClassifiedEventV1, state: VisitorState): void {
  hit.session_id = state.id;
  hit.session = state.attrs;
}
