// chDB's native library is about 540 MB; only a process that opens an embedded analytics store
// may load it. Each jest test file has its own module registry, so chDB starts unloaded here.
import pino from 'pino';
import * as kit from '../index';
import { isChdbLoaded } from './chdb-store';
import { createStoreProvider } from './index';

const logger = pino({ level: 'silent' });

describe('chDB loading', () => {
  it('is not loaded by importing the runtime', () => {
    expect(typeof kit.createStoreProvider).toBe('function');
    expect(isChdbLoaded()).toBe(false);
  });

  it('is not loaded when the analytics store is a ClickHouse server, even one that is down', async () => {
    const provider = createStoreProvider({ logger, clickhouseUrl: 'http://127.0.0.1:1' });
    await expect(provider.clickhouse('lazy_server')).rejects.toThrow(/ClickHouse at 127\.0\.0\.1:1 is unreachable/);
    await provider.kv();
    await provider.close();
    expect(isChdbLoaded()).toBe(false);
  });

  it('is loaded by the first embedded analytics store', async () => {
    const provider = createStoreProvider({ logger });
    try {
      const store = await provider.clickhouse('lazy_embedded');
      expect(store.driver).toBe('chdb');
      expect(isChdbLoaded()).toBe(true);
      await store.command('DROP DATABASE IF EXISTS lazy_embedded');
    } finally {
      await provider.close();
    }
  });
});
