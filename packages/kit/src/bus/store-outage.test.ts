// A store out of reach is a pause, not a failure: the delivery is held and tried again without
// spending an attempt; any other error spends one; a consumer that stops gives the delivery back.
import pino from 'pino';
import { testValidator } from '../../testing/validators';
import { settleDelivery, type DeliveryPolicy } from './delivery';
import { encodeEnvelope } from './envelope';
import { isStoreOutage, outageBackoffMs, StoreUnavailableError } from './store-outage';

const logger = pino({ level: 'silent' });
const body = encodeEnvelope({ type: 'test.outage.ping', payload: { n: 1 }, source: 'test' }, testValidator).body;
const codeError = (code: string, message = 'boom') => Object.assign(new Error(message), { code });

describe('isStoreOutage', () => {
  it.each([
    ['a refused connection', codeError('ECONNREFUSED')],
    ['a reset connection', codeError('ECONNRESET')],
    ['PostgreSQL shutting a session down (57P01)', codeError('57P01', 'terminating connection due to administrator command')],
    ['PostgreSQL starting up (57P03)', codeError('57P03')],
    ['a PostgreSQL connection exception (08006)', codeError('08006')],
    ['too many connections (53300)', codeError('53300')],
    ['pg losing its socket', new Error('Connection terminated unexpectedly')],
    ['ioredis giving up on a command', Object.assign(new Error('Reached the max retries per request limit (which is 1).'), { name: 'MaxRetriesPerRequestError' })],
    ['undici failing a fetch (cause ECONNREFUSED)', new TypeError('fetch failed', { cause: codeError('ECONNREFUSED') })],
    ['a wrapped outage deep in the cause chain', new Error('insert failed', { cause: new Error('batch failed', { cause: codeError('ETIMEDOUT') }) })],
    ['an explicit StoreUnavailableError', new StoreUnavailableError('clickhouse is restarting')],
    ['amqplib after the broker went away', new Error('Channel closed')],
  ])('is true for %s', (_what, error) => {
    expect(isStoreOutage(error)).toBe(true);
  });

  it.each([
    ['a constraint violation (23505)', codeError('23505', 'duplicate key value violates unique constraint')],
    ['a syntax error (42601)', codeError('42601')],
    ['a plain bug', new TypeError('cannot read properties of undefined')],
    ['a string', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('is false for %s', (_what, error) => {
    expect(isStoreOutage(error)).toBe(false);
  });

  it('backs off from 1 s, doubling, to the ceiling, with at most 20 % jitter either way', () => {
    for (const [pauses, base] of [[0, 1000], [1, 2000], [3, 8000], [10, 120_000], [40, 120_000]] as const) {
      const wait = outageBackoffMs(pauses);
      expect(wait).toBeGreaterThanOrEqual(base * 0.8);
      expect(wait).toBeLessThanOrEqual(base * 1.2);
    }
    expect(outageBackoffMs(5, 50)).toBeLessThanOrEqual(60);
  });
});

describe('a delivery during a store outage', () => {
  const policy = (handler: DeliveryPolicy['handler'], extra: Partial<DeliveryPolicy> = {}): DeliveryPolicy => ({
    handler,
    validator: testValidator,
    maxAttempts: 2,
    retryDelayMs: 1,
    logger,
    service: 'outage',
    maxOutageBackoffMs: 10,
    ...extra,
  });

  it('is held and tried again until the store answers, spending no attempt, however long it takes', async () => {
    let calls = 0;
    let outages = 0;
    const settled = await settleDelivery(body, 1, policy(async () => {
      calls += 1;
      if (calls <= 6) throw codeError('ECONNREFUSED');
    }, { onOutage: () => (outages += 1) }));
    expect(settled.kind).toBe('ack');
    expect(calls).toBe(7);
    expect(outages).toBe(6);
  });

  it('spends an attempt on any other error, as before (the second attempt of two dead-letters)', async () => {
    const first = await settleDelivery(body, 0, policy(async () => Promise.reject(new Error('bad row'))));
    expect(first).toMatchObject({ kind: 'retry', attempts: 1 });
    const second = await settleDelivery(body, 1, policy(async () => Promise.reject(new Error('bad row'))));
    expect(second).toMatchObject({ kind: 'dead', attempts: 2 });
  });

  it('counts the first error that is not an outage after one that was', async () => {
    let calls = 0;
    const settled = await settleDelivery(body, 0, policy(async () => {
      calls += 1;
      throw calls === 1 ? codeError('57P01') : new Error('bad row');
    }));
    expect(settled).toMatchObject({ kind: 'retry', attempts: 1 });
    expect(calls).toBe(2);
  });

  it('is given back, with no attempt spent, when the consumer stops while it waits', async () => {
    const stopping = new AbortController();
    const waiting = settleDelivery(body, 0, policy(async () => Promise.reject(codeError('ECONNREFUSED')), { stopping: stopping.signal, maxOutageBackoffMs: 60_000 }));
    await new Promise((r) => setTimeout(r, 50));
    stopping.abort();
    await expect(waiting).resolves.toMatchObject({ kind: 'requeue' });
  });
});
