// Issue 24, finding 4: runs, deliveries, the mailbox and send-budget counters do not grow for ever.
// At the edge: a row exactly at the retention age stays, one a millisecond past it goes; an alert's
// newest 50 runs (what the API shows) stay whatever their age; a round deletes in bounded batches.
import { randomUUID } from 'node:crypto';
import type { SqlStore } from '@sightline/kit';
import { startHarness, WORKSPACE, type Harness, type Json } from '../../test/harness';
import { applyRetention } from './retention';

const DAY = 86_400_000;

describe('retention (issue 24)', () => {
  let h: Harness;
  let db: SqlStore;
  beforeAll(async () => {
    h = await startHarness({ smtp: false });
    db = await h.proc.stores.sql('automations');
  }, 120_000);
  afterAll(async () => h?.stop(), 60_000);

  const alert = async (name: string): Promise<string> => String((await h.create({ name, spec: { version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, deliver: [{ channel: 'email', to: ['ops@example.com'] }] } }))['id']);
  /** A finished run started at `at`, with one sent delivery, as the worker leaves them. */
  const run = async (automationId: string, at: Date, status = 'sent'): Promise<string> => {
    const id = randomUUID();
    await db.query(
      `INSERT INTO runs (id, automation_id, trigger, trigger_key, test, status, message, composed_by, link, started_at, finished_at)
       VALUES ($1, $2, 'event', $5, false, $3, '{"subject":"s","text":"t","html":"h","chat":"c"}', 'template', 'https://sightline.example/v1', $4, $4)`,
      [id, automationId, status, at, `event:${id}`],
    );
    await db.query(
      `INSERT INTO deliveries (id, run_id, automation_id, workspace_id, channel, recipient, status, max_attempts, next_attempt_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'email', 'ops@example.com', $5, 3, $6, $6, $6)`,
      [randomUUID(), id, automationId, WORKSPACE.id, status === 'queued' ? 'queued' : 'sent', at],
    );
    return id;
  };
  const count = async (sql: string, params: unknown[]): Promise<number> => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params)).rows[0]?.n ?? 0;

  it('deletes runs (with their deliveries) and mail past their age, keeping the edge and each alert\'s newest 50 runs', async () => {
    const now = new Date('2026-09-01T12:00:00.000Z');
    h.clock.now = now;
    const busy = await alert('Busy');
    const atEdge = await run(busy, new Date(now.getTime() - 90 * DAY));
    const pastEdge = await run(busy, new Date(now.getTime() - 90 * DAY - 1));
    const oldQueued = await run(busy, new Date(now.getTime() - 200 * DAY), 'queued');
    for (let i = 0; i < 50; i += 1) await run(busy, new Date(now.getTime() - (i + 1) * 60_000));
    // An alert with only old runs keeps them: they are its newest 50.
    const quiet = await alert('Quiet');
    const quietRuns = [await run(quiet, new Date(now.getTime() - 400 * DAY)), await run(quiet, new Date(now.getTime() - 300 * DAY))];
    const mail = async (at: Date): Promise<void> => void (await db.query(
      'INSERT INTO mailbox (delivery_id, recipient, subject, text_body, html_body, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [randomUUID(), 'ops@example.com', 's', 't', 'h', at],
    ));
    await mail(new Date(now.getTime() - 30 * DAY));
    await mail(new Date(now.getTime() - 30 * DAY - 1));
    await db.query("INSERT INTO send_budget VALUES ($1, 'day', $2, 7), ($1, 'day', $3, 7)", [WORKSPACE.id, new Date(now.getTime() - 3 * DAY), new Date(now.getTime() - DAY)]);

    const r = await h.admin('POST', '/automations/retention');
    expect(r).toMatchObject({ status: 200, body: { runs: 1, mailbox: 1, budget_windows: 1 } });
    const left = new Set((await db.query<{ id: string }>('SELECT id::text AS id FROM runs')).rows.map((x) => x.id));
    expect([left.has(atEdge), left.has(pastEdge), left.has(oldQueued), ...quietRuns.map((id) => left.has(id))]).toEqual([true, false, true, true, true]);
    expect(await count('deliveries WHERE run_id = $1', [pastEdge])).toBe(0);
    expect(await count('runs WHERE automation_id = $1', [busy])).toBe(52);
    expect(await count('mailbox WHERE created_at < $1', [new Date(now.getTime() - 30 * DAY)])).toBe(0);
    expect(await count('mailbox', [])).toBe(1);
    // What the API shows is untouched: the newest 50.
    const shown = (await h.call('getAutomation', { params: { id: busy } })).body.data['runs'] as Json[];
    expect(shown).toHaveLength(50);
    // A second round finds nothing more.
    expect((await h.admin('POST', '/automations/retention')).body).toMatchObject({ runs: 0, mailbox: 0, budget_windows: 0 });
  });

  it('deletes in bounded batches per round, leaving the rest to the next', async () => {
    const now = new Date('2027-01-01T00:00:00.000Z');
    await db.query('DELETE FROM automations');
    const many = await alert('Many');
    for (let i = 0; i < 80; i += 1) await run(many, new Date(now.getTime() - 100 * DAY - i * 60_000));
    // 80 old runs, the newest 50 kept: 30 to delete, at most 2 batches of 10 a round.
    expect(await applyRetention(db, { runDays: 90, mailboxDays: 30, batch: 10, maxBatches: 2 }, now)).toMatchObject({ runs: 20 });
    expect(await applyRetention(db, { runDays: 90, mailboxDays: 30, batch: 10, maxBatches: 2 }, now)).toMatchObject({ runs: 10 });
    expect(await applyRetention(db, { runDays: 90, mailboxDays: 30, batch: 10, maxBatches: 2 }, now)).toMatchObject({ runs: 0 });
    expect(await count('runs WHERE automation_id = $1', [many])).toBe(50);
  });
});
