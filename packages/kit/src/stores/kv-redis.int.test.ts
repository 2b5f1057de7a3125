import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describeKvStoreContract } from './kv.contract';
import { createRedisKv } from './redis-kv';

const URL = 'redis://127.0.0.1:6379';

describeKvStoreContract('redis', async () => {
  const keyPrefix = `sightline-test:${randomUUID()}:`;
  const store = await createRedisKv({ url: URL, keyPrefix });
  return {
    store,
    async cleanup() {
      await store.close();
      // Remove what this run wrote.
      const admin = new Redis(URL);
      const keys = await admin.keys(`${keyPrefix}*`);
      if (keys.length > 0) await admin.del(...keys);
      await admin.quit();
    },
  };
});

describe('Redis driver', () => {
  it('fails naming the server when it is unreachable', async () => {
    await expect(createRedisKv({ url: 'redis://127.0.0.1:1', connectTimeoutMs: 2000 })).rejects.toThrow(
      /Redis at 127\.0\.0\.1:1 is unreachable/,
    );
  });
});
