// Issue 24: the event-type catalog a step's event_type is checked against is bounded and read by
// key, and no matcher can stall a funnel write or read, whatever types and values a website sends.
import { performance } from 'node:perf_hooks';
import { classified, T0, website } from '../test/events';
import { FunnelsHarness, type Json } from '../test/harness';
import { EventTypesRepo } from './event-types.repo';

let h: FunnelsHarness;
beforeAll(async () => {
  h = await FunnelsHarness.start();
}, 120_000);
afterAll(async () => {
  await h?.stop();
});

const visit = { name: 'Visit', conditions: { path_matches: '/' } };
const typed = (event_type: string) => ({ steps: [visit, { name: 'Typed', conditions: { event_type } }] });

describe('funnel writes against long event types', () => {
  it('answers the worst patterns quickly: 400 for too many `*` or characters, a normal answer otherwise', async () => {
    const site = website();
    const longest = `${'a'.repeat(99)}b`; // the longest type POST /events takes, a near miss for *a*a…a
    await h.events(site, [
      { person: 'p', at: T0, page: '/' },
      { person: 'p', at: T0 + 1, type: longest, page: null },
    ].map((s) => classified(s, site)));

    const timed = async <T>(call: Promise<T>): Promise<T> => {
      const started = performance.now();
      const result = await call;
      expect(performance.now() - started).toBeLessThan(2_000);
      return result;
    };
    const stars = await timed(h.problem(h.create(site, typed('*a*a*a*a*a*a*a*a*a*a*a*a'))));
    expect(stars).toMatchObject({ kind: 'invalid-request' });
    expect(String(stars['remediation'])).toMatch(/at most 10 `\*`/);
    const long = await timed(h.problem(h.create(site, typed(`${'a'.repeat(200)}*`))));
    expect(long).toMatchObject({ kind: 'invalid-request' });
    expect(String(long['remediation'])).toMatch(/at most 200 characters/);
    const none = await timed(h.problem(h.create(site, typed('*a*a*a*a*a*a*a*a*a*ac'))));
    expect(none['allowed']).toContain(longest);
    expect((await timed(h.create(site, typed('*a*a*a*a*a*a*a*a*a*ab'))))['id']).toEqual(expect.any(String));
  });

  it('evaluates a many-`*` pattern on a long value in ClickHouse without blowing up (LIKE runs on RE2)', async () => {
    const site = website();
    const url = (end: string) => `https://${site.domain}/${'a'.repeat(20_000)}${end}`;
    await h.events(site, [
      { person: 'hit', at: T0, page: '/', url: url('a') },
      { person: 'miss', at: T0, page: '/', url: url('b') },
    ].map((s) => classified(s, site)));
    const created = await h.create(site, { steps: [{ name: 'Long', conditions: { url_matches: 'https://*a*a*a*a*a*a*a*a*a' } }, visit] });
    const started = performance.now();
    const steps = await h.steps(site, String(created['id']), { from: new Date(T0 - 1).toISOString(), to: new Date(T0 + 1).toISOString() });
    expect(steps.data.map((r: Json) => r['reached'])).toEqual([1, 0]);
    expect(performance.now() - started).toBeLessThan(30_000);
  });
});

describe('the event-type catalog', () => {
  it('keeps the first 1,000 custom types a website sends; later ones are events, not catalog entries', async () => {
    const site = website();
    const types = Array.from({ length: 1_005 }, (_, i) => `server_${String(i).padStart(4, '0')}`);
    await h.events(site, types.map((type, i) => classified({ person: `p${i}`, at: T0 + i, type, page: null }, site)));
    expect((await h.create(site, typed('server_0999')))['id']).toEqual(expect.any(String));
    const refused = await h.problem(h.create(site, typed('server_1000')));
    expect(refused['kind']).toBe('invalid-request');
    // The error names a bounded list: the known types and the first custom ones, and how many more.
    expect(refused['allowed']).toHaveLength(100);
    expect(String(refused['detail'])).toMatch(/first 100 of the website's 1007 event types \(907 more not shown\)/);
    const [stored] = await h.ch.query<{ n: string }>('SELECT count() AS n FROM identity_events WHERE website_id = {w:UUID}', { w: site.id });
    expect(Number(stored?.n)).toBe(1_005);
  });

  it('stores custom types only, by key, up to its limit, across processes', async () => {
    const site = website();
    const repo = new EventTypesRepo(h.ch, 3);
    await repo.record(site.id, ['pageview', 'custom', 't2', 't1', 't2', 'x'.repeat(201)]);
    expect(await repo.list(site.id)).toEqual(['t1', 't2']);
    await repo.record(site.id, ['t5', 't4', 't3']); // within one batch, in sort order
    expect(await repo.list(site.id)).toEqual(['t1', 't2', 't3']);
    // Another process knows nothing of this one's memory and still adds nothing past the limit.
    await new EventTypesRepo(h.ch, 3).record(site.id, ['t0']);
    expect(await repo.list(site.id)).toEqual(['t1', 't2', 't3']);
    // Reading stays bounded even if concurrent writers stored more than the limit.
    await h.ch.insert('event_types', [{ website_id: site.id, event_type: 't0' }]);
    expect(await repo.list(site.id)).toEqual(['t0', 't1', 't2']);
  });
});
