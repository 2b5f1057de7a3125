import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { describeBusContract } from './bus.contract';
import { testValidator } from '../../testing/validators';
import { createBus } from './index';
import { Registry } from 'prom-client';
import { MemoryBroker, topicMatches } from './memory-broker';
import { MemoryBus } from './memory-bus';
import { NonRetryableError } from './types';

const logger = pino({ level: 'silent' });
const brokerName = `contract-${randomUUID()}`;

describeBusContract('memory', async (options) => createBus({ url: `memory://${brokerName}`, validator: options?.validator ?? testValidator, logger, ...(options?.partitions ? { partitions: options.partitions } : {}) }));

describe('memory broker specifics', () => {
  it('matches AMQP topic patterns', () => {
    expect(topicMatches('a.b', 'a.b')).toBe(true);
    expect(topicMatches('a.*', 'a.b')).toBe(true);
    expect(topicMatches('a.*', 'a.b.c')).toBe(false);
    expect(topicMatches('a.#', 'a')).toBe(true);
    expect(topicMatches('a.#', 'a.b.c')).toBe(true);
    expect(topicMatches('#.c', 'a.b.c')).toBe(true);
    expect(topicMatches('a.b', 'a.c')).toBe(false);
  });

  it('createBus picks the memory driver for memory:// and for no url', async () => {
    const named = await createBus({ url: 'memory://x', validator: testValidator, logger });
    const fallback = await createBus({ validator: testValidator, logger });
    expect(named.driver).toBe('memory');
    expect((named as MemoryBus).broker).toBe(MemoryBroker.named('x'));
    expect((fallback as MemoryBus).broker).toBe(MemoryBroker.named('default'));
    await named.close();
    await fallback.close();
    await expect(createBus({ url: 'redis://x', validator: testValidator, logger })).rejects.toThrow(/amqp/);
  });
});

describe('bus metrics', () => {
  it('counts published, consumed, retried and dead-lettered messages per service', async () => {
    const metrics = new Registry();
    const broker = new MemoryBroker();
    const bus = new MemoryBus({ broker, validator: testValidator, logger, metrics });
    const other = new MemoryBus({ broker, validator: testValidator, logger, metrics }); // shares the counter
    let calls = 0;
    await bus.consume({
      service: 'metered',
      types: ['test.m.ping'],
      maxAttempts: 2,
      retryDelayMs: 5,
      handler: async (e) => {
        calls += 1;
        if ((e.payload as { n: number }).n === 1) throw new Error('always fails');
      },
    });
    await other.publishMany([0, 1].map((n) => ({ type: 'test.m.ping', payload: { n }, source: 'meter' })));
    await other.publish({ type: 'test.m.pong', payload: { text: 'nobody listens' }, source: 'meter' });
    while ((await bus.takeDeadLetters('metered')).length === 0) await new Promise((r) => setTimeout(r, 5));
    const values = (await metrics.getSingleMetricAsString('sightline_bus_messages_total')).split('\n');
    expect(values).toEqual(
      expect.arrayContaining([
        'sightline_bus_messages_total{direction="published",service="meter"} 3',
        'sightline_bus_messages_total{direction="unroutable",service="meter"} 1',
        'sightline_bus_messages_total{direction="consumed",service="metered"} 1',
        'sightline_bus_messages_total{direction="retried",service="metered"} 1',
        'sightline_bus_messages_total{direction="dead_lettered",service="metered"} 1',
      ]),
    );
    expect(calls).toBe(3);
    await bus.close();
    await other.close();
  });
});

describe('bounded in-process dead letters', () => {
  it('keeps the newest dead letters within its bound, and counts the ones it lets go', async () => {
    const metrics = new Registry();
    const broker = new MemoryBroker();
    // One dead letter is about 300 characters: a bound of 1,000 keeps the last three.
    const bus = new MemoryBus({ broker, validator: testValidator, logger, metrics, maxDeadLetterChars: 1_000 });
    let seen = 0;
    await bus.consume({ service: 'failing', types: ['test.dl.ping'], handler: async () => {
      seen += 1;
      throw new NonRetryableError('never works');
    } });
    for (let n = 0; n < 10; n += 1) await bus.publish({ type: 'test.dl.ping', payload: { n }, source: 'test' });
    while (seen < 10) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    const kept = (await bus.takeDeadLetters('failing')).map((l) => (l.envelope?.payload as { n: number }).n);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(10);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => 10 - kept.length + i));
    expect(await metrics.getSingleMetricAsString('sightline_bus_messages_total')).toContain(`sightline_bus_messages_total{direction="dead_letter_dropped",service="failing"} ${10 - kept.length}`);
    await bus.close();
  });
});
