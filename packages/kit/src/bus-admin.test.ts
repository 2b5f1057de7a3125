// The dead-letter admin routes over HTTP, on a process started as in production (startModules,
// embedded stores, the durable in-process bus): a handler with a bug fails N times on a healthy
// store, its messages end in the dead-letter queue, and once it is fixed a redrive brings them back
// and they succeed — looked at first (GET, dry run), then moved a few at a time.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MESSAGE_EXAMPLES } from '@sightline/proto-schemas';
import { FAILING_CONSUMER_TYPE, failingConsumer, waitUntil } from '../testing/failing-consumer';
import { loadConfig } from './config';
import { createLogger } from './logger';
import { startModules, type RunningProcess } from './runner';

const FAILURES = 10; // two messages, each failing all its 5 attempts
const TYPE = FAILING_CONSUMER_TYPE;

let dataDir: string;
let proc: RunningProcess;
// Stands in for changefeed, consuming conversion.created: a bug makes it throw its first N times;
// what it handles it writes to its (healthy) store.
const buggy = failingConsumer(FAILURES);
const handled = buggy.handled;

async function admin(method: string, path: string, body?: unknown, token = proc.settings.adminToken): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sightline-bus-admin-'));
  proc = await startModules({
    config: loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: `busadmin${Date.now()}` }),
    modules: [buggy.module],
    logger: createLogger({ level: 'silent' }),
  });
}, 60_000);
afterAll(async () => {
  await proc?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('moves dead letters of a handler that failed on a healthy store back, and they succeed once it is fixed', async () => {
  const sent = [];
  for (let i = 0; i < 2; i += 1) sent.push(await proc.bus.publish({ type: TYPE, source: 'test', workspace_id: null, website_id: null, id: randomUUID(), payload: MESSAGE_EXAMPLES[TYPE] }));
  const ids = sent.map((e) => e.id);
  await waitUntil(async () => (await admin('GET', '/bus/dead-letters/changefeed')).body['moved'] === 2, 'both messages dead-lettered');
  expect(buggy.failuresLeft()).toBe(0); // the bug is spent: the handler works from here on
  expect(handled).toEqual([]);

  const counts = await admin('GET', '/bus/dead-letters/changefeed');
  expect(counts).toEqual({
    status: 200,
    body: { service: 'changefeed', dry_run: true, moved: 2, by_type: { [TYPE]: 2 }, by_reason: { 'Error: bug in the handler': 2 }, first_ids: expect.any(Array), kept: 0, kept_by: {}, remaining: 2 },
  });
  expect([...(counts.body['first_ids'] as string[])].sort()).toEqual([...ids].sort());
  const order = counts.body['first_ids'] as string[];

  // A dry run over POST says the same and moves nothing.
  expect((await admin('POST', '/bus/dead-letters/changefeed/redrive', { dry_run: true })).body).toEqual(counts.body);
  await new Promise((r) => setTimeout(r, 300));
  expect(handled).toEqual([]);

  const one = await admin('POST', '/bus/dead-letters/changefeed/redrive', { dry_run: false, max: 1 });
  expect(one).toEqual({ status: 200, body: expect.objectContaining({ dry_run: false, moved: 1, first_ids: [order[0]], kept: 0, remaining: 1 }) });
  await waitUntil(() => handled.length === 1, 'the first redriven message handled');
  expect(handled).toEqual([order[0]]);

  const rest = await admin('POST', '/bus/dead-letters/changefeed/redrive', { dry_run: false });
  expect(rest.body).toMatchObject({ moved: 1, first_ids: [order[1]], remaining: 0 });
  await waitUntil(() => handled.length === 2, 'both redriven messages handled');
  expect(await buggy.store()?.getMany(ids.map((id) => `handled:${id}`))).toEqual(['1', '1']);
  expect((await admin('GET', '/bus/dead-letters/changefeed')).body).toMatchObject({ moved: 0, remaining: 0 });
  expect(await proc.bus.takeDeadLetters('changefeed')).toEqual([]);
}, 30_000);

it('answers 404 with the services this process consumes for', async () => {
  const unknown = await admin('GET', '/bus/dead-letters/ingest');
  expect(unknown.status).toBe(404);
  expect(unknown.body).toMatchObject({ type: expect.stringContaining('not-found'), allowed: ['changefeed'], remediation: expect.any(String) });
  expect((await admin('POST', '/bus/dead-letters/ingest/redrive', { dry_run: true })).body).toMatchObject({ status: 404, allowed: ['changefeed'] });
});

it('answers 400 invalid-request with a remediation for a bad body, and moves nothing', async () => {
  for (const body of [undefined, {}, [], { dry_run: 'no' }, { dry_run: false, max: 0 }, { dry_run: false, max: 1.5 }, { dry_run: false, max: 100_001 }, { dryrun: true, dry_run: true }]) {
    const answer = await admin('POST', '/bus/dead-letters/changefeed/redrive', body);
    expect({ body, status: answer.status, type: answer.body['type'] }).toEqual({ body, status: 400, type: expect.stringContaining('invalid-request') });
    expect(answer.body['remediation']).toContain('"dry_run"');
  }
  expect((await admin('POST', '/bus/dead-letters/changefeed/redrive', '{"dry_run": tr')).status).toBe(400);
  expect((await admin('GET', '/bus/dead-letters/changefeed', undefined, 'wrong')).status).toBe(401);
});
