// The in-process broker's durable side. Every message of a durable queue is written to an LMDB
// environment under <data dir>/bus before its publish is confirmed, and removed when it is acked,
// so a restart replays exactly what was not yet acked, per queue in publish order. LMDB batches the
// writes of one event-loop turn into one transaction (group commit: many publishes, one flush), is
// crash-safe by construction (a transaction is whole or absent after kill -9 or power loss: no torn
// record can be read back) and reuses the pages of removed messages, so the file stays near the
// size of the largest backlog it has held.
import { mkdirSync } from 'node:fs';
import { open, type RootDatabase } from 'lmdb';

/** One stored message. `notBefore`: epoch ms before which a retry is not delivered (null: at once). */
export interface JournalRecord {
  queue: string;
  seq: number;
  body: string;
  headers: Record<string, string | number>;
  notBefore: number | null;
}

type Key = [string, number];
type Value = [string, Record<string, string | number>, number | null];

export class BusJournal {
  private readonly db: RootDatabase<Value, Key>;
  private closed = false;
  /** Writes whose commit failed since the last confirm (a full disk, a closed environment). */
  private failure: Error | null = null;

  private constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    // Messages are small JSON strings: LMDB's default msgpack encoding, no compression, no cache
    // (nothing is read back but the one replay at start).
    this.db = open<Value, Key>({ path: dir, cache: false, compression: false });
  }

  static open(dir: string): BusJournal {
    return new BusJournal(dir);
  }

  /** Everything still stored, ordered by queue, then by the order it was published in. */
  replay(): JournalRecord[] {
    const records: JournalRecord[] = [];
    for (const { key, value } of this.db.getRange()) {
      const [queue, seq] = key;
      const [body, headers, notBefore] = value;
      records.push({ queue, seq, body, headers, notBefore });
    }
    return records;
  }

  /** Queues a write; it is durable once `confirm()` resolves. */
  put(record: JournalRecord): Promise<void> {
    this.assertOpen();
    return this.track(this.db.put([record.queue, record.seq], [record.body, record.headers, record.notBefore]));
  }

  /** Queues a removal (an ack). Not awaited by anyone: a removal lost in a crash means one redelivery. */
  remove(queue: string, seq: number): void {
    if (this.closed) return;
    this.track(this.db.remove([queue, seq])).catch(() => undefined);
  }

  /** Resolves once `writes` are committed and flushed to the disk; rejects if any of them failed. */
  async confirm(writes: readonly Promise<void>[]): Promise<void> {
    if (writes.length === 0) return;
    await Promise.all(writes);
    await this.db.flushed;
  }

  /** Committed write transactions so far (each one flush to the disk at most): for the benchmarks. */
  commits(): number {
    return Number((this.db.getStats() as { lastTxnId?: number }).lastTxnId ?? 0);
  }

  /** Bytes the environment's file takes now. */
  sizeBytes(): number {
    const stats = this.db.getStats() as { lastPageNumber?: number; pageSize?: number };
    return (stats.lastPageNumber ?? 0) * (stats.pageSize ?? 4096);
  }

  lastError(): Error | null {
    return this.failure;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.flushed;
    await this.db.close();
  }

  private track(write: Promise<unknown>): Promise<void> {
    return write.then(
      () => undefined,
      (error: unknown) => {
        this.failure = error instanceof Error ? error : new Error(String(error));
        throw this.failure;
      },
    );
  }

  private assertOpen(): void {
    if (this.closed) throw new Error(`bus journal at ${this.dir} is closed`);
  }
}
