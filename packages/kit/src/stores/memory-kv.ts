// KvStore in process memory, the embedded driver. Node runs one callback at a time and every
// operation below completes without awaiting in between, so each is atomic, as on Redis.
import { randomUUID } from 'node:crypto';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { assertPositiveInteger, consumeWith, rateWindowSeconds } from './kv-common';
import type { KvStore, RateLimitResult, SemaphoreLease } from './types';

interface Entry {
  value: string;
  /** Epoch ms, or null for no expiry. */
  expiresAt: number | null;
}

export interface MemoryKvOptions {
  /** Prepended to every key, as on the Redis driver. */
  keyPrefix?: string;
  /** How often expired entries are swept out; defaults to 30 s. */
  sweepIntervalMs?: number;
  /** Most evictable entries kept (setMany's `evictable`); the longest unwritten go first. Default 100 000. */
  maxEvictable?: number;
}

export const DEFAULT_MAX_EVICTABLE = 100_000;

export function createMemoryKv(options: MemoryKvOptions = {}): KvStore {
  const prefix = options.keyPrefix ?? '';
  const entries = new Map<string, Entry>();
  // Working sets a writer can do without (visitor session state): bounded by count as well as TTL,
  // so process memory levels off whatever the traffic. Map order is write order: the first entry is
  // the one written longest ago.
  const evictable = new Map<string, Entry>();
  const maxEvictable = options.maxEvictable ?? DEFAULT_MAX_EVICTABLE;
  assertPositiveInteger('maxEvictable', maxEvictable);
  /** Semaphore key → lease id → lease expiry (epoch ms). */
  const semaphores = new Map<string, Map<string, number>>();
  const limiters = new Map<string, RateLimiterMemory>();

  const live = (key: string, now = Date.now()): Entry | undefined => {
    const entry = entries.get(key) ?? evictable.get(key);
    if (entry && entry.expiresAt !== null && entry.expiresAt <= now) {
      entries.delete(key);
      evictable.delete(key);
      return undefined;
    }
    return entry;
  };
  /** A plain write of a key replaces an evictable one, and the reverse. */
  const write = (key: string, entry: Entry, canEvict: boolean): void => {
    if (canEvict) {
      entries.delete(key);
      evictable.delete(key); // re-inserted last: the most recently written
      evictable.set(key, entry);
      if (evictable.size > maxEvictable) evictable.delete(evictable.keys().next().value as string);
    } else {
      evictable.delete(key);
      entries.set(key, entry);
    }
  };

  // Reads already ignore expired entries; the sweep only bounds memory.
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const key of entries.keys()) live(key, now);
    for (const key of evictable.keys()) live(key, now);
    for (const [key, leases] of semaphores) {
      for (const [id, expiresAt] of leases) if (expiresAt <= now) leases.delete(id);
      if (leases.size === 0) semaphores.delete(key);
    }
  }, options.sweepIntervalMs ?? 30_000);
  sweeper.unref();

  const expiry = (ttlMs: number | undefined): number | null => {
    if (ttlMs === undefined) return null;
    assertPositiveInteger('ttlMs', ttlMs);
    return Date.now() + ttlMs;
  };

  return {
    driver: 'memory',
    get(key) {
      return Promise.resolve(live(prefix + key)?.value ?? null);
    },
    set(key, value, setOptions) {
      const full = prefix + key;
      if (setOptions?.ifAbsent && live(full)) return Promise.resolve(false);
      write(full, { value, expiresAt: expiry(setOptions?.ttlMs) }, false);
      return Promise.resolve(true);
    },
    del(key) {
      entries.delete(prefix + key);
      evictable.delete(prefix + key);
      return Promise.resolve();
    },
    getMany(keys) {
      return Promise.resolve(keys.map((key) => live(prefix + key)?.value ?? null));
    },
    setMany(pairs, setOptions) {
      const expiresAt = expiry(setOptions?.ttlMs);
      for (const [key, value] of pairs) write(prefix + key, { value, expiresAt }, setOptions?.evictable === true);
      return Promise.resolve();
    },
    incrBy(key, by, ttlMs) {
      if (!Number.isSafeInteger(by)) return Promise.reject(new Error(`incrBy needs an integer, got ${by}`));
      const full = prefix + key;
      const entry = live(full);
      if (!entry) {
        write(full, { value: String(by), expiresAt: expiry(ttlMs) }, false);
        return Promise.resolve(by);
      }
      const current = Number(entry.value);
      if (!/^-?\d+$/.test(entry.value) || !Number.isSafeInteger(current)) {
        return Promise.reject(new Error(`value at ${key} is not an integer`));
      }
      entry.value = String(current + by);
      return Promise.resolve(current + by);
    },
    consumeRate(key, points, windowMs, cost = 1): Promise<RateLimitResult> {
      assertPositiveInteger('points', points);
      const duration = rateWindowSeconds(windowMs);
      const id = `${points}:${duration}`;
      let limiter = limiters.get(id);
      if (!limiter) {
        limiter = new RateLimiterMemory({ points, duration, keyPrefix: `${prefix}rate:${id}` });
        limiters.set(id, limiter);
      }
      const chosen = limiter;
      assertPositiveInteger('cost', cost);
      return consumeWith(() => chosen.consume(key, cost), points);
    },
    tryAcquire(key, limit, leaseMs): Promise<SemaphoreLease | null> {
      assertPositiveInteger('limit', limit);
      assertPositiveInteger('leaseMs', leaseMs);
      const full = prefix + key;
      const now = Date.now();
      let leases = semaphores.get(full);
      if (!leases) {
        leases = new Map();
        semaphores.set(full, leases);
      }
      for (const [leaseId, expiresAt] of leases) if (expiresAt <= now) leases.delete(leaseId);
      if (leases.size >= limit) return Promise.resolve(null);
      const id = randomUUID();
      leases.set(id, now + leaseMs);
      const held = leases;
      return Promise.resolve({
        release() {
          held.delete(id);
          return Promise.resolve();
        },
      });
    },
    memoryEntries() {
      return { entries: entries.size, evictable: evictable.size };
    },
    close() {
      clearInterval(sweeper);
      return Promise.resolve();
    },
  };
}
