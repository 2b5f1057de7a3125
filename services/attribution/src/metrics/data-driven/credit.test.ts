// markov and shapley as /metrics words them: Unattributed conversions, revenue beside conversions,
// exclude_direct, and a null answer with its reason (pure: no store involved).
import { shapleyCredits, transitionsOf } from '@sightline/credit-models';
import { SHAPLEY_EXACT_MAX_CHANNELS } from '@sightline/proto-schemas';
import { markovAnswer, shapleyAnswer, type WindowJourneys } from './credit';

const close = (actual: number | undefined, expected: number) => expect(actual).toBeCloseTo(expected, 9);

describe('markov answer', () => {
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

  it('is null with a reason when no journey with a touch converts', () => {
    const answer = markovAnswer({ converting: [{ path: [], conversions: 2, value: 5 }], nonConverting: transitionsOf([{ path: ['Email'], conversions: 0, nulls: 3 }]) }, false);
    expect(answer.credits).toBeNull();
    expect(answer.definition).toMatch(/^markov: null\. No converting journey with a touch/);
  });
});

describe('shapley answer', () => {
  it('one channel takes every conversion; a journey of only Direct stays Direct under exclude_direct', () => {
    const one = shapleyAnswer({ converting: [{ path: ['Email', 'Email'], conversions: 4, value: 8 }], nonConverting: [] }, false);
    expect(one.credits?.get('Email')).toEqual({ conversions: 4, value: 8 });
    const direct = shapleyAnswer({ converting: [{ path: ['Direct'], conversions: 2, value: 3 }, { path: [], conversions: 1, value: 1 }], nonConverting: [] }, true);
    expect(direct.credits?.get('Direct')).toEqual({ conversions: 2, value: 3 });
    expect(direct.credits?.get('Unattributed')).toEqual({ conversions: 1, value: 1 });
    expect(direct.definition).toMatch(/Exact: all 2 coalitions of the 1 channel enumerated/);
  });

  it('is null with a reason when no journey with a touch converts', () => {
    const answer = shapleyAnswer({ converting: [{ path: [], conversions: 2, value: 5 }], nonConverting: transitionsOf([{ path: ['Email'], conversions: 0, nulls: 3 }]) }, false);
    expect(answer.credits).toBeNull();
    expect(answer.definition).toMatch(/^shapley: null\./);
  });

  it(`states the sampling and its bound past ${SHAPLEY_EXACT_MAX_CHANNELS} channels`, () => {
    const channels = Array.from({ length: SHAPLEY_EXACT_MAX_CHANNELS + 1 }, (_, i) => `c${i}`);
    const converting = channels.map((c, i) => ({ path: [c, channels[(i + 1) % channels.length] as string], conversions: 1 + (i % 3), value: 5 }));
    const answer = shapleyAnswer({ converting, nonConverting: [] }, false);
    expect(shapleyCredits(converting.map((r) => ({ channels: r.path, conversions: r.conversions, value: r.value })))?.exact).toBe(false);
    expect(answer.definition).toMatch(new RegExp(`Not exact: ${SHAPLEY_EXACT_MAX_CHANNELS + 1} channels is more than ${SHAPLEY_EXACT_MAX_CHANNELS}`));
    expect(answer.definition).toMatch(/95% confidence/);
  });
});
