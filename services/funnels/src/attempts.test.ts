// The stored attempts against the oracle: for random journeys of one person and random periods,
// the best attempt among those entering in the period (the pick a read makes, `bestOf`) is the
// oracle's result, under every step order. Steps match event names holding their digit, so one
// event can fill several steps; the audience filter is channel A.
import fc from 'fast-check';
import type { FunnelDefinition } from './definition';
import { attemptsOf, compareHits, ENTRY_BIT, rankOf, tieOf, type Attempt, type Hit } from './attempts';
import { personResult } from '../test/oracle/funnel';
import type { OracleEvent } from '../test/oracle/types';

const DAY = 86_400_000;

/** The read's pick: furthest step, then the earliest to get there, then the latest to enter (any_order: the earliest start). */
export function bestOf(attempts: readonly Attempt[], order: FunnelDefinition['step_order']): Attempt | null {
  let best: Attempt | null = null;
  for (const a of attempts) {
    if (!best || a.reached > best.reached) {
      best = a;
      continue;
    }
    if (a.reached < best.reached) continue;
    const done = compareHits(a.done, best.done);
    const entry = compareHits(a.entry, best.entry);
    if (order === 'any_order' ? entry < 0 : done < 0 || (done === 0 && entry > 0)) best = a;
  }
  return best;
}

const eventArb = fc.record({
  slot: fc.integer({ min: 0, max: 30 }),
  steps: fc.subarray([0, 1, 2, 3, 4]),
  entry: fc.boolean(),
  identify: fc.boolean(),
  id: fc.integer({ min: 0, max: 1_000_000 }),
});

it('the best stored attempt entering in a period is the oracle\'s result, for every step order', () => {
  fc.assert(
    fc.property(
      fc.array(eventArb, { maxLength: 25 }),
      fc.integer({ min: 2, max: 5 }),
      fc.constantFrom('sequential', 'strict', 'any_order' as const),
      // Slots per window: divisors of a day in ms, so every time is a whole millisecond.
      fc.constantFrom(1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 16, 20),
      fc.integer({ min: 0, max: 30 }),
      fc.integer({ min: 1, max: 31 }),
      (specs, L, order, slotsPerWindow, fromSlot, span) => {
        const unit = DAY / slotsPerWindow;
        const events: OracleEvent[] = specs.map((s, i) => {
          const identify = s.identify && s.steps.length === 0;
          return {
            id: `e${String(i).padStart(3, '0')}-${s.id}`, person: 'p', ts: s.slot * unit, type: identify ? 'identify' : 'custom',
            name: identify ? null : `n${s.steps.join('')}`, page: null, url: null, text: null, attrs: { channel: s.entry ? 'A' : 'B' }, session: null,
          };
        });
        const definition: FunnelDefinition = {
          name: 'p', scope: 'visitor', step_order: order, window_days: 1, filters: { channel: 'A' },
          steps: Array.from({ length: L }, (_, k) => ({ name: `s${k}`, conditions: { event_name_matches: `*${k}*` } })),
        };
        const hits: Hit[] = specs.map((s, i) => ({
          ts: s.slot * unit,
          mask: (s.identify && s.steps.length === 0 ? 0 : s.steps.filter((k) => k < L).reduce((m, k) => m | (1 << k), 0)) | (s.entry ? ENTRY_BIT : 0),
          eid: String(1000 + i),
          behavioural: !(s.identify && s.steps.length === 0),
        })).sort(compareHits);
        const window = { fromMs: fromSlot * unit, toMs: (fromSlot + span) * unit };
        const attempts = attemptsOf(hits, { order, steps: L, windowMs: DAY, entryFrom: window.fromMs, entryTo: window.toMs - 1 });
        const best = bestOf(attempts, order);
        const want = personResult(definition, window, 'p', events, []);
        const got = best ? { reached: best.reached, entry: best.entry.ts, path: order === 'any_order' ? [] : best.gaps.reduce((p, g) => [...p, (p[p.length - 1] as number) + g], [best.entry.ts]) } : null;
        // A person whose best attempt reaches no step did not enter (the oracle leaves them out of every count).
        expect(got).toEqual(want && want.reached > 0 ? { reached: want.reached, entry: want.entry, path: want.path } : null);
      },
    ),
    { numRuns: 3000, seed: 20251125 },
  );
});

it('orders hits by time, then the lowest step, then the mask, then the id hash numerically', () => {
  const hit = (ts: number, mask: number, eid: string): Hit => ({ ts, mask, eid, behavioural: true });
  const sorted = [hit(5, 2, '1'), hit(5, 3, '1'), hit(4, 0, '9'), hit(5, 2 | ENTRY_BIT, '1'), hit(5, 2, '10'), hit(5, 2, '9')].sort(compareHits);
  expect(sorted.map((h) => [h.ts, h.mask, h.eid])).toEqual([[4, 0, '9'], [5, 3, '1'], [5, 2, '1'], [5, 2, '9'], [5, 2, '10'], [5, 2 | ENTRY_BIT, '1']]);
  expect(rankOf(0)).toBe(15);
  expect(rankOf(12)).toBe(2);
  expect(tieOf(hit(0, 12 | ENTRY_BIT, '1'))).toBe((2 << 11) | 12 | ENTRY_BIT);
});
