// The in-process bus on a journal: the bus contract unchanged, then what only durability adds —
// a new broker on the same directory delivers exactly what was not acked, in order, with retries
// and dead letters kept — and the backpressure an edge publisher sees.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { testValidator } from '../../testing/validators';
import { ProblemError } from '../errors';
import { describeBusContract } from './bus.contract';
import { createBus } from './index';
import { MemoryBroker } from './memory-broker';
import { MemoryBus } from './memory-bus';
import { NonRetryableError, type Envelope } from './types';

const logger = pino({ level: 'silent' });
const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'sightline-journal-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

const contractDir = tempDir();
describeBusContract('memory (durable journal)', async (options) =>
  createBus({ url: 'memory://durable-contract', journalDir: contractDir, validator: options?.validator ?? testValidator, logger, ...(options?.partitions ? { partitions: options.partitions } : {}) }),
);

describe('durable in-process bus', () => {
  const open = (dir: string) => createBus({ journalDir: dir, validator: testValidator, logger }) as Promise<MemoryBus>;
  const n = (e: Envelope) => (e.payload as { n: number }).n;

  it('delivers again after a restart exactly the messages that were not acked, in publish order', async () => {
    const dir = tempDir();
    const first = await open(dir);
    await first.declareQueue('keeper', ['test.keep.ping']);
    const handled: number[] = [];
    // Acks 0-4, then holds every later delivery until the process "ends".
    await first.consume({ service: 'keeper', types: ['test.keep.ping'], prefetch: 3, handler: async (e) => {
      if (n(e) >= 5) await new Promise(() => undefined);
      handled.push(n(e));
    } });
    await first.publishMany(Array.from({ length: 20 }, (_, i) => ({ type: 'test.keep.ping', payload: { n: i }, source: 'test' })));
    await waitFor(() => handled.length === 5, 'the first five acked');
    await sleep(20);
    await first.close();
    expect(MemoryBroker.durable(dir)).not.toBe(first.broker); // the journal was closed with its last client

    const second = await open(dir);
    const again: number[] = [];
    await second.consume({ service: 'keeper', types: ['test.keep.ping'], handler: async (e) => void again.push(n(e)) });
    await waitFor(() => again.length === 15, 'the fifteen unacked');
    expect(again).toEqual(Array.from({ length: 15 }, (_, i) => i + 5));
    await sleep(50);
    expect(again).toHaveLength(15);
    await second.close();

    // Everything acked: a third start delivers nothing.
    const third = await open(dir);
    const none: number[] = [];
    await third.consume({ service: 'keeper', types: ['test.keep.ping'], handler: async (e) => void none.push(n(e)) });
    await sleep(100);
    expect(none).toEqual([]);
    await third.close();
  });

  it('keeps a retry that waits for its delay, with its attempt count, across a restart', async () => {
    const dir = tempDir();
    const first = await open(dir);
    let calls = 0;
    await first.consume({ service: 'retrier', types: ['test.retry.ping'], retryDelayMs: 400, handler: async () => {
      calls += 1;
      throw new Error('store down');
    } });
    await first.publish({ type: 'test.retry.ping', payload: { n: 7 }, source: 'test' });
    await waitFor(() => calls === 1, 'the first attempt');
    await sleep(30);
    await first.close(); // the retry is due in about 370 ms

    const second = await open(dir);
    const got: number[] = [];
    const started = Date.now();
    await second.consume({ service: 'retrier', types: ['test.retry.ping'], handler: async (e) => void got.push(n(e)) });
    await waitFor(() => got.length === 1, 'the retry');
    expect(got).toEqual([7]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200); // still waited for its delay
    expect(calls).toBe(1);
    await second.close();
  });

  it('keeps dead letters across a restart until they are taken', async () => {
    const dir = tempDir();
    const first = await open(dir);
    let seen = 0;
    await first.consume({ service: 'doomed', types: ['test.dead.ping'], handler: async () => {
      seen += 1;
      throw new NonRetryableError('never works');
    } });
    for (const i of [1, 2, 3]) await first.publish({ type: 'test.dead.ping', payload: { n: i }, source: 'test' });
    await waitFor(() => seen === 3, 'three failures');
    await sleep(30);
    await first.close();

    const second = await open(dir);
    await second.declareQueue('doomed', ['test.dead.ping']);
    const letters = await second.takeDeadLetters('doomed');
    expect(letters.map((l) => (l.envelope?.payload as { n: number }).n)).toEqual([1, 2, 3]);
    expect(letters.every((l) => l.reason.includes('never works'))).toBe(true);
    await second.close();
    const third = await open(dir);
    await third.declareQueue('doomed', ['test.dead.ping']);
    expect(await third.takeDeadLetters('doomed')).toEqual([]);
    await third.close();
  });

  it('does not journal RPC requests, and a broker without a journal keeps nothing', async () => {
    const broker = new MemoryBroker();
    const bus = new MemoryBus({ broker, validator: testValidator, logger });
    await bus.publish({ type: 'test.none.ping', payload: { n: 1 }, source: 'test' });
    expect(broker.journal).toBeNull();
    await bus.close();
    const dir = tempDir();
    const durable = await open(dir);
    await durable.serveRpc({ service: 'echoer', methods: { 'echoer.echo': async (r) => r } });
    expect(await durable.rpc('echoer.echo', { text: 'hi' })).toEqual({ text: 'hi' });
    expect(durable.broker.journal?.replay()).toEqual([]);
    await durable.close();
  });
});

describe('backpressure of the in-process bus', () => {
  it('holds an edge publish briefly while the consumers are behind by its bound, then refuses it with a 503 and Retry-After; never a handler\'s', async () => {
    const broker = new MemoryBroker();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const handled: number[] = [];
    const consumer = new MemoryBus({ broker, validator: testValidator, logger });
    // One message in flight at a time, and the first one held: the rest wait in the queue.
    await consumer.consume({ service: 'slow', types: ['test.bp.ping'], prefetch: 1, handler: async (e) => {
      handled.push(n(e));
      if (n(e) === 0) await gate;
    } });
    const filler = new MemoryBus({ broker, validator: testValidator, logger });
    for (const i of [0, 1, 2, 3]) await filler.publish({ type: 'test.bp.ping', payload: { n: i }, source: 'test' });
    await sleep(20);
    const backlog = broker.backlogChars();
    expect(backlog).toBeGreaterThan(0);

    // At the bound: waits its 100 ms, then is refused. One character above it: goes through.
    const atBound = new MemoryBus({ broker, validator: testValidator, logger, maxBacklogChars: backlog, backlogWaitMs: 100 });
    const aboveBound = new MemoryBus({ broker, validator: testValidator, logger, maxBacklogChars: backlog + 1, backlogWaitMs: 100 });
    const started = Date.now();
    const refused = await atBound.publish({ type: 'test.bp.ping', payload: { n: 10 }, source: 'test' }).then(() => null, (e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(refused).toBeInstanceOf(ProblemError);
    expect((refused as ProblemError).kind).toBe('service-unavailable');
    expect((refused as ProblemError).headers?.['Retry-After']).toBe('1');
    // admit() answers the same before any work is done: refused at the bound, taken above it.
    await expect(atBound.admit()).rejects.toMatchObject({ kind: 'service-unavailable', headers: { 'Retry-After': '1' } });
    await expect(aboveBound.admit()).resolves.toBeUndefined();
    await aboveBound.publish({ type: 'test.bp.ping', payload: { n: 11 }, source: 'test' });

    // A handler's own publish never waits nor is refused, however far behind the consumers are.
    let relayed = false;
    await atBound.consume({ service: 'relay', types: ['test.bp.pong'], handler: async () => {
      await atBound.publish({ type: 'test.bp.ping', payload: { n: 12 }, source: 'test' });
      relayed = true;
    } });
    await filler.publish({ type: 'test.bp.pong', payload: { text: 'go' }, source: 'test' });
    await waitFor(() => relayed, 'the relay');

    // Room comes while a publisher waits: it goes through.
    const waiting = atBound.publish({ type: 'test.bp.ping', payload: { n: 13 }, source: 'test' });
    release();
    await waiting;
    await waitFor(() => handled.length === 7, 'everything accepted handled');
    expect(handled.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 11, 12, 13]);
    for (const bus of [consumer, filler, atBound, aboveBound]) await bus.close();
  });

  it('finishQueued waits for the consumers to handle what is queued, and reports what is left at its deadline', async () => {
    const broker = new MemoryBroker();
    const bus = new MemoryBus({ broker, validator: testValidator, logger });
    let handled = 0;
    await bus.consume({ service: 'drainer', types: ['test.fq.ping'], prefetch: 1, handler: async () => {
      await sleep(10);
      handled += 1;
    } });
    await bus.publishMany(Array.from({ length: 10 }, (_, i) => ({ type: 'test.fq.ping', payload: { n: i }, source: 'test' })));
    expect(await bus.finishQueued(5_000)).toBe(0);
    expect(handled).toBe(10);
    await bus.publishMany(Array.from({ length: 50 }, (_, i) => ({ type: 'test.fq.ping', payload: { n: i }, source: 'test' })));
    const left = await bus.finishQueued(50);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(50);
    await bus.close();
  });
});

function n(e: Envelope): number {
  return (e.payload as { n: number }).n;
}
