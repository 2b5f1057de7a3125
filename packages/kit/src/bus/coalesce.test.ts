import type { Envelope } from './types';
import { coalesce } from './coalesce';

const envelope = (key: string, n: number): Envelope => ({ id: `${key}-${n}`, type: 't', version: 1, occurred_at: '', workspace_id: null, website_id: key, source: 's', payload: { n } });

describe('coalesce', () => {
  it('groups messages that arrive while a group runs, one group at a time per key', async () => {
    const groups: string[][] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const handler = coalesce({
      keyOf: (e) => e.website_id as string,
      handle: async (group) => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        groups.push(group.map((e) => e.id));
        await new Promise((r) => setTimeout(r, 20));
        inFlight -= 1;
      },
    });
    await Promise.all([handler(envelope('a', 1)), handler(envelope('a', 2)), handler(envelope('a', 3))]);
    expect(groups).toEqual([['a-1'], ['a-2', 'a-3']]);
    expect(maxInFlight).toBe(1);
  });

  it('keeps keys apart and runs them side by side', async () => {
    const groups: string[][] = [];
    const handler = coalesce({ keyOf: (e) => e.website_id as string, handle: async (g) => void groups.push(g.map((e) => e.id)) });
    await Promise.all([handler(envelope('a', 1)), handler(envelope('b', 1))]);
    expect(groups.sort()).toEqual([['a-1'], ['b-1']]);
  });

  it('caps a group by weight', async () => {
    const groups: number[] = [];
    const handler = coalesce({ maxWeight: 2, handle: async (g) => void groups.push(g.length) });
    await Promise.all([1, 2, 3, 4, 5].map((n) => handler(envelope('k', n))));
    expect(groups).toEqual([1, 2, 2]);
  });

  it('fails every message of a failed group, and carries on with the next', async () => {
    let calls = 0;
    const handler = coalesce({
      handle: async () => {
        calls += 1;
        if (calls === 2) throw new Error('store down');
      },
    });
    const results = await Promise.allSettled([handler(envelope('k', 1)), handler(envelope('k', 2)), handler(envelope('k', 3))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    await expect(handler(envelope('k', 4))).resolves.toBeUndefined();
  });
});
