// The bus contract against a real RabbitMQ, in a namespace of its own that is deleted afterwards.
import { randomUUID } from 'node:crypto';
import { connect } from 'amqplib';
import pino from 'pino';
import { describeBusContract, type ContractNames } from './bus.contract';
import { testValidator } from '../../testing/validators';
import { AmqpBus } from './amqp-bus';
import { createBus } from './index';
import { busNames } from './names';

const URL = 'amqp://guest:guest@127.0.0.1:5672';
const namespace = `test-${randomUUID().slice(0, 8)}`;
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  try {
    const probe = await connect(URL);
    await probe.close();
  } catch (err) {
    throw new Error(`RabbitMQ is not reachable at ${URL} (${err instanceof Error ? err.message : String(err)}); start it before running this test`);
  }
});

async function deleteNamespace(used: ContractNames): Promise<void> {
  const names = busNames(namespace);
  const conn = await connect(URL);
  try {
    const ch = await conn.createChannel();
    for (const service of used.services) {
      const partitions = Array.from({ length: used.partitions }, (_, n) => [names.partitionQueue(service, n), names.partitionRetryQueue(service, n)]).flat();
      for (const queue of [names.serviceQueue(service), names.retryQueue(service), names.deadLetterQueue(service), names.rpcQueue(service), ...partitions]) {
        await ch.deleteQueue(queue);
      }
    }
    await ch.deleteExchange(names.exchange);
    await ch.deleteExchange(names.membersExchange);
  } finally {
    await conn.close();
  }
}

describeBusContract(
  'amqp',
  async (options) => createBus({ url: URL, namespace, validator: options?.validator ?? testValidator, logger, ...(options?.partitions ? { partitions: options.partitions } : {}) }),
  { cleanup: deleteNamespace },
);

describe('amqp driver specifics', () => {
  it('reconnects after the connection drops and resumes consuming, publishing and rpc', async () => {
    const service = `reconnect-${randomUUID().slice(0, 8)}`;
    const type = `test.${service}.ping`;
    const a = await AmqpBus.connect({ url: URL, namespace, validator: testValidator, logger });
    const b = await AmqpBus.connect({ url: URL, namespace, validator: testValidator, logger });
    try {
      const got: string[] = [];
      await a.consume({ service, types: [type], handler: async (e) => void got.push(e.id) });
      await a.serveRpc({ service, methods: { [`${service}.echo`]: async (req) => req } });
      await a.publish({ type, payload: { n: 0 }, source: 'test' });
      await waitUntil(() => got.length === 1);

      // Cut the socket under the driver, as a network failure would (reaches into amqplib internals).
      const internals = a as unknown as { connection: { _core: { _model: { connection: { stream: { destroy(err?: Error): void } } } } } };
      internals.connection._core._model.connection.stream.destroy(new Error('simulated network failure'));

      const sent = await b.publish({ type, payload: { n: 1 }, source: 'test' });
      await waitUntil(() => got.includes(sent.id));
      const own = await a.publish({ type, payload: { n: 2 }, source: 'test' });
      await waitUntil(() => got.includes(own.id));
      await expect(b.rpc(`${service}.echo`, { text: 'back' }, { timeoutMs: 5000 })).resolves.toEqual({ text: 'back' });
    } finally {
      await a.close();
      await b.close();
      await deleteNamespace({ services: [service], partitions: 1 });
    }
  });

  it('names RabbitMQ and the url when the broker is unreachable', async () => {
    await expect(
      AmqpBus.connect({ url: 'amqp://guest:secret@127.0.0.1:1', namespace, validator: testValidator, logger, connectAttempts: 1 }),
    ).rejects.toThrow(/RabbitMQ is not reachable at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:1/);
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
