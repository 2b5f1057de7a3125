// The default mode (`sightline start`: one process, embedded stores, the in-process bus on its
// journal) stopped mid-stream, counted from outside. Eight clients post 200-event batches to
// POST /v1/events and count `accepted` from the answers; the process is ended with SIGTERM five
// times and with kill -9 five times, each time restarted on the same data directory while the
// clients go on (a client retries a batch that got no answer, with the same Idempotency-Key, as
// the spec asks). At the end every acknowledged event is stored exactly once, contacts hold one row
// per conversion, the attribution rebuild has nothing new to publish, and a funnel kept live through
// it all answers what its rebuild answers (and what the batches say it must).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { rebuildFunnels, rebuildWebsite } from '@sightline/cli';
import { adminClient } from './admin-client';
import { eventBatch } from './event-batches';
import { startSightline, type SightlineProcess } from './processes';

const CLIENTS = 8;
const PER_BATCH = 200;
const CONVERSIONS_PER_BATCH = PER_BATCH / 50; // eventBatch makes every 50th event a conversion
const ADMIN_TOKEN = 'embedded-crash-admin-token-0123';
const KILLS: ('SIGTERM' | 'SIGKILL')[] = ['SIGTERM', 'SIGKILL', 'SIGTERM', 'SIGKILL', 'SIGTERM', 'SIGKILL', 'SIGTERM', 'SIGKILL', 'SIGTERM', 'SIGKILL'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the embedded mode keeps every acknowledged event through SIGTERM and kill -9', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-embedded-crash-'));
  // A short drain, so a SIGTERM often leaves messages queued in the journal for the next start.
  const env = { SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_DEMO: 'off', SIGHTLINE_ADMIN_TOKEN: ADMIN_TOKEN, SIGHTLINE_DRAIN_TIMEOUT_MS: '2000', SIGHTLINE_QUEUE_POLL_MS: '0' };
  let proc: SightlineProcess | null = null;

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('stores every acknowledged event exactly once, in five SIGTERMs and five kills', async () => {
    proc = await startSightline(['start'], env);
    const admin = adminClient(proc.adminUrl, ADMIN_TOKEN);
    const ws = await admin('/workspaces', { name: 'Crash', plan: 'internal' });
    const site = await admin(`/workspaces/${ws['id']}/websites`, { domain: 'crash.test' });
    const { key } = await admin('/keys', { workspace_id: ws['id'] });
    // Every batch has one visitor (visitor-<n>-10) with a custom event e10 and, later, the
    // conversion e50: each acknowledged batch enters and completes this funnel exactly once.
    const created = await fetch(`${proc.baseUrl}/v1/funnels?website=crash.test`, {
      method: 'POST',
      headers: { authorization: `Bearer ${String(key)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'e10 to e50', window_days: 1, steps: [{ name: 'e10', conditions: { event_type: 'custom', event_name_matches: 'e10' } }, { name: 'e50', conditions: { event_type: 'conversion', event_name_matches: 'e50' } }] }),
    });
    expect(created.status).toBe(200);
    const funnelId = String(((await created.json()) as { data: { id: string } }).data.id);
    const windowFrom = new Date(Date.now() - 3_600_000).toISOString();

    let acknowledged = 0;
    let acknowledgedBatches = 0;
    let refused = 0; // 503s (draining, or the backlog bound): retried, never counted
    let nextBatch = 0;
    let current: SightlineProcess | null = proc;
    let stopClients = false;

    /** One client: posts its batch until it gets an answer, then the next. */
    const client = async (): Promise<void> => {
      let batch = nextBatch++;
      let events = eventBatch(batch, PER_BATCH, 20);
      while (!stopClients) {
        const target = current;
        if (!target) {
          await sleep(50);
          continue;
        }
        const response = await fetch(`${target.baseUrl}/v1/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${String(key)}`, 'content-type': 'application/json', 'idempotency-key': `crash-batch-${batch}` },
          body: JSON.stringify({ website: 'crash.test', events }),
        }).catch(() => null);
        if (response?.status === 200) {
          const body = (await response.json()) as { accepted: number; rejected: number };
          expect(body).toMatchObject({ accepted: PER_BATCH, rejected: 0 });
          acknowledged += body.accepted;
          acknowledgedBatches += 1;
          batch = nextBatch++;
          events = eventBatch(batch, PER_BATCH, 20);
        } else {
          if (response) {
            expect(response.status).toBe(503);
            expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
            refused += 1;
            await response.arrayBuffer();
          }
          await sleep(100);
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, () => client());

    for (const [round, signal] of KILLS.entries()) {
      // Mid-stream: some batches into this run, then the signal.
      const target = acknowledged + 1_000 + (round % 3) * 600;
      const deadline = Date.now() + 60_000;
      while (acknowledged < target && Date.now() < deadline) await sleep(20);
      expect(acknowledged).toBeGreaterThanOrEqual(target);
      const running = current as SightlineProcess;
      if (signal === 'SIGKILL') running.child.kill('SIGKILL');
      const code = await running.stop();
      current = null;
      if (signal === 'SIGTERM') expect({ round, code, output: code === 0 ? '' : running.output() }).toEqual({ round, code: 0, output: '' });
      const restarted = Date.now();
      proc = await startSightline(['start'], env);
      current = proc;
      process.stdout.write(`round ${round} (${signal}): ${acknowledged} acknowledged so far, restarted in ${Date.now() - restarted} ms\n`);
    }
    // A little more traffic after the last restart, then the clients stop.
    const last = acknowledged + 600;
    while (acknowledged < last) await sleep(20);
    stopClients = true;
    await Promise.all(clients);

    const siteId = String(site['id']);
    const base = (proc as SightlineProcess).baseUrl;
    const auth = { authorization: `Bearer ${String(key)}` };
    let stats = { events: 0, rows: 0 };
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const r = await fetch(`${(proc as SightlineProcess).adminUrl}/admin/ingest/websites/${siteId}/stats`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      stats = (await r.json()) as { events: number; rows: number };
      if (stats.events >= acknowledged) break;
      await sleep(250);
    }
    // Exactly once: every acknowledged event, no raw row twice.
    expect({ events: stats.events, rows: stats.rows }).toEqual({ events: acknowledged, rows: acknowledged });

    // Contacts: one row per conversion (each batch has the same number), once the pipeline has caught up.
    const conversions = acknowledgedBatches * CONVERSIONS_PER_BATCH;
    let contacts = -1;
    const contactsDeadline = Date.now() + 120_000;
    while (Date.now() < contactsDeadline) {
      const r = await fetch(`${base}/v1/contacts?website=crash.test&type=conversion&limit=1&total_count=true`, { headers: auth });
      contacts = Number(((await r.json()) as { meta: { total_count: number } }).meta.total_count);
      if (contacts >= conversions) break;
      await sleep(500);
    }
    expect(contacts).toBe(conversions);

    // The attribution read model agrees with a rebuild once every consumer has caught up (every
    // queue empty on a few reads in a row): recomputing the website publishes nothing new.
    let idleReads = 0;
    const idleDeadline = Date.now() + 120_000;
    while (idleReads < 3 && Date.now() < idleDeadline) {
      const text = await (await fetch(`${(proc as SightlineProcess).adminUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
      const queued = text.split('\n').filter((line) => line.startsWith('sightline_bus_queue_messages{') && !line.includes('queue="dead_letter"')).reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
      idleReads = queued === 0 ? idleReads + 1 : 0;
      await sleep(300);
    }
    expect(idleReads).toBe(3);
    const job = await rebuildWebsite(
      { url: (proc as SightlineProcess).adminUrl, token: ADMIN_TOKEN },
      { website: 'crash.test', tty: false, stream: new Writable({ write: (_c, _e, done) => done() }), pollMs: 100 },
    );
    expect(job).toMatchObject({ status: 'done', outcomes: conversions, published: 0 });
    // The funnel's read model, kept through every stop, agrees with the batches and with its rebuild.
    // From an hour before the first batch to now: every batch's events, whatever the date.
    const window = `from=${encodeURIComponent(windowFrom)}&to=${encodeURIComponent(new Date().toISOString())}`;
    const funnelSteps = async (): Promise<{ computedFrom: string; reached: number[] }> => {
      const r = await fetch(`${base}/v1/funnels/${funnelId}/steps?website=crash.test&${window}`, { headers: auth });
      const body = (await r.json()) as { data: { reached: number }[]; meta: { computed_from: string } };
      if (r.status !== 200) throw new Error(`funnel steps answered ${r.status}: ${JSON.stringify(body)}`);
      return { computedFrom: body.meta.computed_from, reached: body.data.map((step) => step.reached) };
    };
    let live = await funnelSteps();
    const funnelDeadline = Date.now() + 120_000;
    while ((live.computedFrom !== 'read_model' || live.reached[1] !== acknowledgedBatches) && Date.now() < funnelDeadline) {
      await sleep(500);
      live = await funnelSteps();
    }
    expect(live).toEqual({ computedFrom: 'read_model', reached: [acknowledgedBatches, acknowledgedBatches] });
    const rebuilt = await rebuildFunnels(
      { url: (proc as SightlineProcess).adminUrl, token: ADMIN_TOKEN },
      { website: 'crash.test', tty: false, stream: new Writable({ write: (_c, _e, done) => done() }), pollMs: 100 },
    );
    expect(rebuilt.status).toBe('done');
    expect(await funnelSteps()).toEqual(live);

    // For the record: how often a client was told to come back (draining, or the backlog bound).
    process.stdout.write(`embedded crash test: ${acknowledged} events acknowledged, ${refused} answers 503 (retried)\n`);
  }, 900_000);
});
