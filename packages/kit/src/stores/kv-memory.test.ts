import { describeKvStoreContract } from './kv.contract';
import { createMemoryKv } from './memory-kv';

describeKvStoreContract('memory', async () => {
  const store = createMemoryKv({ keyPrefix: 'test:' });
  return { store, cleanup: () => store.close() };
});
