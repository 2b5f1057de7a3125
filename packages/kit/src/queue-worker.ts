// The loop of a worker over a leased Postgres queue (write-backs, alert deliveries): claim a batch of
// due rows with a lease, work them, claim again until a batch comes back short. Calls made while a
// round runs join it and ask for one more pass, so a row queued mid-round is never left waiting for
// the next timer. What a row is, how it is claimed and what working it means belong to the service.

export interface QueueWorkerOptions<Row> {
  /** Claims up to `limit` due rows, reserving them until `leaseUntil`. */
  claim: (now: Date, leaseUntil: Date, limit: number) => Promise<Row[]>;
  /** Works one claimed row; a throw is logged and the row comes back when its lease ends. */
  work: (row: Row) => Promise<void>;
  /**
   * Works a claimed batch at once instead (rows a provider takes in one call); a throw is logged and
   * the batch's rows come back when their lease ends. Default: each row by `work`.
   */
  workBatch?: (rows: Row[]) => Promise<void>;
  /** Gives back a claimed row not worked because the worker is stopping (else its lease runs out). */
  release?: (row: Row) => Promise<void>;
  /** Says what went wrong, where a row or a round fails unexpectedly. */
  onError: (error: unknown, row: Row | null) => void;
  now: () => Date;
  leaseMs: number;
  batchSize: number;
  /** Rows worked at once (default 1: in claim order). */
  concurrency?: number;
}

export interface QueueWorker {
  /** Works every due row (again, if called while running); resolves with how many were worked. */
  runDue(): Promise<number>;
  /** runDue in the background (after a row was queued). */
  kick(): void;
  /** Stops claiming and waits for the round in flight. */
  stop(): Promise<void>;
}

export function createQueueWorker<Row>(options: QueueWorkerOptions<Row>): QueueWorker {
  let round: Promise<number> | null = null;
  let again = false;
  let stopped = false;

  const workAll = async (rows: Row[]): Promise<number> => {
    let worked = 0;
    const queue = [...rows];
    await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 1, queue.length) }, async () => {
      for (let row = queue.shift(); row !== undefined; row = queue.shift()) {
        if (stopped) {
          await options.release?.(row);
          continue;
        }
        await options.work(row).catch((error: unknown) => options.onError(error, row ?? null));
        worked += 1;
      }
    }));
    return worked;
  };

  const workBatch = async (work: (rows: Row[]) => Promise<void>, rows: Row[]): Promise<number> => {
    if (rows.length === 0) return 0;
    if (stopped) {
      for (const row of rows) await options.release?.(row);
      return 0;
    }
    await work(rows).catch((error: unknown) => options.onError(error, null));
    return rows.length;
  };

  const loop = async (): Promise<number> => {
    let worked = 0;
    do {
      again = false;
      for (;;) {
        if (stopped) return worked;
        const now = options.now();
        const rows = await options.claim(now, new Date(now.getTime() + options.leaseMs), options.batchSize);
        worked += options.workBatch ? await workBatch(options.workBatch, rows) : await workAll(rows);
        if (rows.length < options.batchSize) break;
      }
    } while (again);
    return worked;
  };

  const runDue = (): Promise<number> => {
    if (round) {
      again = true;
      return round;
    }
    round = loop().finally(() => {
      round = null;
    });
    return round;
  };

  return {
    runDue,
    kick() {
      runDue().catch((error: unknown) => options.onError(error, null));
    },
    async stop() {
      stopped = true;
      await round?.catch(() => undefined);
    },
  };
}
