// The automations module as the runner starts it on embedded drivers, against real local servers
// (SMTP, Slack's Web API, an OpenAI-compatible model): event alerts, digests, schedules,
// thresholds, pause and resume, test runs, the delivery queue's retries and dead state, crash
// recovery of a delivery cut short, and the change messages.
import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiDocument } from '@sightline/proto-schemas';
import { connectSlack, conversion, startHarness, WEBSITE, WORKSPACE, type Harness, type Json } from '../test/harness';

const CHAT = 'C0ALERTS01';
const CHAT2 = 'C0ALERTS02';

const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
ajv.addSchema({ $id: 'doc', components: JSON.parse(JSON.stringify(openApiDocument.components).replace(/"#\/components/g, '"doc#/components')) });
const schema = (name: string) => ajv.getSchema(`doc#/components/schemas/${name}`);
const conforms = (name: string, value: unknown): void => {
  const validate = schema(name);
  if (!validate) throw new Error(`no schema ${name}`);
  expect({ name, valid: validate(value), errors: validate.errors ?? null }).toEqual({ name, valid: true, errors: null });
};

const eventSpec = (over: Json = {}): Json => ({
  version: 1,
  trigger: { kind: 'event', events: ['conversion.created'] },
  deliver: [{ channel: 'email', to: ['ops@example.com', 'sales@example.com'] }, { channel: 'chat', to: [CHAT] }],
  ...over,
});

describe('automations module (embedded)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ llm: true });
    await connectSlack(h);
  }, 120_000);
  afterAll(async () => h?.stop(), 60_000);
  afterEach(async () => {
    // Every test starts with no alert, whatever the last one left.
    for (const a of (await h.call('listAutomations')).body.data as unknown as Json[]) await h.call('deleteAutomation', { params: { id: String(a['id']) } });
  });
  beforeEach(() => {
    h.smtp.received.length = 0;
    h.slack.posted.length = 0;
    h.metrics.fn = () => ({});
  });

  const runsOf = async (id: string): Promise<Json[]> => (await h.call('getAutomation', { params: { id } })).body.data['runs'] as Json[];
  const settled = (id: string, n: number) => h.until(`${n} settled runs of ${id}`, async () => {
    const runs = await runsOf(id);
    return runs.length >= n && runs.every((r) => r['status'] !== 'queued') ? runs : undefined;
  });

  it('lists alerts with the event catalog and starter templates (valid specs)', async () => {
    const r = await h.call('listAutomations');
    expect(r.status).toBe(200);
    conforms('AutomationListResponse', r.body);
    const meta = r.body['meta'] as Json & { event_catalog: Json[]; templates: Json[] };
    expect(meta.event_catalog.map((e) => e['type']).sort()).toEqual(['conversion.created', 'conversion.value_changed', 'deal.created', 'deal.stage_changed', 'milestone.reached', 'stage.changed']);
    expect(meta.templates.map((t) => t['id'])).toEqual(expect.arrayContaining(['conversion-to-chat', 'daily-digest', 'conversions-down', 'revenue-down', 'deal-won']));
  });

  it('delivers an event alert to every email address and chat channel, escaped for each, with the link back', async () => {
    const alert = await h.create({ name: 'New <b>sale</b>', spec: eventSpec() });
    conforms('Automation', alert);
    expect(alert).toMatchObject({ status: 'active', timezone: 'Europe/Berlin', currency: 'EUR' });
    const c = conversion({ event_name: '<script>alert(1)</script> & co', revenue: 1234.5 });
    await h.publish('conversion.created', c);
    const mails = await h.smtp.waitFor(2);
    const posts = await h.slack.waitFor(1);
    expect(mails.map((m) => m.to[0]).sort()).toEqual(['ops@example.com', 'sales@example.com']);
    const mail = mails[0] as (typeof mails)[number];
    expect(mail.subject).toBe('[Sightline] New <b>sale</b>');
    expect(mail.text).toContain('€1,234.50');
    expect(mail.text).toContain('<script>alert(1)</script> & co');
    expect(mail.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; co');
    expect(mail.html).not.toContain('<script>');
    const link = `https://sightline.example/v1/contacts/${String(c['conversion_id'])}?website=shop.test`;
    expect(mail.text).toContain(link);
    expect(mail.html).toContain(`<a href="${link}">`);
    const post = posts[0] as (typeof posts)[number];
    expect(post.channel).toBe(CHAT);
    expect(post.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; co');
    expect(post.text).toContain(`<${link}|Data>`);
    expect(post.metadata?.event_type).toBe('sightline_alert');
    const runs = await settled(String(alert['id']), 1);
    expect(runs[0]).toMatchObject({ trigger: 'event', status: 'sent', test: false, composed_by: 'template' });
    expect((runs[0]?.['deliveries'] as Json[]).map((d) => d['status'])).toEqual(['sent', 'sent', 'sent']);
    const detail = (await h.call('getAutomation', { params: { id: String(alert['id']) } })).body.data;
    conforms('AutomationDetail', detail);
    await h.call('deleteAutomation', { params: { id: String(alert['id']) } });
  });

  it('makes one run of a message delivered twice (redelivery), and none for another website', async () => {
    const alert = await h.create({ name: 'Once', spec: eventSpec({ deliver: [{ channel: 'chat', to: [CHAT] }] }) });
    const id = randomUUID();
    const c = conversion();
    await h.publish('conversion.created', c, id);
    await h.publish('conversion.created', c, id);
    await h.proc.bus.publish({ type: 'conversion.created', payload: conversion({ website_id: randomUUID() }), source: 'test', workspace_id: WORKSPACE.id });
    await settled(String(alert['id']), 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(await runsOf(String(alert['id']))).toHaveLength(1);
    expect(h.slack.posted).toHaveLength(1);
    await h.call('deleteAutomation', { params: { id: String(alert['id']) } });
  });

  it('filters events exactly at the edge: revenue gt 100 skips 100 and takes 100.01', async () => {
    const alert = await h.create({ name: 'Big orders', spec: eventSpec({ deliver: [{ channel: 'chat', to: [CHAT] }], filters: [{ field: 'revenue', op: 'gt', values: ['100'] }, { field: 'event_type', op: 'in', values: ['purchase', 'renewal'] }] }) });
    await h.publish('conversion.created', conversion({ revenue: 100, event_name: 'at-edge' }));
    await h.publish('conversion.created', conversion({ revenue: 100.01, event_name: 'past-edge' }));
    await h.publish('conversion.created', conversion({ revenue: 500, event_type: 'signup', event_name: 'other-type' }));
    await settled(String(alert['id']), 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(h.slack.posted.map((p) => p.text.includes('past-edge'))).toEqual([true]);
    await h.call('deleteAutomation', { params: { id: String(alert['id']) } });
  });

  const advance = (ms: number): void => {
    h.clock.now = new Date(h.clock.now.getTime() + ms);
  };
  const tick = async (): Promise<Json> => {
    const r = await h.admin('POST', '/automations/tick');
    expect(r.status).toBe(200);
    return r.body;
  };
  const work = async (): Promise<void> => {
    expect((await h.admin('POST', '/automations/deliveries/work')).status).toBe(200);
  };
  const deliveriesOf = async (id: string): Promise<Json[]> => (await runsOf(id)).flatMap((r) => r['deliveries'] as Json[]);

  it('fires a threshold alert once when it starts to hold and once more when it stops, never per evaluation', async () => {
    let conversions = 3;
    h.metrics.fn = () => ({ conversions });
    const alert = await h.create({
      name: 'Few conversions',
      spec: {
        version: 1, trigger: { kind: 'threshold', cron: '* * * * *' },
        gather: { conversions: { metric: 'conversions', period: 'today' } },
        condition: { figure: 'conversions', op: 'lt', value: 5 },
        deliver: [{ channel: 'email', to: ['ops@example.com'] }, { channel: 'chat', to: [CHAT] }],
      },
    });
    const id = String(alert['id']);
    expect((alert['state'] as Json)['next_run_at']).toBe(new Date(Math.ceil((h.clock.now.getTime() + 1) / 60_000) * 60_000).toISOString());
    advance(60_000);
    expect(await tick()).toMatchObject({ due: 1, evaluated: 1, fired: 1, recovered: 0 });
    await h.smtp.waitFor(1);
    expect(h.smtp.received[0]?.subject).toBe('[Sightline] Few conversions');
    expect(h.smtp.received[0]?.text).toContain('Alert: conversions (today) is 3, below 5');
    advance(60_000);
    expect(await tick()).toMatchObject({ due: 1, fired: 0, recovered: 0 });
    conversions = 5; // exactly at the edge: 5 is not below 5
    advance(60_000);
    expect(await tick()).toMatchObject({ due: 1, fired: 0, recovered: 1 });
    await h.smtp.waitFor(2);
    expect(h.smtp.received[1]?.subject).toBe('[Sightline] Few conversions: back to normal');
    expect(h.smtp.received[1]?.text).toContain('Back to normal: conversions (today) is 5, no longer below 5');
    advance(60_000);
    expect(await tick()).toMatchObject({ due: 1, fired: 0, recovered: 0 });
    // Not yet due: a tick within the same minute evaluates nothing.
    advance(1_000);
    expect(await tick()).toMatchObject({ due: 0 });
    await settled(id, 2);
    expect(h.smtp.received).toHaveLength(2);
    expect(h.slack.posted).toHaveLength(2);
    expect((await runsOf(id)).map((r) => r['trigger'])).toEqual(['recovery', 'threshold']);
    await h.call('deleteAutomation', { params: { id } });
  });

  it('compares with the previous period in per cent (revenue down 20%: -20% holds, -19.9% does not)', async () => {
    let current = 80;
    h.metrics.fn = (q) => ({ revenue: Date.parse(q.to) <= Date.parse(h.clock.now.toISOString()) - 6 * 86_400_000 ? 100 : current });
    const alert = await h.create({ name: 'Revenue down', template_id: 'revenue-down', deliver: [{ channel: 'chat', to: [CHAT] }] });
    const id = String(alert['id']);
    expect(alert['template_id']).toBe('revenue-down');
    current = 80.1; // -19.9%
    advance(3_600_000);
    expect(await tick()).toMatchObject({ due: 1, fired: 0 });
    current = 80; // -20%: at the edge, lte holds
    advance(3_600_000);
    expect(await tick()).toMatchObject({ due: 1, fired: 1 });
    const posts = await h.slack.waitFor(1);
    expect(posts[0]?.text).toContain('changed -20.0% against the previous period (€100.00 → €80.00), at or below -20.0%');
    await h.call('deleteAutomation', { params: { id } });
  });

  it('runs a schedule once per cron time, with the figures gathered then, in the website timezone', async () => {
    h.metrics.fn = (q) => ({ visitors: 1200, conversions: q.from < '2026-03-09' ? 40 : 50, revenue: 4321.5 });
    h.clock.now = new Date('2026-03-12T08:30:00.000Z');
    const alert = await h.create({ name: 'Morning digest', template_id: 'daily-digest', deliver: [{ channel: 'email', to: ['boss@example.com'] }] });
    const id = String(alert['id']);
    // 08:00 in Berlin (UTC+1 in March) is 07:00 UTC: the next one is tomorrow.
    expect((alert['state'] as Json)['next_run_at']).toBe('2026-03-13T07:00:00.000Z');
    h.clock.now = new Date('2026-03-13T06:59:59.000Z');
    expect(await tick()).toMatchObject({ due: 0 });
    h.clock.now = new Date('2026-03-13T07:00:00.000Z');
    expect(await tick()).toMatchObject({ due: 1, scheduled: 1 });
    h.clock.now = new Date('2026-03-13T07:00:01.000Z');
    expect(await tick()).toMatchObject({ due: 0 });
    const mail = (await h.smtp.waitFor(1))[0];
    expect(mail?.text).toContain('visitors (yesterday): 1,200');
    expect(mail?.text).toContain('revenue (yesterday): €4,321.50');
    expect(mail?.text.indexOf('visitors (yesterday)')).toBeLessThan(mail?.text.indexOf('revenue (yesterday)') ?? 0);
    expect(mail?.text).toContain('https://sightline.example/v1/metrics?website=shop.test&metrics=visitors%2Cconversions%2Crevenue&period=yesterday');
    await h.call('deleteAutomation', { params: { id } });
  });

  it('collects events of an hourly alert into one digest after the hour ends', async () => {
    h.clock.now = new Date('2026-03-14T10:05:00.000Z');
    const alert = await h.create({ name: 'Hourly', spec: eventSpec({ deliver: [{ channel: 'chat', to: [CHAT] }], pacing: { mode: 'hourly' } }) });
    const id = String(alert['id']);
    await h.publish('conversion.created', conversion({ event_name: 'first' }));
    await h.publish('conversion.created', conversion({ event_name: 'second' }));
    await h.until('two waiting events', async () => {
      const db = await h.proc.stores.sql('automations');
      const n = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM digest_events WHERE automation_id = $1', [id])).rows[0]?.n ?? 0;
      return n === 2 ? n : undefined;
    });
    h.clock.now = new Date('2026-03-14T10:59:59.000Z');
    expect(await tick()).toMatchObject({ digests: 0 });
    h.clock.now = new Date('2026-03-14T11:00:00.000Z');
    expect(await tick()).toMatchObject({ digests: 1 });
    const post = (await h.slack.waitFor(1))[0];
    expect(post?.text).toContain('2 events for Hourly');
    expect(post?.text).toContain('"first"');
    expect(post?.text).toContain('"second"');
    h.clock.now = new Date('2026-03-14T12:00:01.000Z');
    expect(await tick()).toMatchObject({ digests: 0 });
    expect((await runsOf(id)).map((r) => r['trigger'])).toEqual(['digest']);
    await h.call('deleteAutomation', { params: { id } });
  });

  it('pauses (events and schedules ignored) and resumes from the next cron time, announcing each change', async () => {
    h.clock.now = new Date('2026-03-15T10:00:30.000Z');
    const alert = await h.create({ name: 'Pausable', spec: eventSpec({ deliver: [{ channel: 'chat', to: [CHAT] }] }) });
    const id = String(alert['id']);
    const paused = await h.call('patchAutomation', { params: { id }, body: { status: 'paused' } });
    expect(paused.body.data['status']).toBe('paused');
    await h.publish('conversion.created', conversion({ event_name: 'while-paused' }));
    await new Promise((r) => setTimeout(r, 300));
    const resumed = await h.call('patchAutomation', { params: { id }, body: { status: 'active' } });
    expect(resumed.body.data['status']).toBe('active');
    await h.publish('conversion.created', conversion({ event_name: 'after-resume' }));
    await settled(id, 1);
    expect(h.slack.posted.map((p) => p.text.includes('after-resume'))).toEqual([true]);
    // A patch that changes nothing writes (and announces) nothing.
    await h.call('patchAutomation', { params: { id }, body: { status: 'active' } });
    await h.until('the change messages', () => {
      const mine = h.changes.filter((c) => (c.payload as Json)['automation_id'] === id);
      return mine.length >= 4 ? mine : undefined;
    });
    const mine = h.changes.filter((c) => (c.payload as Json)['automation_id'] === id);
    expect(mine.map((c) => [c.type, (c.payload as Json)['status'], (c.payload as Json)['fields']])).toEqual([
      ['automation.created', 'active', ['name', 'template_id', 'status', 'spec']],
      ['automation.updated', 'paused', ['status']],
      ['automation.updated', 'active', ['status']],
      ['automation.ran', 'sent', undefined],
    ]);
    expect(mine[1]?.source).toBe('api:key1');
    expect(mine[3]?.payload).toMatchObject({ trigger: 'event', status: 'sent', deliveries: 1, test: false });
    await h.call('deleteAutomation', { params: { id } });
    await h.until('the deletion message', () => h.changes.find((c) => c.type === 'automation.deleted' && (c.payload as Json)['automation_id'] === id));
  });

  it('runs an alert on demand as a test, from the latest data, whatever its status', async () => {
    const alert = await h.create({ name: 'Manual', spec: eventSpec() });
    const id = String(alert['id']);
    await h.call('patchAutomation', { params: { id }, body: { status: 'paused' } });
    const r = await h.call('runAutomation', { params: { id }, body: { test: true } });
    expect(r.status).toBe(200);
    conforms('AutomationRunResult', r.body);
    expect(r.body.data).toMatchObject({ test: true, queued: [{ channel: 'email', to: ['ops@example.com', 'sales@example.com'] }, { channel: 'chat', to: [CHAT] }] });
    const mails = await h.smtp.waitFor(2);
    expect(mails[0]?.subject).toBe('[TEST] [Sightline] Manual');
    expect(mails[0]?.text).toMatch(/^This is a test message\./);
    expect(mails[0]?.text).toContain('Sample order'); // no event matched yet: the catalog's sample
    const runs = await settled(id, 1);
    expect(runs[0]).toMatchObject({ trigger: 'manual', test: true, status: 'sent' });
    await h.until('automation.ran (test)', () => h.changes.find((c) => c.type === 'automation.ran' && (c.payload as Json)['run_id'] === r.body.data['run_id'] && (c.payload as Json)['test'] === true));
    await h.call('deleteAutomation', { params: { id } });
  });

  it('honours Retry-After on a Slack 429: not before, exactly then, and other deliveries of the workspace wait too', async () => {
    h.clock.now = new Date('2026-03-16T10:00:00.000Z');
    const alert = await h.create({ name: 'Rate limited', spec: eventSpec({ deliver: [{ channel: 'chat', to: [CHAT, CHAT2] }] }) });
    const id = String(alert['id']);
    h.slack.rateLimitNext(1, 7);
    await h.publish('conversion.created', conversion());
    const waiting = await h.until('a rate-limited delivery', async () => {
      const ds = await deliveriesOf(id);
      return ds.some((d) => String(d['error']).includes('ratelimited')) && ds.every((d) => d['status'] !== 'sending') ? ds : undefined;
    });
    const limited = waiting.find((d) => String(d['error']).includes('ratelimited')) as Json;
    expect(limited).toMatchObject({ status: 'queued', attempts: 1, next_attempt_at: '2026-03-16T10:00:07.000Z' });
    const sentBefore = h.slack.posted.length;
    advance(6_999);
    await work();
    expect(h.slack.posted).toHaveLength(sentBefore);
    advance(1);
    await work();
    await settled(id, 1);
    expect((await deliveriesOf(id)).map((d) => d['status'])).toEqual(['sent', 'sent']);
    expect(new Set(h.slack.posted.map((p) => p.channel))).toEqual(new Set([CHAT, CHAT2]));
    expect(h.slack.posted).toHaveLength(2);
  });

  it('retries a temporary SMTP refusal with backoff and gives up after max attempts; a permanent one fails at once', async () => {
    h.clock.now = new Date('2026-03-17T10:00:00.000Z');
    const alert = await h.create({ name: 'Mail retries', spec: eventSpec({ deliver: [{ channel: 'email', to: ['ops@example.com'] }] }) });
    const id = String(alert['id']);
    h.smtp.refuseNext(3, 451);
    await h.publish('conversion.created', conversion());
    const attempt = async (n: number, status: string) => h.until(`attempt ${n}`, async () => {
      const d = (await deliveriesOf(id))[0];
      return d && d['attempts'] === n && d['status'] === status ? d : undefined;
    });
    expect(await attempt(1, 'queued')).toMatchObject({ next_attempt_at: '2026-03-17T10:01:00.000Z' });
    advance(59_999);
    await work();
    expect((await deliveriesOf(id))[0]).toMatchObject({ attempts: 1, status: 'queued' });
    advance(1);
    await work();
    expect(await attempt(2, 'queued')).toMatchObject({ next_attempt_at: '2026-03-17T10:03:00.000Z' });
    advance(120_000);
    await work();
    const dead = await attempt(3, 'failed');
    expect(String(dead['error'])).toMatch(/^gave up after 3 attempts: SMTP server deferred the message \(451\)$/);
    expect((await settled(id, 1))[0]?.['status']).toBe('failed');
    expect(h.smtp.received).toHaveLength(0);

    // The operator retries the dead delivery: it goes out.
    const retried = await h.admin('POST', `/automations/deliveries/${String(dead['id'])}/retry`);
    expect(retried.status).toBe(200);
    await h.smtp.waitFor(1);
    expect((await settled(id, 1))[0]?.['status']).toBe('sent');
    expect((await h.admin('POST', `/automations/deliveries/${String(dead['id'])}/retry`)).status).toBe(409);

    h.smtp.refuseNext(1, 550);
    await h.publish('conversion.created', conversion());
    const runs = await settled(id, 2);
    expect((runs[0]?.['deliveries'] as Json[])[0]).toMatchObject({ status: 'failed', attempts: 1 });
    expect(String((runs[0]?.['deliveries'] as Json[])[0]?.['error'])).toMatch(/^permanent: SMTP server refused the message \(550\)$/);
    const failed = await h.admin('GET', `/automations/deliveries?status=failed&automation_id=${id}`);
    expect((failed.body['data'] as Json[]).map((d) => d['status'])).toEqual(['failed']);
  });

  it('fails a post to a channel the bot is not in, and sends it once an operator retries after inviting it', async () => {
    h.slack.notMember.add(CHAT2);
    const alert = await h.create({ name: 'Not in channel', spec: eventSpec({ deliver: [{ channel: 'chat', to: [CHAT2] }] }) });
    const id = String(alert['id']);
    await h.publish('conversion.created', conversion());
    const runs = await settled(id, 1);
    const d = (runs[0]?.['deliveries'] as Json[])[0] as Json;
    expect(d).toMatchObject({ status: 'failed', error: 'permanent: Slack answered not_in_channel' });
    h.slack.notMember.delete(CHAT2);
    expect((await h.admin('POST', `/automations/deliveries/${String(d['id'])}/retry`)).status).toBe(200);
    await h.slack.waitFor(1);
    expect((await settled(id, 1))[0]?.['status']).toBe('sent');
  });

  it('never posts twice when an attempt was cut short after Slack took the message (timeout, or a crash mid-delivery)', async () => {
    h.clock.now = new Date('2026-03-18T10:00:00.000Z');
    const alert = await h.create({ name: 'Cut short', spec: eventSpec({ deliver: [{ channel: 'chat', to: [CHAT] }] }) });
    const id = String(alert['id']);
    h.slack.hold();
    await h.publish('conversion.created', conversion());
    await h.slack.holding(1);
    // The call times out (3 s) although Slack posted it.
    const timedOut = await h.until('the timed-out attempt', async () => {
      const d = (await deliveriesOf(id))[0];
      return d && d['status'] === 'queued' && d['attempts'] === 1 ? d : undefined;
    }, 15_000);
    h.slack.release();
    // As a crash would leave it: sending, lease run out.
    const db = await h.proc.stores.sql('automations');
    await db.query("UPDATE deliveries SET status = 'sending', lease_until = $2, attempt_started_at = $3 WHERE id = $1", [timedOut['id'], new Date('2026-03-18T09:59:00Z'), new Date('2026-03-18T10:00:00Z')]);
    advance(120_000);
    await work();
    const runs = await settled(id, 1);
    expect(runs[0]?.['status']).toBe('sent');
    expect(h.slack.posted).toHaveLength(1);
    const row = (await db.query<{ last_error: string; attempts: number }>('SELECT last_error, attempts FROM deliveries WHERE id = $1', [timedOut['id']])).rows[0];
    expect(row).toMatchObject({ attempts: 1, last_error: 'an earlier attempt had got through (found in the channel)' });
  });

  it('resends an email whose attempt was cut short before the server accepted it, once, with the same Message-ID', async () => {
    h.clock.now = new Date('2026-03-19T10:00:00.000Z');
    const alert = await h.create({ name: 'Mail cut short', spec: eventSpec({ deliver: [{ channel: 'email', to: ['ops@example.com'] }] }) });
    const id = String(alert['id']);
    h.smtp.hold();
    await h.publish('conversion.created', conversion());
    await h.smtp.holding(1);
    await h.until('the timed-out attempt', async () => {
      const d = (await deliveriesOf(id))[0];
      return d && d['status'] === 'queued' && d['attempts'] === 1 ? d : undefined;
    }, 15_000);
    // The client gave up and closed its socket; the server notices on its own turn of the event
    // loop, which can come after the delivery row changed. Only then is the held message dropped.
    await h.until('the server to see the cut-short client go', () => (h.smtp.dropped >= 1 ? true : undefined), 15_000);
    h.smtp.release();
    expect(h.smtp.received).toHaveLength(0);
    expect(h.smtp.dropped).toBeGreaterThanOrEqual(1);
    advance(60_000);
    await work();
    const mails = await h.smtp.waitFor(1);
    await settled(id, 1);
    expect(mails).toHaveLength(1);
    const deliveryId = String((await deliveriesOf(id))[0]?.['id']);
    expect(mails[0]?.messageId).toBe(`<${deliveryId}@automations.sightline>`);
  });

  it('writes the message with the model when it states every figure verbatim, and falls back to the template (saying why) when not', async () => {
    h.metrics.fn = () => ({ conversions: 12, revenue: 1234.5 });
    const spec = {
      version: 1, trigger: { kind: 'schedule', cron: '0 9 * * *' },
      gather: { conversions: { metric: 'conversions', period: 'yesterday' }, revenue: { metric: 'revenue', period: 'yesterday' } },
      compose: { ai: true }, deliver: [{ channel: 'chat', to: [CHAT] }],
    };
    const alert = await h.create({ name: 'AI digest', spec });
    const id = String(alert['id']);
    h.llm.reply = () => 'Yesterday brought 12 conversions worth €1,234.50.';
    const good = await h.call('runAutomation', { params: { id }, body: {} });
    expect(good.body.data).toMatchObject({ composed_by: 'ai', compose_note: null });
    expect(h.llm.prompts.at(-1)).toContain('conversions (yesterday)');
    expect(h.llm.prompts.at(-1)).toContain('€1,234.50');
    h.llm.reply = () => 'Yesterday brought 12 conversions worth €1,234.50, about 15% more than usual.';
    const invented = await h.call('runAutomation', { params: { id }, body: {} });
    expect(invented.body.data).toMatchObject({ composed_by: 'template', compose_note: "template used: the model's message states 15, which is not among the gathered figures" });
    h.llm.reply = () => 'Yesterday brought 12 conversions worth about €1,235.';
    const rounded = await h.call('runAutomation', { params: { id }, body: {} });
    expect(rounded.body.data['compose_note']).toBe("template used: the model's message did not state the figure €1,234.50 verbatim");
    h.llm.reply = () => 500;
    const down = await h.call('runAutomation', { params: { id }, body: {} });
    // The model's own error text stays in the log; the run says only what happened.
    expect(down.body.data['compose_note']).toBe('model unavailable (HTTP 500); the standard message was sent');
    const posts = await h.slack.waitFor(4);
    expect(posts[0]?.text).toContain('Yesterday brought 12 conversions worth €1,234.50.');
    expect(posts[1]?.text).toContain('conversions (yesterday): 12');
    expect(posts[1]?.text).not.toContain('15%');
    const runs = await settled(id, 4);
    expect(runs.map((r) => r['composed_by'])).toEqual(['template', 'template', 'template', 'ai']);
  });

  it('refuses a spec that cannot work with the kind of its fault', async () => {
    const problemFor = (spec: Json, extra: Json = {}) => h.problem('createAutomation', { body: { name: 'Bad', spec, ...extra } });
    const threshold = (over: Json) => ({
      version: 1, trigger: { kind: 'threshold', cron: '0 * * * *' }, gather: { c: { metric: 'conversions' } },
      condition: { figure: 'c', op: 'lt', value: 1 }, deliver: [{ channel: 'email', to: ['a@example.com'] }], ...over,
    });
    expect(await problemFor(threshold({ gather: { c: { metric: 'conversion' } } }))).toMatchObject({ kind: 'unknown-metric', allowed: expect.arrayContaining(['conversions', 'revenue']) });
    expect(await problemFor(threshold({ gather: { c: { metric: 'cac' } } }))).toMatchObject({ kind: 'unsupported-combination' });
    expect(await problemFor(threshold({ trigger: { kind: 'threshold', cron: '0 0 30 2 *' } }))).toMatchObject({ kind: 'invalid-request', detail: expect.stringContaining('never fires') });
    expect(await problemFor(threshold({ gather: { c: { metric: 'conversions', period: 'the day after never' } } }))).toMatchObject({ kind: 'invalid-window' });
    expect(await problemFor(threshold({ gather: { c: { metric: 'conversions', filters: [{ field: 'colour', op: 'eq', values: ['red'] }] } } }))).toMatchObject({ kind: 'unknown-dimension' });
    expect(await problemFor(threshold({ gather: { c: { metric: 'conversions', filters: [{ field: 'channel', op: 'gt', values: ['x'] }] } } }))).toMatchObject({ kind: 'unknown-filter-operator', allowed: expect.arrayContaining(['eq']) });
    expect(await problemFor(threshold({ pacing: { mode: 'daily' } }))).toMatchObject({ kind: 'unsupported-combination' });
    expect(await problemFor(threshold({ condition: undefined }))).toMatchObject({ kind: 'invalid-request' });
    expect(await problemFor(threshold({ condition: { figure: 'nope', op: 'lt', value: 1 } }))).toMatchObject({ kind: 'invalid-request', allowed: ['c'] });
    expect(await problemFor(eventSpec({ trigger: { kind: 'event', events: ['conversion.made'] } }))).toMatchObject({ kind: 'invalid-request', allowed: expect.arrayContaining(['conversion.created']) });
    expect(await problemFor(eventSpec({ filters: [{ field: 'colour', op: 'eq', values: ['x'] }] }))).toMatchObject({ kind: 'invalid-request', allowed: expect.arrayContaining(['revenue', 'properties.<key>']) });
    expect(await problemFor(eventSpec({ filters: [{ field: 'event_name', op: 'gt', values: ['x'] }] }))).toMatchObject({ kind: 'unknown-filter-operator' });
    expect(await problemFor(eventSpec({ deliver: [{ channel: 'chat', to: ['C0NOTTHERE'] }] }))).toMatchObject({ kind: 'invalid-request', detail: expect.stringContaining('has no channel C0NOTTHERE') });
    expect(await problemFor(eventSpec({ deliver: [{ channel: 'chat', to: ['#general'] }] }))).toMatchObject({ kind: 'invalid-request', detail: expect.stringContaining('not a Slack channel id') });
    expect(await problemFor(eventSpec({ deliver: [{ channel: 'pager', to: ['x'] }] }))).toMatchObject({ kind: 'invalid-request', allowed: ['email', 'chat'] });
    expect(await problemFor(eventSpec({ compose: { template: '{{#open}} never closed' } }))).toMatchObject({ kind: 'invalid-request' });
    expect(await problemFor(eventSpec(), { template_id: 'nope' })).toMatchObject({ kind: 'invalid-request', allowed: expect.arrayContaining(['daily-digest']) });
    expect(await h.problem('createAutomation', { body: { name: 'T', template_id: 'daily-digest' } })).toMatchObject({ kind: 'invalid-request', detail: expect.stringContaining('needs deliver') });
    // Recipients: 50 per channel is the limit, 51 is refused.
    const emails = (n: number) => Array.from({ length: n }, (_, i) => `r${i}@example.com`);
    const ok = await h.create({ name: 'Fifty', spec: eventSpec({ deliver: [{ channel: 'email', to: emails(50) }] }) });
    expect((ok['spec'] as Json)['deliver']).toEqual([{ channel: 'email', to: emails(50) }]);
    expect(await problemFor(eventSpec({ deliver: [{ channel: 'email', to: emails(51) }] }))).toMatchObject({ kind: 'invalid-request' });
    // Gather: 10 numbers at most.
    const gather = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`g${i}`, { metric: 'visitors' }]));
    await h.create({ name: 'Ten', spec: { version: 1, trigger: { kind: 'schedule', cron: '0 8 * * *' }, gather: gather(10), deliver: [{ channel: 'email', to: ['a@example.com'] }] } });
    expect(await problemFor({ version: 1, trigger: { kind: 'schedule', cron: '0 8 * * *' }, gather: gather(11), deliver: [{ channel: 'email', to: ['a@example.com'] }] })).toMatchObject({ kind: 'invalid-request' });
    // Nothing was stored by a refused request.
    expect(((await h.call('listAutomations')).body.data as unknown as Json[]).map((a) => a['name']).sort()).toEqual(['Fifty', 'Ten']);
  });

  it('answers 404 for an alert of another website or an id that cannot exist', async () => {
    const alert = await h.create({ name: 'Mine', spec: eventSpec() });
    const other = { id: randomUUID(), domain: 'other.test', timezone: 'UTC', currency: 'USD' };
    expect(await h.problem('getAutomation', { params: { id: String(alert['id']) }, website: other })).toMatchObject({ kind: 'not-found' });
    expect(await h.problem('deleteAutomation', { params: { id: 'not-a-uuid' } })).toMatchObject({ kind: 'not-found' });
    expect(WEBSITE.domain).toBe('shop.test');
  });
});
