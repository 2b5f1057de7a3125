// The read model: every funnel's attempts (ClickHouse funnel_attempts) and every person's session
// list (person_touches), kept current as facts arrive; attempts are built from the facts when a
// funnel is created or its definition changes (README "Read model").
//
// - Versions. A computation takes its version (microseconds, strictly increasing in the process)
//   before it reads any fact (merge groups included), and every consumer stores its facts before it
//   computes; rows are replaced by version (FINAL). So the newest row saw every fact stored before
//   it started, whatever order computations land in (across processes the wall clock orders them).
// - What a fact recomputes: an event, its people's session lists and their attempts entering from
//   window_days before it to it (only those can reach it, or start at it); a revenue fact, the
//   attempts around it; a merge, the group's session lists and every attempt of the group; an email
//   that revenue facts name, every attempt of the groups carrying it.
// - Builds (`Builder`): a funnel's attempts of a new generation, computed from all facts, identity
//   range by identity range and then merge group by merge group, with progress in Postgres. Reads
//   answer from the events until the build is done, so they are exact throughout.
import type { ClickHouseStore, Logger } from '@sightline/kit';
import type { ClassifiedEventV1, MilestoneReachedV1 } from '@sightline/proto-schemas';
import { attemptsOf, compareHits, ENTRY_BIT, STEP_BITS, tieOf, type Hit } from './attempts';
import { isRevenueStep, type FunnelDefinition } from './definition';
import { DAY_MS, EVENT_ENTRY_BIT, eventFilters } from './funnel.sql';
import type { FunnelRow, FunnelsRepo } from './funnels.repo';
import { emailHash } from './projection.repo';
import { allGroupsQuery, factsQuery, groupsQuery, personTouchesInsert, rangeBoundsQuery, revenueFactsQuery, type FactSelection } from './read-model.sql';

let lastVersion = 0;

/** The next version: microseconds since the epoch, never repeated in this process. */
export function nextVersion(): number {
  lastVersion = Math.max(Date.now() * 1000, lastVersion + 1);
  return lastVersion;
}

export interface FunnelRef {
  id: string;
  generation: number;
  definition: FunnelDefinition;
}

interface Scope {
  websiteId: string;
  workspaceId: string;
}

/** Merge groups of some identity ids: every member, and each one's person. */
interface Groups {
  members: string[];
  personOf: (identityId: string) => string;
}

export interface ReadModelOptions {
  /** Events per identity range of a build (default 400 000). */
  rangeEvents?: number;
  /** Identity ids per merge-group chunk of a build (default 2 000). */
  groupChunk?: number;
  /** Attempt rows per insert (default 50 000). */
  insertRows?: number;
}

interface FactRow {
  i: string;
  ts: number;
  e: string;
  b: number;
  m: number[];
}

interface RevenueRow {
  i: string;
  ts: number;
  e: string;
  stage: string;
}

const refOf = (row: FunnelRow): FunnelRef => ({
  id: row.id,
  generation: row.generation,
  definition: { name: row.name, scope: row.scope, step_order: row.step_order, window_days: row.window_days, filters: row.filters, steps: row.steps },
});

const windowMs = (d: FunnelDefinition) => d.window_days * DAY_MS;
const revenueStages = (refs: readonly FunnelRef[]) => [...new Set(refs.flatMap((r) => r.definition.steps.flatMap((s) => (isRevenueStep(s) ? [s.conditions.revenue_event] : []))))];
const iso = (ms: number) => new Date(ms).toISOString();

export class ReadModel {
  private readonly rangeEvents: number;
  private readonly groupChunk: number;
  private readonly insertRows: number;

  constructor(private readonly ch: ClickHouseStore, private readonly repo: FunnelsRepo, options: ReadModelOptions = {}) {
    this.rangeEvents = options.rangeEvents ?? 400_000;
    this.groupChunk = options.groupChunk ?? 2_000;
    this.insertRows = options.insertRows ?? 50_000;
  }

  /**
   * events.classified, after the events are stored: their people's session lists, and the attempts
   * their people may have gained or changed.
   */
  async eventsStored(workspaceId: string, websiteId: string, events: readonly ClassifiedEventV1[]): Promise<void> {
    const named = events.filter((e) => e.identity_id);
    if (named.length === 0) return;
    const scope = { websiteId, workspaceId };
    // Taken before any fact is read, merge groups included (see "Versions" above).
    const version = nextVersion();
    const groups = await this.groups(workspaceId, [...new Set(named.map((e) => e.identity_id as string))]);
    await this.storeTouches(scope, groups.members, version);
    const refs = (await this.repo.ofWebsite(websiteId)).map(refOf);
    if (refs.length === 0) return;
    const times = named.map((e) => Date.parse(e.occurred_at));
    await this.recomputeGroups(scope, refs, groups, { fromMs: Math.min(...times), toMs: Math.max(...times) }, version);
    // A revenue fact named by email belongs to the first identity that carried the email: a newly
    // seen email may give such facts a person (or another one), so those groups are recomputed whole.
    const revenue = refs.filter((r) => r.definition.steps.some(isRevenueStep));
    const hashes = [...new Set(named.flatMap((e) => (e.email_hash ? [e.email_hash] : [])))];
    if (revenue.length === 0 || hashes.length === 0) return;
    const carriers = await this.ch.query<{ i: string }>(
      `SELECT DISTINCT identity_id AS i FROM emails WHERE workspace_id = {workspace:UUID} AND email_hash IN {hashes:Array(String)}
          AND email_hash IN (SELECT email_hash FROM revenue_events WHERE website_id = {website:UUID} AND identity_id = '' AND email_hash IN {hashes:Array(String)})`,
      { workspace: workspaceId, website: websiteId, hashes },
    );
    if (carriers.length > 0) await this.recompute(scope, revenue, carriers.map((c) => c.i), null);
  }

  /**
   * identity.merged, after identity_roots holds the new group: the group's session lists and every
   * attempt of the group, on every website of the workspace.
   */
  async identitiesMerged(workspaceId: string, identityIds: readonly string[]): Promise<void> {
    const version = nextVersion();
    const groups = await this.groups(workspaceId, identityIds);
    const websites = await this.ch.query<{ w: string }>('SELECT DISTINCT toString(website_id) AS w FROM workspace_websites WHERE workspace_id = {workspace:UUID}', { workspace: workspaceId });
    for (const { w } of websites) await this.storeTouches({ websiteId: w, workspaceId }, groups.members, version);
    const byWebsite = new Map<string, FunnelRef[]>();
    for (const row of await this.repo.ofWorkspace(workspaceId)) byWebsite.set(row.website_id, [...(byWebsite.get(row.website_id) ?? []), refOf(row)]);
    for (const [websiteId, refs] of byWebsite) await this.recomputeGroups({ websiteId, workspaceId }, refs, groups, null, version);
  }

  /** Revenue milestones, after they are stored: the attempts of their people around them. */
  async milestonesStored(milestones: readonly MilestoneReachedV1[]): Promise<void> {
    const byWebsite = new Map<string, MilestoneReachedV1[]>();
    for (const m of milestones) byWebsite.set(m.website_id, [...(byWebsite.get(m.website_id) ?? []), m]);
    for (const [websiteId, facts] of byWebsite) {
      const stages = new Set(facts.map((m) => m.stage));
      const refs = (await this.repo.ofWebsite(websiteId)).map(refOf)
        .filter((r) => r.definition.steps.some((s) => isRevenueStep(s) && stages.has(s.conditions.revenue_event)));
      if (refs.length === 0) continue;
      const workspaceId = (facts[0] as MilestoneReachedV1).workspace_id;
      const named = facts.flatMap((m) => (m.identity_id ? [m.identity_id] : []));
      const hashes = facts.flatMap((m) => (!m.identity_id && m.email ? [emailHash(m.email)] : []));
      const carriers = hashes.length === 0 ? [] : (await this.ch.query<{ i: string }>(
        'SELECT DISTINCT identity_id AS i FROM emails WHERE workspace_id = {workspace:UUID} AND email_hash IN {hashes:Array(String)}',
        { workspace: workspaceId, hashes },
      )).map((c) => c.i);
      const ids = [...new Set([...named, ...carriers])];
      if (ids.length === 0) continue;
      const times = facts.map((m) => Date.parse(m.occurred_at));
      await this.recompute({ websiteId, workspaceId }, refs, ids, { fromMs: Math.min(...times), toMs: Math.max(...times) });
    }
  }

  /** The merge groups of the ids (each id alone when never merged). */
  async groups(workspaceId: string, ids: readonly string[]): Promise<Groups> {
    const q = groupsQuery(workspaceId, ids);
    const rows = await this.ch.query<{ i: string; root: string }>(q.sql, q.params);
    const roots = new Map(rows.map((g) => [g.i, g.root]));
    return { members: [...new Set([...ids, ...rows.map((g) => g.i), ...rows.map((g) => g.root)])], personOf: (id) => roots.get(id) ?? id };
  }

  /**
   * Rewrites the session lists (person_touches) of the people of `members` on a website (all its
   * people when null), under `version`, taken before the merge groups were read.
   */
  async storeTouches(scope: Scope, members: readonly string[] | null, version = nextVersion()): Promise<void> {
    if (members !== null && members.length === 0) return;
    const q = personTouchesInsert(scope.workspaceId, scope.websiteId, members, version);
    await this.ch.command(q.sql, q.params);
  }

  /**
   * Recomputes, for the merge groups of `ids`, the attempts entering from window_days before
   * `span.fromMs` to `span.toMs` (every attempt when span is null).
   */
  async recompute(scope: Scope, refs: readonly FunnelRef[], ids: readonly string[], span: { fromMs: number; toMs: number } | null): Promise<void> {
    const version = nextVersion();
    await this.recomputeGroups(scope, refs, await this.groups(scope.workspaceId, ids), span, version);
  }

  private async recomputeGroups(scope: Scope, refs: readonly FunnelRef[], groups: Groups, span: { fromMs: number; toMs: number } | null, version: number): Promise<void> {
    const widest = Math.max(...refs.map((r) => windowMs(r.definition)));
    const selection: FactSelection = span
      ? { kind: 'identities', ids: groups.members, fromMs: span.fromMs - widest, toMs: span.toMs + widest }
      : { kind: 'identities', ids: groups.members };
    const entries = (ref: FunnelRef) => (span ? { from: span.fromMs - windowMs(ref.definition), to: span.toMs } : null);
    await this.computeAndStore(scope, refs, selection, groups.personOf, entries, version);
  }

  /** Reads the selection's facts, computes the attempts of every person and funnel, stores them; returns the rows stored. */
  async computeAndStore(
    scope: Scope, refs: readonly FunnelRef[], selection: FactSelection, personOf: (identityId: string) => string,
    entries: (ref: FunnelRef) => { from: number; to: number } | null, version: number,
  ): Promise<number> {
    const facts = factsQuery(refs.map((r) => r.definition), scope, selection);
    const eventRows = await this.ch.query<FactRow>(facts.sql, facts.params);
    const stages = revenueStages(refs);
    let revenueRows: RevenueRow[] = [];
    if (stages.length > 0) {
      const q = revenueFactsQuery(stages, scope, selection);
      revenueRows = await this.ch.query<RevenueRow>(q.sql, q.params);
    }
    // person → one hit list per funnel
    const people = new Map<string, Hit[][]>();
    const listsOf = (person: string): Hit[][] => {
      let lists = people.get(person);
      if (!lists) {
        lists = refs.map(() => []);
        people.set(person, lists);
      }
      return lists;
    };
    const strict = refs.map((r) => r.definition.step_order === 'strict');
    for (const row of eventRows) {
      const lists = listsOf(personOf(row.i));
      for (let f = 0; f < refs.length; f += 1) {
        const raw = row.m[f] as number;
        const steps = raw & STEP_BITS;
        if (steps === 0 && !(strict[f] && row.b)) continue;
        (lists[f] as Hit[]).push({ ts: row.ts, mask: steps | ((raw >> EVENT_ENTRY_BIT) & 1 ? ENTRY_BIT : 0), eid: row.e, behavioural: row.b === 1 });
      }
    }
    if (revenueRows.length > 0) {
      const revenueMasks = refs.map((r) => {
        const entry = eventFilters(r.definition).length === 0 ? ENTRY_BIT : 0;
        return (stage: string) => {
          const bits = r.definition.steps.reduce((m, s, k) => (isRevenueStep(s) && s.conditions.revenue_event === stage ? m | (1 << k) : m), 0);
          return bits === 0 ? 0 : bits | entry;
        };
      });
      for (const row of revenueRows) {
        const lists = listsOf(personOf(row.i));
        refs.forEach((_, f) => {
          const mask = (revenueMasks[f] as (stage: string) => number)(row.stage);
          if (mask !== 0) (lists[f] as Hit[]).push({ ts: row.ts, mask, eid: row.e, behavioural: false });
        });
      }
    }

    const rows: Record<string, unknown>[] = [];
    let stored = 0;
    const flush = async (): Promise<void> => {
      if (rows.length === 0) return;
      await this.ch.insert('funnel_attempts', rows.splice(0, rows.length));
    };
    const ranges = refs.map((r) => entries(r));
    for (const [person, lists] of people) {
      for (let f = 0; f < refs.length; f += 1) {
        const hits = lists[f] as Hit[];
        if (hits.length === 0) continue;
        hits.sort(compareHits);
        const ref = refs[f] as FunnelRef;
        const range = ranges[f];
        const attempts = attemptsOf(hits, {
          order: ref.definition.step_order, steps: ref.definition.steps.length, windowMs: windowMs(ref.definition),
          entryFrom: range ? range.from : Number.NEGATIVE_INFINITY, entryTo: range ? range.to : Number.POSITIVE_INFINITY,
        });
        for (const a of attempts) {
          rows.push({
            funnel_id: ref.id, generation: ref.generation,
            entry_ts: iso(a.entry.ts), entry_tie: tieOf(a.entry), entry_eid: a.entry.eid,
            person, reached: a.reached,
            done_ts: iso(a.done.ts), done_tie: tieOf(a.done), done_eid: a.done.eid,
            gaps: a.gaps.join(','), version,
          });
        }
        if (rows.length >= this.insertRows) {
          stored += rows.length;
          await flush();
        }
      }
    }
    stored += rows.length;
    await flush();
    return stored;
  }

  /**
   * Computes every attempt of the funnels' current generations (one website's), reporting
   * progress after each unit; `keep` returns the funnels still worth building (a funnel changed
   * meanwhile is dropped). Returns the attempt rows stored.
   */
  async build(scope: Scope, refs: readonly FunnelRef[], progress: (done: number, total: number) => Promise<readonly FunnelRef[]>): Promise<number> {
    let current = [...refs];
    const bounds = (await this.ch.query<{ events: number; bounds: string[] }>(rangeBoundsQuery(scope.websiteId, this.rangeEvents).sql, rangeBoundsQuery(scope.websiteId, this.rangeEvents).params))[0];
    const cuts = bounds?.bounds ?? [];
    const ranges: FactSelection[] = [null, ...cuts].map((lo, i) => ({ kind: 'range', lo, hi: cuts[i] ?? null }));
    const groups = await this.ch.query<{ root: string; ids: string[] }>(allGroupsQuery(scope.workspaceId).sql, allGroupsQuery(scope.workspaceId).params);
    const chunks: { root: string; ids: string[] }[][] = [];
    let chunk: { root: string; ids: string[] }[] = [];
    let size = 0;
    for (const g of groups) {
      chunk.push(g);
      size += g.ids.length;
      if (size >= this.groupChunk) {
        chunks.push(chunk);
        chunk = [];
        size = 0;
      }
    }
    if (chunk.length > 0) chunks.push(chunk);
    const total = ranges.length + chunks.length;
    let done = 0;
    let stored = 0;
    current = [...(await progress(done, total))];
    for (const range of ranges) {
      if (current.length === 0) return stored;
      stored += await this.computeAndStore(scope, current, range, (id) => id, () => null, nextVersion());
      current = [...(await progress((done += 1), total))];
    }
    for (const part of chunks) {
      if (current.length === 0) return stored;
      // The groups as they are now (read after the version): a merge since the listing changes them.
      const version = nextVersion();
      const groups = await this.groups(scope.workspaceId, part.flatMap((g) => [...g.ids, g.root]));
      stored += await this.computeAndStore(scope, current, { kind: 'identities', ids: groups.members }, groups.personOf, () => null, version);
      current = [...(await progress((done += 1), total))];
    }
    return stored;
  }

  /**
   * Removes attempts of generations no funnel reads (older ones, deleted funnels). What is stored
   * is listed before the funnels are, so a funnel created in between keeps its rows.
   */
  async purge(current: () => Promise<ReadonlyMap<string, number>>): Promise<number> {
    const present = await this.ch.query<{ funnel_id: string; generation: number }>('SELECT DISTINCT toString(funnel_id) AS funnel_id, generation FROM funnel_attempts');
    const keep = await current();
    const stale = present.filter((p) => keep.get(p.funnel_id) !== p.generation);
    for (const s of stale) {
      await this.ch.command('DELETE FROM funnel_attempts WHERE funnel_id = {funnel:UUID} AND generation = {generation:UInt32}', { funnel: s.funnel_id, generation: s.generation });
    }
    return stale.length;
  }
}

export { refOf };
