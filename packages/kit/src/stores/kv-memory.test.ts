import { describeKvStoreContract } from './kv.contract';
import { createMemoryKv } from './memory-kv';

describeKvStoreContract('memory', async () => {
  const store = createMemoryKv({ keyPrefix: 'test:' });
  return { store, cleanup: () => store.close() };
});

describe('in-memory KvStore bounds', () => {
  it('keeps at most maxEvictable evictable entries, dropping the longest unwritten first, and never a plain one', async () => {
    const kv = createMemoryKv({ maxEvictable: 3 });
    await kv.set('plain', 'kept', { ttlMs: 60_000 });
    await kv.setMany([['a', '1'], ['b', '2'], ['c', '3']], { evictable: true });
    expect(kv.memoryEntries?.()).toEqual({ entries: 1, evictable: 3 });
    await kv.setMany([['a', '1b']], { evictable: true }); // rewritten: now the newest
    await kv.setMany([['d', '4']], { evictable: true }); // one past the bound: b, the oldest, goes
    expect(await kv.getMany(['a', 'b', 'c', 'd', 'plain'])).toEqual(['1b', null, '3', '4', 'kept']);
    expect(kv.memoryEntries?.()).toEqual({ entries: 1, evictable: 3 });
    await kv.close();
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => createMemoryKv({ maxEvictable: 0 })).toThrow();
  });
});
