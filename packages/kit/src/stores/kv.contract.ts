// The KvStore contract, run unchanged against Redis and the in-memory driver.
import type { KvStore, SemaphoreLease } from './types';

export interface KvContractHarness {
  store: KvStore;
  cleanup(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function describeKvStoreContract(driver: KvStore['driver'], setup: () => Promise<KvContractHarness>): void {
  describe(`KvStore contract (${driver})`, () => {
    let harness: KvContractHarness;
    let kv: KvStore;

    beforeAll(async () => {
      harness = await setup();
      kv = harness.store;
    }, 30_000);

    afterAll(async () => {
      await harness?.cleanup();
    });

    it('reads and writes several keys in one call, with TTL', async () => {
      await kv.setMany([['many:a', '1'], ['many:b', '2']], { ttlMs: 60_000 });
      expect(await kv.getMany(['many:a', 'many:missing', 'many:b'])).toEqual(['1', null, '2']);
      expect(await kv.getMany([])).toEqual([]);
      await kv.setMany([['many:short', 'x']], { ttlMs: 50 });
      await new Promise((r) => setTimeout(r, 120));
      expect(await kv.getMany(['many:short'])).toEqual([null]);
    });

    it('reads back evictable values like any other: overwritten, deleted, expired', async () => {
      await kv.setMany([['evict:a', '1'], ['evict:b', '2']], { ttlMs: 60_000, evictable: true });
      expect(await kv.getMany(['evict:a', 'evict:b'])).toEqual(['1', '2']);
      expect(await kv.get('evict:a')).toBe('1');
      await kv.set('evict:a', 'plain'); // a plain write takes the key over
      await kv.setMany([['evict:b', '3']], { evictable: true });
      expect(await kv.getMany(['evict:a', 'evict:b'])).toEqual(['plain', '3']);
      await kv.del('evict:b');
      expect(await kv.get('evict:b')).toBeNull();
      await kv.setMany([['evict:short', 'x']], { ttlMs: 50, evictable: true });
      await new Promise((r) => setTimeout(r, 120));
      expect(await kv.get('evict:short')).toBeNull();
    });

    it('reports its driver', () => {
      expect(kv.driver).toBe(driver);
    });

    it('gets, sets and deletes values', async () => {
      expect(await kv.get('plain')).toBeNull();
      expect(await kv.set('plain', 'one')).toBe(true);
      expect(await kv.get('plain')).toBe('one');
      expect(await kv.set('plain', 'two')).toBe(true);
      expect(await kv.get('plain')).toBe('two');
      await kv.del('plain');
      expect(await kv.get('plain')).toBeNull();
      await kv.del('never-set');
    });

    it('sets only when absent with ifAbsent', async () => {
      expect(await kv.set('once', 'first', { ifAbsent: true })).toBe(true);
      expect(await kv.set('once', 'second', { ifAbsent: true })).toBe(false);
      expect(await kv.get('once')).toBe('first');
      const racers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => kv.set('race', `r${i}`, { ifAbsent: true, ttlMs: 5000 })),
      );
      expect(racers.filter(Boolean)).toHaveLength(1);
    });

    it('expires values after their ttl', async () => {
      expect(await kv.set('short', 'lived', { ttlMs: 150 })).toBe(true);
      expect(await kv.get('short')).toBe('lived');
      expect(await kv.set('short', 'again', { ifAbsent: true, ttlMs: 150 })).toBe(false);
      await sleep(300);
      expect(await kv.get('short')).toBeNull();
      expect(await kv.set('short', 'again', { ifAbsent: true, ttlMs: 150 })).toBe(true);
    });

    it('counts exactly under 200 concurrent increments', async () => {
      const results = await Promise.all(Array.from({ length: 200 }, () => kv.incrBy('counter', 1, 60_000)));
      expect(new Set(results).size).toBe(200);
      expect(Math.max(...results)).toBe(200);
      expect(await kv.get('counter')).toBe('200');
      expect(await kv.incrBy('counter', -50)).toBe(150);
    });

    it('applies the ttl of incrBy only when it creates the key', async () => {
      expect(await kv.incrBy('quota', 5, 200)).toBe(5);
      await sleep(100);
      // A later ttl does not extend the window.
      expect(await kv.incrBy('quota', 5, 10_000)).toBe(10);
      await sleep(200);
      expect(await kv.get('quota')).toBeNull();
      expect(await kv.incrBy('quota', 1, 10_000)).toBe(1);
    });

    it('allows exactly the window\'s points under 100 concurrent consumes', async () => {
      const results = await Promise.all(Array.from({ length: 100 }, () => kv.consumeRate('client-1', 60, 60_000)));
      const allowed = results.filter((r) => r.allowed);
      expect(allowed).toHaveLength(60);
      expect(allowed.map((r) => r.remaining).sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, i) => i));
      for (const result of results) {
        expect(result.limit).toBe(60);
        expect(result.resetMs).toBeGreaterThan(0);
        expect(result.resetMs).toBeLessThanOrEqual(60_000);
      }
      for (const denied of results.filter((r) => !r.allowed)) expect(denied.remaining).toBe(0);
      // Another key has its own window.
      expect((await kv.consumeRate('client-2', 60, 60_000)).allowed).toBe(true);
    });

    it('consumes a cost of several points at once, exactly up to the window', async () => {
      expect(await kv.consumeRate('weighted', 10, 60_000, 6)).toEqual(expect.objectContaining({ allowed: true, remaining: 4 }));
      expect(await kv.consumeRate('weighted', 10, 60_000, 4)).toEqual(expect.objectContaining({ allowed: true, remaining: 0 }));
      expect((await kv.consumeRate('weighted', 10, 60_000, 1)).allowed).toBe(false);
      expect((await kv.consumeRate('weighted-2', 10, 60_000, 11)).allowed).toBe(false);
      await expect(Promise.resolve().then(() => kv.consumeRate('weighted-3', 10, 60_000, 0))).rejects.toThrow(/cost/);
    });

    it('opens a new rate window once the old one ends', async () => {
      expect((await kv.consumeRate('burst', 1, 1000)).allowed).toBe(true);
      expect((await kv.consumeRate('burst', 1, 1000)).allowed).toBe(false);
      await sleep(1100);
      expect((await kv.consumeRate('burst', 1, 1000)).allowed).toBe(true);
    });

    it('grants exactly N concurrent leases and frees one on release', async () => {
      const attempts = await Promise.all(Array.from({ length: 10 }, () => kv.tryAcquire('jobs', 3, 10_000)));
      const leases = attempts.filter((l): l is SemaphoreLease => l !== null);
      expect(leases).toHaveLength(3);
      expect(await kv.tryAcquire('jobs', 3, 10_000)).toBeNull();
      await leases[0]?.release();
      const next = await kv.tryAcquire('jobs', 3, 10_000);
      expect(next).not.toBeNull();
      expect(await kv.tryAcquire('jobs', 3, 10_000)).toBeNull();
      await Promise.all([leases[1]?.release(), leases[2]?.release(), next?.release()]);
      // Releasing twice is harmless.
      await leases[1]?.release();
      expect(await kv.tryAcquire('jobs', 3, 10_000)).not.toBeNull();
    });

    it('frees a lease that expires without release', async () => {
      const first = await kv.tryAcquire('lapse', 1, 200);
      expect(first).not.toBeNull();
      expect(await kv.tryAcquire('lapse', 1, 200)).toBeNull();
      await sleep(300);
      const second = await kv.tryAcquire('lapse', 1, 200);
      expect(second).not.toBeNull();
      await second?.release();
    });
  });
}
