// The funnels module as the runner starts it (PGlite, chDB, in-process bus): definitions are
// created, read, changed and deleted through the RPC methods as the gateway calls them, every write
// is announced through the outbox with source api:<key_id>, and answers conform to the OpenAPI
// document.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { OUTBOX_MIGRATION_SQL } from '@sightline/kit';
import { MAX_FUNNELS_PER_WEBSITE, messageValidator, openApiDocument } from '@sightline/proto-schemas';
import { classified, DAY, HOUR, T0, website } from '../test/events';
import { FunnelsHarness, type Json } from '../test/harness';

let h: FunnelsHarness;
const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
ajv.addSchema({ $id: 'doc', components: JSON.parse(JSON.stringify(openApiDocument.components).replace(/"#\/components/g, '"doc#/components')) });
const conforms = (name: string, value: unknown) => {
  const validate = ajv.getSchema(`doc#/components/schemas/${name}`)!;
  expect(validate(value) ? null : validate.errors).toBeNull();
};

beforeAll(async () => {
  h = await FunnelsHarness.start();
}, 120_000);
afterAll(async () => {
  await h?.stop();
});

const definition = {
  name: 'Pricing to trial',
  window_days: 14,
  steps: [
    { name: 'Pricing', conditions: { path_matches: '/pricing' } },
    { name: 'Trial', conditions: { source: 'revenue', revenue_event: 'trial_started' } },
  ],
};

const changesOf = async (id: string, n: number) => {
  await h.until(`${n} change messages of ${id}`, async () => h.changes.filter((c) => (c.payload as Json)['funnel_id'] === id).length >= n);
  return h.changes.filter((c) => (c.payload as Json)['funnel_id'] === id);
};

it('keeps the outbox migration verbatim from the kit', () => {
  const file = readFileSync(join(__dirname, '..', 'migrations', 'postgres', '002_outbox.sql'), 'utf8');
  expect(file).toContain(OUTBOX_MIGRATION_SQL.trim());
});

it('creates, lists, reads, patches and deletes a funnel; each write reaches the change feed as api:<key_id>', async () => {
  const site = website();
  const created = await h.create(site, definition, 'key-a');
  conforms('Funnel', created);
  expect(created).toMatchObject({ name: 'Pricing to trial', scope: 'visitor', step_order: 'sequential', window_days: 14, filters: {}, steps: definition.steps });
  const id = String(created['id']);

  const list = await h.rpc<{ data: Json[]; meta: Json }>('listFunnels', h.request(site, 'listFunnels'));
  expect(list.body.data.map((f) => f['id'])).toEqual([id]);
  expect(list.body.meta).toMatchObject({ row_count: 1, has_more: false, website: site.domain });
  // Another website sees none of them.
  expect((await h.rpc<{ data: Json[] }>('listFunnels', h.request(website(), 'listFunnels'))).body.data).toEqual([]);

  const read = await h.rpc<{ data: Json }>('getFunnel', h.request(site, 'getFunnel', { params: { id } }));
  expect(read.body.data).toEqual(created);

  // Only the fields sent change; steps replace the list.
  const newSteps = [{ name: 'Home', conditions: { path_matches: '/' } }, { name: 'Docs', conditions: { path_matches: '/docs/*' } }, { name: 'Signup', conditions: { event_type: 'conversion' } }];
  const patched = await h.rpc<{ data: Json }>('patchFunnel', h.request(site, 'patchFunnel', { params: { id }, body: { steps: newSteps, scope: 'user' }, keyId: 'key-b' }));
  conforms('Funnel', patched.body.data);
  expect(patched.body.data).toMatchObject({ name: 'Pricing to trial', scope: 'user', window_days: 14, steps: newSteps });

  // A patch that changes nothing writes nothing.
  const same = await h.rpc<{ data: Json }>('patchFunnel', h.request(site, 'patchFunnel', { params: { id }, body: { window_days: 14 } }));
  expect(same.body.data['updated_at']).toBe(patched.body.data['updated_at']);

  const deleted = await h.rpc<{ data: Json }>('deleteFunnel', h.request(site, 'deleteFunnel', { params: { id }, keyId: 'key-c' }));
  expect(deleted.body.data).toEqual({ id, deleted: true });
  expect((await h.problem(h.rpc('getFunnel', h.request(site, 'getFunnel', { params: { id } }))))['kind']).toBe('not-found');
  expect((await h.problem(h.rpc('deleteFunnel', h.request(site, 'deleteFunnel', { params: { id } }))))['kind']).toBe('not-found');

  const changes = await changesOf(id, 3);
  await new Promise((r) => setTimeout(r, 200));
  expect(h.changes.filter((c) => (c.payload as Json)['funnel_id'] === id)).toHaveLength(3);
  expect(changes.map((c) => [c.type, c.source, (c.payload as Json)['fields']])).toEqual([
    ['funnel.created', 'api:key-a', ['name', 'scope', 'step_order', 'window_days', 'filters', 'steps']],
    ['funnel.updated', 'api:key-b', ['scope', 'steps']],
    ['funnel.deleted', 'api:key-c', []],
  ]);
  for (const c of changes) expect(messageValidator.validateEnvelope(c as never)).toBeNull();
  expect(changes.every((c) => c.website_id === site.id && c.workspace_id === site.workspace_id)).toBe(true);
});

it('validates a patch against the funnel as it would become: user scope on a mixed funnel is refused and nothing changes', async () => {
  const site = website();
  const id = String((await h.create(site, definition))['id']);
  const before = h.changes.length;
  const refused = await h.problem(h.rpc('patchFunnel', h.request(site, 'patchFunnel', { params: { id }, body: { scope: 'user' } })));
  expect(refused).toMatchObject({ kind: 'unsupported-combination', allowed: ['visitor'] });
  expect(String(refused['remediation'])).toMatch(/scope=visitor/);
  const read = await h.rpc<{ data: Json }>('getFunnel', h.request(site, 'getFunnel', { params: { id } }));
  expect(read.body.data['scope']).toBe('visitor');
  await new Promise((r) => setTimeout(r, 200));
  expect(h.changes.filter((c) => (c.payload as Json)['funnel_id'] === id && c.type === 'funnel.updated')).toHaveLength(0);
  expect(h.changes.length).toBeGreaterThanOrEqual(before);
});

it('accepts an event type once the website has sent it', async () => {
  const site = website();
  const body = { steps: [{ name: 'Visit', conditions: { path_matches: '/' } }, { name: 'Booked', conditions: { event_type: 'demo_booked' } }] };
  const refused = await h.problem(h.rpc('createFunnel', h.request(site, 'createFunnel', { body })));
  expect(refused['kind']).toBe('invalid-request');
  expect(refused['allowed']).not.toContain('demo_booked');
  await h.events(site, [classified({ person: 'p', at: T0, type: 'demo_booked', page: null }, site)]);
  expect((await h.create(site, body))['id']).toEqual(expect.any(String));
});

it('replays a create retried with the same Idempotency-Key, and refuses the key with another body', async () => {
  const site = website();
  const req = () => h.request(site, 'createFunnel', { body: definition, idempotencyKey: 'create-1' });
  const first = await h.rpc<{ data: Json }>('createFunnel', req());
  const again = await h.rpc<{ data: Json }>('createFunnel', req());
  expect(again.body).toEqual(first.body);
  expect(again.headers).toEqual({ 'Idempotent-Replayed': 'true' });
  expect((await h.rpc<{ data: Json[] }>('listFunnels', h.request(site, 'listFunnels'))).body.data).toHaveLength(1);
  const other = await h.problem(h.rpc('createFunnel', h.request(site, 'createFunnel', { body: { ...definition, name: 'Other' }, idempotencyKey: 'create-1' })));
  expect(other['kind']).toBe('conflict');
});

it(`keeps at most ${MAX_FUNNELS_PER_WEBSITE} funnels per website: the one past it is 409 conflict`, async () => {
  const site = website();
  for (let i = 0; i < MAX_FUNNELS_PER_WEBSITE; i += 1) await h.create(site, { ...definition, name: `F${i}` });
  const refused = await h.problem(h.rpc('createFunnel', h.request(site, 'createFunnel', { body: definition })));
  expect(refused['kind']).toBe('conflict');
  expect((await h.rpc<{ data: Json[] }>('listFunnels', h.request(site, 'listFunnels'))).body.data).toHaveLength(MAX_FUNNELS_PER_WEBSITE);
}, 120_000);

it('answers 404 for an id that is not a funnel of the website, including ids that are not UUIDs', async () => {
  const site = website();
  const id = String((await h.create(site, definition))['id']);
  for (const [s, i] of [[website(), id], [site, 'not-a-uuid'], [site, '00000000-0000-4000-8000-000000000000']] as const) {
    const p = await h.problem(h.rpc('getFunnelSteps', h.request(s, 'getFunnelSteps', { params: { id: i } })));
    expect(p['kind']).toBe('not-found');
  }
});

it('answers steps and breakdown in the documented shapes, with meta', async () => {
  const site = website();
  await h.events(site, [classified({ person: 'p', at: T0 + HOUR, page: '/pricing' }, site)]);
  const id = String((await h.create(site, definition))['id']);
  const period = { from: new Date(T0).toISOString(), to: new Date(T0 + DAY).toISOString() };
  const steps = await h.steps(site, id, { ...period, compare_days: 'previous' });
  conforms('FunnelStepsResponse', steps);
  conforms('Meta', steps.meta);
  expect(steps.data.map((s) => s['reached'])).toEqual([1, 0]);
  const breakdown = await h.breakdown(site, id, { ...period, dimension: 'source', models: 'linear,time_decay' });
  conforms('FunnelBreakdownResponse', breakdown);
  expect(breakdown.meta['definitions']).toHaveProperty('time_decay');
  const unknown = await h.problem(h.rpc('getFunnelBreakdown', h.request(site, 'getFunnelBreakdown', { params: { id }, query: { dimension: 'page' } })));
  expect(unknown).toMatchObject({ kind: 'unknown-dimension' });
  const badWindow = await h.problem(h.steps(site, id, { period: 'the day after never' }));
  expect(badWindow['kind']).toBe('invalid-window');
  expect(await h.deadLetters()).toBe(0);
});
