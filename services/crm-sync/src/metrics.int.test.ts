// crm-sync's health gauges read from its own tables on PostgreSQL: connections by provider and
// health, and the write-back queue's open states, zero-filled so an alert sees a 0 rather than nothing.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { createStoreProvider, runSqlMigrations, type SqlStore } from '@sightline/kit';
import { freshPostgresDatabase } from '@sightline/kit/testing/servers';
import { registerCrmSyncMetrics } from './metrics';

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const series = line.slice(0, line.lastIndexOf(' '));
    if (Object.entries(labels).every(([k, v]) => series.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('crm-sync metrics (PostgreSQL)', () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let sql: SqlStore;
  let stores: ReturnType<typeof createStoreProvider>;

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    stores = createStoreProvider({ postgresUrl: database.url, logger: pino({ level: 'silent' }) });
    sql = await stores.sql('crm_sync');
    await runSqlMigrations(sql, join(__dirname, '..', 'migrations', 'postgres'));
  });
  afterAll(async () => {
    await stores?.close();
    await database?.drop();
  });

  const connection = (values: { status?: string; success?: string | null; error?: string | null }) =>
    sql.query(
      `INSERT INTO connections (id, workspace_id, website_id, provider, credentials, status, last_success_at, last_error_at)
       VALUES ($1, $2, $3, 'hubspot', '\\x00', $4, $5, $6)`,
      [randomUUID(), randomUUID(), randomUUID(), values.status ?? 'active', values.success ?? null, values.error ?? null],
    );
  const writeback = (target: string, status: string) =>
    sql.query(
      `INSERT INTO writebacks (id, request_id, target, workspace_id, website_id, conversion_id, requested_by, requested_at, payload, status, max_attempts)
       VALUES ($1, $2, $3, 'w', 's', $4, 'test', now(), '{}', $5, 3)`,
      [randomUUID(), randomUUID(), target, randomUUID(), status],
    );

  it('counts connections by health and open write-backs by target and status', async () => {
    await connection({ success: '2026-01-02T00:00:00Z' });
    await connection({ success: '2026-01-01T00:00:00Z', error: '2026-01-02T00:00:00Z' });
    await connection({ success: '2026-01-02T00:00:00Z', error: '2026-01-01T00:00:00Z' });
    await connection({});
    await connection({ status: 'disconnected', error: '2026-01-02T00:00:00Z' });
    await writeback('crm', 'pending');
    await writeback('crm', 'pending');
    await writeback('meta_ads', 'dead');
    await writeback('crm', 'done');

    const registry = new Registry();
    registerCrmSyncMetrics(registry, sql);
    const text = await registry.metrics();
    const health = (h: string) => sample(text, 'sightline_crm_sync_connections', { provider: 'hubspot', health: h });
    expect([health('ok'), health('failing'), health('never_synced'), health('disconnected')]).toEqual([2, 1, 1, 1]);
    const open = (target: string, status: string) => sample(text, 'sightline_crm_sync_writebacks', { target, status });
    expect(open('crm', 'pending')).toBe(2);
    expect(open('meta_ads', 'dead')).toBe(1);
    expect(open('google_ads', 'failed')).toBe(0);
    // Done rows are history, not queue.
    expect(sample(text, 'sightline_crm_sync_writebacks', { target: 'crm', status: 'done' })).toBeUndefined();
  });
});
