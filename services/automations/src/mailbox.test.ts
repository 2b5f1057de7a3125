// A fresh embedded instance with no SMTP server: alert email is kept in the local mailbox, read
// through the admin API (as `sightline automations mailbox` does), and counts as sent. Also the
// operator's chat connection routes, and a schedule's daily pacing.
import { connectSlack, conversion, startHarness, WORKSPACE, type Harness, type Json } from '../test/harness';

describe('automations without SMTP (embedded)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ smtp: false });
  }, 120_000);
  afterAll(async () => h?.stop(), 60_000);

  it('keeps email in the local mailbox, readable through the admin API', async () => {
    const alert = await h.create({ name: 'Local', spec: { version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, deliver: [{ channel: 'email', to: ['Me@Example.com'] }] } });
    await h.publish('conversion.created', conversion({ event_name: 'kept locally' }));
    const box = await h.until('the mailbox', async () => {
      const r = await h.admin('GET', '/automations/mailbox?to=me@example.com');
      return (r.body['data'] as Json[]).length > 0 ? r.body : undefined;
    });
    expect(box['email']).toBe('mailbox');
    expect((box['data'] as Json[])[0]).toMatchObject({ to: 'me@example.com', subject: '[Sightline] Local', text: expect.stringContaining('kept locally') });
    const runs = await h.until('the run', async () => {
      const rs = (await h.call('getAutomation', { params: { id: String(alert['id']) } })).body.data['runs'] as Json[];
      return rs[0]?.['status'] === 'sent' ? rs : undefined;
    });
    expect((runs[0]?.['deliveries'] as Json[])[0]?.['status']).toBe('sent');
    expect(h.smtp.received).toHaveLength(0);
  });

  it('connects a Slack workspace only with a token Slack accepts, and never shows the token', async () => {
    const bad = await h.admin('POST', '/automations/chat/connections', { workspace_id: WORKSPACE.id, bot_token: 'xoxb-wrong' });
    expect(bad.status).toBe(400);
    expect(String(bad.body['detail'])).toContain('invalid_auth');
    const missing = await h.admin('POST', '/automations/chat/connections', { workspace_id: WORKSPACE.id });
    expect(missing.status).toBe(400);
    await connectSlack(h);
    const list = await h.admin('GET', '/automations/chat/connections');
    expect(list.body['data']).toEqual([expect.objectContaining({ workspace_id: WORKSPACE.id, team_id: h.slack.teamId, team_name: 'Sightline Test' })]);
    expect(JSON.stringify(list.body)).not.toContain(h.slack.token);
    const db = await h.proc.stores.sql('automations');
    const stored = (await db.query<{ bot_token: Buffer }>('SELECT bot_token FROM chat_connections')).rows[0];
    expect(Buffer.from(stored?.bot_token ?? []).toString('latin1')).not.toContain(h.slack.token);
    expect((await h.admin('DELETE', `/automations/chat/connections/${WORKSPACE.id}`)).status).toBe(200);
    expect((await h.admin('DELETE', `/automations/chat/connections/${WORKSPACE.id}`)).status).toBe(404);
  });

  it('sends a schedule paced daily at most once a day, however often its cron fires', async () => {
    h.clock.now = new Date('2026-04-01T07:50:00.000Z');
    const alert = await h.create({ name: 'Daily at most', spec: { version: 1, trigger: { kind: 'schedule', cron: '*/30 * * * *' }, deliver: [{ channel: 'email', to: ['me@example.com'] }], pacing: { mode: 'daily' } } });
    const tickAt = async (iso: string): Promise<Json> => {
      h.clock.now = new Date(iso);
      return (await h.admin('POST', '/automations/tick')).body;
    };
    expect(await tickAt('2026-04-01T08:00:00.000Z')).toMatchObject({ due: 1, scheduled: 1 });
    expect(await tickAt('2026-04-01T08:30:00.000Z')).toMatchObject({ due: 1, scheduled: 0 });
    // Berlin is UTC+2 in April: the day ends at 22:00 UTC.
    expect(await tickAt('2026-04-01T21:30:00.000Z')).toMatchObject({ due: 1, scheduled: 0 });
    expect(await tickAt('2026-04-01T22:00:00.000Z')).toMatchObject({ due: 1, scheduled: 1 });
    const runs = (await h.call('getAutomation', { params: { id: String(alert['id']) } })).body.data['runs'] as Json[];
    expect(runs).toHaveLength(2);
  });
});
