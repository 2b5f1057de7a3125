// Shapley credit on a published worked example and at its edges.
import { SHAPLEY_EXACT_MAX_CHANNELS } from '@sightline/proto-schemas';
import { shapleyCredits, type ChannelSetPayoff } from './shapley';

/** The closed form for this game (each journey set's payoff split evenly among its channels), to check against. */
function splitEvenly(sets: readonly ChannelSetPayoff[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of sets) for (const c of new Set(s.channels)) out.set(c, (out.get(c) ?? 0) + s.conversions / new Set(s.channels).size);
  return out;
}

describe('shapley credit', () => {
  // Published example: J. R. Kinley, "Data-Driven Marketing Attribution" (github.com/jrkinley-zz/
  // game-theory-attribution, notebook game_theory_attribution.ipynb): 100 converted opportunities,
  // channels Facebook, Google and LinkedIn; by the set of channels that touched them: Facebook 18,
  // Google 4, LinkedIn 8, Facebook+Google 10, Facebook+LinkedIn 26, Google+LinkedIn 7, all three 27.
  // A coalition's worth is the sum over the sets within it (v(Facebook+LinkedIn) = 18 + 8 + 26 =
  // 52), and the published Shapley values are Facebook 0.450, Google 0.215, LinkedIn 0.335 of the
  // total: 45, 21.5 and 33.5 opportunities.
  const example: ChannelSetPayoff[] = [
    { channels: ['Facebook'], conversions: 18, value: 18 },
    { channels: ['Google'], conversions: 4, value: 4 },
    { channels: ['LinkedIn'], conversions: 8, value: 8 },
    { channels: ['Facebook', 'Google'], conversions: 10, value: 10 },
    { channels: ['Facebook', 'LinkedIn'], conversions: 26, value: 26 },
    { channels: ['Google', 'LinkedIn'], conversions: 7, value: 7 },
    { channels: ['Facebook', 'Google', 'LinkedIn'], conversions: 27, value: 27 },
  ];

  it('reproduces the published worked example, exactly', () => {
    const result = shapleyCredits(example);
    expect(result?.exact).toBe(true);
    expect(result?.credits.get('Facebook')?.conversions).toBeCloseTo(45, 9);
    expect(result?.credits.get('Google')?.conversions).toBeCloseTo(21.5, 9);
    expect(result?.credits.get('LinkedIn')?.conversions).toBeCloseTo(33.5, 9);
  });

  /** Journey sets over n channels: singles, neighbours and triples, with varied payoffs. */
  const setsOver = (n: number): ChannelSetPayoff[] => {
    const name = (i: number) => `c${String(i % n).padStart(2, '0')}`;
    const sets: ChannelSetPayoff[] = [];
    for (let i = 0; i < n; i++) {
      sets.push({ channels: [name(i)], conversions: 1 + (i % 4), value: 10 * (1 + (i % 4)) });
      sets.push({ channels: [name(i), name(i + 1)], conversions: 2 + (i % 3), value: 5 });
      sets.push({ channels: [name(i), name(i + 2), name(i + 5)], conversions: 3, value: 7 });
    }
    return sets;
  };

  it(`is exact with exactly ${SHAPLEY_EXACT_MAX_CHANNELS} channels (the enumeration limit)`, () => {
    const sets = setsOver(SHAPLEY_EXACT_MAX_CHANNELS);
    const result = shapleyCredits(sets);
    expect(result?.exact).toBe(true);
    expect(result?.credits.size).toBe(SHAPLEY_EXACT_MAX_CHANNELS);
    for (const [channel, expected] of splitEvenly(sets)) expect(result?.credits.get(channel)?.conversions).toBeCloseTo(expected, 6);
  });

  it(`samples with one channel more, within the stated bound, and still sums to the total`, () => {
    const sets = setsOver(SHAPLEY_EXACT_MAX_CHANNELS + 1);
    const result = shapleyCredits(sets);
    expect(result?.exact).toBe(false);
    expect(result?.permutations).toBeGreaterThan(0);
    for (const [channel, expected] of splitEvenly(sets)) {
      const bound = result?.errorBounds?.get(channel) as number;
      expect(bound).toBeGreaterThan(0);
      expect(Math.abs((result?.credits.get(channel)?.conversions as number) - expected)).toBeLessThanOrEqual(bound);
    }
    // Every ordering hands each journey set's payoff to exactly one channel: the sum is exact.
    const total = sets.reduce((a, s) => a + s.conversions, 0);
    expect([...(result?.credits.values() ?? [])].reduce((a, c) => a + c.conversions, 0)).toBeCloseTo(total, 6);
  });

  it('the enumeration limit can be lowered (the same data then samples)', () => {
    expect(shapleyCredits(example, { exactMaxChannels: 2, permutations: 500 })?.exact).toBe(false);
  });
});
