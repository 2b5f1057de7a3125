// The durable side of the monthly quota. The KV counts every request (the fast path: one round trip,
// exact across replicas); this ledger keeps the latest count per workspace and month in the
// gateway's PostgreSQL schema (migrations/003_quota_usage.sql), so a KV that loses its data (Redis
// without persistence restarting, the embedded in-memory KV on a process restart) does not hand every
// workspace its month's allowance again. Counts are flushed in one statement every ~2 s and when the
// module stops; a store error is logged and the counts are kept for the next flush, never failing a
// request (the KV still decides).
import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import type { SqlStore } from '@sightline/kit';

/** How often the counts seen since the last flush are written to PostgreSQL. */
export const QUOTA_FLUSH_INTERVAL_MS = 2_000;
/** How long "nothing stored for this workspace-month" is believed before PostgreSQL is asked again. */
export const NO_STORED_COUNT_MS = 5_000;
const NO_STORED_COUNT_ENTRIES = 10_000;

interface Count {
  workspaceId: string;
  month: string;
  used: number;
}

export interface StoredUsage {
  workspaceId: string;
  used: number;
  updatedAt: string;
}

const keyOf = (workspaceId: string, month: string): string => `${workspaceId}:${month}`;

export class QuotaLedger {
  /** Latest count seen per workspace-month since the last flush. */
  private pending = new Map<string, Count>();
  /** The batch a flush is writing now (still "unflushed" for a reader until it commits). */
  private writing = new Map<string, Count>();
  /** Workspace-months PostgreSQL had no count for; dropped when this replica flushes one. */
  private readonly nothingStored = new LRUCache<string, true>({ max: NO_STORED_COUNT_ENTRIES, ttl: NO_STORED_COUNT_MS });
  private timer: NodeJS.Timeout | null = null;
  private tail: Promise<void> = Promise.resolve();
  private flushing = false;

  constructor(
    private readonly db: SqlStore,
    private readonly logger: Logger,
    private readonly flushIntervalMs = QUOTA_FLUSH_INTERVAL_MS,
  ) {}

  /** Notes the KV's latest count for a workspace-month; the next flush writes the greatest one noted. */
  record(workspaceId: string, month: string, used: number): void {
    const key = keyOf(workspaceId, month);
    const known = this.pending.get(key);
    if (!known || known.used < used) this.pending.set(key, { workspaceId, month, used });
  }

  /**
   * The count to restore into a KV counter found new: the stored count, or this replica's
   * unflushed one when that is larger. Never throws: on a store error it logs and answers what this
   * replica knows (0 when nothing), and the KV's own count decides.
   */
  async restorable(workspaceId: string, month: string): Promise<number> {
    const key = keyOf(workspaceId, month);
    const unflushed = Math.max(this.pending.get(key)?.used ?? 0, this.writing.get(key)?.used ?? 0);
    if (this.nothingStored.has(key)) return unflushed;
    try {
      const { rows } = await this.db.query<{ used: string | number }>(
        'SELECT used FROM quota_usage WHERE workspace_id = $1 AND month = $2',
        [workspaceId, month],
      );
      const stored = rows[0] ? Number(rows[0].used) : 0;
      if (stored === 0) this.nothingStored.set(key, true);
      return Math.max(stored, unflushed);
    } catch (error) {
      this.logger.error({ err: error, workspaceId, month }, 'reading the stored quota count failed; the KV counter decides without it');
      return unflushed;
    }
  }

  /** Writes every count noted since the last flush in one statement. Never throws. */
  flush(): Promise<void> {
    const next = this.tail.then(() => this.flushOnce());
    this.tail = next;
    return next;
  }

  /** Flushes every interval from now on. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      // A flush still running (a slow store) is not queued behind: its successor takes everything noted meanwhile.
      if (!this.flushing) void this.flush();
    }, this.flushIntervalMs);
    this.timer.unref();
  }

  /** Stops the interval and writes what is left. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** The stored counts of one month, for operators. */
  async usage(month: string): Promise<Map<string, StoredUsage>> {
    const { rows } = await this.db.query<{ workspace_id: string; used: string | number; updated_at: Date | string }>(
      'SELECT workspace_id, used, updated_at FROM quota_usage WHERE month = $1',
      [month],
    );
    return new Map(rows.map((row) => [row.workspace_id, {
      workspaceId: row.workspace_id,
      used: Number(row.used),
      updatedAt: row.updated_at instanceof Date ? row.updated_at.toISOString() : new Date(row.updated_at).toISOString(),
    }]));
  }

  private async flushOnce(): Promise<void> {
    if (this.pending.size === 0) return;
    this.flushing = true;
    this.writing = this.pending;
    this.pending = new Map();
    const batch = [...this.writing.values()];
    try {
      // Keeping the greatest value: a replica that saw an older (lower) count cannot lower it.
      await this.db.query(
        `INSERT INTO quota_usage (workspace_id, month, used)
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[])
         ON CONFLICT (workspace_id, month) DO UPDATE SET used = GREATEST(quota_usage.used, EXCLUDED.used), updated_at = now()`,
        [batch.map((c) => c.workspaceId), batch.map((c) => c.month), batch.map((c) => c.used)],
      );
      for (const key of this.writing.keys()) this.nothingStored.delete(key);
    } catch (error) {
      // Kept for the next flush; until then the KV counter is the only copy of these counts.
      for (const count of batch) this.record(count.workspaceId, count.month, count.used);
      this.logger.error({ err: error, counts: batch.length }, 'flushing quota counts failed; retrying with the next flush');
    } finally {
      this.writing = new Map();
      this.flushing = false;
    }
  }
}
