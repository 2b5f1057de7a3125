// The bus contract: one suite, run unchanged against every driver (memory-bus.test.ts,
// amqp-bus.int.test.ts). A service must not be able to tell which driver it runs on.
import { ProblemError } from '../errors';
import { permissiveValidator, testValidator } from '../../testing/validators';
import { partitionOf, type PartitionSettings } from './partitions';
import {
  InvalidMessageError,
  NonRetryableError,
  RetryableError,
  RpcNoConsumerError,
  RpcRemoteError,
  RpcTimeoutError,
  type Bus,
  type DeadLetter,
  type Envelope,
  type MessageValidator,
} from './types';

/** Creates a new client on the suite's shared broker and namespace. */
export type MakeBus = (options?: { validator?: MessageValidator; partitions?: PartitionSettings }) => Promise<Bus>;

export interface ContractNames {
  /** Every service name the suite consumed or served as, for drivers that must delete queues. */
  services: string[];
  /** The most partitions any client of the suite used (their queues are per service and partition). */
  partitions: number;
}

export interface ContractOptions {
  /** Runs after the suite, with the names it used (delete queues, exchanges). */
  cleanup?: (used: ContractNames) => Promise<void>;
}

const SOURCE = 'contract-test';

export function describeBusContract(name: string, makeBus: MakeBus, options: ContractOptions = {}): void {
  describe(`bus contract: ${name}`, () => {
    const open: Bus[] = [];
    const used: ContractNames = { services: [], partitions: 1 };
    const client = async (opts?: { validator?: MessageValidator; partitions?: PartitionSettings }): Promise<Bus> => {
      used.partitions = Math.max(used.partitions, opts?.partitions?.count ?? 1);
      const bus = await makeBus(opts);
      open.push(bus);
      return bus;
    };
    const service = (): string => {
      const s = `svc-${uid()}`;
      used.services.push(s);
      return s;
    };

    afterEach(async () => {
      await Promise.all(open.splice(0).map((bus) => bus.close().catch(() => undefined)));
    });
    afterAll(async () => {
      if (options.cleanup) await options.cleanup(used);
    });

    describe('publish and consume', () => {
      it('routes by type: one copy per consuming service, competing consumers within a service', async () => {
        const t = uid();
        const ping = `test.${t}.ping`;
        const pong = `test.${t}.pong`;
        const a = service();
        const b = service();
        const gotA1: Envelope[] = [];
        const gotA2: Envelope[] = [];
        const gotB: Envelope[] = [];
        const slowly = (list: Envelope[]) => async (e: Envelope) => {
          list.push(e);
          await sleep(5);
        };
        await (await client()).consume({ service: a, types: [ping], prefetch: 1, handler: slowly(gotA1) });
        await (await client()).consume({ service: a, types: [ping], prefetch: 1, handler: slowly(gotA2) });
        await (await client()).consume({ service: b, types: [ping, pong], handler: async (e) => void gotB.push(e) });
        const pub = await client();
        const pings = await pub.publishMany(range(10).map((n) => ({ type: ping, payload: { n }, source: SOURCE })));
        const pongs = await pub.publishMany(range(3).map((n) => ({ type: pong, payload: { text: `t${n}` }, source: SOURCE })));

        await waitFor(() => gotA1.length + gotA2.length >= 10 && gotB.length >= 13, 'all copies delivered');
        await sleep(100); // room for a duplicate to show up, if there were one
        expect(ids([...gotA1, ...gotA2])).toEqual(ids(pings));
        expect(ids(gotB)).toEqual(ids([...pings, ...pongs]));
        expect(gotA1.length).toBeGreaterThan(0);
        expect(gotA2.length).toBeGreaterThan(0);
      });

      it('keeps messages for a declared queue until its consumer first connects', async () => {
        const ping = `test.${uid()}.ping`;
        const later = service();
        await (await client()).declareQueue(later, [ping]);
        const sent = await (await client()).publishMany(range(3).map((n) => ({ type: ping, payload: { n }, source: SOURCE })));
        const got: Envelope[] = [];
        await (await client()).consume({ service: later, types: [ping], handler: async (e) => void got.push(e) });
        await waitFor(() => got.length === 3, 'the waiting messages');
        expect(ids(got)).toEqual(ids(sent));
      });

      it('fills in the envelope and delivers exactly its JSON form', async () => {
        const ping = `test.${uid()}.ping`;
        const got: Envelope[] = [];
        await (await client()).consume({ service: service(), types: [ping], handler: async (e) => void got.push(e) });
        const sent = await (await client()).publish({
          type: ping,
          payload: { n: 1, at: new Date(0), gone: undefined },
          source: SOURCE,
          workspace_id: 'ws_1',
        });
        expect(sent).toMatchObject({ type: ping, version: 1, source: SOURCE, workspace_id: 'ws_1', website_id: null });
        expect(typeof sent.id).toBe('string');
        expect(Number.isNaN(Date.parse(sent.occurred_at))).toBe(false);
        await waitFor(() => got.length === 1, 'delivery');
        expect(got[0]).toEqual(sent);
        expect(got[0]?.payload).toEqual({ n: 1, at: '1970-01-01T00:00:00.000Z' });
      });

      it('rejects a schema-invalid publish and sends nothing', async () => {
        const ping = `test.${uid()}.ping`;
        const got: Envelope[] = [];
        await (await client()).consume({ service: service(), types: [ping], handler: async (e) => void got.push(e) });
        const pub = await client();
        await expect(pub.publish({ type: ping, payload: { n: 'one' }, source: SOURCE })).rejects.toBeInstanceOf(InvalidMessageError);
        await expect(
          pub.publishMany([
            { type: ping, payload: { n: 1 }, source: SOURCE },
            { type: ping, payload: {}, source: SOURCE },
          ]),
        ).rejects.toBeInstanceOf(InvalidMessageError);
        await expect(pub.publish({ type: 'not.in.catalog', payload: {}, source: SOURCE })).rejects.toBeInstanceOf(InvalidMessageError);
        const ok = await pub.publish({ type: ping, payload: { n: 2 }, source: SOURCE });
        await waitFor(() => got.length >= 1, 'the valid message');
        await sleep(100);
        expect(ids(got)).toEqual([ok.id]);
      });
    });

    describe('at-least-once delivery', () => {
      it('redelivers a message whose consumer died before acking to another client of the service', async () => {
        const ping = `test.${uid()}.ping`;
        const s = service();
        const crashed = await client();
        const received = deferred<Envelope>();
        const release = deferred<void>();
        await crashed.consume({
          service: s,
          types: [ping],
          handler: async (e) => {
            received.resolve(e);
            await release.promise; // never finishes while the client is alive
          },
        });
        const sent = await (await client()).publish({ type: ping, payload: { n: 1 }, source: SOURCE });
        expect((await withTimeout(received.promise, 5000, 'first delivery')).id).toBe(sent.id);

        await crashed.close();
        const survivor = await client();
        const redelivered = deferred<Envelope>();
        await survivor.consume({ service: s, types: [ping], handler: async (e) => redelivered.resolve(e) });
        expect((await withTimeout(redelivered.promise, 5000, 'redelivery')).id).toBe(sent.id);
        release.resolve();
      });

      it('redelivers a message whose handler threw', async () => {
        const ping = `test.${uid()}.ping`;
        const s = service();
        const seen: string[] = [];
        const bus = await client();
        await bus.consume({
          service: s,
          types: [ping],
          retryDelayMs: 10,
          handler: async (e) => {
            seen.push(e.id);
            if (seen.length === 1) throw new RetryableError('flaky dependency');
          },
        });
        const sent = await (await client()).publish({ type: ping, payload: { n: 1 }, source: SOURCE });
        await waitFor(() => seen.length >= 2, 'the retry');
        await sleep(100);
        expect(seen).toEqual([sent.id, sent.id]);
        expect(await bus.takeDeadLetters(s)).toEqual([]);
      });
    });

    describe('dead letters', () => {
      it('dead-letters after maxAttempts failures, with the attempt count and reason', async () => {
        const ping = `test.${uid()}.ping`;
        const s = service();
        let calls = 0;
        const bus = await client();
        await bus.consume({
          service: s,
          types: [ping],
          maxAttempts: 3,
          retryDelayMs: 10,
          handler: async () => {
            calls += 1;
            throw new Error('boom');
          },
        });
        const sent = await (await client()).publish({ type: ping, payload: { n: 1 }, source: SOURCE });
        const letters = await takeAtLeast(bus, s, 1);
        expect(letters).toHaveLength(1);
        expect(letters[0]?.envelope?.id).toBe(sent.id);
        expect(letters[0]?.attempts).toBe(3);
        expect(letters[0]?.reason).toContain('boom');
        await sleep(100);
        expect(calls).toBe(3);
      });

      it('holds a delivery while its store is out of reach, spending no attempt, and never dead-letters it for that', async () => {
        const ping = `test.${uid()}.ping`;
        const s = service();
        let calls = 0;
        const bus = await client();
        const handled: number[] = [];
        await bus.consume({
          service: s,
          types: [ping],
          maxAttempts: 1,
          maxOutageBackoffMs: 20,
          handler: async (e) => {
            calls += 1;
            // Six tries meet a store that refuses connections, as during a restart.
            if (calls <= 6) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
            handled.push((e.payload as { n: number }).n);
          },
        });
        await (await client()).publish({ type: ping, payload: { n: 7 }, source: SOURCE });
        await waitFor(() => handled.length === 1, 'the delivery handled once the store answers');
        expect(handled).toEqual([7]);
        expect(calls).toBe(7);
        await sleep(100);
        expect(await bus.takeDeadLetters(s)).toEqual([]);
      });

      it('gives a delivery held by a store outage back to its queue when the consumer drains', async () => {
        const ping = `test.${uid()}.ping`;
        const s = service();
        let calls = 0;
        const held = await client();
        const consumer = await held.consume({
          service: s,
          types: [ping],
          maxAttempts: 1,
          handler: async () => {
            calls += 1;
            throw Object.assign(new Error('Connection terminated unexpectedly'), {});
          },
        });
        await (await client()).publish({ type: ping, payload: { n: 8 }, source: SOURCE });
        await waitFor(() => calls === 1, 'the first try');
        // The next try is a second away: the drain does not wait for it.
        await withTimeout(consumer.drain(), 500, 'the drain');
        const got: number[] = [];
        await (await client()).consume({ service: s, types: [ping], handler: async (e) => void got.push((e.payload as { n: number }).n) });
        await waitFor(() => got.length === 1, 'the delivery, given back');
        expect(got).toEqual([8]);
        expect(await held.takeDeadLetters(s)).toEqual([]);
      });

      it('dead-letters a NonRetryableError at once', async () => {
        const ping = `test.${uid()}.ping`;
        const s = service();
        let calls = 0;
        const bus = await client();
        await bus.consume({
          service: s,
          types: [ping],
          retryDelayMs: 10,
          handler: async () => {
            calls += 1;
            throw new NonRetryableError('bad input');
          },
        });
        const sent = await (await client()).publish({ type: ping, payload: { n: 1 }, source: SOURCE });
        const letters = await takeAtLeast(bus, s, 1);
        expect(letters[0]).toMatchObject({ attempts: 1, envelope: { id: sent.id } });
        expect(letters[0]?.reason).toContain('bad input');
        expect(calls).toBe(1);
      });

      it('dead-letters a message that fails its schema on consume, without calling the handler', async () => {
        const ping = `test.${uid()}.ping`;
        const s = service();
        let calls = 0;
        const bus = await client();
        await bus.consume({ service: s, types: [ping], handler: async () => void (calls += 1) });
        const loose = await client({ validator: permissiveValidator });
        const sent = await loose.publish({ type: ping, payload: { n: 'not a number' }, source: SOURCE });
        const letters = await takeAtLeast(bus, s, 1);
        expect(letters[0]).toMatchObject({ attempts: 1, envelope: { id: sent.id, payload: { n: 'not a number' } } });
        expect(letters[0]?.reason).toMatch(/schema/);
        expect(calls).toBe(0);
      });
    });

    describe('redrive', () => {
      const count = async (bus: Bus, s: string, queue: 'main' | 'dead_letter' | 'partitioned'): Promise<number> =>
        (await bus.queueStats(s, [queue])).find((q) => q.queue === queue)?.messages ?? 0;

      it('moves dead letters back to that service\'s queue only, in order, with the same ids and every attempt again', async () => {
        const ping = `test.${uid()}.ping`;
        const a = service();
        const b = service();
        let broken = true;
        const firstSeen: string[] = [];
        const handled: string[] = [];
        const bus = await client();
        await bus.consume({
          service: a,
          types: [ping],
          maxAttempts: 3,
          retryDelayMs: 10,
          handler: async (e) => {
            if (broken) throw new Error('store said no');
            // Fixed, yet each letter fails once more at first: with its count reset to 0 that is a
            // retry; had it kept its 3 failures it would be dead again at once.
            if (!firstSeen.includes(e.id)) {
              firstSeen.push(e.id);
              throw new RetryableError('one more time');
            }
            handled.push(e.id);
          },
        });
        const gotB: string[] = [];
        await (await client()).consume({ service: b, types: [ping], handler: async (e) => void gotB.push(e.id) });
        const sent = await (await client()).publishMany(range(5).map((n) => ({ type: ping, payload: { n }, source: SOURCE })));
        await waitFor(async () => (await count(bus, a, 'dead_letter')) === 5, 'five dead letters');

        const dry = await bus.redriveDeadLetters(a, { dryRun: true });
        expect(dry).toMatchObject({ service: a, dryRun: true, moved: 5, kept: 0, keptBy: {}, byType: { [ping]: 5 }, byReason: { 'Error: store said no': 5 }, remaining: 5 });
        expect([...dry.firstIds].sort()).toEqual(ids(sent));
        const order = dry.firstIds;
        // A dry run moves nothing and keeps the queue's order.
        expect((await bus.redriveDeadLetters(a, { dryRun: true })).firstIds).toEqual(order);
        expect(await count(bus, a, 'dead_letter')).toBe(5);
        expect(firstSeen).toEqual([]);

        broken = false;
        const result = await bus.redriveDeadLetters(a);
        expect(result).toMatchObject({ service: a, dryRun: false, moved: 5, kept: 0, byType: { [ping]: 5 }, remaining: 0 });
        expect(result.firstIds).toEqual(order);
        await waitFor(() => handled.length === 5, 'every redriven letter handled');
        expect(firstSeen).toEqual(order);
        expect([...handled].sort()).toEqual(ids(sent));
        await sleep(100);
        expect(await bus.takeDeadLetters(a)).toEqual([]);
        // The other consuming service had its copies once, at publish; the redrive gave it none.
        expect([...gotB].sort()).toEqual(ids(sent));
        expect(await bus.redriveDeadLetters(a)).toMatchObject({ moved: 0, kept: 0, remaining: 0 });
      });

      it('moves at most max, oldest first, and a dry run with max reports the same ones', async () => {
        const ping = `test.${uid()}.ping`;
        const s = service();
        const bus = await client();
        const failing = await bus.consume({ service: s, types: [ping], handler: async () => Promise.reject(new NonRetryableError('bad day')) });
        await bus.publishMany(range(6).map((n) => ({ type: ping, payload: { n }, source: SOURCE })));
        await waitFor(async () => (await count(bus, s, 'dead_letter')) === 6, 'six dead letters');
        await failing.drain();
        const order = (await bus.redriveDeadLetters(s, { dryRun: true })).firstIds;
        expect(order).toHaveLength(6);

        const dry = await bus.redriveDeadLetters(s, { dryRun: true, max: 2 });
        expect(dry).toMatchObject({ moved: 2, firstIds: order.slice(0, 2), byReason: { 'NonRetryableError: bad day': 2 }, remaining: 6 });
        expect(await count(bus, s, 'main')).toBe(0);
        const first = await bus.redriveDeadLetters(s, { max: 2 });
        expect(first).toMatchObject({ moved: 2, firstIds: order.slice(0, 2), remaining: 4 });
        await waitFor(async () => (await count(bus, s, 'main')) === 2, 'two back in the service queue');
        const rest = await bus.redriveDeadLetters(s, { max: 10 });
        expect(rest).toMatchObject({ moved: 4, firstIds: order.slice(2), remaining: 0 });
        await waitFor(async () => (await count(bus, s, 'main')) === 6, 'six back in the service queue');

        const got: string[] = [];
        await bus.consume({ service: s, types: [ping], handler: async (e) => void got.push(e.id) });
        await waitFor(() => got.length === 6, 'the six delivered');
        expect(got).toEqual(order);
      });

      it('moves each letter once when two redrives run at the same time', async () => {
        const ping = `test.${uid()}.ping`;
        const s = service();
        const bus = await client();
        const failing = await bus.consume({ service: s, types: [ping], handler: async () => Promise.reject(new NonRetryableError('nope')) });
        const sent = await bus.publishMany(range(20).map((n) => ({ type: ping, payload: { n }, source: SOURCE })));
        await waitFor(async () => (await count(bus, s, 'dead_letter')) === 20, 'twenty dead letters');
        await failing.drain();
        const other = await client();
        const [one, two] = await Promise.all([bus.redriveDeadLetters(s), other.redriveDeadLetters(s)]);
        expect((one?.moved ?? 0) + (two?.moved ?? 0)).toBe(20);
        const got: string[] = [];
        await bus.consume({ service: s, types: [ping], handler: async (e) => void got.push(e.id) });
        await waitFor(() => got.length >= 20, 'the twenty delivered');
        await sleep(100);
        expect([...got].sort()).toEqual(ids(sent));
        expect(await count(bus, s, 'dead_letter')).toBe(0);
      });

      it('puts a partitioned type back in the partitions\' queues, not the service queue', async () => {
        const ping = `test.${uid()}.ping`;
        const s = service();
        const partitions: PartitionSettings = { count: 4, types: new Set([ping]), heartbeatMs: 100 };
        const bus = await client({ partitions });
        const failing = await bus.consume({ service: s, types: [ping], handler: async () => Promise.reject(new NonRetryableError('nope')) });
        const sent = await bus.publishMany(range(4).map((n) => ({ type: ping, payload: { n }, source: SOURCE, partition: n })));
        await waitFor(async () => (await count(bus, s, 'dead_letter')) === 4, 'four dead letters');
        await failing.drain();
        expect(await bus.redriveDeadLetters(s)).toMatchObject({ moved: 4, kept: 0, remaining: 0 });
        await waitFor(async () => (await count(bus, s, 'partitioned')) === 4, 'four in the partition queues');
        expect(await count(bus, s, 'main')).toBe(0);
        const got: string[] = [];
        await bus.consume({ service: s, types: [ping], handler: async (e) => void got.push(e.id) });
        await waitFor(() => got.length === 4, 'the four delivered');
        expect([...got].sort()).toEqual(ids(sent));
      });

      it('answers an empty result for a service without dead letters, and refuses a bad max', async () => {
        const bus = await client();
        const s = service();
        await bus.declareQueue(s, [`test.${uid()}.ping`]);
        expect(await bus.redriveDeadLetters(s, { dryRun: true })).toEqual({ service: s, dryRun: true, moved: 0, byType: {}, byReason: {}, firstIds: [], kept: 0, keptBy: {}, remaining: 0 });
        await expect(bus.redriveDeadLetters(s, { max: 0 })).rejects.toThrow(/max/);
      });
    });

    describe('rpc', () => {
      it('round-trips a request', async () => {
        const r = service();
        await (await client()).serveRpc({
          service: r,
          methods: { [`${r}.echo`]: async (req) => ({ text: `${(req as { text: string }).text}!` }) },
        });
        const caller = await client();
        await expect(caller.rpc(`${r}.echo`, { text: 'hi' }, { timeoutMs: 5000 })).resolves.toEqual({ text: 'hi!' });
        await expect(caller.rpc(`${r}.echo`, { text: 5 })).rejects.toBeInstanceOf(InvalidMessageError);
      });

      it('carries a ProblemError back as RpcRemoteError, and hides other errors', async () => {
        const r = service();
        await (await client()).serveRpc({
          service: r,
          methods: {
            [`${r}.forbid`]: async () => {
              throw new ProblemError('method-not-allowed', { detail: 'Only reads here.', remediation: 'Use GET.', allowed: ['GET', 'HEAD'] });
            },
            [`${r}.crash`]: async () => {
              throw new Error('connection string postgres://admin:hunter2@db');
            },
          },
        });
        const caller = await client();
        const forbidden = await caller.rpc(`${r}.forbid`, {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
        expect(forbidden).toBeInstanceOf(RpcRemoteError);
        expect((forbidden as RpcRemoteError).problem).toEqual({
          kind: 'method-not-allowed',
          status: 405,
          detail: 'Only reads here.',
          remediation: 'Use GET.',
          allowed: ['GET', 'HEAD'],
        });
        const crashed = await caller.rpc(`${r}.crash`, {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
        expect(crashed).toBeInstanceOf(RpcRemoteError);
        const problem = (crashed as RpcRemoteError).problem;
        expect(problem).toMatchObject({ kind: 'internal', status: 500 });
        expect(JSON.stringify(problem)).not.toContain('hunter2');
      });

      it('rejects with RpcTimeoutError by its deadline when the server is slow', async () => {
        const r = service();
        await (await client()).serveRpc({ service: r, methods: { [`${r}.slow`]: async () => sleep(1000).then(() => ({})) } });
        const started = Date.now();
        await expect((await client()).rpc(`${r}.slow`, {}, { timeoutMs: 300 })).rejects.toBeInstanceOf(RpcTimeoutError);
        expect(Date.now() - started).toBeLessThan(900);
      });

      it('rejects at once with RpcNoConsumerError when nobody serves the method, not at its deadline', async () => {
        // The deadline is past the test's own timeout: only the no-consumer answer can end this call in time.
        const r = service();
        const failed = await (await client()).rpc(`${r}.anything`, {}, { timeoutMs: 120_000 }).catch((e: unknown) => e);
        expect(failed).toBeInstanceOf(RpcNoConsumerError);
        expect((failed as RpcNoConsumerError).service).toBe(r);
        expect(String(failed)).toContain('no consumer');
      });

      it('fails fast again once the last server of a method has drained', async () => {
        const r = service();
        const server = await (await client()).serveRpc({ service: r, methods: { [`${r}.ask`]: async () => ({ ok: true }) } });
        const caller = await client();
        await expect(caller.rpc(`${r}.ask`, {}, { timeoutMs: 5000 })).resolves.toEqual({ ok: true });
        await server.drain();
        // RabbitMQ deletes the auto-delete request queue once its last consumer is gone.
        await waitFor(async () => (await caller.rpc(`${r}.ask`, {}, { timeoutMs: 2_000 }).catch((e: unknown) => e)) instanceof RpcNoConsumerError, 'the no-consumer answer');
      });

      it('does not run a request whose deadline passed while it waited', async () => {
        const r = service();
        let calls = 0;
        await (await client()).serveRpc({
          service: r,
          prefetch: 1,
          methods: {
            [`${r}.busy`]: async () => {
              calls += 1;
              await sleep(300);
              return {};
            },
          },
        });
        const caller = await client();
        const first = caller.rpc(`${r}.busy`, {}, { timeoutMs: 3000 });
        await sleep(50); // the first call now occupies the only prefetch slot
        await expect(caller.rpc(`${r}.busy`, {}, { timeoutMs: 100 })).rejects.toBeInstanceOf(RpcTimeoutError);
        await expect(first).resolves.toEqual({});
        await sleep(150);
        expect(calls).toBe(1);
      });
    });

    describe('queue stats', () => {
      it('reports the messages waiting in a service queue and its consumers, and leaves out queues that do not exist', async () => {
        const ping = `test.${uid()}.ping`;
        const s = service();
        const bus = await client();
        await bus.declareQueue(s, [ping]);
        await bus.publishMany([{ type: ping, source: SOURCE, payload: { n: 1 } }, { type: ping, source: SOURCE, payload: { n: 2 } }]);
        const main = async () => (await bus.queueStats(s, ['main', 'dead_letter', 'rpc'])).find((q) => q.queue === 'main');
        await waitFor(async () => (await main())?.messages === 2, 'two waiting messages');
        expect(await main()).toEqual({ service: s, queue: 'main', messages: 2, consumers: 0 });
        // No RPC queue was ever declared for this service.
        expect((await bus.queueStats(s, ['rpc'])).map((q) => q.queue)).toEqual([]);
        const handled: string[] = [];
        await bus.consume({ service: s, types: [ping], handler: async (e) => void handled.push(e.id) });
        await waitFor(() => handled.length === 2, 'both messages handled');
        await waitFor(async () => (await main())?.messages === 0 && (await main())?.consumers === 1, 'an empty queue with one consumer');
      });
    });

    describe('partitions', () => {
      const COUNT = 4;
      const KEYS = range(12).map((i) => `visitor-${i}`);
      const partitioned = (type: string): PartitionSettings => ({ count: COUNT, types: new Set([type]), heartbeatMs: 100 });
      type Seen = { key: string; n: number; by: string };

      /** Publishes `rounds` messages per key, in order per key (n = 0, 1, ...), a round at a time. */
      const stream = async (pub: Bus, ping: string, from: number, rounds: number, pauseMs = 2): Promise<void> => {
        for (let n = from; n < from + rounds; n += 1) {
          await pub.publishMany(KEYS.map((key) => ({ type: ping, payload: { n, key }, source: SOURCE, partition: partitionOf(key, COUNT) })));
          await sleep(pauseMs);
        }
      };
      /**
       * Handles each key's messages one after another within a replica, as a coalescing consumer
       * does, taking a random few milliseconds, and records a message when it is done: so two
       * replicas working on one key at once would show as numbers out of order.
       */
      const recorder = (seen: Seen[], by: string) => {
        const chains = new Map<string, Promise<void>>();
        return (e: Envelope): Promise<void> => {
          const { n, key } = e.payload as { n: number; key: string };
          const done = (chains.get(key) ?? Promise.resolve()).then(async () => {
            await sleep(1 + Math.floor(Math.random() * 6));
            seen.push({ key, n, by });
          });
          chains.set(key, done);
          return done;
        };
      };
      /** Per key, the numbers in the order they were handled. */
      const perKey = (seen: Seen[]): Map<string, number[]> => {
        const out = new Map<string, number[]>(KEYS.map((k) => [k, []]));
        for (const { key, n } of seen) out.get(key)?.push(n);
        return out;
      };

      it('routes a partitioned type by the partition the publisher names, and refuses a missing or out-of-range one', async () => {
        const ping = `test.${uid()}.ping`;
        const pong = `test.${uid()}.pong`;
        const got: Envelope[] = [];
        const bus = await client({ partitions: partitioned(ping) });
        await bus.consume({ service: service(), types: [ping], handler: async (e) => void got.push(e) });
        expect(bus.partitions).toBe(COUNT);
        const sent = await bus.publishMany(range(COUNT).map((n) => ({ type: ping, payload: { n }, source: SOURCE, partition: n })));
        await waitFor(() => got.length === COUNT, 'one message per partition');
        expect(ids(got)).toEqual(ids(sent));
        for (const partition of [undefined, -1, COUNT, 1.5]) {
          await expect(bus.publish({ type: ping, payload: { n: 9 }, source: SOURCE, ...(partition === undefined ? {} : { partition }) })).rejects.toBeInstanceOf(InvalidMessageError);
        }
        await expect(bus.publish({ type: pong, payload: { text: 'plain' }, source: SOURCE, partition: 0 })).rejects.toBeInstanceOf(InvalidMessageError);
        await sleep(100);
        expect(got).toHaveLength(COUNT);
        // The key-to-partition function is part of the wire contract: fixed values, whatever the process.
        expect([partitionOf('a', 16), partitionOf('visitor-1', 16), partitionOf('', 7)]).toEqual([12, partitionOf('visitor-1', 16), 0x811c9dc5 % 7]);
      });

      it('spreads the partitions over replicas and hands each key over in order when one joins and another leaves', async () => {
        const ping = `test.${uid()}.ping`;
        const s = service();
        const seen: Seen[] = [];
        const a = await client({ partitions: partitioned(ping) });
        const consumerA = await a.consume({ service: s, types: [ping], handler: recorder(seen, 'a') });
        const pub = await client({ partitions: partitioned(ping) });
        await stream(pub, ping, 0, 10);
        const b = await client({ partitions: partitioned(ping) });
        await b.consume({ service: s, types: [ping], handler: recorder(seen, 'b') });
        // Keep publishing while the partitions move: b takes over half of them.
        let next = 10;
        await waitFor(async () => {
          await stream(pub, ping, next, 1);
          next += 1;
          return seen.some((x) => x.by === 'b');
        }, 'the joining replica to take partitions');
        const both = seen.length;
        await stream(pub, ping, next, 10);
        next += 10;
        await waitFor(() => seen.length >= both + 10 * KEYS.length, 'messages after the rebalance');
        const shareOfA = seen.slice(both).filter((x) => x.by === 'a').length;
        expect(shareOfA).toBeGreaterThan(0);
        expect(shareOfA).toBeLessThan(10 * KEYS.length);
        // a leaves cleanly mid-stream: what it started finishes, the rest moves to b in place.
        const leaving = consumerA.drain();
        await stream(pub, ping, next, 10);
        next += 10;
        await leaving;
        await waitFor(() => seen.length >= next * KEYS.length, 'every message');
        await sleep(200);
        for (const [key, order] of perKey(seen)) expect({ key, order }).toEqual({ key, order: range(next) });
      });

      it('keeps each key in order when a replica crashes: its unsettled messages come back first, to the survivor', async () => {
        const ping = `test.${uid()}.ping`;
        const s = service();
        const seen: Seen[] = [];
        const a = await client({ partitions: partitioned(ping) });
        await a.consume({ service: s, types: [ping], handler: recorder(seen, 'a') });
        const b = await client({ partitions: partitioned(ping) });
        await b.consume({ service: s, types: [ping], handler: recorder(seen, 'b') });
        const pub = await client({ partitions: partitioned(ping) });
        let next = 0;
        await waitFor(async () => {
          await stream(pub, ping, next, 1);
          next += 1;
          return seen.some((x) => x.by === 'a') && seen.some((x) => x.by === 'b');
        }, 'both replicas to work');
        const crashing = stream(pub, ping, next, 20, 2);
        await sleep(20);
        await b.close(); // no drain: as kill -9, its unacked deliveries return to the broker
        await crashing;
        next += 20;
        await waitFor(() => [...perKey(seen).values()].every((order) => order.includes(next - 1)), 'every key to its last message');
        for (const [key, order] of perKey(seen)) {
          // At least once and in order: each number is the next new one, or a repeat of one already handled.
          let max = -1;
          for (const n of order) {
            expect({ key, n, after: max }).toEqual({ key, n: n <= max ? n : max + 1, after: max });
            max = Math.max(max, n);
          }
          expect(new Set(order).size).toBe(next);
        }
      });
    });

    describe('drain', () => {
      it('waits for an in-flight handler and then takes no more messages', async () => {
        const ping = `test.${uid()}.ping`;
        const started = deferred<void>();
        let calls = 0;
        let finished = false;
        const consumer = await (await client()).consume({
          service: service(),
          types: [ping],
          handler: async () => {
            calls += 1;
            started.resolve();
            await sleep(200);
            finished = true;
          },
        });
        const pub = await client();
        await pub.publish({ type: ping, payload: { n: 1 }, source: SOURCE });
        await withTimeout(started.promise, 5000, 'the handler to start');
        await consumer.drain();
        expect(finished).toBe(true);
        await pub.publish({ type: ping, payload: { n: 2 }, source: SOURCE });
        await sleep(150);
        expect(calls).toBe(1);
      });
    });
  });
}

async function takeAtLeast(bus: Bus, service: string, n: number): Promise<DeadLetter[]> {
  const letters: DeadLetter[] = [];
  await waitFor(async () => {
    letters.push(...(await bus.takeDeadLetters(service)));
    return letters.length >= n;
  }, `${n} dead letter(s) of ${service}`);
  return letters;
}

function uid(): string {
  return Math.random().toString(36).slice(2, 10);
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

function ids(list: Envelope[]): string[] {
  return list.map((e) => e.id).sort();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
