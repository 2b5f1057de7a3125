// The `@clickhouse/client` driver against the chDB-backed ClickHouse HTTP shim (no ClickHouse
// server can be installed here).
import { startClickHouseShim } from '../../testing/clickhouse-http-shim';
import { createClickHouseStore } from './clickhouse-store';
import { describeClickHouseStoreContract } from './clickhouse.contract';
import type { ClickHouseStore } from './types';

describeClickHouseStoreContract('clickhouse', async () => {
  const shim = await startClickHouseShim();
  const opened: ClickHouseStore[] = [];
  return {
    async open(database, limits) {
      const store = await createClickHouseStore({ url: shim.url, database, ...(limits ? { limits } : {}) });
      opened.push(store);
      return store;
    },
    async cleanup() {
      for (const store of opened) {
        await store.command(`DROP DATABASE IF EXISTS ${store.database}`);
        await store.close();
      }
      await shim.stop();
    },
  };
});

describe('ClickHouse driver', () => {
  it('fails naming the server when it is unreachable', async () => {
    await expect(createClickHouseStore({ url: 'http://127.0.0.1:1', database: 'nowhere' })).rejects.toThrow(
      /ClickHouse at 127\.0\.0\.1:1 is unreachable/,
    );
  });
});
