import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { describeBusContract } from './bus.contract';
import { testValidator } from './bus.test-fixtures';
import { createBus } from './index';
import { MemoryBroker } from './memory-broker';
import { MemoryBus } from './memory-bus';
import { topicMatches } from './memory-broker';

const logger = pino({ level: 'silent' });
const brokerName = `contract-${randomUUID()}`;

describeBusContract('memory', async (options) => createBus({ url: `memory://${brokerName}`, validator: options?.validator ?? testValidator, logger }));

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
