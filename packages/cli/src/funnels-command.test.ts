// `sightline funnels rebuild` against a running gateway and funnels (embedded stores): the website
// found by its domain, the job followed to its end through the admin API, progress as plain lines.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, loadConfig, startModules, type RunningProcess } from '@sightline/kit';
import { createFunnelsModule } from '@sightline/service-funnels';
import { createGatewayModule } from '@sightline/service-gateway';
import { adminRequest, type AdminConnection } from './admin-client';
import { funnelsRebuildLine, rebuildFunnels } from './funnels-command';

const domain = 'funnels-cli.test';
let dataDir: string;
let proc: RunningProcess;
let conn: AdminConnection;
let website: { id: string; workspace_id: string };

function sink(): Writable & { text: string } {
  const out = new Writable({ write: (chunk, _enc, done) => void ((out.text += String(chunk)), done()) }) as Writable & { text: string };
  out.text = '';
  return out;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sightline-funnels-cli-'));
  proc = await startModules({
    config: loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'silent', SIGHTLINE_BUS_NAMESPACE: `funnelscli${Date.now()}` }),
    logger: createLogger({ level: 'silent' }),
    modules: [createGatewayModule({ demo: false }), createFunnelsModule({ builder: { idleMs: 100 } })],
  });
  conn = { url: `http://127.0.0.1:${proc.adminPort}`, token: proc.settings.adminToken };
  const ws = await adminRequest<{ id: string }>(conn, 'POST', '/workspaces', { name: 'Funnels', timezone: 'UTC', currency: 'EUR' });
  website = await adminRequest<{ id: string; workspace_id: string }>(conn, 'POST', `/workspaces/${ws.id}/websites`, { domain });
}, 120_000);
afterAll(async () => {
  await proc?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('rebuilds a website found by its domain and reports the finished job', async () => {
  await proc.bus.rpc('funnels.createFunnel', {
    operation: 'createFunnel', request_id: randomUUID(),
    workspace: { id: website.workspace_id, name: 'Funnels', timezone: 'UTC', currency: 'EUR', plan: 'internal' },
    website: { id: website.id, domain, timezone: 'UTC', currency: 'EUR' },
    key: { id: 'cli-test', scopes: ['funnels:write'] }, params: {}, query: {}, headers: {},
    body: { steps: [{ name: 'Home', conditions: { path_matches: '/' } }, { name: 'Pricing', conditions: { path_matches: '/pricing' } }] },
  }, { timeoutMs: 60_000 });
  const stream = sink();
  const job = await rebuildFunnels(conn, { website: domain, tty: false, stream, pollMs: 50 });
  expect(job).toMatchObject({ status: 'done', phase: 'attempts', website_id: website.id });
  expect(job.funnels).toHaveLength(1);
  expect(job.funnels[0]?.generation).toBe(2);
  expect(stream.text).toMatch(/rebuilt in \d+\.\d s: 1 funnel, \d+ units\n$/);
});

it('fails with the API\'s problem for a website without funnels', async () => {
  await expect(rebuildFunnels(conn, { website: randomUUID(), tty: false, stream: sink() })).rejects.toThrow(/admin API 404: Website .* has no funnels/);
});

it('describes a job in one line at each phase', () => {
  const job = { id: 'j', website_id: 'w', funnels: [{ id: 'f', generation: 2 }, { id: 'g', generation: 3 }], done: 3, total: 4, seconds: 7.25, error: null };
  expect(funnelsRebuildLine({ ...job, status: 'running', phase: 'sessions' })).toBe('session lists: 7 s');
  expect(funnelsRebuildLine({ ...job, status: 'running', phase: 'attempts' })).toBe('attempts of 2 funnels: 3/4 (75%), 7 s');
  expect(funnelsRebuildLine({ ...job, status: 'done', phase: 'attempts' })).toBe('rebuilt in 7.3 s: 2 funnels, 4 units');
  expect(funnelsRebuildLine({ ...job, status: 'failed', phase: 'attempts', error: 'boom' })).toMatch(/^rebuild failed after 7\.3 s: boom/);
});
