// Coalescing consumer: messages that arrive while a group is being processed are handed over
// together as the next group, one group at a time per key. Stores like ClickHouse are limited by
// the number of inserts, not rows, and per-key state (sessions, say) wants one writer. Each message
// settles with its group: all acked together, or all nacked (the bus then retries each on its own).
import { createHash } from 'node:crypto';
import type { Envelope } from './types';

/** E is the envelope type the handler receives (a TypedEnvelope of the consumed type). */
export interface CoalesceOptions<E extends Envelope = Envelope> {
  /** Groups never mix keys, and each key has one group in flight (default: one key for all). */
  keyOf?: (envelope: E) => string;
  /** A group stops growing once its weight reaches this (default 10 000). */
  maxWeight?: number;
  /** Weight of one message, e.g. the number of events it carries (default 1). */
  weightOf?: (envelope: E) => number;
  handle: (group: E[]) => Promise<void>;
}

interface Waiting<E> {
  envelope: E;
  settle: (error?: unknown) => void;
}

export function coalesce<E extends Envelope = Envelope>(options: CoalesceOptions<E>): (envelope: E) => Promise<void> {
  const keyOf = options.keyOf ?? (() => '');
  const weightOf = options.weightOf ?? (() => 1);
  const maxWeight = options.maxWeight ?? 10_000;
  const queues = new Map<string, Waiting<E>[]>();
  const running = new Set<string>();

  const drain = async (key: string): Promise<void> => {
    running.add(key);
    const queue = queues.get(key) as Waiting<E>[];
    while (queue.length > 0) {
      const group: Waiting<E>[] = [];
      let weight = 0;
      while (queue.length > 0 && (group.length === 0 || weight + weightOf((queue[0] as Waiting<E>).envelope) <= maxWeight)) {
        const next = queue.shift() as Waiting<E>;
        weight += weightOf(next.envelope);
        group.push(next);
      }
      try {
        await options.handle(group.map((w) => w.envelope));
        for (const w of group) w.settle();
      } catch (error) {
        for (const w of group) w.settle(error);
      }
    }
    queues.delete(key);
    running.delete(key);
  };

  return (envelope) =>
    new Promise<void>((resolve, reject) => {
      const key = keyOf(envelope);
      const queue = queues.get(key) ?? [];
      queue.push({ envelope, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      queues.set(key, queue);
      if (!running.has(key)) void drain(key);
    });
}

/** An insert deduplication token for a coalesced group: the same messages give the same token, in any order. */
export function groupToken(group: readonly Envelope[]): string {
  return group.length === 1 ? (group[0] as Envelope).id : createHash('sha256').update(group.map((e) => e.id).sort().join(',')).digest('hex');
}
