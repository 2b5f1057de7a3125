// The read model kept as facts arrive equals the read model rebuilt from scratch: random journeys
// go in as concurrent bursts of events, identity merges, revenue facts (named by identity or by
// email) and funnel edits (each edit starts a new generation, built while the other facts keep
// arriving); afterwards every funnel's stored attempts, and every person's session list, equal
// those of an operator rebuild (computed from all facts), and its steps equal the oracle's. Builds walk small units
// here (a few events per identity range, a few identities per merge-group chunk).
import fc from 'fast-check';
import type { ClassifiedEventV1, IngestWebsiteV1 } from '@sightline/proto-schemas';
import type { FunnelDefinition, FunnelStep } from './definition';
import { classified, HOUR, milestone, T0, website } from '../test/events';
import { FunnelsHarness, type Json } from '../test/harness';
import { oracleSteps, type OracleInput } from '../test/oracle/funnel';
import { People } from '../test/oracle/identity';
import type { OracleEvent } from '../test/oracle/types';

let h: FunnelsHarness;
beforeAll(async () => {
  h = await FunnelsHarness.start({ funnels: { readModel: { rangeEvents: 7, groupChunk: 3, insertRows: 5 } } });
}, 120_000);
afterAll(async () => {
  await h?.stop();
});

const PEOPLE = ['p0', 'p1', 'p2', 'p3', 'p4'];
// Three hours a slot: the data spans about four days, more than a funnel window, so facts far apart do not touch the same attempts.
const at = (slot: number) => T0 + slot * 3 * HOUR;
const TRIAL: FunnelStep = { name: 'trial', conditions: { source: 'revenue', revenue_event: 'trial_started' } };
const STEP_POOL: FunnelStep[] = [
  { name: 'home', conditions: { path_matches: '/' } },
  { name: 'a', conditions: { path_matches: '/a' } },
  { name: 'b', conditions: { path_matches: '/b*' } },
  { name: 'view', conditions: { event_type: 'pageview' } },
  { name: 'x', conditions: { event_name_matches: 'x' } },
];

const eventArb = fc.record({
  person: fc.constantFrom(...PEOPLE),
  slot: fc.integer({ min: 0, max: 30 }),
  kind: fc.constantFrom('/', '/a', '/b', 'x', 'identify'),
  session: fc.integer({ min: 0, max: 2 }),
});
type EventSpec = { person: string; slot: number; kind: string; session: number };

const opArb = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('events' as const), events: fc.array(eventArb, { minLength: 1, maxLength: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('merge' as const), pair: fc.tuple(fc.constantFrom(...PEOPLE), fc.constantFrom(...PEOPLE)).filter(([a, b]) => a !== b) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('trial' as const), person: fc.constantFrom(...PEOPLE), slot: fc.integer({ min: 0, max: 30 }), byEmail: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('edit' as const),
      funnel: fc.integer({ min: 0, max: 1 }),
      steps: fc.array(fc.integer({ min: 0, max: STEP_POOL.length - 1 }), { minLength: 2, maxLength: 3 }),
      trial: fc.boolean(),
      order: fc.constantFrom('sequential', 'strict', 'any_order' as const),
      window_days: fc.integer({ min: 1, max: 2 }),
    }),
  },
);

const toEvent = (e: EventSpec, site: IngestWebsiteV1): ClassifiedEventV1 => classified({
  person: e.person, at: at(e.slot),
  type: e.kind === 'identify' ? 'identify' : e.kind.startsWith('/') ? 'pageview' : 'custom',
  page: e.kind.startsWith('/') ? e.kind : '/c', name: e.kind === 'x' ? 'x' : null,
  email: e.kind === 'identify' ? `${e.person}@example.com` : null,
  session: `${e.person}-s${e.session}`, sessionStartedAt: at(e.session * 12),
}, site);

interface Row {
  entry_ts: string;
  entry_tie: number;
  entry_eid: string;
  person: string;
  reached: number;
  done_ts: string;
  done_tie: number;
  done_eid: string;
  gaps: string;
}

const attemptRows = (id: string, generation: number) => h.ch.query<Row>(
  `SELECT toString(entry_ts) AS entry_ts, entry_tie, toString(entry_eid) AS entry_eid, person, reached, toString(done_ts) AS done_ts, done_tie, toString(done_eid) AS done_eid, gaps
     FROM funnel_attempts FINAL WHERE funnel_id = {f:UUID} AND generation = {g:UInt32} ORDER BY entry_ts, entry_tie, entry_eid`,
  { f: id, g: generation },
);

async function admin<T = Json>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const r = await fetch(`http://127.0.0.1:${h.proc.adminPort}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${h.proc.settings.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: r.status, body: (await r.json()) as T };
}

/** Rebuilds a website's funnels through the admin API and follows the job to its end. */
async function rebuild(site: IngestWebsiteV1): Promise<Json> {
  const started = await admin('POST', '/funnels/rebuilds', { website_id: site.id });
  expect(started.status).toBe(202);
  let job = started.body;
  await h.until('the rebuild to finish', async () => {
    job = (await admin('GET', `/funnels/rebuilds/${String(started.body['id'])}`)).body;
    if (job['status'] === 'failed') throw new Error(`rebuild failed: ${String(job['error'])}`);
    return job['status'] === 'done';
  }, 120_000);
  return job;
}

it('keeps the same attempts as a rebuild from scratch, under concurrent events, merges, revenue facts and funnel edits', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 3, maxLength: 14 }), fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 14, maxLength: 14 }), async (ops, bursts) => {
      const site = website();
      const definitions: FunnelDefinition[] = [
        { name: 'f0', scope: 'visitor', step_order: 'sequential', window_days: 1, filters: {}, steps: [STEP_POOL[0] as FunnelStep, STEP_POOL[1] as FunnelStep, TRIAL] },
        { name: 'f1', scope: 'visitor', step_order: 'strict', window_days: 2, filters: {}, steps: [STEP_POOL[3] as FunnelStep, STEP_POOL[4] as FunnelStep] },
      ];
      const ids: string[] = [];
      for (const d of definitions) ids.push(String((await h.create(site, { ...d }))['id']));
      const sent: ClassifiedEventV1[] = [];
      const merges: [string, string][] = [];
      const trials: { id: string; person: string; slot: number; byEmail: boolean }[] = [];
      let o = 0;
      for (const size of bursts) {
        const burst = ops.slice(o, o + size);
        o += size;
        if (burst.length === 0) break;
        // A burst's operations run at once: the consumers and the builder interleave freely.
        await Promise.all(burst.map(async (op) => {
          if (op.kind === 'events') {
            const events = op.events.map((e) => toEvent(e, site));
            sent.push(...events);
            await h.events(site, events);
          } else if (op.kind === 'merge') {
            merges.push(op.pair);
            await h.merge(site, op.pair[0], op.pair[1]);
          } else if (op.kind === 'trial') {
            const id = `t${trials.length}`;
            trials.push({ id, person: op.person, slot: op.slot, byEmail: op.byEmail });
            await h.milestones(site, [milestone(site, { stage: 'trial_started', at: at(op.slot), id, ...(op.byEmail ? { email: `${op.person}@example.com` } : { person: op.person }) })]);
          } else {
            // Revenue steps cannot be strict; f1 stays behavioural.
            const withTrial = op.funnel === 0 && op.trial;
            const order = withTrial && op.order === 'strict' ? 'sequential' : op.order;
            const steps = [...op.steps.map((k) => STEP_POOL[k] as FunnelStep), ...(withTrial ? [TRIAL] : [])];
            const next: FunnelDefinition = { ...(definitions[op.funnel] as FunnelDefinition), step_order: order, window_days: op.window_days, steps };
            definitions[op.funnel] = next;
            await h.rpc('patchFunnel', h.request(site, 'patchFunnel', { params: { id: ids[op.funnel] as string }, body: { step_order: order, window_days: op.window_days, steps } }));
          }
        }));
      }

      // The session lists of the website's people, as maintained (compared with the rebuild below).
      const touchesBefore = await personTouches(site);
      for (const [f, id] of ids.entries()) {
        await h.ready(site, id);
        const before = await h.funnel(site, id);
        const maintained = await attemptRows(id, Number((await sqlRow(id)).generation));
        expect(before['read_model']).toBe('ready');
        await rebuild(site);
        const after = await sqlRow(id);
        expect(after.read_model).toBe('ready');
        expect(await attemptRows(id, after.generation)).toEqual(maintained);
        if (f === 0) {
          // Rows of roots merged away stay behind unread: compare the people there are now.
          const people = await currentPeople(site);
          const pick = (rows: Map<string, string>) => [...people].sort().map((p) => [p, rows.get(p) ?? null]);
          expect(pick(touchesBefore)).toEqual(pick(await personTouches(site)));
        }

        // And the answer is the oracle's (people: union-find of the final merges).
        const people = new People();
        for (const p of PEOPLE) people.link([p]);
        for (const pair of merges) people.link(pair);
        const emailed = new Set(sent.filter((e) => e.email).map((e) => e.identity_id as string));
        const input: OracleInput = {
          events: sent.map((e): OracleEvent => ({
            id: e.event_id, person: people.personOf(e.identity_id as string), ts: Date.parse(e.occurred_at), type: e.event_type, name: e.event_name, page: e.page, url: e.url, text: null,
            attrs: {}, session: null,
          })),
          facts: trials.filter((t) => !t.byEmail || emailed.has(t.person)).map((t) => ({ id: t.id, person: people.personOf(t.person), ts: at(t.slot), stage: 'trial_started' })),
          identified: new Set(),
        };
        const definition = definitions[f] as FunnelDefinition;
        const window = { fromMs: T0, toMs: at(25) };
        const got = await h.steps(site, id, { from: new Date(window.fromMs).toISOString(), to: new Date(window.toMs).toISOString() });
        expect(got.data.map((r) => [r['reached'], r['median_seconds_from_previous']])).toEqual(oracleSteps(definition, window, input).map((w) => [w.reached, w.median]));
      }
    }),
    { numRuns: Number(process.env['FUNNELS_READ_MODEL_RUNS'] ?? 8), seed: 20251126, endOnFailure: true },
  );
}, 600_000);

/** person → its session list (starts, sessions, channels), as stored. */
async function personTouches(site: IngestWebsiteV1): Promise<Map<string, string>> {
  const rows = await h.ch.query<{ person: string; t: string }>(
    'SELECT person, toString((starts, session_keys, channel, country)) AS t FROM person_touches FINAL WHERE website_id = {w:UUID}', { w: site.id });
  return new Map(rows.map((r) => [r.person, r.t]));
}

/** The people of the website's sessions: each identity's merge root, or itself. */
async function currentPeople(site: IngestWebsiteV1): Promise<Set<string>> {
  const rows = await h.ch.query<{ p: string }>(
    `SELECT DISTINCT if(r.root != '', r.root, s.identity_id) AS p FROM identity_sessions AS s
       LEFT JOIN (SELECT identity_id, argMax(root_id, version) AS root FROM identity_roots WHERE workspace_id = {ws:UUID} GROUP BY identity_id) AS r ON r.identity_id = s.identity_id
      WHERE s.website_id = {w:UUID}`, { w: site.id, ws: site.workspace_id });
  return new Set(rows.map((r) => r.p));
}

async function sqlRow(id: string): Promise<{ generation: number; read_model: string }> {
  const sql = await h.proc.stores.sql('funnels');
  return (await sql.query<{ generation: number; read_model: string }>('SELECT generation, read_model FROM funnels WHERE id = $1', [id])).rows[0] as { generation: number; read_model: string };
}

describe('what a fact recomputes', () => {
  const DAY = 24 * HOUR;
  const steps = [STEP_POOL[0], STEP_POOL[1], TRIAL];

  it('an email seen days away from a revenue fact that names it gives the fact its person', async () => {
    const site = website();
    const id = String((await h.create(site, { window_days: 1, steps }))['id']);
    await h.ready(site, id);
    await h.events(site, [toEvent({ person: 'p0', slot: 24, kind: '/', session: 0 }, site), toEvent({ person: 'p0', slot: 25, kind: '/a', session: 0 }, site)]);
    await h.milestones(site, [milestone(site, { stage: 'trial_started', at: at(26), id: 'by-email', email: 'p0@example.com' })]);
    const period = { from: new Date(T0).toISOString(), to: new Date(T0 + 7 * DAY).toISOString() };
    expect((await h.steps(site, id, period)).data.map((r) => r['reached'])).toEqual([1, 1, 0]);
    // The email arrives on an event three days earlier than the attempt it completes.
    await h.events(site, [toEvent({ person: 'p0', slot: 0, kind: 'identify', session: 0 }, site)]);
    expect((await h.steps(site, id, period)).data.map((r) => r['reached'])).toEqual([1, 1, 1]);
  });

  it('a late event recomputes only the attempts that can reach it, and those it can start', async () => {
    const site = website();
    const id = String((await h.create(site, { window_days: 1, steps: [STEP_POOL[0], STEP_POOL[1]] }))['id']);
    await h.ready(site, id);
    await h.events(site, [toEvent({ person: 'p1', slot: 0, kind: '/', session: 0 }, site), toEvent({ person: 'p1', slot: 20, kind: '/', session: 1 }, site)]);
    const period = { from: new Date(T0).toISOString(), to: new Date(T0 + 7 * DAY).toISOString() };
    expect((await h.steps(site, id, period)).data.map((r) => r['reached'])).toEqual([1, 0]);
    // Eight hours after the first entry (slot 0), and 60 hours before the second.
    await h.events(site, [toEvent({ person: 'p1', slot: 8 / 3, kind: '/a', session: 0 }, site)]);
    const rows = await attemptRows(id, 1);
    expect(rows.map((r) => r.reached)).toEqual([2, 1]);
  });
});

describe('operator rebuild', () => {
  it('starts a new generation, reports progress until it is built, and removes the attempts of the old one', async () => {
    const site = website();
    await h.events(site, PEOPLE.flatMap((p, i) => [toEvent({ person: p, slot: i, kind: '/', session: 0 }, site), toEvent({ person: p, slot: i + 1, kind: '/a', session: 0 }, site)]));
    const id = String((await h.create(site, { steps: [STEP_POOL[0], STEP_POOL[1]] }))['id']);
    await h.ready(site, id);
    expect((await attemptRows(id, 1)).length).toBe(5);
    const job = await rebuild(site);
    expect(job).toMatchObject({ status: 'done', phase: 'attempts', website_id: site.id, funnels: [{ id, generation: 2 }] });
    // Several identity ranges of at most 7 events: the progress counts them all.
    expect(job['total']).toBeGreaterThanOrEqual(2);
    expect(job['done']).toBe(job['total']);
    expect((await attemptRows(id, 2)).length).toBe(5);
    await h.until('the old generation to be removed', async () => (await attemptRows(id, 1)).length === 0);
  });

  it('refuses a body without a website id, and a website without funnels', async () => {
    const bad = await admin('POST', '/funnels/rebuilds', { website: 'x' });
    expect(bad.status).toBe(400);
    expect(String(bad.body['type'])).toMatch(/\/invalid-request$/);
    const none = await admin('POST', '/funnels/rebuilds', { website_id: website().id });
    expect(none.status).toBe(404);
    expect((await admin('GET', '/funnels/rebuilds/unknown')).status).toBe(404);
  });
});
