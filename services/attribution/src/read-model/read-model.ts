// The read model's maintenance: after a consumer stores a fact, it asks here to recompute exactly
// what the fact touches, in batches:
//   sessions (events.classified)  their traffic rows, and the outcomes of their people whose lookback
//                                 reaches the sessions (late and backfilled sessions included);
//   conversions                   themselves, and the conversions of the same people or emails
//                                 whose relationship start an earlier-starting conversion moves;
//   identity merge                the group's traffic rows (their visitor changed) and every outcome
//                                 of the group;
//   outcome value change          the conversions whose value changed;
//   milestones                    themselves.
// Every computation takes its version before it reads, writes with the caller's deduplication
// token, and publishes conversion.attributed for the first/last touches it changed. Rebuilding a
// website runs the same computations over all of its history.
import type { ClickHouseStore } from '@sightline/kit';
import { DEFAULT_LOOKBACK_DAYS } from '@sightline/proto-schemas';
import { AttributedRepo, type AttributedPublisher } from './attributed';
import { JourneysRepo, type WebsiteRef } from './journeys.repo';
import type { OutcomeScope } from './journeys.sql';
import { OutcomeKeysRepo, type OutcomeRef } from './outcome-keys.repo';
import { peopleOf } from './people.repo';
import { TrafficRepo } from './traffic.repo';
import { nextVersion } from './version';

const DAY_MS = 86_400_000;
/** Outcomes per computation: bounds the identity lists a statement carries. */
export const OUTCOMES_PER_BATCH = 2000;

export interface SessionFact {
  identity_id: string;
  session_id: string;
  started_ms: number;
}

export interface ConversionFact {
  website_id: string;
  workspace_id: string;
  conversion_id: string;
  identity_id: string;
  email: string;
  occurred_ms: number;
  /** Its own relationship start: the stated one, else its time. */
  began_ms: number;
}

export interface OutcomeFactRef {
  website_id: string;
  workspace_id: string;
  kind: 'conversion' | 'milestone';
  outcome_id: string;
  occurred_ms: number;
}

export interface RebuildProgress {
  phase: 'traffic' | 'journeys';
  done: number;
  total: number;
}

export interface RebuildResult {
  sessions: number;
  outcomes: number;
  published: number;
  seconds: number;
  /** Of which: the sessions layout, and the outcomes' journeys (with publishing). */
  trafficSeconds: number;
  journeySeconds: number;
}

export class ReadModel {
  private readonly journeys: JourneysRepo;
  private readonly traffic: TrafficRepo;
  private readonly keys: OutcomeKeysRepo;
  private readonly attributed: AttributedRepo;

  constructor(private readonly ch: ClickHouseStore, publish: AttributedPublisher) {
    this.journeys = new JourneysRepo(ch);
    this.traffic = new TrafficRepo(ch);
    this.keys = new OutcomeKeysRepo(ch);
    this.attributed = new AttributedRepo(ch, publish);
  }

  /** Sessions a batch of events stored (one website). */
  async onSessions(site: WebsiteRef, sessions: readonly SessionFact[], token: string): Promise<void> {
    if (sessions.length === 0) return;
    const version = nextVersion();
    await this.traffic.compute(site.workspaceId, {
      by: 'sessions', websiteId: site.websiteId,
      identityIds: [...new Set(sessions.map((s) => s.identity_id))], sessionIds: [...new Set(sessions.map((s) => s.session_id))],
    }, version);

    const known = sessions.filter((s) => s.identity_id !== '');
    if (known.length === 0) return;
    const people = await peopleOf(this.ch, site.workspaceId, known.map((s) => s.identity_id));
    // Per person, the span of the batch's session starts: its outcomes up to a lookback later may change.
    const span = new Map<string, { from: number; to: number }>();
    for (const s of known) {
      const person = people.personOf(s.identity_id);
      const seen = span.get(person);
      span.set(person, { from: Math.min(seen?.from ?? s.started_ms, s.started_ms), to: Math.max(seen?.to ?? s.started_ms, s.started_ms) });
    }
    const spans = [...span.values()];
    const refs = await this.keys.byKeys(site.workspaceId, people.members.ids.map((id) => `i:${id}`), {
      websiteId: site.websiteId,
      from: new Date(Math.min(...spans.map((s) => s.from))),
      to: new Date(Math.max(...spans.map((s) => s.to)) + DEFAULT_LOOKBACK_DAYS * DAY_MS),
    });
    const affected = refs.filter((r) => {
      const s = span.get(people.personOf(r.key.slice(2)));
      return s !== undefined && r.occurredMs >= s.from && r.occurredMs <= s.to + DEFAULT_LOOKBACK_DAYS * DAY_MS;
    });
    await this.recompute(site, affected, version, `${token}:journeys`);
  }

  /** Conversions just stored (any websites). */
  async onConversions(conversions: readonly ConversionFact[], token: string): Promise<void> {
    for (const [site, own] of bySite(conversions)) {
      const version = nextVersion();
      const people = await peopleOf(this.ch, site.workspaceId, own.map((c) => c.identity_id));
      // Other conversions of the same person or email whose own start is later than a new one's:
      // their relationship may now have begun earlier.
      const earliestByKey = new Map<string, number>();
      const note = (key: string, ms: number): void => void earliestByKey.set(key, Math.min(earliestByKey.get(key) ?? ms, ms));
      for (const c of own) {
        if (c.identity_id !== '') note(`p:${people.personOf(c.identity_id)}`, c.began_ms);
        const email = c.email.trim().toLowerCase();
        if (email !== '') note(`e:${email}`, c.began_ms);
      }
      const emailKeys = [...earliestByKey.keys()].filter((k) => k.startsWith('e:'));
      const refs = await this.keys.byKeys(site.workspaceId, [...people.members.ids.map((id) => `i:${id}`), ...emailKeys], { websiteId: site.websiteId });
      const moved = refs.filter((r) => {
        if (r.kind !== 'conversion') return false;
        const group = r.key.startsWith('i:') ? `p:${people.personOf(r.key.slice(2))}` : r.key;
        return r.beganMs > (earliestByKey.get(group) ?? Number.POSITIVE_INFINITY);
      });
      const fresh: OutcomeRef[] = own.map((c) => ({ key: '', websiteId: site.websiteId, kind: 'conversion', outcomeId: c.conversion_id, occurredMs: c.occurred_ms, beganMs: c.began_ms }));
      await this.recompute(site, [...fresh, ...moved], version, token);
    }
  }

  /** A merge joined these identity ids into one person (the whole group, on every website of the workspace). */
  async onMerge(workspaceId: string, members: readonly string[], token: string): Promise<void> {
    const version = nextVersion();
    await this.traffic.compute(workspaceId, { by: 'identities', identityIds: members }, version);
    const refs = await this.keys.byKeys(workspaceId, members.map((id) => `i:${id}`));
    const bySiteId = new Map<string, OutcomeRef[]>();
    for (const r of refs) bySiteId.set(r.websiteId, [...(bySiteId.get(r.websiteId) ?? []), r]);
    for (const [websiteId, own] of bySiteId) await this.recompute({ websiteId, workspaceId }, own, version, token);
  }

  /** Outcomes whose own facts changed (a written-back value, a new milestone). */
  async onOutcomes(outcomes: readonly OutcomeFactRef[], token: string): Promise<void> {
    for (const [site, own] of bySite(outcomes)) {
      const version = nextVersion();
      await this.recompute(site, own.map((o) => ({ key: '', websiteId: site.websiteId, kind: o.kind, outcomeId: o.outcome_id, occurredMs: o.occurred_ms, beganMs: o.occurred_ms })), version, token);
    }
  }

  /**
   * Recomputes outcomes in batches (same outcomes in the same order give the same tokens; the
   * website is part of each token, since one coalesced group may hold several websites).
   */
  private async recompute(site: WebsiteRef, refs: readonly OutcomeRef[], version: number, groupToken: string): Promise<void> {
    const token = `${groupToken}:${site.websiteId}`;
    const unique = new Map<string, OutcomeRef>();
    for (const r of refs) unique.set(`${r.kind}:${r.outcomeId}`, r);
    const sorted = [...unique.values()].sort((a, b) => a.occurredMs - b.occurredMs || (a.outcomeId < b.outcomeId ? -1 : 1));
    for (let i = 0; i < sorted.length; i += OUTCOMES_PER_BATCH) {
      const part = sorted.slice(i, i + OUTCOMES_PER_BATCH);
      const scope: OutcomeScope = {
        by: 'ids',
        conversionIds: part.filter((r) => r.kind === 'conversion').map((r) => r.outcomeId),
        milestoneIds: part.filter((r) => r.kind === 'milestone').map((r) => r.outcomeId),
      };
      const computed = await this.journeys.compute(site, scope, version, `${token}:${i}`);
      await this.attributed.publishChanged(site, computed.conversions, `${token}:${i}`);
    }
  }

  /**
   * Recomputes a website's whole read model from its facts: traffic month by month, then outcomes
   * in slices of about OUTCOMES_PER_BATCH (cut by identity, so a person's history is read about once). Consumers may keep running: every row written
   * here carries a version taken before it was read, like theirs.
   */
  async rebuild(site: WebsiteRef, onProgress: (p: RebuildProgress) => void = () => undefined): Promise<RebuildResult> {
    const started = Date.now();
    const version = nextVersion();
    const token = `rebuild:${site.websiteId}:${version}`;

    const months = await this.ch.query<{ month: string; sessions: number }>(
      `SELECT toString(toStartOfMonth(started_at)) AS month, count() AS sessions FROM touches
        WHERE website_id = {website:UUID} GROUP BY month ORDER BY month`,
      { website: site.websiteId },
    );
    const sessionRows = months.reduce((sum, m) => sum + Number(m.sessions), 0);
    let done = 0;
    onProgress({ phase: 'traffic', done, total: sessionRows });
    for (const m of months) {
      const from = new Date(`${m.month}T00:00:00.000Z`);
      const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
      await this.traffic.compute(site.workspaceId, { by: 'range', websiteId: site.websiteId, from, to }, version);
      done += Number(m.sessions);
      onProgress({ phase: 'traffic', done, total: sessionRows });
    }

    const trafficSeconds = (Date.now() - started) / 1000;
    const slices = await this.outcomeSlices(site.websiteId);
    const total = Math.round(slices.reduce((sum, s) => sum + s.outcomes, 0));
    let outcomes = 0;
    let published = 0;
    onProgress({ phase: 'journeys', done: 0, total });
    for (const [i, s] of slices.entries()) {
      const computed = await this.journeys.compute(site, s.scope, version, `${token}:journeys:${i}`);
      published += await this.attributed.publishChanged(site, computed.conversions, `${token}:journeys:${i}`);
      outcomes += computed.outcomes;
      onProgress({ phase: 'journeys', done: outcomes, total });
    }
    const seconds = (Date.now() - started) / 1000;
    return { sessions: sessionRows, outcomes, published, seconds, trafficSeconds, journeySeconds: seconds - trafficSeconds };
  }

  /** The website's outcomes cut into slices of about OUTCOMES_PER_BATCH, by a hash of the identity. */
  private async outcomeSlices(websiteId: string): Promise<{ scope: OutcomeScope; outcomes: number }[]> {
    const [span] = await this.ch.query<{ outcomes: number; first_ms: number; last_ms: number }>(
      `SELECT sum(n) AS outcomes, min(first_ms) AS first_ms, max(last_ms) AS last_ms FROM (
         SELECT uniqExact(conversion_id) AS n, toUnixTimestamp64Milli(min(occurred_at)) AS first_ms, toUnixTimestamp64Milli(max(occurred_at)) AS last_ms
           FROM conversions WHERE website_id = {website:UUID}
         UNION ALL
         SELECT uniqExact(milestone_id), toUnixTimestamp64Milli(min(occurred_at)), toUnixTimestamp64Milli(max(occurred_at))
           FROM milestones WHERE website_id = {website:UUID}
       ) WHERE n > 0`,
      { website: websiteId },
    );
    const total = Number(span?.outcomes ?? 0);
    if (total === 0) return [];
    const parts = Math.ceil(total / OUTCOMES_PER_BATCH);
    const from = new Date(Number(span?.first_ms));
    const to = new Date(Number(span?.last_ms) + 1);
    return Array.from({ length: parts }, (_, part) => ({ scope: { by: 'range', from, to, part, parts }, outcomes: total / parts }));
  }
}

function bySite<T extends { website_id: string; workspace_id: string }>(items: readonly T[]): Map<WebsiteRef, T[]> {
  const byId = new Map<string, { site: WebsiteRef; items: T[] }>();
  for (const item of items) {
    const entry = byId.get(item.website_id) ?? { site: { websiteId: item.website_id, workspaceId: item.workspace_id }, items: [] };
    entry.items.push(item);
    byId.set(item.website_id, entry);
  }
  return new Map([...byId.values()].map((e) => [e.site, e.items]));
}
