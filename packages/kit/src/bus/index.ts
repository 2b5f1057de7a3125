// Picks the bus driver from a URL: amqp(s):// is RabbitMQ, memory://<name> (or nothing) is the
// in-process broker of that name.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { AmqpBus } from './amqp-bus';
import { MemoryBroker } from './memory-broker';
import { MemoryBus } from './memory-bus';
import type { PartitionSettings } from './partitions';
import type { Bus, MessageValidator } from './types';

export interface CreateBusOptions {
  /** `amqp://…`, `amqps://…`, `memory://<broker name>`; absent means `memory://default`. */
  url?: string;
  namespace?: string;
  validator: MessageValidator;
  logger: Logger;
  metrics?: Registry;
  /** Partitioned types (catalog `partitionedBy`) and the partition count every process of the namespace shares. */
  partitions?: PartitionSettings;
  /**
   * In-process bus only: keep its queues in a journal in this directory (durable), instead of in
   * memory alone. The embedded runner passes <data dir>/bus.
   */
  journalDir?: string;
  /** In-process bus only: its backlog bound and how long an edge publish waits for room (memory-bus.ts). */
  maxBacklogChars?: number;
  backlogWaitMs?: number;
}

export async function createBus(options: CreateBusOptions): Promise<Bus> {
  const { url, journalDir, maxBacklogChars, backlogWaitMs, ...rest } = options;
  if (url === undefined || url.startsWith('memory://')) {
    const name = url === undefined ? '' : url.slice('memory://'.length);
    const broker = journalDir !== undefined ? MemoryBroker.durable(journalDir) : name === '' ? 'default' : name;
    return new MemoryBus({ ...rest, broker, ...(maxBacklogChars !== undefined ? { maxBacklogChars } : {}), ...(backlogWaitMs !== undefined ? { backlogWaitMs } : {}) });
  }
  if (url.startsWith('amqp://') || url.startsWith('amqps://')) return AmqpBus.connect({ ...rest, url });
  throw new Error(`bus url must start with amqp://, amqps:// or memory:// (got "${url.split('://')[0] ?? ''}://…")`);
}

export { AmqpBus, type AmqpBusOptions } from './amqp-bus';
export { MemoryBus, type MemoryBusOptions } from './memory-bus';
export { MemoryBroker } from './memory-broker';
export { BusJournal } from './journal';
export { partitionOf, DEFAULT_PARTITIONS, type PartitionSettings } from './partitions';
export { busNames, rpcServiceOf, DEFAULT_NAMESPACE, type BusNames } from './names';
export * from './types';
