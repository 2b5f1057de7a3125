// Markov removal-effect credit on worked examples and at its edges (pure: no store involved).
import { markovAnswer, type WindowJourneys } from './credit';
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

  it('credits conversions and revenue in the same shares, and they sum to the attributed totals', () => {
    const journeys: WindowJourneys = {
      converting: [
        { path: ['Google Ads'], conversions: 2, value: 100 },
        { path: ['Mailing'], conversions: 1, value: 30 },
        { path: ['Google Ads', 'Mailing'], conversions: 1, value: 70 },
        { path: [], conversions: 3, value: 9 },
      ],
      nonConverting: transitionsOf([{ path: ['Google Ads'], conversions: 0, nulls: 1 }]),
    };
    const answer = markovAnswer(journeys, false);
    close(answer.credits?.get('Google Ads')?.conversions, 2.4);
    close(answer.credits?.get('Google Ads')?.value, 120);
    close(answer.credits?.get('Mailing')?.value, 80);
    expect(answer.credits?.get('Unattributed')).toEqual({ conversions: 3, value: 9 });
    const sum = [...(answer.credits?.values() ?? [])].reduce((a, c) => ({ conversions: a.conversions + c.conversions, value: a.value + c.value }), { conversions: 0, value: 0 });
    close(sum.conversions, 7);
    close(sum.value, 209);
    expect(answer.definition).toMatch(/4 converting journeys .* 1 non-converting journey/);
  });

  it('one channel takes every conversion', () => {
    const answer = markovAnswer({ converting: [{ path: ['Email', 'Email'], conversions: 3, value: 30 }], nonConverting: transitionsOf([{ path: ['Email'], conversions: 0, nulls: 5 }]) }, false);
    expect([...(answer.credits?.keys() ?? [])]).toEqual(['Email']);
    close(answer.credits?.get('Email')?.conversions, 3);
  });

  it('only Direct journeys credit Direct, with exclude_direct too', () => {
    const journeys: WindowJourneys = { converting: [{ path: ['Direct', 'Direct'], conversions: 2, value: 10 }], nonConverting: transitionsOf([{ path: ['Direct'], conversions: 0, nulls: 4 }]) };
    for (const exclude of [false, true]) {
      const answer = markovAnswer(journeys, exclude);
      close(answer.credits?.get('Direct')?.conversions, 2);
      close(answer.credits?.get('Direct')?.value, 10);
    }
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

  it('is null with a reason when no journey with a touch converts', () => {
    const answer = markovAnswer({ converting: [{ path: [], conversions: 2, value: 5 }], nonConverting: transitionsOf([{ path: ['Email'], conversions: 0, nulls: 3 }]) }, false);
    expect(answer.credits).toBeNull();
    expect(answer.definition).toMatch(/^markov: null\. No converting journey with a touch/);
    expect(markovShares([])).toBeNull();
  });
});
