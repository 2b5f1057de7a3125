// Property tests on random small journeys published straight onto the bus (events, identity merges
// after the events, revenue facts): for every step order the answer equals the oracle's (a rebuild
// from scratch: people by union-find of the final merges), `reached` never increases, conv_vs_first
// of step k is reached_k / reached_0, and breakdown credit under every model (markov and shapley,
// exclude_direct on and off) sums to the totals.
import fc from 'fast-check';
import type { ClassifiedEventV1 } from '@sightline/proto-schemas';
import type { FunnelDefinition } from './definition';
import { classified, milestone, MINUTE, T0, website } from '../test/events';
import { FunnelsHarness, type Json } from '../test/harness';
import { oracleBreakdown, oracleSteps, type OracleInput } from '../test/oracle/funnel';
import { People } from '../test/oracle/identity';
import type { Models, OracleEvent } from '../test/oracle/types';

let h: FunnelsHarness;
beforeAll(async () => {
  h = await FunnelsHarness.start();
}, 120_000);
afterAll(async () => {
  await h?.stop();
});

const PEOPLE = ['p0', 'p1', 'p2', 'p3', 'p4'];
const CHANNELS = ['Direct', 'Email', 'Organic Search'];
const MATCHERS: FunnelDefinition['steps'][number]['conditions'][] = [
  { path_matches: '/' }, { path_matches: '/a' }, { path_matches: '/b*' }, { event_type: 'pageview' }, { event_type: 'custom' }, { event_name_matches: 'x' },
];
const TRIAL = { source: 'revenue' as const, revenue_event: 'trial_started' as const };

const eventArb = fc.record({
  person: fc.constantFrom(...PEOPLE),
  // Few distinct instants, so events of a person often share a millisecond.
  slot: fc.integer({ min: 0, max: 40 }),
  kind: fc.constantFrom('/', '/a', '/b', '/bb', 'x', 'y', 'identify'),
  session: fc.integer({ min: 0, max: 2 }),
  channel: fc.constantFrom(...CHANNELS),
});
const journeyArb = fc.record({
  events: fc.array(eventArb, { minLength: 1, maxLength: 30 }),
  merges: fc.array(fc.tuple(fc.constantFrom(...PEOPLE), fc.constantFrom(...PEOPLE)).filter(([a, b]) => a !== b), { maxLength: 3 }),
  trials: fc.array(fc.record({ person: fc.constantFrom(...PEOPLE), slot: fc.integer({ min: 0, max: 40 }) }), { maxLength: 3 }),
  steps: fc.array(fc.integer({ min: 0, max: MATCHERS.length }), { minLength: 2, maxLength: 4 }),
  cutSlot: fc.integer({ min: 5, max: 41 }),
});

const at = (slot: number) => T0 + slot * 10 * MINUTE;

it('equals the oracle for every step order; reached never increases; conv_vs_first is reached_k / reached_0; credit sums to totals', async () => {
  await fc.assert(
    fc.asyncProperty(journeyArb, async (j) => {
      const site = website();
      const events: ClassifiedEventV1[] = j.events.map((e) => classified({
        person: e.person, at: at(e.slot),
        type: e.kind === 'identify' ? 'identify' : e.kind.startsWith('/') ? 'pageview' : 'custom',
        page: e.kind.startsWith('/') ? e.kind : '/c',
        name: e.kind === 'x' || e.kind === 'y' ? e.kind : null,
        email: e.kind === 'identify' ? `${e.person}@example.com` : null,
        session: `${e.person}-s${e.session}`, sessionStartedAt: at(e.session * 12), channel: CHANNELS[e.session % CHANNELS.length],
      }, site));
      await h.events(site, events);
      for (const [from, into] of j.merges) await h.merge(site, from, into);
      if (j.trials.length > 0) await h.milestones(site, j.trials.map((t, i) => milestone(site, { stage: 'trial_started', at: at(t.slot), person: t.person, id: `t${i}` })));

      // The oracle: people are union-find groups of the final merges (a rebuild from scratch).
      const people = new People();
      for (const p of PEOPLE) people.link([p]);
      for (const [from, into] of j.merges) people.link([from, into]);
      const oracleEvents: OracleEvent[] = events.map((e) => ({
        id: e.event_id, person: people.personOf(e.identity_id as string), ts: Date.parse(e.occurred_at), type: e.event_type, name: e.event_name, page: e.page, url: e.url, text: null,
        attrs: { channel: e.session?.channel ?? '' },
        session: e.session && e.session_id ? { id: e.session_id, startedAt: Date.parse(e.session.started_at), attrs: { channel: e.session.channel } } : null,
      }));
      const input: OracleInput = {
        events: oracleEvents,
        facts: j.trials.map((t, i) => ({ id: `t${i}`, person: people.personOf(t.person), ts: at(t.slot), stage: 'trial_started' })),
        identified: new Set([...events.filter((e) => e.email).map((e) => people.personOf(e.identity_id as string)), ...j.trials.map((t) => people.personOf(t.person))]),
      };
      const window = { fromMs: T0, toMs: at(j.cutSlot) };
      const steps = j.steps.map((s, k) => ({ name: `s${k}`, conditions: s === MATCHERS.length ? TRIAL : (MATCHERS[s] as FunnelDefinition['steps'][number]['conditions']) }));
      const revenue = steps.some((s) => 'source' in s.conditions);
      for (const step_order of ['sequential', 'strict', 'any_order'] as const) {
        if (revenue && step_order === 'strict') continue;
        for (const scope of ['visitor', 'user'] as const) {
          if (revenue && scope === 'user' && steps.some((s) => !('source' in s.conditions))) continue;
          const definition: FunnelDefinition = { name: 'p', scope, step_order, window_days: 1, filters: {}, steps };
          const id = String((await h.create(site, { ...definition }))['id']);
          const got = await h.steps(site, id, { from: new Date(window.fromMs).toISOString(), to: new Date(window.toMs).toISOString() });
          const want = oracleSteps(definition, window, input);
          expect(got.data.map((r) => [r['reached'], r['median_seconds_from_previous']])).toEqual(want.map((w) => [w.reached, w.median]));
          const reached = got.data.map((r) => Number(r['reached']));
          reached.forEach((r, k) => {
            if (k > 0) expect(r).toBeLessThanOrEqual(reached[k - 1] as number);
            const first = reached[0] as number;
            expect(got.data[k]?.['conv_vs_first']).toBe(first === 0 ? null : r / first);
          });
          if (scope === 'visitor') {
            // Each step order asks for other models: the rule models; markov and shapley beside two, with exclude_direct; the rest.
            const models: Models[] = {
              sequential: ['first_touch', 'last_touch', 'linear', 'u_shaped', 'time_decay'],
              strict: ['markov', 'shapley', 'linear', 'last_non_direct', 'first_touch'],
              any_order: ['markov', 'shapley', 'last_non_direct'],
            }[step_order] as Models[];
            const excludeDirect = step_order !== 'sequential';
            const b = await h.breakdown(site, id, {
              from: new Date(window.fromMs).toISOString(), to: new Date(window.toMs).toISOString(), models: models.join(','), limit: '2', ...(excludeDirect ? { exclude_direct: 'true' } : {}),
            });
            expect(b.totals).toEqual({ entered: reached[0], completed: reached[reached.length - 1] });
            const oracle = oracleBreakdown(definition, window, input, 'channel', models, { excludeDirect });
            expect([oracle.entered, oracle.completed]).toEqual([b.totals.entered, b.totals.completed]);
            for (const model of models) {
              for (const f of ['entered', 'completed'] as const) {
                const cells = b.data.map((r) => (r[model] as Json)[f] as number | null);
                // A data-driven column that cannot answer is null on every row, and only then.
                if (cells.some((c) => c === null)) {
                  expect(cells.every((c) => c === null)).toBe(true);
                  expect([...oracle.credit.values()].every((row) => row.get(model)?.[f === 'entered' ? 0 : 1] == null)).toBe(true);
                  continue;
                }
                expect(Math.abs(cells.reduce<number>((s, c) => s + (c as number), 0) - b.totals[f])).toBeLessThan(1e-9);
              }
            }
          }
        }
      }
    }),
    { numRuns: Number(process.env['FUNNELS_PROPERTY_RUNS'] ?? 12), seed: 20250602, endOnFailure: true },
  );
}, 240_000);

