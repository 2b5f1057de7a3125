import pino from 'pino';
import { createChdbStore } from './chdb-store';
import { createStoreProvider } from './index';

describe('createStoreProvider (embedded)', () => {
  const provider = createStoreProvider({ logger: pino({ level: 'silent' }), keyPrefix: 'provider-test:' });

  afterAll(() => provider.close());

  it('hands out one SQL store per schema, on PGlite', async () => {
    const first = await provider.sql('svc_provider');
    const again = await provider.sql('svc_provider');
    expect(first.driver).toBe('pglite');
    await first.query('CREATE TABLE IF NOT EXISTS marks (n int)');
    await first.query('INSERT INTO marks VALUES ($1)', [7]);
    expect((await again.query('SELECT n FROM marks')).rows).toEqual([{ n: 7 }]);
    // A service closing its handle does not close the shared instance.
    await first.close();
    expect((await again.query('SELECT count(*)::int AS n FROM marks')).rows).toEqual([{ n: 1 }]);
  }, 60_000);

  it('hands out chDB and memory stores', async () => {
    const ch = await provider.clickhouse('svc_provider');
    expect(ch.driver).toBe('chdb');
    expect(await ch.query('SELECT currentDatabase() AS db')).toEqual([{ db: 'svc_provider' }]);
    const kv = await provider.kv();
    expect(kv.driver).toBe('memory');
    expect(await kv.incrBy('n', 2)).toBe(2);
    expect(await (await provider.kv()).get('n')).toBe('2');
  });

  it('refuses names that are not plain identifiers', async () => {
    await expect(provider.sql('Bad-Name')).rejects.toThrow(/invalid schema name/);
    await expect(provider.sql('x; DROP SCHEMA public')).rejects.toThrow(/invalid schema name/);
    await expect(provider.clickhouse('1abc')).rejects.toThrow(/invalid database name/);
  });

  it('refuses a second chDB data directory in the same process', async () => {
    await provider.clickhouse('svc_provider');
    await expect(createChdbStore({ path: '/tmp/sightline-chdb-other-dir', database: 'x' })).rejects.toThrow(
      /one data directory per process/,
    );
  });

  it('refuses new stores once closed', async () => {
    const other = createStoreProvider({ logger: pino({ level: 'silent' }) });
    await (await other.kv()).set('k', 'v');
    await other.close();
    await expect(other.kv()).rejects.toThrow(/closed/);
  });
});
