import { LruCache } from './lru-cache';

describe('LruCache', () => {
  it('keeps recently used entries and drops the least recently used ones', () => {
    const cache = new LruCache<string, number>(4); // two generations of two
    cache.set('a', 1);
    cache.set('b', 2); // young full: {a,b} becomes old
    expect(cache.get('a')).toBe(1); // promoted to young
    cache.set('c', 3); // young full again: {a,c} becomes old, b is dropped
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
  });

  it('overwrites a value in place', () => {
    const cache = new LruCache<string, number>(10);
    cache.set('a', 1);
    cache.set('a', 2);
    expect(cache.size).toBe(1);
    expect(cache.get('a')).toBe(2);
  });

  it('never holds more than its capacity', () => {
    const cache = new LruCache<number, number>(100);
    for (let i = 0; i < 10_000; i++) cache.set(i, i);
    expect(cache.size).toBeLessThanOrEqual(100);
    expect(cache.get(9_999)).toBe(9_999);
  });

  it('refuses a capacity below 2', () => {
    expect(() => new LruCache(1)).toThrow(RangeError);
  });

  it('drops an entry once it has gone unused for the maximum age, and keeps it just before', () => {
    let now = 1_000;
    const cache = new LruCache<string, number>(100, 1_000, () => now);
    cache.set('a', 1);
    now += 499;
    expect(cache.get('a')).toBe(1); // still young: used at 1499, so it may live to 2499
    now += 1; // 1500: the young generation (born 1000) is retired; 'a' moves on with it
    cache.set('b', 2);
    now = 1_999;
    expect(cache.size).toBe(2);
    now = 2_000; // the old generation (born 1000) is a full age old: dropped whole
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBe(2); // 'b' was written at 1500 into the generation born then
    now = 3_000;
    expect(cache.get('b')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('refuses a non-positive maximum age', () => {
    expect(() => new LruCache(10, 0)).toThrow(RangeError);
  });
});
