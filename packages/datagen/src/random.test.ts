import { apportion, hash32, Rng, WeightedTable } from './random';

describe('Rng', () => {
  it('repeats exactly for a seed and differs across seeds', () => {
    const draw = (seed: number): number[] => {
      const r = new Rng(seed);
      return Array.from({ length: 50 }, () => r.u32());
    };
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
  });

  it('makes version-4 shaped uuids that do not repeat', () => {
    const r = new Rng(1);
    const ids = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const id = r.uuid();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(10_000);
  });

  it('has sane distributions', () => {
    const r = new Rng(7);
    const n = 20_000;
    let sum = 0;
    let pois = 0;
    let geo = 0;
    const logs: number[] = [];
    for (let i = 0; i < n; i++) {
      sum += r.float();
      pois += r.poisson(3);
      geo += r.geometric(2);
      logs.push(r.lognormal(100, 0.5));
    }
    expect(sum / n).toBeCloseTo(0.5, 1);
    expect(pois / n).toBeCloseTo(3, 0);
    expect(geo / n).toBeCloseTo(2, 0);
    logs.sort((a, b) => a - b);
    expect(logs[n / 2]).toBeGreaterThan(90);
    expect(logs[n / 2]).toBeLessThan(110);
    expect(r.poisson(1000)).toBeGreaterThan(850);
  });

  it('picks by weight', () => {
    const table = new WeightedTable([['a', 1], ['b', 3], ['never', 0]] as const);
    const r = new Rng(3);
    let b = 0;
    for (let i = 0; i < 10_000; i++) {
      const v = table.pick(r);
      expect(v).not.toBe('never');
      if (v === 'b') b++;
    }
    expect(b / 10_000).toBeCloseTo(0.75, 1);
    expect(table.share(1)).toBeCloseTo(0.75);
  });
});

describe('apportion and hash32', () => {
  it('splits a total exactly', () => {
    expect(apportion(10, [1, 1, 1])).toEqual([4, 3, 3]);
    expect(apportion(7, [0.5, 2, 1.3]).reduce((s, c) => s + c, 0)).toBe(7);
    expect(apportion(0, [1, 2])).toEqual([0, 0]);
  });

  it('mixes inputs', () => {
    expect(hash32(1, 2)).toBe(hash32(1, 2));
    expect(hash32(1, 2)).not.toBe(hash32(2, 1));
  });
});
