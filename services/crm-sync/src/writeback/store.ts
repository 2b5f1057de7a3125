// The write-back queue's SQL (Postgres and PGlite alike). Times come from the caller's clock, never
// from now() in SQL, so due-ness, leases and backoff follow one clock (and tests can move it).
import { randomUUID } from 'node:crypto';
import type { SqlExecutor } from '@sightline/kit';
import type { OutcomeWritebackRequestedV1, WritebackStatus, WritebackTarget } from '@sightline/proto-schemas';
import { sentKey, type ChangeValue, type PlannedRow, type SentOutcome } from './plan';

export interface WritebackRow {
  id: string;
  request_id: string;
  target: WritebackTarget;
  workspace_id: string;
  website_id: string;
  conversion_id: string;
  provider: string | null;
  requested_by: string;
  requested_at: Date;
  payload: unknown;
  status: WritebackStatus;
  attempts: number;
  max_attempts: number;
  next_attempt_at: Date | null;
  lease_until: Date | null;
  last_error: string | null;
  detail: string | null;
  external_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id::text AS id, request_id::text AS request_id, target, workspace_id, website_id, conversion_id::text AS conversion_id,
  provider, requested_by, requested_at, payload, status, attempts, max_attempts, next_attempt_at, lease_until, last_error, detail,
  external_id, created_at, updated_at`;

/** Serialises deliveries of one request (a redelivery racing the first delivery). */
export async function lockRequest(tx: SqlExecutor, requestId: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`crm_sync.writeback:${requestId}`]);
}

export async function requestSeen(tx: SqlExecutor, requestId: string): Promise<boolean> {
  const result = await tx.query('SELECT 1 FROM writebacks WHERE request_id = $1::uuid LIMIT 1', [requestId]);
  return result.rows.length > 0;
}

export async function knownValues(tx: SqlExecutor, websiteId: string, provider: string, conversionId: string): Promise<Map<string, unknown>> {
  const result = await tx.query<{ field: string; value: unknown }>(
    'SELECT field, value FROM crm_known_values WHERE website_id = $1 AND provider = $2 AND conversion_id = $3::uuid',
    [websiteId, provider, conversionId],
  );
  return new Map(result.rows.map((r) => [r.field, r.value]));
}

export async function rememberValues(
  tx: SqlExecutor,
  key: { websiteId: string; provider: string; conversionId: string },
  values: { field: string; value: ChangeValue }[],
  source: string,
  now: Date,
): Promise<void> {
  for (const { field, value } of values) {
    await tx.query(
      `INSERT INTO crm_known_values (website_id, provider, conversion_id, field, value, source, updated_at)
       VALUES ($1, $2, $3::uuid, $4, $5::jsonb, $6, $7)
       ON CONFLICT (website_id, provider, conversion_id, field) DO UPDATE SET value = EXCLUDED.value, source = EXCLUDED.source, updated_at = EXCLUDED.updated_at`,
      [key.websiteId, key.provider, key.conversionId, field, JSON.stringify(value), source, now],
    );
  }
}

/** Outcomes of this conversion uploaded, or queued, per platform (ad_sends of live rows): sentKey(platform, key) → what was sent. */
export async function adOutcomesSent(tx: SqlExecutor, conversionId: string): Promise<Map<string, SentOutcome>> {
  const result = await tx.query<{ platform: string; send_key: string; value: number | null; currency: string | null }>(
    `SELECT s.platform, s.send_key, s.value, s.currency FROM ad_sends s JOIN writebacks w ON w.id = s.writeback_id
     WHERE s.conversion_id = $1::uuid AND w.status IN ('pending', 'failed', 'done') ORDER BY s.created_at`,
    [conversionId],
  );
  const sent = new Map<string, SentOutcome>();
  for (const r of result.rows) sent.set(sentKey(r.platform, r.send_key), { key: r.send_key, value: r.value === null ? null : Number(r.value), currency: r.currency });
  return sent;
}

/** Records the outcomes a queued ad upload carries (plan.ts PlannedRow.sends). */
export async function recordAdSends(tx: SqlExecutor, row: WritebackRow, sends: SentOutcome[], now: Date): Promise<void> {
  for (const send of sends) {
    await tx.query(
      `INSERT INTO ad_sends (writeback_id, conversion_id, platform, send_key, value, currency, created_at)
       VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
      [row.id, row.conversion_id, row.target, send.key, send.value, send.currency, now],
    );
  }
}

/** Earlier CRM write-backs of the conversion still waiting (not in flight): a newer request supersedes them. */
export async function waitingCrmRows(tx: SqlExecutor, conversionId: string, before: Date, now: Date): Promise<WritebackRow[]> {
  const result = await tx.query<WritebackRow>(
    `SELECT ${COLUMNS} FROM writebacks WHERE conversion_id = $1::uuid AND target = 'crm' AND status IN ('pending', 'failed')
       AND requested_at <= $2 AND (lease_until IS NULL OR lease_until < $3)
     ORDER BY requested_at FOR UPDATE`,
    [conversionId, before, now],
  );
  return result.rows;
}

export async function insertRows(
  tx: SqlExecutor,
  request: OutcomeWritebackRequestedV1,
  requestedAt: Date,
  rows: PlannedRow[],
  maxAttempts: number,
  now: Date,
): Promise<WritebackRow[]> {
  const inserted: WritebackRow[] = [];
  for (const row of rows) {
    const result = await tx.query<WritebackRow>(
      `INSERT INTO writebacks (id, request_id, target, workspace_id, website_id, conversion_id, provider, requested_by, requested_at,
         payload, status, max_attempts, next_attempt_at, detail, created_at, updated_at)
       VALUES ($1, $2::uuid, $3, $4, $5, $6::uuid, $7, $8, $9, $10::jsonb, $11, $12, $13, $14, $15, $15)
       ON CONFLICT (request_id, target) DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        randomUUID(), request.request_id, row.target, request.workspace_id, request.website_id, request.conversion_id, row.provider,
        request.requested_by, requestedAt, JSON.stringify(row.payload), row.status, maxAttempts,
        row.status === 'pending' ? now : null, row.detail, now,
      ],
    );
    const insertedRow = result.rows[0];
    if (insertedRow) {
      inserted.push(insertedRow);
      if (row.status === 'pending' && row.sends) await recordAdSends(tx, insertedRow, row.sends, now);
    }
  }
  return inserted;
}

/**
 * Claims up to `limit` due rows with a lease. A CRM row waits while an earlier write-back of the
 * same conversion is in flight, so two states of one contact never race to the CRM.
 */
export async function claimDue(db: SqlExecutor, now: Date, leaseUntil: Date, limit: number): Promise<WritebackRow[]> {
  const result = await db.query<WritebackRow>(
    `UPDATE writebacks SET lease_until = $2 WHERE id IN (
       SELECT w.id FROM writebacks w
       WHERE w.status IN ('pending', 'failed') AND w.next_attempt_at <= $1 AND (w.lease_until IS NULL OR w.lease_until < $1)
         AND NOT EXISTS (
           SELECT 1 FROM writebacks o WHERE o.conversion_id = w.conversion_id AND o.target = w.target AND o.id <> w.id
             AND o.status IN ('pending', 'failed') AND o.lease_until >= $1)
       ORDER BY w.next_attempt_at, w.requested_at
       LIMIT $3
       FOR UPDATE SKIP LOCKED)
     RETURNING ${COLUMNS}`,
    [now, leaseUntil, limit],
  );
  const due = (row: WritebackRow): number => row.next_attempt_at?.getTime() ?? 0;
  return result.rows.sort((a, b) => due(a) - due(b) || a.requested_at.getTime() - b.requested_at.getTime());
}

export type RowUpdate =
  | { status: 'done'; detail: string; externalId: string | null; attempted: boolean }
  | { status: 'failed'; error: string; nextAttemptAt: Date }
  | { status: 'dead'; error: string; detail: string; attempted: boolean }
  | { status: 'skipped'; detail: string; attempted: boolean };

/** Records the outcome of an attempt (or a supersession) and releases the lease. */
export async function updateRow(tx: SqlExecutor, id: string, update: RowUpdate, now: Date): Promise<WritebackRow> {
  let sql: string;
  let params: unknown[];
  switch (update.status) {
    case 'done':
      sql = `status = 'done', attempts = attempts + $3, detail = $4, external_id = $5, last_error = NULL, next_attempt_at = NULL`;
      params = [update.attempted ? 1 : 0, update.detail, update.externalId];
      break;
    case 'failed':
      sql = `status = 'failed', attempts = attempts + 1, last_error = $3, detail = $3, next_attempt_at = $4`;
      params = [update.error, update.nextAttemptAt];
      break;
    case 'dead':
      sql = `status = 'dead', attempts = attempts + $3, last_error = $4, detail = $5, next_attempt_at = NULL`;
      params = [update.attempted ? 1 : 0, update.error, update.detail];
      break;
    case 'skipped':
      sql = `status = 'skipped', attempts = attempts + $3, detail = $4, next_attempt_at = NULL`;
      params = [update.attempted ? 1 : 0, update.detail];
      break;
  }
  const result = await tx.query<WritebackRow>(
    `UPDATE writebacks SET ${sql}, lease_until = NULL, updated_at = $2 WHERE id = $1::uuid RETURNING ${COLUMNS}`,
    [id, now, ...params],
  );
  const row = result.rows[0];
  if (!row) throw new Error(`write-back ${id} vanished`);
  return row;
}

/** Replaces what a waiting row will write (supersede.ts), leaving its status as it is. */
export async function replacePayload(tx: SqlExecutor, id: string, payload: unknown): Promise<void> {
  await tx.query('UPDATE writebacks SET payload = $2::jsonb WHERE id = $1::uuid', [id, JSON.stringify(payload)]);
}

export interface ListFilter {
  status?: WritebackStatus | undefined;
  websiteId?: string | undefined;
  conversionId?: string | undefined;
  limit: number;
}

export async function listRows(db: SqlExecutor, filter: ListFilter): Promise<WritebackRow[]> {
  const conditions: string[] = [];
  const params: unknown[] = [];
  const add = (condition: (n: string) => string, value: unknown): void => {
    params.push(value);
    conditions.push(condition(`$${params.length}`));
  };
  if (filter.status) add((n) => `status = ${n}`, filter.status);
  if (filter.websiteId) add((n) => `website_id = ${n}`, filter.websiteId);
  if (filter.conversionId) add((n) => `conversion_id = ${n}::uuid`, filter.conversionId);
  params.push(filter.limit);
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  const result = await db.query<WritebackRow>(`SELECT ${COLUMNS} FROM writebacks ${where} ORDER BY updated_at DESC, id LIMIT $${params.length}`, params);
  return result.rows;
}

export async function getRow(db: SqlExecutor, id: string, forUpdate = false): Promise<WritebackRow | null> {
  const result = await db.query<WritebackRow>(`SELECT ${COLUMNS} FROM writebacks WHERE id = $1::uuid${forUpdate ? ' FOR UPDATE' : ''}`, [id]);
  return result.rows[0] ?? null;
}

/** Puts a dead (or failed) row back in the queue with a fresh set of attempts, due now. */
export async function requeueRow(tx: SqlExecutor, id: string, now: Date): Promise<WritebackRow> {
  const result = await tx.query<WritebackRow>(
    `UPDATE writebacks SET status = 'pending', attempts = 0, next_attempt_at = $2, lease_until = NULL, detail = 'retry requested by an operator',
       updated_at = $2 WHERE id = $1::uuid RETURNING ${COLUMNS}`,
    [id, now],
  );
  const row = result.rows[0];
  if (!row) throw new Error(`write-back ${id} vanished`);
  return row;
}
