// Partitioned consumption, shared by both drivers. A partitioned type (catalog `partitionedBy`) is
// published to one of N partitions chosen from its ordering key; a consuming service reads each
// partition from its own queue, and that queue has a single active consumer: the broker delivers it
// to one subscriber at a time, in order, and moves it to the next subscriber in line when that one
// goes away (a crash included). That is what keeps one key's messages in order; it holds whatever
// the replicas believe about each other.
//
// Spreading the partitions is the replicas' own affair: each subscribes to every partition (so a
// crash is taken over at once by a replica already in line) and announces itself on a membership
// channel every few seconds. From the live members, sorted, partition k belongs to member k mod n.
// A replica that is delivered a partition it does not own hands it on: it stops starting new work
// on it, finishes what it started, then closes the partition's channel (the broker puts the
// unstarted messages back in place and activates the next subscriber) and subscribes again, at the
// back of the line. A wrong view costs balance, never order; a handover is not repeated for a
// cooldown, so a member that is announced but not subscribed cannot make the others spin.
import type { Logger } from 'pino';
import { InvalidMessageError, type Consumer } from './types';

export interface PartitionSettings {
  /** Partitions of each partitioned type: every process sharing a broker namespace must use the same count. */
  count: number;
  /** The partitioned message types. */
  types: ReadonlySet<string>;
  /** How often a consumer announces itself (default 2000 ms); a member unheard for 3 beats is gone. */
  heartbeatMs?: number;
}

export const DEFAULT_PARTITIONS = 1;
export const DEFAULT_HEARTBEAT_MS = 2_000;

/** The partition of a key: 32-bit FNV-1a of its UTF-16 code units, modulo `count`. Stable everywhere. */
export function partitionOf(key: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}

/** What members say on the membership channel. */
export interface MemberNote {
  member: string;
  leaving: boolean;
}

export interface MembershipChannel {
  send(note: MemberNote): Promise<void>;
  close(): Promise<void>;
}

/** Opens the service's membership channel; `onNote` hears every member's notes, this one's included. */
export type OpenMembership = (onNote: (note: MemberNote) => void) => Promise<MembershipChannel>;

/** One partition's consumer, as the balancer drives it. */
export interface PartitionTurn {
  readonly partition: number;
  /** Finishes what started, gives the rest back in place, and queues up behind the next subscriber. */
  yieldTurn(): Promise<void>;
}

export interface BalancerOptions {
  member: string;
  count: number;
  heartbeatMs: number;
  logger: Logger;
  open: OpenMembership;
  /** A partition handed on is not handed on again sooner than this (default 3 heartbeats). */
  cooldownMs?: number;
}

export class PartitionBalancer {
  private readonly seen = new Map<string, number>();
  private readonly lastYield = new Map<number, number>();
  private readonly yielding = new Set<number>();
  private turns: readonly PartitionTurn[] = [];
  private channel: MembershipChannel | null = null;
  private timer: NodeJS.Timeout | null = null;
  private members: string[];
  private stopped = false;

  constructor(private readonly options: BalancerOptions) {
    this.members = [options.member];
  }

  /** Starts announcing, once every partition is subscribed (so a handover to this member finds it in line). */
  async start(turns: readonly PartitionTurn[]): Promise<void> {
    this.turns = turns;
    this.channel = await this.options.open((note) => this.hear(note));
    await this.announce();
    this.timer = setInterval(() => {
      this.expire();
      void this.announce();
    }, this.options.heartbeatMs);
    this.timer.unref();
  }

  /** Says goodbye (the others stop handing partitions to this member) and stops announcing. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    const channel = this.channel;
    this.channel = null;
    if (channel) {
      await channel.send({ member: this.options.member, leaving: true }).catch(() => undefined);
      await channel.close().catch(() => undefined);
    }
  }

  /** Stops without a goodbye, as a crash would (the bus client is closing without draining). */
  halt(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    void this.channel?.close().catch(() => undefined);
    this.channel = null;
  }

  /** The live members this one knows of, sorted (itself included). */
  view(): readonly string[] {
    return this.members;
  }

  owns(partition: number): boolean {
    return this.members[partition % this.members.length] === this.options.member;
  }

  /** Asked on each delivery: hand this partition on now? */
  shouldYield(partition: number): boolean {
    if (this.stopped || this.members.length < 2 || this.owns(partition) || this.yielding.has(partition)) return false;
    return Date.now() - (this.lastYield.get(partition) ?? 0) >= this.cooldownMs();
  }

  /** Records a handover the consumer is making (from shouldYield or a rebalance). */
  async yieldTurn(turn: PartitionTurn): Promise<void> {
    if (this.yielding.has(turn.partition)) return;
    this.yielding.add(turn.partition);
    this.lastYield.set(turn.partition, Date.now());
    try {
      await turn.yieldTurn();
    } catch (error) {
      this.options.logger.warn({ partition: turn.partition, err: String(error) }, 'bus: partition handover failed; the broker keeps its order');
    } finally {
      this.yielding.delete(turn.partition);
    }
  }

  private cooldownMs(): number {
    return this.options.cooldownMs ?? 3 * this.options.heartbeatMs;
  }

  private async announce(): Promise<void> {
    if (this.stopped || !this.channel) return;
    await this.channel.send({ member: this.options.member, leaving: false }).catch((error: unknown) => {
      this.options.logger.debug({ err: String(error) }, 'bus: membership announcement not sent');
    });
  }

  private hear(note: MemberNote): void {
    if (this.stopped || note.member === this.options.member) return;
    if (note.leaving) this.seen.delete(note.member);
    else this.seen.set(note.member, Date.now());
    this.refresh();
  }

  private expire(): void {
    const horizon = Date.now() - 3 * this.options.heartbeatMs;
    for (const [member, at] of this.seen) if (at < horizon) this.seen.delete(member);
    this.refresh();
  }

  /** Recomputes the view; when it changed, hands on every partition this member no longer owns. */
  private refresh(): void {
    const next = [this.options.member, ...this.seen.keys()].sort();
    if (next.length === this.members.length && next.every((m, i) => m === this.members[i])) return;
    this.members = next;
    this.options.logger.info({ members: next.length }, 'bus: partition members changed; rebalancing');
    for (const turn of this.turns) {
      if (!this.owns(turn.partition)) void this.yieldTurn(turn);
    }
  }
}

/**
 * The routing key of a message: its type, with the partition appended for a partitioned type. A
 * partitioned type without a valid partition, or a partition on another type, is refused.
 */
export function routingKeyOf(input: { type: string; partition?: number }, settings: PartitionSettings, partitionKey: (type: string, n: number) => string): string {
  const partitioned = settings.types.has(input.type);
  if (!partitioned) {
    if (input.partition !== undefined) throw new InvalidMessageError(`message ${input.type} is not partitioned; publish it without a partition`);
    return input.type;
  }
  const n = input.partition;
  if (n === undefined || !Number.isInteger(n) || n < 0 || n >= settings.count) {
    throw new InvalidMessageError(`message ${input.type} is partitioned: give its partition, an integer from 0 to ${settings.count - 1} (partitionOf its ordering key)`);
  }
  return partitionKey(input.type, n);
}

/** The plain and the partitioned types among those a service consumes. */
export function splitTypes(types: readonly string[], settings: PartitionSettings): { plain: string[]; partitioned: string[] } {
  return { plain: types.filter((t) => !settings.types.has(t)), partitioned: types.filter((t) => settings.types.has(t)) };
}

/** One consumer made of several (the service queue and its partitions); drained together. */
/** `consumer`, whose drain first aborts `stop` (deliveries waiting out a store outage are given back). */
export function stoppable(consumer: Consumer, stop: AbortController): Consumer {
  return {
    async drain() {
      stop.abort();
      await consumer.drain();
    },
    isHealthy: () => consumer.isHealthy(),
  };
}

export function consumerGroup(parts: readonly Consumer[], balancer: PartitionBalancer | null): Consumer {
  return {
    async drain() {
      // Goodbye first: the others stop handing partitions here while this one lets go of them.
      await balancer?.stop();
      await Promise.all(parts.map((c) => c.drain()));
    },
    isHealthy: () => parts.every((c) => c.isHealthy()),
  };
}
