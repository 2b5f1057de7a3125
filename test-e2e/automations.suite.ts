// Alerts through the public paths, end to end: conversions sent with POST /v1/events go through
// ingest to attribution and to automations, which delivers over SMTP (a real SMTP server in this
// process) and to Slack (a local server answering as Slack's Web API); threshold alerts read
// /metrics figures from attribution; the change feed records every write and run. Written once,
// run on both driver profiles.

import type { RunningProcess } from '@sightline/kit';
import { startSlackServer, type TestSlackServer } from '../services/automations/test/slack-server';
import { startSmtpServer, type TestSmtpServer } from '../services/automations/test/smtp-server';
import { adminOf } from './admin-client';
import type { DriverProfile } from './ingest.suite';
import { startStack, type Stack } from './stack';

type Json = Record<string, unknown>;
interface Reply {
  status: number;
  body: Json & { data: Json & Json[]; meta: Json; changes?: Json[] };
}

export const AUTOMATIONS_E2E_SERVICES = ['gateway', 'ingest', 'attribution', 'changefeed', 'funnels', 'automations'];
const CHANNEL = 'C0ALERTS01';

export function describeAutomations(profileName: string, makeProfile: () => Promise<DriverProfile>): void {
  describe(`automations (${profileName})`, () => {
    let proc: RunningProcess;
    let profile: DriverProfile;
    let stack: Stack;
    let base: string;
    let key: string;
    let keyId: string;
    let workspaceId: string;
    let smtp: TestSmtpServer;
    let slack: TestSlackServer;
    const since = new Date(Date.now() - 60_000).toISOString();

    const call = async (method: string, path: string, body?: unknown): Promise<Reply> => {
      const r = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: r.status, body: (await r.json()) as Reply['body'] };
    };
    const waitFor = async <T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 40_000): Promise<T> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await probe();
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const sendConversion = async (website: string, eventName: string): Promise<void> => {
      const r = await call('POST', `/v1/events?website=${website}`, { events: [{ event_type: 'purchase', event_name: eventName, email: `${eventName}@buyer.test`, revenue: 42.5, currency: 'EUR', occurred_at: new Date().toISOString() }] });
      expect(r.body['accepted']).toBe(1);
    };
    /** A scheduling tick through the admin API (one per second: a tick holds its second's slot). */
    const tick = async (): Promise<Json> => {
      for (;;) {
        const r = await fetch(`http://127.0.0.1:${proc.adminPort}/admin/automations/tick`, { method: 'POST', headers: { authorization: `Bearer ${proc.settings.adminToken}` } });
        if (r.status === 200) return (await r.json()) as Json;
        await new Promise((res) => setTimeout(res, 250));
      }
    };
    const runsOf = async (id: string, website = 'shop.test'): Promise<Json[]> => (await call('GET', `/v1/automations/${id}?website=${website}`)).body.data['runs'] as Json[];

    beforeAll(async () => {
      profile = await makeProfile();
      smtp = await startSmtpServer();
      slack = await startSlackServer({ channels: [CHANNEL] });
      stack = await startStack({
        targets: ['gateway', 'ingest', 'attribution', 'changefeed', 'funnels', 'automations'],
        env: {
          SIGHTLINE_PUBLIC_URL: 'https://sightline.example',
          SIGHTLINE_SMTP_URL: smtp.url,
          SIGHTLINE_SLACK_API_URL: slack.url,
          // The tests tick through the admin API; the minute tick stays out of the way.
          SIGHTLINE_AUTOMATIONS_TICK_CRON: '0 0 1 1 *',
          SIGHTLINE_AUTOMATIONS_CALL_TIMEOUT_MS: '5000',
          SIGHTLINE_AUTOMATIONS_DELIVERY_LEASE_MS: '15000',
          ...profile.env,
        },
      });
      proc = stack.proc;
      base = `http://127.0.0.1:${proc.publicPort}`;
      const admin = adminOf(proc);
      const ws = await admin('/workspaces', { name: 'Alerts', plan: 'internal', timezone: 'Europe/Berlin', currency: 'EUR' });
      workspaceId = String(ws['id']);
      await admin(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' });
      await admin(`/workspaces/${ws['id']}/websites`, { domain: 'quiet.test' });
      await admin(`/workspaces/${ws['id']}/websites`, { domain: 'funnel.test' });
      const created = await admin('/keys', { workspace_id: ws['id'] });
      key = String(created['key']);
      keyId = String(created['key_id']);
      const connected = await fetch(`http://127.0.0.1:${proc.adminPort}/admin/automations/chat/connections`, {
        method: 'POST',
        headers: { authorization: `Bearer ${proc.settings.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ workspace_id: ws['id'], bot_token: slack.token }),
      });
      expect(connected.status).toBe(201);
    }, 180_000);

    afterAll(async () => {
      await stack?.stop();
      await smtp?.close();
      await slack?.close();
      await profile?.cleanup();
    }, 60_000);

    let eventAlertId = '';

    it('delivers an event alert for a conversion sent with POST /v1/events to every email address and the chat channel', async () => {
      const listed = await call('GET', '/v1/automations?website=shop.test');
      expect(listed.status).toBe(200);
      expect((listed.body.meta['templates'] as Json[]).length).toBeGreaterThanOrEqual(5);
      const created = await call('POST', '/v1/automations?website=shop.test', {
        name: 'Every sale',
        spec: { version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, deliver: [{ channel: 'email', to: ['ops@shop.test', 'ceo@shop.test'] }, { channel: 'chat', to: [CHANNEL] }] },
      });
      expect(created.status).toBe(200);
      eventAlertId = String(created.body.data['id']);
      await sendConversion('shop.test', 'first_sale');
      const mails = await smtp.waitFor(2, 40_000);
      const posts = await slack.waitFor(1, 40_000);
      expect(mails.map((m) => m.to[0]).sort()).toEqual(['ceo@shop.test', 'ops@shop.test']);
      expect(mails[0]?.subject).toBe('[Sightline] Every sale');
      expect(mails[0]?.text).toContain('New conversion: purchase "first_sale" (€42.50)');
      // Which website, and when it happened in the website timezone (a backfill can be days old).
      expect(mails[0]?.text).toMatch(/\nWebsite: shop\.test\nWhen: \w{3} \d{1,2} \w{3} \d{4}, \d{2}:\d{2} \(Europe\/Berlin\)\n/);
      expect(mails[0]?.text).toMatch(/https:\/\/sightline\.example\/v1\/contacts\/[0-9a-f-]{36}\?website=shop\.test/);
      expect(posts[0]?.channel).toBe(CHANNEL);
      expect(posts[0]?.text).toContain('New conversion: purchase "first_sale" (€42.50)');
      const runs = await waitFor('the run to settle', async () => {
        const rs = await runsOf(eventAlertId);
        return rs[0]?.['status'] === 'sent' ? rs : undefined;
      });
      expect((runs[0]?.['deliveries'] as Json[]).map((d) => `${String(d['channel'])}:${String(d['to'])}:${String(d['status'])}`).sort())
        .toEqual([`chat:${CHANNEL}:sent`, 'email:ceo@shop.test:sent', 'email:ops@shop.test:sent']);
    }, 90_000);

    it('pauses and resumes: a paused alert ignores conversions', async () => {
      const paused = await call('PATCH', `/v1/automations/${eventAlertId}?website=shop.test`, { status: 'paused' });
      expect(paused.body.data['status']).toBe('paused');
      const before = slack.posted.length;
      const mailsBefore = smtp.received.length;
      await sendConversion('shop.test', 'while_paused');
      // The paused alert let the conversion pass: once the feed shows it, nothing was posted for it.
      await waitFor('the paused conversion in the feed', async () => {
        const r = await call('GET', `/v1/changes?website=shop.test&types=conversion.created&since=${encodeURIComponent(since)}`);
        return (r.body.changes ?? []).length >= 2 ? true : undefined;
      });
      await new Promise((r) => setTimeout(r, 1_000));
      expect(slack.posted.length).toBe(before);
      const resumed = await call('PATCH', `/v1/automations/${eventAlertId}?website=shop.test`, { status: 'active' });
      expect(resumed.body.data['status']).toBe('active');
      await sendConversion('shop.test', 'after_resume');
      await slack.waitFor(before + 1, 40_000);
      await smtp.waitFor(mailsBefore + 2, 40_000);
      expect(slack.posted.map((p) => p.text).filter((t) => t.includes('while_paused'))).toEqual([]);
      expect(slack.posted.at(-1)?.text).toContain('after_resume');
    }, 90_000);

    it('runs a test message on demand', async () => {
      const mailsBefore = smtp.received.length;
      const r = await call('POST', `/v1/automations/${eventAlertId}/run?website=shop.test`, { test: true });
      expect(r.status).toBe(200);
      expect(r.body.data).toMatchObject({ test: true, queued: [{ channel: 'email', to: ['ops@shop.test', 'ceo@shop.test'] }, { channel: 'chat', to: [CHANNEL] }] });
      const mails = await smtp.waitFor(mailsBefore + 2, 40_000);
      expect(mails.slice(mailsBefore).map((m) => m.subject)).toEqual(['[TEST] [Sightline] Every sale', '[TEST] [Sightline] Every sale']);
      expect(mails.at(-1)?.text).toContain('after_resume'); // built from the latest matching event
    }, 60_000);

    it('fires a threshold alert once when it starts to hold and recovers once, from /metrics figures', async () => {
      const created = await call('POST', '/v1/automations?website=quiet.test', {
        name: 'No sales today',
        spec: {
          version: 1, trigger: { kind: 'threshold', cron: '* * * * * *' },
          gather: { sales: { metric: 'conversions', period: 'today' } },
          condition: { figure: 'sales', op: 'lt', value: 1 },
          deliver: [{ channel: 'email', to: ['quiet@shop.test'] }, { channel: 'chat', to: [CHANNEL] }],
        },
      });
      expect(created.status).toBe(200);
      const id = String(created.body.data['id']);
      const toQuiet = () => smtp.received.filter((m) => m.to.includes('quiet@shop.test'));
      // The first cron time is the next second: tick until it has come.
      await waitFor('the first evaluation', async () => ((await tick())['fired'] === 1 ? true : undefined));
      await waitFor('the alert email', () => (toQuiet().length === 1 ? true : undefined));
      expect(toQuiet()[0]?.text).toContain('Alert: sales (today) is 0, below 1');
      expect((await tick())['fired']).toBe(0);
      await sendConversion('quiet.test', 'quiet_sale');
      // Attribution counts it within seconds; each tick evaluates the alert again.
      await waitFor('the recovery', async () => ((await tick())['recovered'] === 1 ? true : undefined), 60_000);
      await waitFor('the recovery email', () => (toQuiet().length === 2 ? true : undefined));
      expect(toQuiet()[1]?.subject).toBe('[Sightline] No sales today: back to normal');
      expect(toQuiet()[1]?.text).toContain('Back to normal: sales (today) is 1, no longer below 1');
      expect(await tick()).toMatchObject({ fired: 0, recovered: 0 });
      expect(await tick()).toMatchObject({ fired: 0, recovered: 0 });
      expect(toQuiet()).toHaveLength(2);
      const runs = await waitFor('both runs sent', async () => {
        const rs = await runsOf(id, 'quiet.test');
        return rs.length === 2 && rs.every((r) => r['status'] === 'sent') ? rs : undefined;
      });
      expect(runs.map((r) => r['trigger'])).toEqual(['recovery', 'threshold']);
      expect(slack.posted.filter((p) => p.text.includes('sales (today)'))).toHaveLength(2);
    }, 120_000);

    it('shows a key with automations scopes alone no figures, and refuses it writes and runs that would read them (issue 24)', async () => {
      const narrow = String((await adminOf(proc)('/keys', { workspace_id: workspaceId, scopes: ['automations:read', 'automations:write'] }))['key']);
      const callNarrow = async (method: string, path: string, body?: unknown): Promise<Reply> => {
        const r = await fetch(`${base}${path}`, {
          method, headers: { authorization: `Bearer ${narrow}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: r.status, body: (await r.json()) as Reply['body'] };
      };
      const listed = (await call('GET', '/v1/automations?website=quiet.test')).body.data as unknown as Json[];
      const id = String(listed.find((a) => a['name'] === 'No sales today')?.['id']);
      const full = (await call('GET', `/v1/automations/${id}?website=quiet.test`)).body.data;
      expect((full['state'] as Json)['last_value']).toBe(1);
      expect(String((full['runs'] as Json[])[0]?.['subject'])).toContain('No sales today');
      // Read: the same alert with what it gathered withheld, and why.
      const seen = (await callNarrow('GET', `/v1/automations/${id}?website=quiet.test`)).body.data;
      expect((seen['state'] as Json)['last_value']).toBeNull();
      expect((seen['runs'] as Json[]).map((r) => r['subject'])).toEqual([null, null]);
      expect(seen['redacted']).toMatchObject({ missing_scopes: ['analytics:read'] });
      // Run: it would mail the figures; write: a spec that would read them.
      const run = await callNarrow('POST', `/v1/automations/${id}/run?website=quiet.test`, { test: true });
      expect(run.status).toBe(403);
      expect(run.body).toMatchObject({ missing_scope: 'analytics:read' });
      expect(String(run.body['type'])).toMatch(/\/insufficient-scope$/);
      const write = await callNarrow('POST', '/v1/automations?website=quiet.test', {
        name: 'To me', spec: { version: 1, trigger: { kind: 'schedule', cron: '0 8 * * *' }, gather: { r: { metric: 'revenue' } }, deliver: [{ channel: 'email', to: ['me@quiet.test'] }] },
      });
      expect(write.status).toBe(403);
      expect(write.body).toMatchObject({ missing_scope: 'analytics:read' });
      // An IP-literal recipient is refused whatever the key.
      const ip = await call('POST', '/v1/automations?website=quiet.test', { name: 'IP', spec: { version: 1, trigger: { kind: 'schedule', cron: '0 8 * * *' }, deliver: [{ channel: 'email', to: ['root@127.0.0.1'] }] } });
      expect(ip.status).toBe(400);
    }, 60_000);

    it('watches a funnel\'s conversion, read from the funnels service', async () => {
      const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
      const sent = await call('POST', '/v1/events?website=funnel.test', {
        events: [
          { event_type: 'signup', anonymous_id: 'funnel-a', occurred_at: at(3) },
          { event_type: 'purchase', anonymous_id: 'funnel-a', revenue: 5, occurred_at: at(2) },
          { event_type: 'signup', anonymous_id: 'funnel-b', occurred_at: at(3) },
        ],
      });
      expect(sent.body['accepted']).toBe(3);
      // A funnel step may name only event types the website has sent: create it once they are in.
      const funnel = await waitFor('the funnel', async () => {
        const r = await call('POST', '/v1/funnels?website=funnel.test', { name: 'Signup to purchase', steps: [{ name: 'Signup', conditions: { event_type: 'signup' } }, { name: 'Purchase', conditions: { event_type: 'purchase' } }] });
        return r.status === 200 ? r.body.data : undefined;
      });
      await waitFor('the funnel to count both people', async () => {
        const r = await call('GET', `/v1/funnels/${String(funnel['id'])}/steps?website=funnel.test&period=today`);
        return r.status === 200 && (r.body.data as unknown as Json[]).map((step) => step['reached']).join() === '2,1' ? true : undefined;
      });
      const spec = (funnelId: string) => ({
        version: 1, trigger: { kind: 'threshold', cron: '* * * * * *' },
        gather: { conversion: { funnel: funnelId, period: 'today' } },
        condition: { figure: 'conversion', op: 'lt', value: 0.6 },
        deliver: [{ channel: 'email', to: ['funnel@shop.test'] }],
      });
      const unknown = await call('POST', '/v1/automations?website=funnel.test', { name: 'No such funnel', spec: spec('00000000-0000-4000-8000-000000000000') });
      expect(unknown.status).toBe(400);
      expect(String(unknown.body['type'])).toMatch(/\/invalid-request$/);
      const created = await call('POST', '/v1/automations?website=funnel.test', { name: 'Funnel conversion', spec: spec(String(funnel['id'])) });
      expect(created.status).toBe(200);
      await waitFor('the funnel alert', async () => ((await tick())['fired'] === 1 ? true : undefined), 60_000);
      const mail = await waitFor('the funnel email', () => smtp.received.find((m) => m.to.includes('funnel@shop.test')));
      expect(mail.text).toContain('Alert: conversion (today, funnel conversion) is 50.0%, below 60.0%');
      expect(mail.text).toContain(`https://sightline.example/v1/funnels/${String(funnel['id'])}/steps?website=funnel.test&period=today&compare_days=previous`);

      // Deleting the funnel pauses the alert with a reason (funnel.deleted on the bus), and its test
      // run answers 409 with what to do rather than a 503 that could never succeed.
      const alertId = String(created.body.data['id']);
      expect((await call('DELETE', `/v1/funnels/${String(funnel['id'])}?website=funnel.test`)).status).toBe(200);
      const paused = await waitFor('the alert paused', async () => {
        const r = await call('GET', `/v1/automations/${alertId}?website=funnel.test`);
        return r.body.data['status'] === 'paused' ? r.body.data : undefined;
      });
      expect(String(paused['status_reason'])).toMatch(new RegExp(`^funnel ${String(funnel['id'])} was deleted on \\d{4}-\\d{2}-\\d{2}; choose another funnel in spec\\.gather and set status to active$`));
      const run = await call('POST', `/v1/automations/${alertId}/run?website=funnel.test`, { test: true });
      expect(run.status).toBe(409);
      expect(String(run.body['remediation'])).toContain('Choose another funnel');
      const resume = await call('PATCH', `/v1/automations/${alertId}?website=funnel.test`, { status: 'active' });
      expect(resume.status).toBe(400);
    }, 120_000);

    it('refuses a template whose sections nest past the limit at once (400 naming it)', async () => {
      const probe = `${'{{#event.details}}'.repeat(11)}x${'{{/event.details}}'.repeat(11)}`;
      const started = Date.now();
      const r = await call('POST', '/v1/automations?website=shop.test', {
        name: 'Deep', spec: { version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, compose: { template: probe }, deliver: [{ channel: 'email', to: ['ops@shop.test'] }] },
      });
      expect(r.status).toBe(400);
      expect(String(r.body['type'])).toMatch(/\/invalid-request$/);
      expect(String(r.body['detail'])).toContain('nests sections 11 deep; at most 4 are allowed');
      expect(Date.now() - started).toBeLessThan(5_000);
    }, 30_000);

    it('shows every write and run in the change feed, with the key as source', async () => {
      await call('DELETE', `/v1/automations/${eventAlertId}?website=shop.test`);
      const types = 'automation.created,automation.updated,automation.deleted,automation.ran';
      let last: Json[] = [];
      const feed = await waitFor(`the automation changes (last seen: ${JSON.stringify(last.map((c) => c['type']))})`, async () => {
        const r = await call('GET', `/v1/changes?website=shop.test&types=${types}&since=${encodeURIComponent(since)}&limit=100`);
        const changes = r.body.changes ?? [];
        last = changes;
        if (process.env['E2E_LOG_LEVEL']) process.stderr.write(`feed: ${JSON.stringify(changes.map((c) => c['type']))}\n`);
        return changes.some((c) => c['type'] === 'automation.deleted') && changes.filter((c) => c['type'] === 'automation.ran').length >= 3 ? changes : undefined;
      });
      const byType = (t: string) => feed.filter((c) => c['type'] === t);
      expect(byType('automation.created')).toHaveLength(1);
      expect(byType('automation.updated')).toHaveLength(2);
      expect(byType('automation.deleted')).toHaveLength(1);
      expect(byType('automation.ran').length).toBeGreaterThanOrEqual(3);
      for (const c of [...byType('automation.created'), ...byType('automation.updated'), ...byType('automation.deleted')]) expect(c['source']).toBe(`api:${keyId}`);
      expect(byType('automation.ran').every((c) => c['source'] === 'automations')).toBe(true);
    }, 60_000);
  });
}
