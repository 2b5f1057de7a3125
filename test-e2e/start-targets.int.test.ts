// The built `sightline` command as a user runs it: `start --target=all` on embedded stores (with
// the demo workspace) and `start --target=gateway` on PostgreSQL + Redis + RabbitMQ, each its own
// process; admin commands through the CLI; graceful stop on SIGTERM.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distributedServers } from '@sightline/kit/testing/servers';
import { runCli, startSightline, type SightlineProcess } from './processes';

describe('sightline start --target=all (embedded, demo workspace)', () => {
  let proc: SightlineProcess;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-e2e-all-'));
    proc = await startSightline(['start', '--target=all'], { SIGHTLINE_DATA_DIR: dataDir });
  }, 120_000);

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints the demo key and base URL, and the key answers /v1/me', async () => {
    const key = readFileSync(join(dataDir, 'demo-key'), 'utf8').trim();
    expect(proc.output()).toContain(key);
    expect(proc.output()).toContain('/v1');
    const response = await fetch(`${proc.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    const { data: me } = (await response.json()) as { data: { websites: unknown[]; key: { scopes: string[] } } };
    expect(me.websites).toHaveLength(2);
    expect(me.key.scopes).toContain('pii:read');
  });

  it('the admin CLI creates a workspace, a website and a key that works', async () => {
    const env = { SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_ADMIN_URL: proc.adminUrl };
    const ws = JSON.parse(await runCli(['workspaces', 'create', '--name', 'CLI Co', '--plan', 'pro', '--json'], env)) as { id: string };
    await runCli(['websites', 'add', '--workspace', ws.id, '--domain', 'cli.example'], env);
    const created = JSON.parse(await runCli(['keys', 'create', '--workspace', ws.id, '--scopes', 'analytics:read', '--json'], env)) as { key: string; key_id: string };
    expect(created.key).toMatch(/^sl_/);
    const me = await fetch(`${proc.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${created.key}` } });
    expect(((await me.json()) as { data: { key: { scopes: string[] } } }).data.key.scopes).toEqual(['analytics:read']);
    await runCli(['keys', 'revoke', created.key_id], env);
    await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(`${proc.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${created.key}` } })).status).toBe(401);
  });

  it('seeds a website through the public paths with `sightline seed`, and the events are stored', async () => {
    const env = { SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_ADMIN_URL: proc.adminUrl };
    const out = await runCli(['seed', '--website', 'shop.sightline.test', '--days', '3', '--visitors', '40', '--seed', '7', '--url', proc.baseUrl], env);
    expect(out).toMatch(/seeded shop\.sightline\.test: \d+ people/);
    expect(out).toContain('0 failed requests');
  }, 60_000);

  it('lists its targets', async () => {
    expect(await runCli(['start', '--list-targets'], {})).toContain('gateway');
  });

  it('stops cleanly on SIGTERM', async () => {
    expect(await proc.stop()).toBe(0);
  });
});

describe('sightline start --target=gateway (PostgreSQL + Redis + RabbitMQ)', () => {
  let proc: SightlineProcess;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const servers = await distributedServers(['gateway']);
    cleanup = servers.cleanup;
    proc = await startSightline(['start', '--target=gateway'], {
      SIGHTLINE_POSTGRES_URL: servers.postgresUrl,
      SIGHTLINE_REDIS_URL: servers.redisUrl,
      SIGHTLINE_AMQP_URL: servers.amqpUrl,
      SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
      SIGHTLINE_ADMIN_TOKEN: 'e2e-admin-token-0123456789',
      SIGHTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'sightline-e2e-gw-')),
    });
  }, 120_000);

  afterAll(async () => {
    await proc?.stop();
    await cleanup?.();
  });

  it('serves keys created through the admin CLI, and an immediate 503 for a service with no instance running', async () => {
    const env = { SIGHTLINE_ADMIN_TOKEN: 'e2e-admin-token-0123456789', SIGHTLINE_ADMIN_URL: proc.adminUrl };
    const ws = JSON.parse(await runCli(['workspaces', 'create', '--name', 'Dist', '--json'], env)) as { id: string };
    await runCli(['websites', 'add', '--workspace', ws.id, '--domain', 'dist.example'], env);
    const { key } = JSON.parse(await runCli(['keys', 'create', '--workspace', ws.id, '--json'], env)) as { key: string };
    const me = await fetch(`${proc.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(me.status).toBe(200);
    // Only the gateway runs: contacts has no consumer, so the broker returns the request at once
    // (the problem names the missing service rather than a deadline that ran out).
    const contacts = await fetch(`${proc.baseUrl}/v1/contacts`, { headers: { authorization: `Bearer ${key}` } });
    expect(contacts.status).toBe(503);
    expect(contacts.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await contacts.json()) as { type: string; detail: string };
    expect(problem.type).toMatch(/service-unavailable$/);
    expect(problem.detail).toMatch(/no instance of the contacts service is running/i);
  });

  it('refuses to start with a bad setting, naming the variable', async () => {
    await expect(runCli(['start', '--target=gateway'], { SIGHTLINE_PORT: 'eighty' })).rejects.toThrow(/SIGHTLINE_PORT/);
    await expect(runCli(['start', '--target=nonsense'], {})).rejects.toThrow(/unknown target "nonsense"/);
  });
});
