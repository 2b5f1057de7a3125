import { createChdbStore, defaultChdbPath } from './chdb-store';
import { describeClickHouseStoreContract } from './clickhouse.contract';
import type { ClickHouseStore } from './types';

describeClickHouseStoreContract('chdb', async () => {
  const opened: ClickHouseStore[] = [];
  return {
    async open(database, limits) {
      const store = await createChdbStore({ path: defaultChdbPath(), database, ...(limits ? { limits } : {}) });
      opened.push(store);
      return store;
    },
    async cleanup() {
      for (const store of opened) {
        await store.command(`DROP DATABASE IF EXISTS ${store.database}`);
        await store.close();
      }
    },
  };
});
