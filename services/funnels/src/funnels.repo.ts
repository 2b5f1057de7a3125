// Funnel definitions in Postgres (schema `funnels`): one row per funnel with the state of its read
// model (generation, building or ready, build progress), and the replies of POST /funnels kept per
// Idempotency-Key.
import type { SqlExecutor, SqlStore } from '@sightline/kit';
import type { FunnelDefinition } from './definition';

export type ReadModelState = 'building' | 'ready';

export interface FunnelRow extends FunnelDefinition {
  id: string;
  workspace_id: string;
  website_id: string;
  created_at: Date;
  updated_at: Date;
  /** The definition's read model: its attempts are stored under this generation... */
  generation: number;
  /** ...and complete when ready (reads answer from the events while building). */
  read_model: ReadModelState;
  build_done: number;
  build_total: number;
  build_error: string | null;
}

export interface StoredReply {
  request_hash: string;
  status: number;
  response: unknown;
}

const COLUMNS = `id::text AS id, workspace_id, website_id, name, scope, step_order, window_days, filters, steps, created_at, updated_at,
  generation, read_model, build_done, build_total, build_error`;
const IDEMPOTENCY_TTL = "interval '24 hours'";
/** SET clause starting a new read model generation: built again from the facts, read from the events meanwhile. */
const NEW_GENERATION = "generation = generation + 1, read_model = 'building', build_done = 0, build_total = 0, build_lease = NULL, build_error = NULL, ready_at = NULL";

export class FunnelsRepo {
  constructor(private readonly sql: SqlStore) {}

  async list(websiteId: string): Promise<FunnelRow[]> {
    return (await this.sql.query<FunnelRow>(`SELECT ${COLUMNS} FROM funnels WHERE website_id = $1 ORDER BY created_at, id`, [websiteId])).rows;
  }

  async count(tx: SqlExecutor, websiteId: string): Promise<number> {
    return (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM funnels WHERE website_id = $1', [websiteId])).rows[0]?.n ?? 0;
  }

  async get(websiteId: string, id: string, tx: SqlExecutor = this.sql): Promise<FunnelRow | null> {
    const rows = (await tx.query<FunnelRow>(`SELECT ${COLUMNS} FROM funnels WHERE website_id = $1 AND id = $2`, [websiteId, id])).rows;
    return rows[0] ?? null;
  }

  /** The row locked for a change in this transaction. */
  async lock(tx: SqlExecutor, websiteId: string, id: string): Promise<FunnelRow | null> {
    const rows = (await tx.query<FunnelRow>(`SELECT ${COLUMNS} FROM funnels WHERE website_id = $1 AND id = $2 FOR UPDATE`, [websiteId, id])).rows;
    return rows[0] ?? null;
  }

  async insert(tx: SqlExecutor, row: { id: string; workspace_id: string; website_id: string } & FunnelDefinition): Promise<FunnelRow> {
    const rows = (await tx.query<FunnelRow>(
      `INSERT INTO funnels (id, workspace_id, website_id, name, scope, step_order, window_days, filters, steps)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb) RETURNING ${COLUMNS}`,
      [row.id, row.workspace_id, row.website_id, row.name, row.scope, row.step_order, row.window_days, JSON.stringify(row.filters), JSON.stringify(row.steps)],
    )).rows;
    return rows[0] as FunnelRow;
  }

  /** Writes a changed definition; `rebuild` starts a new generation of its read model. */
  async update(tx: SqlExecutor, websiteId: string, id: string, d: FunnelDefinition, rebuild: boolean): Promise<FunnelRow> {
    const rows = (await tx.query<FunnelRow>(
      `UPDATE funnels SET name = $3, scope = $4, step_order = $5, window_days = $6, filters = $7::jsonb, steps = $8::jsonb, updated_at = now()
         ${rebuild ? `, ${NEW_GENERATION}` : ''}
        WHERE website_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [websiteId, id, d.name, d.scope, d.step_order, d.window_days, JSON.stringify(d.filters), JSON.stringify(d.steps)],
    )).rows;
    return rows[0] as FunnelRow;
  }

  /** Every funnel of a website (each keeps its read model current, building or ready). */
  async ofWebsite(websiteId: string): Promise<FunnelRow[]> {
    return (await this.sql.query<FunnelRow>(`SELECT ${COLUMNS} FROM funnels WHERE website_id = $1`, [websiteId])).rows;
  }

  async ofWorkspace(workspaceId: string): Promise<FunnelRow[]> {
    return (await this.sql.query<FunnelRow>(`SELECT ${COLUMNS} FROM funnels WHERE workspace_id = $1`, [workspaceId])).rows;
  }

  /** Starts a new generation of the read model of a website's funnels (or one of them): an operator rebuild. */
  async startRebuild(websiteId: string, funnelId: string | null): Promise<FunnelRow[]> {
    return (await this.sql.query<FunnelRow>(
      `UPDATE funnels SET ${NEW_GENERATION} WHERE website_id = $1 AND ($2::uuid IS NULL OR id = $2::uuid) RETURNING ${COLUMNS}`,
      [websiteId, funnelId],
    )).rows;
  }

  /**
   * Claims the building funnels of one website whose lease is free (the oldest waiting first), for
   * `leaseSeconds`. Several processes may build; each website's funnels are built by one at a time.
   */
  async claimBuild(leaseSeconds: number): Promise<FunnelRow[]> {
    return this.sql.transaction(async (tx) => {
      const next = (await tx.query<{ website_id: string }>(
        `SELECT website_id FROM funnels WHERE read_model = 'building' AND (build_lease IS NULL OR build_lease < now())
          ORDER BY updated_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
      )).rows[0];
      if (!next) return [];
      return (await tx.query<FunnelRow>(
        `UPDATE funnels SET build_lease = now() + make_interval(secs => $2), build_error = NULL
          WHERE website_id = $1 AND read_model = 'building' AND (build_lease IS NULL OR build_lease < now()) RETURNING ${COLUMNS}`,
        [next.website_id, leaseSeconds],
      )).rows;
    });
  }

  /** Progress of a build (and a longer lease); false when a funnel was changed meanwhile (its generation moved on). */
  async buildProgress(funnel: { id: string; generation: number }, done: number, total: number, leaseSeconds: number): Promise<boolean> {
    const r = await this.sql.query(
      `UPDATE funnels SET build_done = $3, build_total = $4, build_lease = now() + make_interval(secs => $5)
        WHERE id = $1 AND generation = $2 AND read_model = 'building' RETURNING id`,
      [funnel.id, funnel.generation, done, total, leaseSeconds],
    );
    return r.rows.length > 0;
  }

  /** Marks a generation's read model complete; false when the funnel moved on to another generation. */
  async buildDone(funnel: { id: string; generation: number }): Promise<boolean> {
    const r = await this.sql.query(
      `UPDATE funnels SET read_model = 'ready', ready_at = now(), build_lease = NULL, build_done = build_total WHERE id = $1 AND generation = $2 AND read_model = 'building' RETURNING id`,
      [funnel.id, funnel.generation],
    );
    return r.rows.length > 0;
  }

  /** Gives a build back (the process is stopping): another process, or the next start, takes it over. */
  async releaseBuild(funnels: readonly { id: string; generation: number }[]): Promise<void> {
    for (const f of funnels) await this.sql.query('UPDATE funnels SET build_lease = NULL WHERE id = $1 AND generation = $2', [f.id, f.generation]);
  }

  /** A failed build: kept building (reads stay exact from the events), retried after the lease. */
  async buildFailed(funnel: { id: string; generation: number }, error: string): Promise<void> {
    await this.sql.query(`UPDATE funnels SET build_error = $3 WHERE id = $1 AND generation = $2`, [funnel.id, funnel.generation, error.slice(0, 2000)]);
  }

  /** The generation each existing funnel reads (for removing attempts of older generations and deleted funnels). */
  async generations(): Promise<Map<string, number>> {
    const rows = (await this.sql.query<{ id: string; generation: number }>('SELECT id::text AS id, generation FROM funnels')).rows;
    return new Map(rows.map((r) => [r.id, r.generation]));
  }

  async delete(tx: SqlExecutor, websiteId: string, id: string): Promise<void> {
    await tx.query('DELETE FROM funnels WHERE website_id = $1 AND id = $2', [websiteId, id]);
  }

  /** Serialises requests sharing an idempotency key of one API key; returns the stored reply, if any. */
  async lockIdempotencyKey(tx: SqlExecutor, workspaceId: string, keyId: string, key: string): Promise<StoredReply | null> {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`funnels.idempotency:${workspaceId}:${keyId}:${key}`]);
    const rows = (await tx.query<StoredReply>(
      `SELECT request_hash, status, response FROM idempotency_keys
        WHERE workspace_id = $1 AND key_id = $2 AND key = $3 AND created_at > now() - ${IDEMPOTENCY_TTL}`,
      [workspaceId, keyId, key],
    )).rows;
    return rows[0] ?? null;
  }

  async storeReply(tx: SqlExecutor, workspaceId: string, keyId: string, key: string, requestHash: string, status: number, response: unknown): Promise<void> {
    await tx.query(
      `INSERT INTO idempotency_keys (workspace_id, key_id, key, request_hash, status, response, created_at) VALUES ($1, $2, $3, $4, $5, $6::jsonb, now())
       ON CONFLICT (workspace_id, key_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status = EXCLUDED.status, response = EXCLUDED.response, created_at = now()`,
      [workspaceId, keyId, key, requestHash, status, JSON.stringify(response)],
    );
  }

  async deleteExpiredReplies(): Promise<void> {
    await this.sql.query(`DELETE FROM idempotency_keys WHERE created_at < now() - ${IDEMPOTENCY_TTL}`);
  }
}
