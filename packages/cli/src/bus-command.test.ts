// `sightline bus dead-letters` and `sightline bus redrive` against a running process (embedded
// stores, durable in-process bus) whose stand-in consumer has a bug that makes it fail N times: its
// messages are dead-lettered, the commands count them, a dry run moves nothing, and the redrive
// brings them back to be handled.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadConfig, startModules, type RunningProcess } from '@sightline/kit';
import { FAILING_CONSUMER_TYPE, failingConsumer, waitUntil } from '@sightline/kit/testing/failing-consumer';
import { MESSAGE_EXAMPLES } from '@sightline/proto-schemas';
import type { AdminConnection } from './admin-client';
import { deadLetterCounts, deadLettersSummary, redriveDeadLetters, redriveSummary } from './bus-command';
import { main } from './main';

const TYPE = FAILING_CONSUMER_TYPE;
let dataDir: string;
let proc: RunningProcess;
let conn: AdminConnection;
const buggy = failingConsumer(15); // three messages, each failing all its 5 attempts
const handled = buggy.handled;

/** Runs `sightline --admin-url … --admin-token … <args>` in this process; resolves with what it printed. */
async function run(args: string[]): Promise<string> {
  let out = '';
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    await main(['node', 'sightline', '--admin-url', conn.url, '--admin-token', conn.token, ...args]);
  } finally {
    write.mockRestore();
  }
  return out;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sightline-bus-cli-'));
  proc = await startModules({
    config: loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: `buscli${Date.now()}` }),
    logger: createLogger({ level: 'silent' }),
    modules: [buggy.module],
  });
  conn = { url: `http://127.0.0.1:${proc.adminPort}`, token: proc.settings.adminToken };
}, 60_000);
afterAll(async () => {
  await proc?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('counts the dead letters, says what a dry run would move, then moves them back to be handled', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i += 1) ids.push((await proc.bus.publish({ type: TYPE, source: 'test', id: randomUUID(), payload: MESSAGE_EXAMPLES[TYPE] })).id);
  await waitUntil(async () => (await deadLetterCounts(conn, 'changefeed')).remaining === 3, 'three dead letters');

  const counted = await deadLetterCounts(conn, 'changefeed');
  expect(deadLettersSummary(counted)).toBe([
    `changefeed has 3 dead letters; a redrive would move 3 (${TYPE} 3) and keep 0`,
    '  reasons: Error: bug in the handler 3',
    `  first ids: ${counted.first_ids.join(', ')}`,
  ].join('\n'));

  const dry = await redriveDeadLetters(conn, { service: 'changefeed', dryRun: true, max: 2 });
  expect(redriveSummary(dry).split('\n')[0]).toBe(`would move 2 dead letters of changefeed back to its queue (${TYPE} 2); 0 kept; 3 in the dead-letter queue (nothing moved)`);
  // The same through the command line as an operator types it.
  const typed = await run(['bus', 'redrive', '--service', 'changefeed', '--dry-run', '--max', '2']);
  expect(typed.split('\n')[0]).toBe(`would move 2 dead letters of changefeed back to its queue (${TYPE} 2); 0 kept; 3 in the dead-letter queue (nothing moved)`);
  expect(JSON.parse(await run(['bus', 'dead-letters', '--service', 'changefeed', '--json']))).toMatchObject({ service: 'changefeed', dry_run: true, moved: 3, remaining: 3 });
  await expect(run(['bus', 'redrive', '--service', 'changefeed', '--max', 'all'])).rejects.toThrow(/--max must be a positive whole number/);
  await new Promise((r) => setTimeout(r, 200));
  expect(handled).toEqual([]);

  const moved = await redriveDeadLetters(conn, { service: 'changefeed', dryRun: false });
  expect(redriveSummary(moved).split('\n')[0]).toBe(`moved 3 dead letters of changefeed back to its queue (${TYPE} 3); 0 kept; 0 in the dead-letter queue`);
  await waitUntil(() => handled.length === 3, 'the three handled');
  expect([...handled].sort()).toEqual([...ids].sort());
  expect(deadLettersSummary(await deadLetterCounts(conn, 'changefeed'))).toBe('changefeed has no dead letters');
}, 30_000);

it('fails with the admin API\'s problem and the allowed services for a service this process does not run', async () => {
  await expect(redriveDeadLetters(conn, { service: 'ingest', dryRun: true })).rejects.toThrow(/admin API 404: .*no consumers of "ingest"[\s\S]*allowed: changefeed/);
});

it('summarises kept letters and their causes', () => {
  const report = { service: 'ingest', dry_run: false, moved: 1, by_type: { 'ingest.batch_received': 1 }, by_reason: { 'Error: x': 1 }, first_ids: ['a'], kept: 2, kept_by: { unparseable: 1, 'partition unknown': 1 }, remaining: 2 };
  expect(redriveSummary(report)).toBe([
    'moved 1 dead letter of ingest back to its queue (ingest.batch_received 1); 2 kept; 2 in the dead-letter queue',
    '  reasons: Error: x 1',
    '  kept (left in the dead-letter queue): partition unknown 1, unparseable 1',
    '  first ids: a',
  ].join('\n'));
});
