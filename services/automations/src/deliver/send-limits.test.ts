// Issue 24, finding 2: what a key with automations:write can make the operator's mail send. The
// recipients the operator allows (a domain allow-list; never an IP literal), a per-workspace email
// budget per hour and per day counted in PostgreSQL (held, then skipped, never dropped silently;
// exported as metrics), and delivery errors that show no server's own text.
import { randomUUID } from 'node:crypto';
import { conversion, startHarness, WORKSPACE, type Harness, type Json } from '../../test/harness';
import { classifySmtpError, createSmtpSender } from './email';
import { DeliveryError } from './errors';
import { recipientFault } from './recipients';
import { createSlackApi } from './slack';

const spec = (to: string[]): Json => ({ version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, deliver: [{ channel: 'email', to }] });

describe('alert email the operator allows (issue 24)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ options: { emailDomains: ['Example.com', '@shop.test'], emailBudget: { perHour: 3, perDay: 5 } } });
  }, 120_000);
  afterAll(async () => h?.stop(), 60_000);

  it('refuses recipients outside the allow-list (with the list) and at IP literals, when the alert is written', async () => {
    const refused = (to: string[]) => h.problem('createAutomation', { body: { name: 'Out', spec: spec(to) } });
    expect(await refused(['someone@elsewhere.test'])).toMatchObject({ kind: 'invalid-request', status: 400, allowed: ['example.com', 'shop.test'] });
    expect(await refused(['someone@example.com.evil.test'])).toMatchObject({ kind: 'invalid-request', allowed: ['example.com', 'shop.test'] });
    for (const ip of ['user@127.0.0.1', 'user@127.1', 'user@[10.0.0.1]', 'user@10.0.0.1.']) {
      expect({ ip, problem: await refused([ip]) }).toMatchObject({ ip, problem: { kind: 'invalid-request' } });
    }
    expect(String((await refused(['user@127.0.0.1'])).detail)).toContain('IP address');
    const ok = await h.create({ name: 'In', spec: spec(['a@example.com', 'b@eu.example.com', 'c@shop.test']) });
    expect(ok['id']).toBeDefined();
    await h.call('deleteAutomation', { params: { id: String(ok['id']) } });
    // Without an allow-list any domain goes, never an IP literal.
    expect(recipientFault('x@anywhere.test', null)).toBeNull();
    expect(recipientFault('x@192.168.0.1', null)).toBe('ip-literal');
    expect(recipientFault('x@[IPv6:::1]', null)).toBe('ip-literal');
    expect(recipientFault('x@0x7f.1', null)).toBe('ip-literal');
  });

  it('counts email per workspace per hour and per day in PostgreSQL: over budget it is held, then skipped, and counted in metrics', async () => {
    h.clock.now = new Date('2026-04-02T10:10:00.000Z');
    const to = ['a@example.com', 'b@example.com', 'c@example.com', 'd@example.com'];
    const alert = await h.create({ name: 'Budget', spec: spec(to) });
    const id = String(alert['id']);
    const deliveries = async (): Promise<Json[]> => ((await h.call('getAutomation', { params: { id } })).body.data['runs'] as Json[]).flatMap((r) => r['deliveries'] as Json[]);
    const work = async () => expect((await h.admin('POST', '/automations/deliveries/work')).status).toBe(200);
    await h.publish('conversion.created', conversion());
    // Three of the four go out this hour; the fourth is held until the hour ends, saying why.
    const first = await h.until('three sent, one held', async () => {
      const ds = await deliveries();
      return ds.filter((d) => d['status'] === 'sent').length === 3 && ds.some((d) => d['status'] === 'queued' && String(d['error']).startsWith('held:')) ? ds : undefined;
    });
    const held = first.find((d) => d['status'] === 'queued') as Json;
    expect(held).toMatchObject({ attempts: 0, next_attempt_at: '2026-04-02T11:00:00.000Z' });
    expect(String(held['error'])).toContain('3 emails they may send per hour');
    expect(h.smtp.received).toHaveLength(3);
    h.clock.now = new Date('2026-04-02T10:59:59.999Z');
    await work();
    expect(h.smtp.received).toHaveLength(3);
    h.clock.now = new Date('2026-04-02T11:00:00.000Z');
    await work();
    await h.smtp.waitFor(4);

    // The day allows five: one more goes out, the next two wait for the day to end (UTC).
    await h.publish('conversion.created', conversion());
    await h.until('the fifth sent', async () => ((await deliveries()).filter((d) => d['status'] === 'sent').length === 5 ? true : undefined));
    const waiting = await h.until('three held for the day', async () => {
      const ds = (await deliveries()).filter((d) => d['status'] === 'queued' && String(d['error']).startsWith('held:'));
      return ds.length === 3 ? ds : undefined;
    });
    expect(waiting.every((d) => d['next_attempt_at'] === '2026-04-03T00:00:00.000Z' || d['next_attempt_at'] === '2026-04-02T12:00:00.000Z')).toBe(true);
    expect(String(waiting.find((d) => d['next_attempt_at'] === '2026-04-03T00:00:00.000Z')?.['error'])).toContain('per day');
    // Counted durably, in the service's own store.
    const db = await h.proc.stores.sql('automations');
    const counts = (await db.query<{ window_kind: string; sent: number }>('SELECT window_kind, sent FROM send_budget WHERE workspace_id = $1 ORDER BY window_kind, window_start', [WORKSPACE.id])).rows;
    expect(counts).toEqual([{ window_kind: 'day', sent: 5 }, { window_kind: 'hour', sent: 3 }, { window_kind: 'hour', sent: 2 }]);

    // Held for longer than a day with the budget spent again: skipped, not dropped; an operator can retry it.
    await db.query("UPDATE send_budget SET sent = 5 WHERE workspace_id = $1 AND window_kind = 'day'", [WORKSPACE.id]);
    await db.query("INSERT INTO send_budget VALUES ($1, 'day', '2026-04-03T00:00:00Z', 5)", [WORKSPACE.id]);
    h.clock.now = new Date('2026-04-03T11:00:00.001Z');
    await work();
    const skipped = await h.until('the held emails skipped', async () => {
      const ds = (await deliveries()).filter((d) => d['status'] === 'skipped');
      return ds.length === 3 ? ds : undefined;
    });
    expect(String(skipped[0]?.['error'])).toMatch(/^skipped: .*per day.*an operator can retry it$/);
    expect(h.smtp.received).toHaveLength(5);

    const text = await h.proc.metrics.metrics();
    expect(text).toContain('sightline_automations_budgeted_emails_total 5');
    expect(text).toContain('sightline_automations_send_refusals_total{reason="hour_budget",action="held"}');
    expect(text).toContain('sightline_automations_send_refusals_total{reason="day_budget",action="held"}');
    expect(text).toContain('sightline_automations_send_refusals_total{reason="day_budget",action="skipped"} 3');
    await h.call('deleteAutomation', { params: { id } });
  });

  it('shows keys the kind of a delivery failure, never the server\'s text (hosts, addresses, ports)', async () => {
    const noHost = /127\.0\.0\.1|internal|:\d{1,5}\b|\d+\.\d+\.\d+\.\d+/;
    const smtp = createSmtpSender({ url: 'smtp://127.0.0.1:1', from: 'a@example.com', timeoutMs: 2_000 });
    const mailFailure = await smtp.send(randomUUID(), 'x@example.com', { subject: 's', text: 't', html: 'h', chat: 'c' }).catch((e: unknown) => e as DeliveryError);
    smtp.close();
    expect(mailFailure).toBeInstanceOf(DeliveryError);
    expect((mailFailure as DeliveryError).message).toMatch(/^SMTP server could not be reached( \(E[A-Z]+\))?$/);
    expect((mailFailure as DeliveryError).detail).toContain('127.0.0.1');
    const slack = createSlackApi({ baseUrl: 'http://127.0.0.1:1/api', timeoutMs: 2_000 });
    const chatFailure = await slack.post('xoxb-test', 'C0ALERTS01', 'text', randomUUID()).catch((e: unknown) => e as DeliveryError);
    expect((chatFailure as DeliveryError).message).toMatch(/^Slack could not be reached( \(E[A-Z]+\))?$/);
    const deferred = Object.assign(new Error('x'), { responseCode: 451, response: '451 4.3.0 relay.internal.example [10.0.0.9] busy' });
    expect(classifySmtpError(deferred)).toMatchObject({ message: 'SMTP server deferred the message (451)', retryable: true });
    for (const e of [mailFailure, chatFailure, classifySmtpError(deferred)]) expect((e as DeliveryError).message).not.toMatch(noHost);
  });
});
