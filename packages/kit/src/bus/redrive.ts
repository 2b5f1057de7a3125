// Redrive: moving a service's dead letters back to its queue once the cause is fixed. Both drivers
// share what is decided here (where each letter goes, with which headers, and the tally); each moves
// the messages its own way (memory-bus.ts, amqp-bus.ts).
//
// A letter goes back to the queue of the service whose dead-letter queue it sits in, never through
// the exchange (that would give every other consuming service a second copy): a partitioned type to
// its partition's queue, so it is consumed by that partition's single active consumer like any other
// message of its key. It keeps its body and so its message id (consumers deduplicate as usual); its
// failure count is reset to 0 (it gets every attempt again) and the reason is removed. A letter
// published before its partition was recorded on dead-lettering, in a namespace of more than one
// partition, cannot be placed (the partition key is the publisher's, not in the envelope) and stays.
import type { PartitionSettings } from './partitions';
import { decodeDeadLetter } from './envelope';
import { HEADER, type BusNames } from './names';
import type { RedriveResult } from './types';

/** Header a consumer sets on a dead letter it takes from a partition's queue: that partition. */
export const PARTITION_HEADER = 'x-sightline-partition';

export const DEFAULT_REDRIVE_MAX = 10_000;
/** Most ids a result lists. */
export const REDRIVE_SAMPLE_IDS = 10;

/** Why a dead letter stays where it is. */
export type KeptCause = 'unparseable' | 'partition unknown' | 'no queue';

export interface RedriveTarget {
  service: string;
  names: BusNames;
  partitions: PartitionSettings;
}

export type LetterPlan<V> =
  | { kind: 'move'; queue: string; headers: Record<string, V | number>; id: string; type: string; reason: string }
  | { kind: 'keep'; cause: KeptCause };

/** Where one dead letter of `target.service` goes back to, with which headers; or why it stays. */
export function planRedrive<V>(body: string, headers: Record<string, V>, target: RedriveTarget): LetterPlan<V> {
  const letter = decodeDeadLetter(body, headers);
  if (!letter.envelope) return { kind: 'keep', cause: 'unparseable' };
  const { id, type } = letter.envelope;
  let queue = target.names.serviceQueue(target.service);
  if (target.partitions.types.has(type)) {
    const n = partitionOfLetter(headers, target);
    if (n === null) return { kind: 'keep', cause: 'partition unknown' };
    queue = target.names.partitionQueue(target.service, n);
  }
  return { kind: 'move', queue, headers: redriveHeaders(headers), id, type, reason: letter.reason };
}

/**
 * The partition a dead letter came from: the header its consumer set, else (one partition) 0, else
 * the queue the broker itself dead-lettered it from (RabbitMQ's x-first-death-queue); null if none.
 */
function partitionOfLetter(headers: Record<string, unknown>, target: RedriveTarget): number | null {
  const count = target.partitions.count;
  const recorded = Number(headers[PARTITION_HEADER] ?? Number.NaN);
  if (Number.isInteger(recorded) && recorded >= 0 && recorded < count) return recorded;
  if (count === 1) return 0;
  const from = headers['x-first-death-queue'];
  for (let n = 0; n < count; n += 1) if (from === target.names.partitionQueue(target.service, n)) return n;
  return null;
}

/**
 * A dead letter's headers as it goes back: failures 0, no reason, no partition note, none of the
 * broker's x-death records, and published now (so the consume-lag metric measures its wait in the
 * service's queue, not its time in the dead-letter queue). Trace context and the rest are kept.
 */
export function redriveHeaders<V>(headers: Record<string, V>): Record<string, V | number> {
  const out: Record<string, V | number> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (key === HEADER.reason || key === PARTITION_HEADER || key === 'x-death' || key.startsWith('x-first-death-') || key.startsWith('x-last-death-')) continue;
    out[key] = value;
  }
  out[HEADER.failures] = 0;
  out[HEADER.publishedAt] = Date.now();
  return out;
}

/** Counts a redrive's letters as they are decided. */
export class RedriveTally {
  private moved = 0;
  private kept = 0;
  private readonly byType: Record<string, number> = {};
  private readonly byReason: Record<string, number> = {};
  private readonly keptBy: Record<string, number> = {};
  private readonly firstIds: string[] = [];

  constructor(readonly service: string, readonly dryRun: boolean) {}

  get movedCount(): number {
    return this.moved;
  }

  move(plan: { id: string; type: string; reason: string }): void {
    this.moved += 1;
    this.byType[plan.type] = (this.byType[plan.type] ?? 0) + 1;
    this.byReason[plan.reason] = (this.byReason[plan.reason] ?? 0) + 1;
    if (this.firstIds.length < REDRIVE_SAMPLE_IDS) this.firstIds.push(plan.id);
  }

  keep(cause: KeptCause): void {
    this.kept += 1;
    this.keptBy[cause] = (this.keptBy[cause] ?? 0) + 1;
  }

  result(remaining: number): RedriveResult {
    return {
      service: this.service,
      dryRun: this.dryRun,
      moved: this.moved,
      byType: { ...this.byType },
      byReason: { ...this.byReason },
      firstIds: [...this.firstIds],
      kept: this.kept,
      keptBy: { ...this.keptBy },
      remaining,
    };
  }
}

/** The `max` of a redrive: a positive whole number (default DEFAULT_REDRIVE_MAX). */
export function redriveMax(max: number | undefined): number {
  if (max === undefined) return DEFAULT_REDRIVE_MAX;
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`redrive max must be a positive whole number, got ${String(max)}`);
  return max;
}
