// Two automations replicas run the same schedule (their scheduling ticks every second, the alert
// every two seconds): one message per period arrives on the test SMTP server, and both replicas
// took part. RabbitMQ, PostgreSQL and Redis (the tick's lease lives in Redis).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distributedServers } from '@sightline/kit/testing/servers';
import { startSmtpServer, type TestSmtpServer } from '../services/automations/test/smtp-server';
import { adminClient } from './admin-client';
import { startSightline, type SightlineProcess } from './processes';

const ADMIN_TOKEN = 'automations-replicas-admin-token';
type Json = Record<string, unknown>;

describe('two automations replicas run one schedule once per period (RabbitMQ + PostgreSQL + Redis)', () => {
  let gateway: SightlineProcess;
  const replicas: SightlineProcess[] = [];
  let smtp: TestSmtpServer;
  let cleanup: () => Promise<void>;
  const dirs = [0, 1, 2].map((i) => mkdtempSync(join(tmpdir(), `sightline-replicas-${i}-`)));

  beforeAll(async () => {
    const servers = await distributedServers(['gateway', 'ingest', 'attribution', 'contacts', 'changefeed', 'crm-sync', 'funnels', 'automations']);
    cleanup = servers.cleanup;
    smtp = await startSmtpServer();
    const env = {
      SIGHTLINE_POSTGRES_URL: servers.postgresUrl,
      SIGHTLINE_REDIS_URL: servers.redisUrl,
      SIGHTLINE_AMQP_URL: servers.amqpUrl,
      SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
      SIGHTLINE_ADMIN_TOKEN: ADMIN_TOKEN,
      SIGHTLINE_CURSOR_SECRET: 'automations-replicas-cursor-secret',
      SIGHTLINE_DEMO: 'off',
      SIGHTLINE_SMTP_URL: smtp.url,
      SIGHTLINE_AUTOMATIONS_TICK_CRON: '* * * * * *',
    };
    gateway = await startSightline(['start', '--target=gateway'], { ...env, SIGHTLINE_DATA_DIR: dirs[0] as string });
    replicas.push(await startSightline(['start', '--target=automations'], { ...env, SIGHTLINE_DATA_DIR: dirs[1] as string }));
    replicas.push(await startSightline(['start', '--target=automations'], { ...env, SIGHTLINE_DATA_DIR: dirs[2] as string }));
  }, 180_000);

  afterAll(async () => {
    for (const r of replicas) await r.stop();
    await gateway?.stop();
    await smtp?.close();
    await cleanup?.();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('sends one message per period, counted on the SMTP server', async () => {
    const admin = adminClient(gateway.adminUrl, ADMIN_TOKEN);
    const ws = await admin('/workspaces', { name: 'Replicas', plan: 'internal', timezone: 'UTC' });
    await admin(`/workspaces/${ws['id']}/websites`, { domain: 'replicas.test' });
    const { key } = await admin('/keys', { workspace_id: ws['id'] });
    const call = async (method: string, path: string, body?: unknown): Promise<Json & { data: Json }> => {
      const r = await fetch(`${gateway.baseUrl}${path}`, {
        method, headers: { authorization: `Bearer ${String(key)}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return (await r.json()) as Json & { data: Json };
    };
    const created = await call('POST', '/v1/automations', {
      name: 'Every two seconds',
      spec: { version: 1, trigger: { kind: 'schedule', cron: '*/2 * * * * *' }, deliver: [{ channel: 'email', to: ['team@replicas.test'] }] },
    });
    const id = String(created.data['id']);
    const started = Date.now();
    await new Promise((r) => setTimeout(r, 16_000));
    await call('PATCH', `/v1/automations/${id}`, { status: 'paused' });
    const elapsed = Date.now() - started;
    await new Promise((r) => setTimeout(r, 3_000)); // deliveries of the last runs arrive
    const runs = (await call('GET', `/v1/automations/${id}`)).data['runs'] as Json[];
    const periods = new Set(runs.map((r) => Math.floor(Date.parse(String(r['started_at'])) / 2000)));
    // Every two-second period ran once: as many runs as periods, and no more than the time allowed.
    expect(runs.length).toBeGreaterThanOrEqual(5);
    expect(runs.length).toBeLessThanOrEqual(Math.ceil(elapsed / 2000) + 1);
    expect(periods.size).toBe(runs.length);
    expect(runs.every((r) => r['status'] === 'sent')).toBe(true);
    expect(smtp.received).toHaveLength(runs.length);
    expect(new Set(smtp.received.map((m) => m.messageId)).size).toBe(runs.length);
    // Both replicas ticked (the Redis lease let one of them do each second's work).
    for (const replica of replicas) {
      const r = await fetch(`${replica.adminUrl}/admin/automations/scheduler`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(((await r.json()) as Json)['last_tick']).not.toBeNull();
    }
  }, 120_000);
});
