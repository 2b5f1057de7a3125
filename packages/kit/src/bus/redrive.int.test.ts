// Redrive on RabbitMQ, beyond the contract (bus.contract.ts): the message a letter goes back as (read
// raw from the service queue), each partition's own queue, and letters that stay — in their places,
// through a dry run and a real one — including a letter the broker itself dead-lettered.
import { randomUUID } from 'node:crypto';
import { connect, type ChannelModel, type Channel } from 'amqplib';
import pino from 'pino';
import { testValidator } from '../../testing/validators';
import { AmqpBus } from './amqp-bus';
import { busNames, HEADER } from './names';
import type { PartitionSettings } from './partitions';
import { PARTITION_HEADER } from './redrive';
import { NonRetryableError, type Envelope } from './types';

const URL = 'amqp://guest:guest@127.0.0.1:5672';
const namespace = `test-redrive-${randomUUID().slice(0, 8)}`;
const names = busNames(namespace);
const logger = pino({ level: 'silent' });
const services: string[] = [];
let conn: ChannelModel;
let ch: Channel;

beforeAll(async () => {
  try {
    conn = await connect(URL);
  } catch (err) {
    throw new Error(`RabbitMQ is not reachable at ${URL} (${err instanceof Error ? err.message : String(err)}); start it before running this test`);
  }
  ch = await conn.createChannel();
});
afterAll(async () => {
  for (const s of services) {
    const parts = Array.from({ length: 4 }, (_, n) => [names.partitionQueue(s, n), names.partitionRetryQueue(s, n)]).flat();
    for (const q of [names.serviceQueue(s), names.retryQueue(s), names.deadLetterQueue(s), ...parts]) await ch.deleteQueue(q);
  }
  await ch.deleteExchange(names.exchange);
  await ch.deleteExchange(names.membersExchange);
  await conn.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor(check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}
const service = (): string => {
  const s = `redrive-${randomUUID().slice(0, 8)}`;
  services.push(s);
  return s;
};
const depth = async (queue: string) => (await ch.checkQueue(queue)).messageCount;

/** Every message of a queue, read raw and removed, oldest first. */
async function drainRaw(queue: string): Promise<{ body: string; messageId: unknown; headers: Record<string, unknown> }[]> {
  const out = [];
  for (;;) {
    const msg = await ch.get(queue, { noAck: true });
    if (msg === false) return out;
    out.push({ body: msg.content.toString('utf8'), messageId: msg.properties.messageId, headers: msg.properties.headers ?? {} });
  }
}

async function deadLetters(bus: AmqpBus, s: string, type: string, count: number, partition?: (n: number) => number): Promise<Envelope[]> {
  const consumer = await bus.consume({ service: s, types: [type], handler: async () => Promise.reject(new NonRetryableError('store said no')) });
  const sent: Envelope[] = [];
  const already = await depth(names.deadLetterQueue(s));
  // One at a time, so the dead-letter queue holds them in publish order.
  for (let n = 0; n < count; n += 1) {
    sent.push(await bus.publish({ type, payload: { n }, source: 'test', ...(partition ? { partition: partition(n) } : {}) }));
    await waitFor(async () => (await depth(names.deadLetterQueue(s))) === already + n + 1, `dead letter ${n}`);
  }
  await consumer.drain();
  return sent;
}

describe('redrive on RabbitMQ', () => {
  it('sends a letter back with the same body and message id, its failures reset to 0, no reason and no partition note', async () => {
    const s = service();
    const type = `test.${s}.ping`;
    const bus = await AmqpBus.connect({ url: URL, namespace, validator: testValidator, logger });
    try {
      const [sent] = await deadLetters(bus, s, type, 1);
      expect(await bus.redriveDeadLetters(s)).toMatchObject({ moved: 1, kept: 0, remaining: 0, byReason: { 'NonRetryableError: store said no': 1 } });
      const [back] = await drainRaw(names.serviceQueue(s));
      expect(back?.messageId).toBe(sent?.id);
      expect(JSON.parse(back?.body ?? '{}')).toEqual(sent);
      expect(back?.headers[HEADER.failures]).toBe(0);
      expect(back?.headers).not.toHaveProperty(HEADER.reason);
      expect(back?.headers).not.toHaveProperty(PARTITION_HEADER);
    } finally {
      await bus.close();
    }
  });

  it('puts each letter of a partitioned type back in its own partition\'s queue', async () => {
    const s = service();
    const type = `test.${s}.ping`;
    const partitions: PartitionSettings = { count: 4, types: new Set([type]), heartbeatMs: 100 };
    const bus = await AmqpBus.connect({ url: URL, namespace, validator: testValidator, logger, partitions });
    try {
      const sent = await deadLetters(bus, s, type, 6, (n) => (n * 3) % 4);
      expect(await bus.redriveDeadLetters(s)).toMatchObject({ moved: 6, kept: 0, remaining: 0 });
      expect(await depth(names.serviceQueue(s))).toBe(0);
      for (let p = 0; p < 4; p += 1) {
        const expected = sent.filter((_, n) => (n * 3) % 4 === p).map((e) => e.id);
        expect({ p, ids: (await drainRaw(names.partitionQueue(s, p))).map((m) => m.messageId) }).toEqual({ p, ids: expected });
      }
    } finally {
      await bus.close();
    }
  });

  it('keeps letters it cannot move in their places, through a dry run and a real one', async () => {
    const s = service();
    const type = `test.${s}.ping`;
    const partitioned = `test.${s}.pong`;
    const bus = await AmqpBus.connect({ url: URL, namespace, validator: testValidator, logger, partitions: { count: 4, types: new Set([partitioned]), heartbeatMs: 100 } });
    try {
      const dead = names.deadLetterQueue(s);
      const [first] = await deadLetters(bus, s, type, 1);
      const legacy = { id: 'legacy-1', type: partitioned, version: 1, occurred_at: new Date().toISOString(), source: 'test', workspace_id: null, website_id: null, payload: { text: 'x' } };
      // Not JSON; a partitioned letter that never said its partition; then a letter the broker
      // dead-lettered itself from partition 2's queue (its x-first-death-queue says so), whose
      // queue this service does not have.
      ch.sendToQueue(dead, Buffer.from('{"half": '), { persistent: true });
      ch.sendToQueue(dead, Buffer.from(JSON.stringify(legacy)), { persistent: true, messageId: legacy.id, headers: { [HEADER.failures]: 5, [HEADER.reason]: 'old' } });
      ch.sendToQueue(dead, Buffer.from(JSON.stringify({ ...legacy, id: 'legacy-2' })), { persistent: true, messageId: 'legacy-2', headers: { 'x-first-death-queue': names.partitionQueue(s, 2), 'x-first-death-reason': 'rejected' } });
      await waitFor(async () => (await depth(dead)) === 4, 'four letters');
      const [second] = await deadLetters(bus, s, type, 1);
      const before = await bus.redriveDeadLetters(s, { dryRun: true });
      expect(before).toMatchObject({ moved: 2, kept: 3, keptBy: { unparseable: 1, 'partition unknown': 1, 'no queue': 1 }, remaining: 5 });
      expect(before.firstIds).toEqual([first?.id, second?.id]);
      const result = await bus.redriveDeadLetters(s);
      expect(result).toMatchObject({ moved: 2, kept: 3, remaining: 3, firstIds: before.firstIds });
      expect((await drainRaw(dead)).map((m) => m.messageId ?? m.body)).toEqual(['{"half": ', 'legacy-1', 'legacy-2']);
      expect((await drainRaw(names.serviceQueue(s))).map((m) => m.messageId)).toEqual(before.firstIds);
    } finally {
      await bus.close();
    }
  });
});
