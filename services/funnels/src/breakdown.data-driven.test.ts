// markov and shapley over counted funnel journeys (pure: no store involved): each column sums to
// its people for any journeys (property), and the edges of a column that cannot answer.
import fc from 'fast-check';
import { funnelMarkov, funnelShapley, type FunnelJourneys } from './breakdown.data-driven';
import { JOURNEY_END, JOURNEY_START } from './breakdown.sql';

/** Counts journeys as the journeys query does. */
function count(journeys: readonly { channels: string[]; done: boolean }[]): FunnelJourneys {
  const out: FunnelJourneys = { steps: [], sets: [], none: { entered: 0, completed: 0 }, totals: { entered: journeys.length, completed: journeys.filter((j) => j.done).length } };
  const steps = new Map<string, { from: string; to: string; entered: number; completed: number }>();
  const sets = new Map<string, { channels: string[]; entered: number; completed: number }>();
  for (const j of journeys) {
    if (j.channels.length === 0) {
      out.none.entered += 1;
      if (j.done) out.none.completed += 1;
      continue;
    }
    const states = [JOURNEY_START, ...j.channels, JOURNEY_END];
    for (let i = 1; i < states.length; i++) {
      const key = `${states[i - 1]}>${states[i]}`;
      const s = steps.get(key) ?? steps.set(key, { from: states[i - 1] as string, to: states[i] as string, entered: 0, completed: 0 }).get(key)!;
      s.entered += 1;
      if (j.done) s.completed += 1;
    }
    const channels = [...new Set(j.channels)].sort();
    const set = sets.get(channels.join()) ?? sets.set(channels.join(), { channels, entered: 0, completed: 0 }).get(channels.join())!;
    set.entered += 1;
    if (j.done) set.completed += 1;
  }
  out.steps = [...steps.values()];
  out.sets = [...sets.values()];
  return out;
}

const sum = (m: Map<string, number> | null) => [...(m?.values() ?? [])].reduce((a, b) => a + b, 0);

describe('funnel markov and shapley', () => {
  const journeyArb = fc.record({
    channels: fc.array(fc.constantFrom('Direct', 'Email', 'Paid Search', 'Referral'), { maxLength: 5 }),
    done: fc.boolean(),
  });

  it('credit entered and completed so that each column sums to its people, or is null when no one with a touch reached it', () => {
    fc.assert(fc.property(fc.array(journeyArb, { maxLength: 25 }), (journeys) => {
      const j = count(journeys);
      const touched = journeys.filter((x) => x.channels.length > 0);
      for (const answer of [funnelMarkov(j, false), funnelShapley(j, false)]) {
        if (touched.length === 0) expect(answer.entered).toBeNull();
        else expect(sum(answer.entered)).toBeCloseTo(j.totals.entered, 9);
        if (!touched.some((x) => x.done)) expect(answer.completed).toBeNull();
        else expect(sum(answer.completed)).toBeCloseTo(j.totals.completed, 9);
      }
      // Shapley is additive over journeys: completed never exceeds entered on a row.
      const shapley = funnelShapley(j, false);
      for (const [channel, completed] of shapley.completed ?? []) expect(completed).toBeLessThanOrEqual((shapley.entered?.get(channel) ?? 0) + 1e-9);
    }), { numRuns: 300, seed: 1117 });
  });

  it('gives a channel that only leads into completing journeys completing credit', () => {
    const j = count([{ channels: ['A', 'B'], done: true }, { channels: ['B'], done: false }, { channels: ['C'], done: false }]);
    const markov = funnelMarkov(j, false);
    expect(markov.completed?.get('A')).toBeGreaterThan(0);
    expect(markov.completed?.get('C') ?? 0).toBe(0);
    expect(markov.definition).toMatch(/3 of the people who entered had a touch, 1 of them completed/);
  });

  it('says when nobody with a touch entered: both columns null, people without a touch noted', () => {
    const j = count([{ channels: [], done: true }]);
    for (const answer of [funnelMarkov(j, false), funnelShapley(j, false)]) {
      expect(answer.entered).toBeNull();
      expect(answer.completed).toBeNull();
      expect(answer.definition).toMatch(/1 without a touch, credited to Unattributed/);
    }
  });
});
