// The connections table: one row per website and provider, holding sealed credentials and the
// sync state (resume cursor, synced-through instant, lease, last success and error). Reads that
// leave this file never include the credentials column.
import type { SqlExecutor, SqlStore } from '@sightline/kit';
import { recordId } from '../mirror';

export type ConnectionStatus = 'active' | 'disconnected';

/** What operators see of a connection: never its credentials. */
export interface ConnectionView {
  id: string;
  workspace_id: string;
  website_id: string;
  provider: string;
  status: ConnectionStatus;
  health: 'never-synced' | 'ok' | 'failing' | 'disconnected';
  sync_in_progress: boolean;
  synced_through: string | null;
  last_success_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  sync_started_at: string | null;
  sync_records: number;
  last_sync_records: number | null;
  /** The operator's settings for this connection (mapping, allocation share); never secret. */
  settings: Record<string, unknown>;
  /** Set while the provider asked the sync to wait (an API allocation used up); the next run resumes after it. */
  paused_until: string | null;
  pause_reason: string | null;
  /** The provider's API usage as it last reported it (Salesforce's Sforce-Limit-Info), or null. */
  api_usage: { used: number; limit: number } | null;
  created_at: string;
}

/** What a sync needs once it holds the lease. */
export interface ClaimedConnection {
  id: string;
  workspace_id: string;
  website_id: string;
  provider: string;
  credentials: Buffer;
  settings: Record<string, unknown>;
  resume_cursor: string | null;
  synced_through: Date | null;
  sync_started_at: Date;
}

interface ViewRow {
  id: string;
  workspace_id: string;
  website_id: string;
  provider: string;
  status: ConnectionStatus;
  in_progress: boolean;
  synced_through: Date | null;
  last_success_at: Date | null;
  last_error: string | null;
  last_error_at: Date | null;
  sync_started_at: Date | null;
  sync_records: number;
  last_sync_records: number | null;
  settings: Record<string, unknown>;
  paused_until: Date | null;
  pause_reason: string | null;
  api_used: string | number | null;
  api_limit: string | number | null;
  created_at: Date;
}

const VIEW_COLUMNS = `id, workspace_id, website_id, provider, status, (sync_lease_until IS NOT NULL AND sync_lease_until > now()) AS in_progress,
  synced_through, last_success_at, last_error, last_error_at, sync_started_at, sync_records, last_sync_records,
  settings, paused_until, pause_reason, api_used, api_limit, created_at`;

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

function toView(r: ViewRow): ConnectionView {
  const failing = r.last_error_at !== null && (r.last_success_at === null || r.last_error_at > r.last_success_at);
  return {
    id: r.id,
    workspace_id: r.workspace_id,
    website_id: r.website_id,
    provider: r.provider,
    status: r.status,
    health: r.status === 'disconnected' ? 'disconnected' : failing ? 'failing' : r.last_success_at ? 'ok' : 'never-synced',
    sync_in_progress: r.in_progress,
    synced_through: iso(r.synced_through),
    last_success_at: iso(r.last_success_at),
    last_error: r.last_error,
    last_error_at: iso(r.last_error_at),
    sync_started_at: iso(r.sync_started_at),
    sync_records: Number(r.sync_records),
    last_sync_records: r.last_sync_records === null ? null : Number(r.last_sync_records),
    settings: r.settings ?? {},
    paused_until: r.paused_until !== null && r.paused_until > new Date() ? r.paused_until.toISOString() : null,
    pause_reason: r.paused_until !== null && r.paused_until > new Date() ? r.pause_reason : null,
    api_usage: r.api_used === null || r.api_limit === null ? null : { used: Number(r.api_used), limit: Number(r.api_limit) },
    created_at: r.created_at.toISOString(),
  };
}

/** A lease lost mid-sync (another replica took over after expiry, or the connection was removed). */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}

export class ConnectionsRepo {
  constructor(private readonly sql: SqlStore) {}

  /** The id of the connection of (website, provider): stable, so re-adding keeps it. */
  static idOf(websiteId: string, provider: string): string {
    return recordId(websiteId, provider, 'connection');
  }

  /** Adds the connection, or replaces its credentials and settings and reactivates it; true when new. */
  async save(input: { id: string; workspaceId: string; websiteId: string; provider: string; sealed: Buffer; settings?: Record<string, unknown> }): Promise<boolean> {
    const result = await this.sql.query<{ inserted: boolean }>(
      `INSERT INTO connections (id, workspace_id, website_id, provider, credentials, settings, status) VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'active')
       ON CONFLICT (website_id, provider) DO UPDATE SET workspace_id = EXCLUDED.workspace_id, credentials = EXCLUDED.credentials,
         settings = EXCLUDED.settings, status = 'active', paused_until = NULL, pause_reason = NULL, updated_at = now()
       RETURNING (xmax = 0) AS inserted`,
      [input.id, input.workspaceId, input.websiteId, input.provider, input.sealed, JSON.stringify(input.settings ?? {})],
    );
    return result.rows[0]?.inserted === true;
  }

  async list(filter: { websiteId?: string; workspaceId?: string } = {}): Promise<ConnectionView[]> {
    const result = await this.sql.query<ViewRow>(
      `SELECT ${VIEW_COLUMNS} FROM connections
       WHERE ($1::uuid IS NULL OR website_id = $1) AND ($2::uuid IS NULL OR workspace_id = $2)
       ORDER BY created_at, id`,
      [filter.websiteId ?? null, filter.workspaceId ?? null],
    );
    return result.rows.map(toView);
  }

  async get(id: string): Promise<ConnectionView | null> {
    const result = await this.sql.query<ViewRow>(`SELECT ${VIEW_COLUMNS} FROM connections WHERE id = $1`, [id]);
    const row = result.rows[0];
    return row ? toView(row) : null;
  }

  /** Active connections the schedule should sync now: a paused one waits for its paused_until. */
  async activeIds(): Promise<string[]> {
    const result = await this.sql.query<{ id: string }>(
      "SELECT id FROM connections WHERE status = 'active' AND (paused_until IS NULL OR paused_until <= now()) ORDER BY last_success_at NULLS FIRST, id",
    );
    return result.rows.map((r) => r.id);
  }

  /**
   * Takes the connection's sync lease when it is active and nobody holds it. A full sync drops
   * the resume cursor; a fresh (not resumed) sync records now as its start.
   */
  async claim(id: string, owner: string, leaseMs: number, full: boolean): Promise<ClaimedConnection | null> {
    const result = await this.sql.query<ClaimedConnection>(
      `UPDATE connections SET sync_owner = $2, sync_lease_until = now() + $3::double precision * interval '1 millisecond',
         sync_started_at = CASE WHEN $4 OR resume_cursor IS NULL OR sync_started_at IS NULL THEN now() ELSE sync_started_at END,
         sync_records = CASE WHEN $4 OR resume_cursor IS NULL THEN 0 ELSE sync_records END,
         resume_cursor = CASE WHEN $4 THEN NULL ELSE resume_cursor END,
         updated_at = now()
       WHERE id = $1 AND status = 'active' AND (sync_lease_until IS NULL OR sync_lease_until < now())
       RETURNING id, workspace_id, website_id, provider, credentials, settings, resume_cursor, synced_through, sync_started_at`,
      [id, owner, leaseMs, full],
    );
    return result.rows[0] ?? null;
  }

  /** Inside a page's transaction: proves the lease is still ours, stores the cursor, extends the lease. */
  async commitPage(tx: SqlExecutor, id: string, owner: string, cursor: string | null, records: number, leaseMs: number): Promise<void> {
    const result = await tx.query(
      `UPDATE connections SET resume_cursor = $3, sync_records = sync_records + $4,
         sync_lease_until = now() + $5::double precision * interval '1 millisecond', updated_at = now()
       WHERE id = $1 AND sync_owner = $2 AND status = 'active'`,
      [id, owner, cursor, records, leaseMs],
    );
    if (result.rowCount === 0) throw new LeaseLostError('the sync lease was lost (another sync took over, or the connection was removed)');
  }

  /** The provider's API usage as the last page reported it (status and `connections status`). */
  async recordUsage(tx: SqlExecutor, id: string, usage: { used: number; limit: number }): Promise<void> {
    await tx.query('UPDATE connections SET api_used = $2, api_limit = $3 WHERE id = $1', [id, usage.used, usage.limit]);
  }

  /** The provider asked the sync to wait: cursor kept (committed with the last page), lease released, skipped by the schedule until `until`. */
  async pause(id: string, owner: string, until: Date, reason: string): Promise<void> {
    await this.sql.query(
      `UPDATE connections SET paused_until = $3, pause_reason = $4, sync_owner = NULL, sync_lease_until = NULL, updated_at = now()
       WHERE id = $1 AND sync_owner = $2`,
      [id, owner, until, reason.slice(0, 2000)],
    );
  }

  /** Extends the lease while a sync waits (rate limits, retries). */
  async renew(id: string, owner: string, leaseMs: number): Promise<void> {
    await this.sql.query(
      "UPDATE connections SET sync_lease_until = now() + $3::double precision * interval '1 millisecond' WHERE id = $1 AND sync_owner = $2",
      [id, owner, leaseMs],
    );
  }

  /** The sync finished: the next one starts from `synced_through` (its start minus the overlap). */
  async complete(id: string, owner: string, overlapMs: number): Promise<void> {
    await this.sql.query(
      `UPDATE connections SET synced_through = sync_started_at - $3::double precision * interval '1 millisecond', resume_cursor = NULL,
         last_success_at = now(), paused_until = NULL, pause_reason = NULL, last_sync_records = sync_records, sync_owner = NULL, sync_lease_until = NULL, updated_at = now()
       WHERE id = $1 AND sync_owner = $2`,
      [id, owner, overlapMs],
    );
  }

  /** The sync stopped early: the error is recorded, the resume cursor kept, the lease released. */
  async fail(id: string, owner: string, message: string): Promise<void> {
    await this.sql.query(
      `UPDATE connections SET last_error = $3, last_error_at = now(), sync_owner = NULL, sync_lease_until = NULL, updated_at = now()
       WHERE id = $1 AND sync_owner = $2`,
      [id, owner, message.slice(0, 2000)],
    );
  }

  /** Disconnects: credentials erased, sync state dropped; the mirrored records stay. */
  async disconnect(id: string): Promise<boolean> {
    const result = await this.sql.query(
      `UPDATE connections SET status = 'disconnected', credentials = '\\x'::bytea, resume_cursor = NULL,
         sync_owner = NULL, sync_lease_until = NULL, updated_at = now()
       WHERE id = $1`,
      [id],
    );
    return result.rowCount > 0;
  }

  /** An embedded process is the only one: leases left by a previous run of it are stale. */
  async releaseAllLeases(): Promise<void> {
    await this.sql.query('UPDATE connections SET sync_owner = NULL, sync_lease_until = NULL WHERE sync_owner IS NOT NULL');
  }
}
