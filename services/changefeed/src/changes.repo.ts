// The change log in Postgres (or PGlite). Positions are sequence numbers handed out by the
// `change_seq` counter in the inserting statement itself, so they become visible in order: a
// reader that saw counter value N will never later find a new change at or below N.
import type { SqlExecutor } from '@sightline/kit';
import type { NewChange, ObjectType } from './change-record';

export interface StoredChange {
  seq: number;
  message_id: string;
  type: string;
  source: string;
  object_type: ObjectType | null;
  object_id: string | null;
  occurred_at: Date;
  recorded_at: Date;
  data: Record<string, unknown>;
}

export interface PageQuery {
  websiteId: string;
  /** Null: every type. */
  types: readonly string[] | null;
  /** Exclusive lower bound (a later run), or null when the run starts at `since`. */
  after: number | null;
  /** Inclusive time lower bound of a first run (on recorded_at); null for a later run. */
  since: Date | null;
  /** Inclusive upper bound: the counter value seen when the run started. */
  upto: number;
  /** Exclusive: the oldest change the previous page of this run returned. */
  below: number | null;
  limit: number;
}

interface ChangeRow extends Omit<StoredChange, 'seq'> {
  seq: string;
}

export class ChangesRepo {
  constructor(private readonly sql: SqlExecutor) {}

  /** Stores one change; false when its message was stored before (redelivery). */
  async insert(change: NewChange): Promise<boolean> {
    // The counter's row lock is held until this statement commits, which is what keeps sequence
    // order equal to commit order across concurrent consumers and replicas.
    const result = await this.sql.query(
      `WITH next AS (UPDATE change_seq SET last = last + 1 RETURNING last)
       INSERT INTO changes (seq, message_id, workspace_id, website_id, type, source, object_type, object_id, occurred_at, data)
       SELECT next.last, $1, $2, $3, $4, $5, $6, $7, $8::timestamptz, $9::jsonb FROM next
       ON CONFLICT (message_id) DO NOTHING`,
      [
        change.message_id, change.workspace_id, change.website_id, change.type, change.source,
        change.object_type, change.object_id, change.occurred_at, JSON.stringify(change.data),
      ],
    );
    return result.rowCount > 0;
  }

  /** The highest position every reader may rely on, and the database's clock. */
  async snapshot(): Promise<{ upto: number; now: Date }> {
    const { rows } = await this.sql.query<{ last: string; now: Date }>('SELECT last, now() AS now FROM change_seq');
    const row = rows[0];
    if (!row) throw new Error('change_seq has no row: the changefeed migration did not run');
    return { upto: Number(row.last), now: row.now };
  }

  /** One page of a run, newest first. */
  async page(query: PageQuery): Promise<StoredChange[]> {
    const { rows } = await this.sql.query<ChangeRow>(
      `SELECT seq, message_id, type, source, object_type, object_id, occurred_at, recorded_at, data
       FROM changes
       WHERE website_id = $1
         AND seq <= $2
         AND ($3::bigint IS NULL OR seq > $3::bigint)
         AND ($4::timestamptz IS NULL OR recorded_at >= $4::timestamptz)
         AND ($5::bigint IS NULL OR seq < $5::bigint)
         AND ($6::text[] IS NULL OR type = ANY($6::text[]))
       ORDER BY seq DESC
       LIMIT $7`,
      [query.websiteId, query.upto, query.after, query.since, query.below, query.types, query.limit],
    );
    return rows.map((row) => ({ ...row, seq: Number(row.seq) }));
  }

  /**
   * Deletes changes recorded before `cutoff`, `batchSize` rows per statement so no statement holds
   * many locks or runs long; returns how many were deleted.
   */
  async deleteRecordedBefore(cutoff: Date, batchSize = 5000): Promise<number> {
    let total = 0;
    for (;;) {
      const result = await this.sql.query(
        `DELETE FROM changes WHERE seq IN (
           SELECT seq FROM changes WHERE recorded_at < $1::timestamptz ORDER BY recorded_at LIMIT $2
         )`,
        [cutoff, batchSize],
      );
      total += result.rowCount;
      if (result.rowCount < batchSize) return total;
    }
  }
}
