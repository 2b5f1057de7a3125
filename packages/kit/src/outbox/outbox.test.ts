// The outbox on PGlite and the in-process bus. Broker outages are injected by a wrapper that
// refuses publishes while "down" and otherwise forwards to the real in-process bus.
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { MemoryBroker, MemoryBus } from '../bus';
import { testValidator } from '../../testing/validators';
import type { Bus, Envelope, PublishInput } from '../bus/types';
import { openPglite, type PgliteHandle } from '../stores/pglite-store';
import type { SqlStore } from '../stores/types';
import { splitSqlStatements } from '../stores/migrations';
import { createOutbox, OUTBOX_MIGRATION_SQL, type Outbox, type OutboxMessage } from './index';

const logger = pino({ level: 'silent' });

function flaky(inner: Bus): Bus & { down: boolean; attempts: number } {
  const wrapper = Object.create(inner) as Bus & { down: boolean; attempts: number };
  wrapper.down = false;
  wrapper.attempts = 0;
  wrapper.publishMany = async (inputs: PublishInput[]): Promise<Envelope[]> => {
    wrapper.attempts += 1;
    if (wrapper.down) throw new Error('broker unreachable');
    return inner.publishMany(inputs);
  };
  return wrapper;
}

async function waitFor(what: string, probe: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('outbox (PGlite, in-process bus)', () => {
  let handle: PgliteHandle;
  let sql: SqlStore;
  let bus: MemoryBus;
  let wrapped: ReturnType<typeof flaky>;
  let outbox: Outbox;
  // The test's own message type (testValidator knows it) is outside the product catalog.
  const testMessage = (message: { type: string; payload: unknown; source: string; workspace_id?: string }) => message as unknown as OutboxMessage;
  const seen: Envelope[] = [];
  const type = 'test.outbox.ping';

  beforeAll(async () => {
    handle = await openPglite();
    sql = await handle.store(`outbox_${randomUUID().slice(0, 8)}`);
    for (const statement of splitSqlStatements(OUTBOX_MIGRATION_SQL)) await sql.query(statement);
    bus = new MemoryBus({ broker: new MemoryBroker(), validator: testValidator, logger });
    // prefetch 1: the consumer sees messages in publish order.
    await bus.consume({ service: 'probe', types: [type], prefetch: 1, handler: async (e) => void seen.push(e) });
    wrapped = flaky(bus);
    outbox = createOutbox(sql, wrapped, logger, { validator: testValidator, pollIntervalMs: 20, initialBackoffMs: 10, maxBackoffMs: 40 });
    outbox.start();
  }, 60_000);

  afterAll(async () => {
    await outbox?.stop();
    await bus?.close();
    await handle?.release();
  });

  beforeEach(() => {
    seen.length = 0;
    wrapped.down = false;
  });

  const write = async (n: number[], fail = false): Promise<string[]> => {
    const ids: string[] = [];
    await sql
      .transaction(async (tx) => {
        for (const value of n) ids.push(await outbox.add(tx, testMessage({ type, payload: { n: value }, source: 'test', workspace_id: 'w1' })));
        if (fail) throw new Error('business rule failed');
      })
      .catch((error: unknown) => {
        if (!fail) throw error;
      });
    outbox.wake();
    return ids;
  };

  it('publishes what a committed transaction added, in order, with its ids', async () => {
    const ids = await write([1, 2, 3]);
    await waitFor('three messages', () => seen.length === 3);
    expect(seen.map((e) => (e.payload as { n: number }).n)).toEqual([1, 2, 3]);
    expect(seen.map((e) => e.id)).toEqual(ids);
    expect(seen[0]?.workspace_id).toBe('w1');
    expect(await outbox.pendingCount()).toBe(0);
  });

  it('publishes nothing from a transaction that rolled back', async () => {
    await write([7], true);
    await write([8]);
    await waitFor('one message', () => seen.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.map((e) => (e.payload as { n: number }).n)).toEqual([8]);
  });

  it('refuses a message the schema refuses, inside the transaction', async () => {
    await expect(sql.transaction((tx) => outbox.add(tx, testMessage({ type, payload: { n: 'x' }, source: 'test' })))).rejects.toThrow(/invalid/);
    expect(await outbox.pendingCount()).toBe(0);
  });

  it('keeps retrying while the broker is down and publishes each message once when it is back', async () => {
    wrapped.down = true;
    const before = wrapped.attempts;
    await write([10, 11]);
    await waitFor('several failed attempts', () => wrapped.attempts - before >= 3);
    expect(seen).toHaveLength(0);
    expect(await outbox.pendingCount()).toBe(2);
    wrapped.down = false;
    await waitFor('both messages', () => seen.length === 2);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.map((e) => (e.payload as { n: number }).n)).toEqual([10, 11]);
    expect(await outbox.pendingCount()).toBe(0);
  });

  it('holds messages while paused and sends them on resume', async () => {
    outbox.pause();
    await write([20]);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).toHaveLength(0);
    outbox.resume();
    await waitFor('the held message', () => seen.length === 1);
  });

  it('drains a backlog larger than one batch', async () => {
    outbox.pause();
    await write(Array.from({ length: 250 }, (_, i) => i));
    outbox.resume();
    await waitFor('250 messages', () => seen.length === 250, 15_000);
    expect(seen.map((e) => (e.payload as { n: number }).n)).toEqual(Array.from({ length: 250 }, (_, i) => i));
  });
});
