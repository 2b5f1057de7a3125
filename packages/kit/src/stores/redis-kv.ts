// KvStore on Redis (`ioredis`), the distributed driver. Every operation is one atomic Redis
// command or script: counters, rate windows (rate-limiter-flexible) and semaphores
// (redis-semaphore) stay exact across processes.
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { Semaphore } from 'redis-semaphore';
import type { Logger } from 'pino';
import { assertPositiveInteger, consumeWith, rateWindowSeconds } from './kv-common';
import type { KvStore, RateLimitResult, SemaphoreLease } from './types';

export interface RedisKvOptions {
  url: string;
  /** Prepended to every key (tests use a unique prefix per run). */
  keyPrefix?: string;
  logger?: Logger;
  /** How long to wait for the first connection; defaults to 5 s. */
  connectTimeoutMs?: number;
}

/** INCRBY that sets the TTL only when it creates the key, atomically. */
const INCR_WITH_TTL = `
local created = redis.call('EXISTS', KEYS[1]) == 0
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if created and tonumber(ARGV[2]) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return value`;

/** Where the server is, without credentials, for error messages. */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `Redis at ${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return 'Redis (unparseable URL)';
  }
}

export async function createRedisKv(options: RedisKvOptions): Promise<KvStore> {
  const prefix = options.keyPrefix ?? '';
  const where = describeRedisUrl(options.url);
  const redis = new Redis(options.url, { lazyConnect: true, maxRetriesPerRequest: 3 });
  // ioredis reconnects by itself; without a listener an error event would crash the process.
  redis.on('error', (error: Error) => options.logger?.warn({ err: error }, `${where}: connection error`));

  const timeoutMs = options.connectTimeoutMs ?? 5000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.connect(),
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    redis.disconnect();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${where} is unreachable: ${reason}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }

  const limiters = new Map<string, RateLimiterRedis>();

  return {
    driver: 'redis',
    get: (key) => redis.get(prefix + key),
    async set(key, value, setOptions) {
      const full = prefix + key;
      const ttlMs = setOptions?.ttlMs;
      if (ttlMs !== undefined) assertPositiveInteger('ttlMs', ttlMs);
      const reply = setOptions?.ifAbsent
        ? ttlMs !== undefined
          ? await redis.set(full, value, 'PX', ttlMs, 'NX')
          : await redis.set(full, value, 'NX')
        : ttlMs !== undefined
          ? await redis.set(full, value, 'PX', ttlMs)
          : await redis.set(full, value);
      return reply === 'OK';
    },
    async getMany(keys) {
      return keys.length === 0 ? [] : redis.mget(keys.map((key) => prefix + key));
    },
    async setMany(pairs, setOptions) {
      if (pairs.length === 0) return;
      const ttlMs = setOptions?.ttlMs;
      if (ttlMs !== undefined) assertPositiveInteger('ttlMs', ttlMs);
      const pipeline = redis.multi();
      for (const [key, value] of pairs) {
        if (ttlMs !== undefined) pipeline.set(prefix + key, value, 'PX', ttlMs);
        else pipeline.set(prefix + key, value);
      }
      const results = await pipeline.exec();
      const failed = results?.find(([error]) => error);
      if (failed) throw failed[0];
    },
    async del(key) {
      await redis.del(prefix + key);
    },
    async incrBy(key, by, ttlMs) {
      if (!Number.isSafeInteger(by)) throw new Error(`incrBy needs an integer, got ${by}`);
      if (ttlMs !== undefined) assertPositiveInteger('ttlMs', ttlMs);
      const value = await redis.eval(INCR_WITH_TTL, 1, prefix + key, by, ttlMs ?? 0);
      return Number(value);
    },
    consumeRate(key, points, windowMs, cost = 1): Promise<RateLimitResult> {
      assertPositiveInteger('points', points);
      const duration = rateWindowSeconds(windowMs);
      const id = `${points}:${duration}`;
      let limiter = limiters.get(id);
      if (!limiter) {
        limiter = new RateLimiterRedis({ storeClient: redis, points, duration, keyPrefix: `${prefix}rate:${id}` });
        limiters.set(id, limiter);
      }
      const chosen = limiter;
      assertPositiveInteger('cost', cost);
      return consumeWith(() => chosen.consume(key, cost), points);
    },
    async tryAcquire(key, limit, leaseMs): Promise<SemaphoreLease | null> {
      assertPositiveInteger('limit', limit);
      assertPositiveInteger('leaseMs', leaseMs);
      // One attempt, no waiting, and no auto-refresh: an unreleased lease lapses after leaseMs.
      const semaphore = new Semaphore(redis, `${prefix}sem:${key}`, limit, {
        lockTimeout: leaseMs,
        acquireTimeout: leaseMs,
        acquireAttemptsLimit: 1,
        retryInterval: 0,
        refreshInterval: 0,
      });
      if (!(await semaphore.tryAcquire())) return null;
      return { release: () => semaphore.release() };
    },
    async close() {
      if (redis.status === 'end') return;
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
