// Alert behaviour on the embedded module beside real SMTP, Slack and model servers (issue 24):
// a stored template that repeats past its budget fails its run readably; editing a firing
// threshold keeps its state; max_age skips backfills and event messages say where and when; a
// deleted funnel pauses the alerts that gather from it; previous periods follow the calendar
// across a daylight-saving change.
import { randomUUID } from 'node:crypto';
import { SCOPE_NAMES, type ApiRequest } from '@sightline/proto-schemas';
import { DateTime } from 'luxon';
import { connectSlack, conversion, startHarness, WEBSITE, WORKSPACE, type Harness, type Json } from '../test/harness';
import { insertAlert } from './alerts/alerts.repo';
import type { AutomationSpec } from './spec/spec';

const CHAT = 'C0ALERTS01';
const key = { id: 'key1', scopes: [...SCOPE_NAMES] };

describe('alert behaviour (embedded)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    await connectSlack(h);
  }, 120_000);
  afterAll(async () => h?.stop(), 60_000);
  afterEach(async () => {
    for (const a of (await call('listAutomations')).body.data as unknown as Json[]) await call('deleteAutomation', { params: { id: String(a['id']) } });
  });
  beforeEach(() => {
    h.smtp.received.length = 0;
    h.slack.posted.length = 0;
    h.metrics.fn = () => ({});
    h.funnels.clear();
  });

  const call = (method: string, init: Partial<ApiRequest> = {}) => h.call(method, { key, ...init });
  const problem = (method: string, init: Partial<ApiRequest> = {}) => h.problem(method, { key, ...init });
  const create = async (body: Json): Promise<Json> => (await call('createAutomation', { body })).body.data;
  const get = async (id: string): Promise<Json> => (await call('getAutomation', { params: { id } })).body.data;
  const runsOf = async (id: string): Promise<Json[]> => (await get(id))['runs'] as Json[];
  const settled = (id: string, n: number) => h.until(`${n} settled runs of ${id}`, async () => {
    const runs = await runsOf(id);
    return runs.length >= n && runs.every((r) => r['status'] !== 'queued') ? runs : undefined;
  });
  const advance = (ms: number): void => {
    h.clock.now = new Date(h.clock.now.getTime() + ms);
  };
  const tick = async (): Promise<Json> => {
    const r = await h.admin('POST', '/automations/tick');
    expect(r.status).toBe(200);
    return r.body;
  };
  const eventSpec = (over: Json = {}): Json => ({ version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, deliver: [{ channel: 'chat', to: [CHAT] }], ...over });

  it('fails the run of a stored template that repeats past its budget with a note saying what to change, and keeps working', async () => {
    h.clock.now = new Date('2026-03-10T09:00:30.000Z');
    // Four details per conversion, nested 12 deep: 4^12 copies. Refused at write time...
    const deep = `${'{{#event.details}}'.repeat(12)}x${'{{/event.details}}'.repeat(12)}`;
    const spec = { version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, compose: { template: deep }, deliver: [{ channel: 'email', to: ['ops@example.com'] }], pacing: { mode: 'each' } };
    expect(await problem('createAutomation', { body: { name: 'Deep', spec } })).toMatchObject({ kind: 'invalid-request', detail: expect.stringContaining('nests sections 12 deep; at most 4 are allowed') });
    // ...but one stored before the rule runs on every event: inserted as the repo would have.
    const id = randomUUID();
    const db = await h.proc.stores.sql('automations');
    await db.transaction((tx) => insertAlert(tx, {
      id, workspaceId: WORKSPACE.id, websiteId: WEBSITE.id, name: 'Old deep template', templateId: null, spec: spec as unknown as AutomationSpec,
      workspace: WORKSPACE, website: WEBSITE, nextRunAt: null, createdBy: 'test', now: h.clock.now,
    }));
    const fine = await create({ name: 'Fine', spec: eventSpec() });
    const started = Date.now();
    await h.publish('conversion.created', conversion());
    const runs = await settled(id, 1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(runs[0]).toMatchObject({ trigger: 'event', status: 'failed', deliveries: [], composed_by: 'template' });
    expect(String(runs[0]?.['compose_note'])).toMatch(/^not sent: the (message would be longer than 65,536 characters|template repeats its sections more than [\d,]+ times)\. Nest fewer \{\{#sections\}\} \(at most 4\) or repeat smaller lists, then PATCH the alert's compose\.template/);
    await h.until('automation.ran (failed)', () => h.changes.find((c) => c.type === 'automation.ran' && (c.payload as Json)['automation_id'] === id && (c.payload as Json)['status'] === 'failed'));
    // The process kept going: the other alert delivered, and a test run of the old one fails the same way.
    expect((await settled(String(fine['id']), 1))[0]?.['status']).toBe('sent');
    const test = await call('runAutomation', { params: { id }, body: { test: true } });
    expect(test.body.data).toMatchObject({ status: 'failed', queued: [], compose_note: expect.stringMatching(/^not sent: /) });
    expect(h.smtp.received).toHaveLength(0);
  });

  it('keeps a firing threshold\'s state through edits: recipients re-send nothing; a raised or lowered threshold recovers or fires once', async () => {
    h.clock.now = new Date('2026-03-11T09:00:30.000Z');
    h.metrics.fn = () => ({ conversions: 3 });
    const spec = (value: number, to: string[]) => ({
      version: 1, trigger: { kind: 'threshold', cron: '* * * * *' },
      gather: { conversions: { metric: 'conversions', period: 'today' } },
      condition: { figure: 'conversions', op: 'lt', value },
      deliver: [{ channel: 'email', to }],
    });
    const alert = await create({ name: 'Few conversions', spec: spec(5, ['ops@example.com']) });
    const id = String(alert['id']);
    advance(60_000);
    expect(await tick()).toMatchObject({ due: 1, fired: 1 });
    await h.smtp.waitFor(1);
    // Another recipient, a new name and template: nothing is sent again.
    const edited = await call('patchAutomation', { params: { id }, body: { name: 'Few sales', spec: { ...spec(5, ['ops@example.com', 'sales@example.com']), compose: { template: '{{condition.text}}' } } } });
    expect(edited.body.data['state']).toMatchObject({ firing: true });
    advance(60_000);
    expect(await tick()).toMatchObject({ due: 1, fired: 0, recovered: 0 });
    // The threshold lowered to 2 (3 is no longer below it): evaluated at the next tick, back to normal once.
    await call('patchAutomation', { params: { id }, body: { spec: spec(2, ['ops@example.com', 'sales@example.com']) } });
    advance(1_000);
    expect(await tick()).toMatchObject({ due: 1, fired: 0, recovered: 1 });
    const recovered = await h.smtp.waitFor(3);
    expect(recovered.slice(1).map((m) => m.to[0]).sort()).toEqual(['ops@example.com', 'sales@example.com']);
    expect(recovered[1]?.subject).toBe('[Sightline] Few sales: back to normal');
    expect(recovered[1]?.text).toContain('Back to normal: conversions (today) is 3, no longer below 2');
    // Raised to 10: it newly holds, so "Alert" once.
    await call('patchAutomation', { params: { id }, body: { spec: spec(10, ['ops@example.com', 'sales@example.com']) } });
    advance(1_000);
    expect(await tick()).toMatchObject({ due: 1, fired: 1, recovered: 0 });
    advance(60_000);
    expect(await tick()).toMatchObject({ due: 1, fired: 0, recovered: 0 });
    const all = await h.smtp.waitFor(5);
    expect(all[3]?.text).toContain('Alert: conversions (today) is 3, below 10');
    await settled(id, 3);
    expect(h.smtp.received).toHaveLength(5);
    expect((await runsOf(id)).map((r) => r['trigger'])).toEqual(['threshold', 'recovery', 'threshold']);
  });

  it('skips events older than max_age, and says where and when each one happened', async () => {
    h.clock.now = new Date('2026-03-12T12:00:00.000Z');
    const alert = await create({ name: 'Fresh sales', spec: eventSpec({ max_age: '24h' }) });
    const id = String(alert['id']);
    expect((alert['spec'] as Json)['max_age']).toBe('24h');
    await h.publish('conversion.created', conversion({ event_name: 'backfilled', occurred_at: '2026-03-11T11:59:00.000Z' }));
    await h.publish('conversion.created', conversion({ event_name: 'fresh', occurred_at: '2026-03-11T12:01:00.000Z' }));
    await settled(id, 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(await runsOf(id)).toHaveLength(1);
    expect(h.slack.posted).toHaveLength(1);
    // 12:01 UTC is 13:01 in Berlin (UTC+1 in March).
    expect(h.slack.posted[0]?.text).toMatch(/^New conversion: purchase "fresh" \(€1,234\.50\)\nWebsite: shop\.test\nWhen: Wed 11 Mar 2026, 13:01 \(Europe\/Berlin\)\n/);
  });

  it('says a test run of an alert no event matched yet shows a sample, linking to the feed rather than a contact that does not exist', async () => {
    const alert = await create({ name: 'Never matched', spec: eventSpec() });
    const r = await call('runAutomation', { params: { id: String(alert['id']) }, body: { test: true } });
    expect(r.body.data).toMatchObject({ status: 'queued' });
    const post = (await h.slack.waitFor(1))[0];
    expect(post?.text).toMatch(/^This is a test message\.\nSample event: no event has matched this alert yet\.\nNew conversion: purchase "Sample order"/);
    expect(post?.text).toContain('<https://sightline.example/v1/changes?website=shop.test&types=conversion.created|Data>');
    expect(post?.text).not.toContain('/v1/contacts/');
  });

  it('pauses the alerts of a deleted funnel with a reason, answers their test run 409, and resumes once another funnel is chosen', async () => {
    h.clock.now = new Date('2026-03-13T10:00:30.000Z');
    const [f1, f2, f3] = [randomUUID(), randomUUID(), randomUUID()];
    for (const f of [f1, f2, f3]) h.funnels.set(f, 0.5);
    const spec = (funnel: string) => ({
      version: 1, trigger: { kind: 'threshold', cron: '* * * * *' }, gather: { conversion: { funnel, period: 'today' } },
      condition: { figure: 'conversion', op: 'lt', value: 0.6 }, deliver: [{ channel: 'email', to: ['funnel@example.com'] }],
    });
    expect(await problem('createAutomation', { body: { name: 'No such funnel', spec: spec(randomUUID()) } })).toMatchObject({ kind: 'invalid-request' });
    const watched = await create({ name: 'Funnel down', spec: spec(f1) });
    const id = String(watched['id']);
    expect(watched).toMatchObject({ status: 'active', status_reason: null });
    const other = await create({ name: 'Other', spec: eventSpec() });

    // funnels deletes f1 and says so on the bus.
    h.funnels.delete(f1);
    await h.publish('funnel.deleted', { funnel_id: f1, website_id: WEBSITE.id, workspace_id: WORKSPACE.id, name: 'Checkout', fields: [], changed_at: '2026-03-13T10:00:00.000Z' });
    const paused = await h.until('the alert paused', async () => {
      const a = await get(id);
      return a['status'] === 'paused' ? a : undefined;
    });
    expect(paused['status_reason']).toBe(`funnel ${f1} was deleted on 2026-03-13; choose another funnel in spec.gather and set status to active`);
    expect((await get(String(other['id'])))['status']).toBe('active');
    await h.until('automation.updated from the service', () => h.changes.find((c) => c.type === 'automation.updated' && (c.payload as Json)['automation_id'] === id && c.source === 'automations' && (c.payload as Json)['status'] === 'paused'));
    advance(60_000);
    expect(await tick()).toMatchObject({ due: 0 });

    // A test run cannot succeed: 409 with what to do, never a 503 to retry.
    expect(await problem('runAutomation', { params: { id }, body: { test: true } })).toMatchObject({ kind: 'conflict', status: 409, remediation: expect.stringContaining('Choose another funnel') });
    // Resuming with the deleted funnel is refused; choosing another funnel and resuming clears the reason.
    expect(await problem('patchAutomation', { params: { id }, body: { status: 'active' } })).toMatchObject({ kind: 'invalid-request', detail: expect.stringContaining('names a funnel this website does not have') });
    expect(await problem('patchAutomation', { params: { id }, body: { spec: spec(randomUUID()) } })).toMatchObject({ kind: 'invalid-request' });
    const resumed = await call('patchAutomation', { params: { id }, body: { spec: spec(f2), status: 'active' } });
    expect(resumed.body.data).toMatchObject({ status: 'active', status_reason: null });

    // A funnel gone without the message (deleted as the alert was written): the run pauses the alert.
    const late = await create({ name: 'Late', spec: spec(f3) });
    h.funnels.delete(f3);
    advance(60_000);
    await tick();
    const lateNow = await get(String(late['id']));
    expect(lateNow).toMatchObject({ status: 'paused', status_reason: `funnel ${f3} was found deleted on 2026-03-13; choose another funnel in spec.gather and set status to active` });
    expect((await get(id))['status']).toBe('active');
  });

  it('reads the previous period by the calendar across a daylight-saving change', async () => {
    // Berlin moved to summer time on 29 March 2026: the last 7 days hold a 23-hour day.
    h.clock.now = new Date('2026-03-31T10:00:00.000Z');
    const windows: { from: string; to: string }[] = [];
    h.metrics.fn = (q) => {
      windows.push({ from: q.from, to: q.to });
      return { revenue: 100 };
    };
    const alert = await create({
      name: 'Revenue down', spec: {
        version: 1, trigger: { kind: 'threshold', cron: '0 * * * *' }, gather: { revenue: { metric: 'revenue', period: 'last 7 days' } },
        condition: { figure: 'revenue', compare: 'previous_period', change: 'percent', op: 'lte', value: -20 }, deliver: [{ channel: 'email', to: ['ops@example.com'] }],
      },
    });
    windows.length = 0;
    await call('runAutomation', { params: { id: String(alert['id']) }, body: { test: true } });
    const current = windows.find((w) => windows.some((p) => p.to === w.from)) ?? windows[0];
    const previous = windows.find((w) => w.to === current?.from);
    expect({ current, previous }).toMatchObject({ current: { to: expect.any(String) }, previous: { from: expect.any(String) } });
    const local = (iso: string) => DateTime.fromISO(iso, { zone: 'Europe/Berlin' });
    // Whole local days, midnight to midnight, 7 of them: not 7 x 24 hours back (an hour off).
    expect(local(String(previous?.from)).toFormat('HH:mm')).toBe('00:00');
    expect(local(String(previous?.from)).plus({ days: 7 }).toISO()).toBe(local(String(current?.from)).toISO());
    expect(Date.parse(String(current?.to)) - Date.parse(String(current?.from))).not.toBe(Date.parse(String(previous?.to)) - Date.parse(String(previous?.from)));
  });
});
