// Kill -9 the automations process while deliveries are on the wire (the SMTP server and Slack hold
// their answers), restart it, and count on the test servers: exactly one message per recipient.
// Slack had already posted when the process died (the answer was held, not the post): the
// restarted process finds the message in the channel and does not post again. The SMTP server had
// not yet accepted (no 250 before the client vanished): the message is sent again, once.
// RabbitMQ, PostgreSQL and Redis; every service its own process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distributedServers } from '@sightline/kit/testing/servers';
import { startSlackServer, type TestSlackServer } from '../services/automations/test/slack-server';
import { startSmtpServer, type TestSmtpServer } from '../services/automations/test/smtp-server';
import { adminClient } from './admin-client';
import { startSightline, type SightlineProcess } from './processes';

const ADMIN_TOKEN = 'automations-crash-admin-token-01';
const EMAILS = ['ops@crash.test', 'ceo@crash.test'];
const CHANNELS = ['C0CRASH001', 'C0CRASH002'];
type Json = Record<string, unknown>;

describe('automations survives kill -9 mid-delivery (RabbitMQ + PostgreSQL + Redis)', () => {
  let gateway: SightlineProcess;
  let automations: SightlineProcess;
  let smtp: TestSmtpServer;
  let slack: TestSlackServer;
  let cleanup: () => Promise<void>;
  let env: Record<string, string>;
  const dirs = [mkdtempSync(join(tmpdir(), 'sightline-crash-gw-')), mkdtempSync(join(tmpdir(), 'sightline-crash-auto-'))];

  beforeAll(async () => {
    const servers = await distributedServers(['gateway', 'ingest', 'attribution', 'contacts', 'changefeed', 'crm-sync', 'funnels', 'automations']);
    cleanup = servers.cleanup;
    smtp = await startSmtpServer();
    slack = await startSlackServer({ channels: CHANNELS });
    env = {
      SIGHTLINE_POSTGRES_URL: servers.postgresUrl,
      SIGHTLINE_REDIS_URL: servers.redisUrl,
      SIGHTLINE_AMQP_URL: servers.amqpUrl,
      SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
      SIGHTLINE_ADMIN_TOKEN: ADMIN_TOKEN,
      SIGHTLINE_CURSOR_SECRET: 'automations-crash-cursor-secret',
      SIGHTLINE_DEMO: 'off',
      SIGHTLINE_SMTP_URL: smtp.url,
      SIGHTLINE_SLACK_API_URL: slack.url,
      SIGHTLINE_AUTOMATIONS_CALL_TIMEOUT_MS: '4000',
      SIGHTLINE_AUTOMATIONS_DELIVERY_LEASE_MS: '8000',
      SIGHTLINE_AUTOMATIONS_RETRY_BASE_MS: '1000',
    };
    gateway = await startSightline(['start', '--target=gateway,ingest'], { ...env, SIGHTLINE_DATA_DIR: dirs[0] as string });
    automations = await startSightline(['start', '--target=automations'], { ...env, SIGHTLINE_DATA_DIR: dirs[1] as string });
  }, 180_000);

  afterAll(async () => {
    await automations?.stop();
    await gateway?.stop();
    await smtp?.close();
    await slack?.close();
    await cleanup?.();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('sends exactly one message per recipient', async () => {
    const admin = adminClient(gateway.adminUrl, ADMIN_TOKEN);
    const ws = await admin('/workspaces', { name: 'Crash', plan: 'internal' });
    await admin(`/workspaces/${ws['id']}/websites`, { domain: 'crash.test' });
    const { key } = await admin('/keys', { workspace_id: ws['id'] });
    const connected = await adminClient(automations.adminUrl, ADMIN_TOKEN)('/automations/chat/connections', { workspace_id: ws['id'], bot_token: slack.token });
    expect(connected['team_id']).toBe(slack.teamId);
    const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json & { data: Json } }> => {
      const r = await fetch(`${gateway.baseUrl}${path}`, {
        method, headers: { authorization: `Bearer ${String(key)}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: r.status, body: (await r.json()) as Json & { data: Json } };
    };
    const created = await call('POST', '/v1/automations', {
      name: 'Crash me',
      spec: { version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, deliver: [{ channel: 'email', to: EMAILS }, { channel: 'chat', to: CHANNELS }] },
    });
    expect(created.status).toBe(200);
    const id = String(created.body.data['id']);

    smtp.hold();
    slack.hold();
    const sent = await call('POST', '/v1/events', { events: [{ event_type: 'purchase', event_name: 'crash', email: 'buyer@crash.test', revenue: 10, occurred_at: new Date().toISOString() }] });
    expect(sent.body['accepted']).toBe(1);
    // Mid-delivery: at least one email and one post are on the wire, their answers held.
    await Promise.all([smtp.holding(1), slack.holding(1)]);
    automations.child.kill('SIGKILL');
    await automations.stop();
    const postedAtKill = slack.posted.length;
    smtp.release();
    slack.release();
    expect(postedAtKill).toBeGreaterThanOrEqual(1);
    expect(smtp.received).toHaveLength(0);

    automations = await startSightline(['start', '--target=automations'], { ...env, SIGHTLINE_DATA_DIR: dirs[1] as string });
    // The cut-short deliveries are taken over once their leases (8 s) run out.
    const deadline = Date.now() + 90_000;
    let run: Json | undefined;
    while (Date.now() < deadline) {
      run = ((await call('GET', `/v1/automations/${id}`)).body.data['runs'] as Json[])[0];
      if (run && run['status'] !== 'queued') break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(run?.['status']).toBe('sent');
    await new Promise((r) => setTimeout(r, 2_000)); // anything sent twice would have arrived by now
    for (const to of EMAILS) expect({ to, messages: smtp.received.filter((m) => m.to.includes(to)).length }).toEqual({ to, messages: 1 });
    for (const channel of CHANNELS) expect({ channel, messages: slack.posted.filter((p) => p.channel === channel).length }).toEqual({ channel, messages: 1 });
    expect(smtp.dropped).toBeGreaterThanOrEqual(1); // an email really was cut short
    expect(smtp.serverErrors).toEqual([]);
    const notes = (run?.['deliveries'] as Json[]).filter((d) => d['channel'] === 'chat').map((d) => d['error']);
    expect({ notes, deliveries: run?.['deliveries'] }).toEqual({ notes: expect.arrayContaining(['an earlier attempt had got through (found in the channel)']), deliveries: expect.anything() });
  }, 240_000);
});
