// Markov removal-effect credit on a published worked example and at its edges.
import { markovShares, transitionsOf } from './markov';

const close = (actual: number | undefined, expected: number) => expect(actual).toBeCloseTo(expected, 9);

describe('markov removal effect', () => {
  // Published example: Serhii Puzyrov, "Markov Chain Attribution – Simple Explanation Of Removal
  // Effect" (serhiipuzyrov.com, 31 July 2019). Paths: Google Ads converting twice, Mailing once,
  // Google Ads > Mailing once, and Google Ads once without converting. The article's transition
  // table: start > Google Ads 0.8, start > Mailing 0.2, Google Ads > conversion 0.5, > Mailing
  // 0.25, > null 0.25, Mailing > conversion 1. From it: P(conversion) = 0.8, without Google Ads 0.2
  // (removal effect 0.75), without Mailing 0.4 (0.5), so of the 4 conversions Google Ads gets
  // 4 × 0.75 / 1.25 = 2.4 and Mailing 1.6.
  const example = [
    { path: ['Google Ads'], conversions: 2, nulls: 1 },
    { path: ['Mailing'], conversions: 1, nulls: 0 },
    { path: ['Google Ads', 'Mailing'], conversions: 1, nulls: 0 },
  ];

  it('reproduces the published worked example', () => {
    const result = markovShares(example);
    close(result?.conversionProbability, 0.8);
    close(result?.removalEffects.get('Google Ads'), 0.75);
    close(result?.removalEffects.get('Mailing'), 0.5);
    close((result?.shares.get('Google Ads') ?? 0) * 4, 2.4);
    close((result?.shares.get('Mailing') ?? 0) * 4, 1.6);
  });

  it('answers without any non-converting journey (every path converts)', () => {
    const result = markovShares([{ path: ['A'], conversions: 1, nulls: 0 }, { path: ['A', 'B'], conversions: 1, nulls: 0 }]);
    close(result?.conversionProbability, 1);
    // Without A nothing converts; without B only the A-alone path does (A > conversion 1/2).
    close(result?.removalEffects.get('A'), 1);
    close(result?.removalEffects.get('B'), 0.5);
    close(result?.shares.get('A'), 2 / 3);
  });

  it('credits a channel seen only on non-converting journeys when it leads into converting ones', () => {
    const result = markovShares([{ path: ['B'], conversions: 1, nulls: 0 }, { path: ['A', 'B'], conversions: 0, nulls: 1 }]);
    expect(result?.shares.get('A')).toBeGreaterThan(0);
  });

  it('is null when no journey converts, or there is none', () => {
    expect(markovShares([{ path: ['Email'], conversions: 0, nulls: 3 }])).toBeNull();
    expect(markovShares([])).toBeNull();
  });
});
