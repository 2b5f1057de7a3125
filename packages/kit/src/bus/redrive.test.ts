// Redrive on the in-process broker, beyond the contract (bus.contract.ts runs that against every
// driver): the headers a letter goes back with, its partition's own queue, letters that stay, and on
// a journal the order of the writes (the copy confirmed on the disk before the dead letter's entry
// goes) and a restart after it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { testValidator } from '../../testing/validators';
import { MemoryBroker, type StoredMessage } from './memory-broker';
import { MemoryBus } from './memory-bus';
import { busNames, DEFAULT_NAMESPACE, HEADER } from './names';
import type { PartitionSettings } from './partitions';
import { PARTITION_HEADER } from './redrive';
import { NonRetryableError, type Envelope } from './types';

const logger = pino({ level: 'silent' });
const names = busNames(DEFAULT_NAMESPACE);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Dead-letters `count` pings of `service` (a handler that refuses them), then stops consuming. */
async function deadLetters(bus: MemoryBus, service: string, type: string, count: number, partition?: (n: number) => number): Promise<Envelope[]> {
  const dead = names.deadLetterQueue(service);
  const consumer = await bus.consume({ service, types: [type], handler: async () => Promise.reject(new NonRetryableError('store said no')) });
  const sent = await bus.publishMany(Array.from({ length: count }, (_, n) => ({ type, payload: { n }, source: 'test', ...(partition ? { partition: partition(n) } : {}) })));
  await waitFor(() => bus.broker.queueStats(dead)?.messages === count, `${count} dead letters`);
  await consumer.drain();
  return sent;
}

const bodyId = (m: StoredMessage) => (JSON.parse(m.body) as Envelope).id;

describe('redrive on the in-process broker', () => {
  it('sends a letter back with the same body and id, its failures reset to 0, no reason and no partition note', async () => {
    const bus = new MemoryBus({ broker: new MemoryBroker(), validator: testValidator, logger });
    const [sent] = await deadLetters(bus, 'headers', 'test.h.ping', 1);
    const [letter] = bus.broker.peek(names.deadLetterQueue('headers'));
    expect(letter?.headers).toMatchObject({ [HEADER.failures]: 1, [HEADER.reason]: 'NonRetryableError: store said no' });
    expect(await bus.redriveDeadLetters('headers')).toMatchObject({ moved: 1, kept: 0, remaining: 0 });
    const [back] = bus.broker.peek(names.serviceQueue('headers'));
    expect(back?.body).toBe(letter?.body);
    expect(back && bodyId(back)).toBe(sent?.id);
    expect(back?.headers[HEADER.failures]).toBe(0);
    expect(back?.headers).not.toHaveProperty(HEADER.reason);
    expect(back?.headers).not.toHaveProperty(PARTITION_HEADER);
    expect(Number(back?.headers[HEADER.publishedAt])).toBeGreaterThanOrEqual(Number(letter?.headers[HEADER.publishedAt]));
    await bus.close();
  });

  it('puts each letter of a partitioned type back in its own partition\'s queue', async () => {
    const type = 'test.part.ping';
    const partitions: PartitionSettings = { count: 4, types: new Set([type]), heartbeatMs: 100 };
    const bus = new MemoryBus({ broker: new MemoryBroker(), validator: testValidator, logger, partitions });
    // Letter n goes to partition (n * 3) % 4: 0, 3, 2, 1, 0, 3.
    const sent = await deadLetters(bus, 'parts', type, 6, (n) => (n * 3) % 4);
    const letters = bus.broker.peek(names.deadLetterQueue('parts'));
    expect(letters.map((m) => [bodyId(m), m.headers[PARTITION_HEADER]])).toEqual(expect.arrayContaining(sent.map((e, n) => [e.id, (n * 3) % 4])));
    expect(await bus.redriveDeadLetters('parts')).toMatchObject({ moved: 6, kept: 0 });
    expect(bus.broker.peek(names.serviceQueue('parts'))).toEqual([]);
    for (let p = 0; p < 4; p += 1) {
      const expected = sent.filter((_, n) => (n * 3) % 4 === p).map((e) => e.id);
      expect({ p, ids: bus.broker.peek(names.partitionQueue('parts', p)).map(bodyId).sort() }).toEqual({ p, ids: expected.sort() });
    }
    await bus.close();
  });

  it('keeps, in their places, letters it cannot move, and says why', async () => {
    const type = 'test.keep.ping';
    const partitioned = 'test.keepp.ping';
    const bus = new MemoryBus({ broker: new MemoryBroker(), validator: testValidator, logger, partitions: { count: 4, types: new Set([partitioned]), heartbeatMs: 100 } });
    const dead = names.deadLetterQueue('keeps');
    const [first, second] = await deadLetters(bus, 'keeps', type, 2);
    const letter = (body: string, headers: Record<string, string | number> = {}): StoredMessage => ({ body, headers: { [HEADER.failures]: 5, [HEADER.reason]: 'old', ...headers }, redelivered: false, expiresAt: null });
    const envelope = JSON.stringify({ id: 'legacy-1', type: partitioned, version: 1, occurred_at: new Date().toISOString(), source: 'test', workspace_id: null, website_id: null, payload: { n: 1 } });
    // Queue: first, second, then one that is not JSON, one not an envelope, a partitioned letter
    // that never said its partition, and one for a partition this service has no queue for.
    bus.broker.sendToQueue(dead, letter('{"half": '));
    bus.broker.sendToQueue(dead, letter('{"no":"id"}'));
    bus.broker.sendToQueue(dead, letter(envelope));
    bus.broker.sendToQueue(dead, letter(envelope, { [PARTITION_HEADER]: 2 }));
    const before = bus.broker.peek(dead).map((m) => m.body);

    const dry = await bus.redriveDeadLetters('keeps', { dryRun: true });
    expect(dry).toMatchObject({ moved: 2, kept: 4, keptBy: { unparseable: 2, 'partition unknown': 1, 'no queue': 1 }, remaining: 6, firstIds: [first?.id, second?.id] });
    expect(bus.broker.peek(dead).map((m) => m.body)).toEqual(before);
    const result = await bus.redriveDeadLetters('keeps');
    expect(result).toMatchObject({ moved: 2, kept: 4, keptBy: { unparseable: 2, 'partition unknown': 1, 'no queue': 1 }, remaining: 4 });
    expect(bus.broker.peek(dead).map((m) => m.body)).toEqual(before.slice(2));
    expect(bus.broker.peek(names.serviceQueue('keeps')).map(bodyId)).toEqual([first?.id, second?.id]);
    await bus.close();
  });
});

describe('redrive on the durable in-process broker', () => {
  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'sightline-redrive-'));
    dirs.push(dir);
    return dir;
  };
  const open = (dir: string) => new MemoryBus({ broker: MemoryBroker.durable(dir), validator: testValidator, logger });

  it('confirms the copy on the disk before it removes the dead letter, and a restart finds it in the service queue', async () => {
    const dir = tempDir();
    const bus = open(dir);
    const sent = await deadLetters(bus, 'durable', 'test.dur.ping', 3);
    const journal = bus.broker.journal;
    if (!journal) throw new Error('expected a journal');
    const steps: string[] = [];
    const put = journal.put.bind(journal);
    const confirm = journal.confirm.bind(journal);
    const remove = journal.remove.bind(journal);
    journal.put = (record) => (steps.push(`put ${record.queue}`), put(record));
    journal.confirm = async (writes) => {
      steps.push('confirm');
      await confirm(writes);
      steps.push('confirmed');
    };
    journal.remove = (queue, seq) => (steps.push(`remove ${queue}`), remove(queue, seq));
    expect(await bus.redriveDeadLetters('durable')).toMatchObject({ moved: 3 });
    const service = names.serviceQueue('durable');
    const dead = names.deadLetterQueue('durable');
    expect(steps).toEqual([`put ${service}`, `put ${service}`, `put ${service}`, 'confirm', 'confirmed', `remove ${dead}`, `remove ${dead}`, `remove ${dead}`]);
    await bus.close();

    const again = open(dir);
    await again.declareQueue('durable', ['test.dur.ping']);
    expect(again.broker.peek(dead)).toEqual([]);
    expect(again.broker.peek(service).map(bodyId)).toEqual(sent.map((e) => e.id));
    expect(again.broker.peek(service).map((m) => m.headers[HEADER.failures])).toEqual([0, 0, 0]);
    await again.close();
  });

  it('keeps the dead letters when the journal cannot confirm the copies', async () => {
    const dir = tempDir();
    const bus = open(dir);
    const sent = await deadLetters(bus, 'diskfull', 'test.full.ping', 2);
    const journal = bus.broker.journal;
    if (!journal) throw new Error('expected a journal');
    const confirm = journal.confirm.bind(journal);
    journal.confirm = async () => Promise.reject(new Error('disk full'));
    await expect(bus.redriveDeadLetters('diskfull')).rejects.toThrow('disk full');
    const dead = names.deadLetterQueue('diskfull');
    expect(bus.broker.peek(dead).map(bodyId)).toEqual(sent.map((e) => e.id));
    journal.confirm = confirm;
    await bus.close();

    // Their journal entries were never removed: a restart still has them as dead letters.
    const again = open(dir);
    await again.declareQueue('diskfull', ['test.full.ping']);
    expect(again.broker.peek(dead).map(bodyId)).toEqual(sent.map((e) => e.id));
    await again.close();
  });
});
