// While a funnel's read model is being built (here: never, the builder is paused), reads answer
// from the events, exactly; a definition change that alters what attempts depend on starts a new
// generation, one that does not (the name, the scope, the identified filter) keeps the built one.
import { classified, DAY, HOUR, T0, website } from '../test/events';
import { FunnelsHarness, type Json } from '../test/harness';

let h: FunnelsHarness;
beforeAll(async () => {
  h = await FunnelsHarness.start({ funnels: { builder: { paused: true } } });
}, 120_000);
afterAll(async () => {
  await h?.stop();
});

const PERIOD = { from: new Date(T0).toISOString(), to: new Date(T0 + 7 * DAY).toISOString() };
const path = (p: string) => ({ name: p, conditions: { path_matches: p } });

async function state(id: string): Promise<{ generation: number; read_model: string }> {
  const sql = await h.proc.stores.sql('funnels');
  return (await sql.query<{ generation: number; read_model: string }>('SELECT generation, read_model FROM funnels WHERE id = $1', [id])).rows[0] as { generation: number; read_model: string };
}

it('answers steps and breakdown from the events until the read model is built', async () => {
  const site = website();
  await h.events(site, [
    classified({ person: 'a', at: T0 + HOUR, page: '/', channel: 'Email' }, site),
    classified({ person: 'a', at: T0 + 2 * HOUR, page: '/pricing' }, site),
    classified({ person: 'b', at: T0 + HOUR, page: '/', session: 'b1', channel: 'Direct' }, site),
  ]);
  const created = await h.create(site, { steps: [path('/'), path('/pricing')] });
  const id = String(created['id']);
  expect(created['read_model']).toBe('building');
  const steps = await h.steps(site, id, { ...PERIOD, compare_days: 'previous' }, false);
  expect(steps.meta['computed_from']).toBe('events');
  expect(steps.data.map((r) => r['reached'])).toEqual([2, 1]);
  expect(steps.data[1]?.['median_seconds_from_previous']).toBe(3600);
  expect(steps.previous?.data.map((r) => r['reached'])).toEqual([0, 0]);
  const breakdown = await h.breakdown(site, id, { ...PERIOD, models: 'first_touch' }, false);
  expect(breakdown.meta['computed_from']).toBe('events');
  expect(breakdown.totals).toEqual({ entered: 2, completed: 1 });
  expect(breakdown.data.map((r) => [r['value'], (r as Json)['entered'], (r as Json)['completed']])).toEqual([['Direct', 1, 0], ['Email', 1, 1]]);
});

it('starts a new generation when steps, order, window or an event filter change, not for the name, scope or identified filter', async () => {
  const site = website();
  const id = String((await h.create(site, { steps: [path('/'), path('/pricing')] }))['id']);
  const patch = async (body: Json) => h.rpc('patchFunnel', h.request(site, 'patchFunnel', { params: { id }, body }));
  expect(await state(id)).toEqual({ generation: 1, read_model: 'building' });
  await patch({ name: 'Renamed', scope: 'user', filters: { identified: true } });
  expect((await state(id)).generation).toBe(1);
  await patch({ window_days: 3 });
  expect((await state(id)).generation).toBe(2);
  await patch({ step_order: 'strict' });
  expect((await state(id)).generation).toBe(3);
  await patch({ filters: { identified: true, country: 'DE' } });
  expect((await state(id)).generation).toBe(4);
  await patch({ steps: [path('/'), path('/signup')] });
  expect(await state(id)).toEqual({ generation: 5, read_model: 'building' });
  // Sent again unchanged: nothing is written, no generation starts.
  await patch({ steps: [path('/'), path('/signup')] });
  expect((await state(id)).generation).toBe(5);
});
