// The delivery queue's SQL. A worker claims due rows with a lease, records `sending` (attempts + 1)
// before the message leaves and `sent` after, in separate commits: a row found `sending` with its
// lease run out was cut short by a crash, and the worker resolves it (worker.ts) before it sends.
import type { SqlExecutor } from '@sightline/kit';
import { DELIVERY_COLUMNS, type DeliveryRow } from '../runs/runs.repo';

/**
 * Claims up to `limit` due deliveries: queued ones whose time has come, and sending ones whose
 * lease ran out (cut short). A chat delivery waits while its workspace is rate limited.
 */
export async function claimDue(db: SqlExecutor, owner: string, now: Date, leaseUntil: Date, limit: number): Promise<DeliveryRow[]> {
  const result = await db.query<DeliveryRow>(
    `UPDATE deliveries SET lease_owner = $2, lease_until = $3 WHERE id IN (
       SELECT d.id FROM deliveries d
       WHERE ((d.status = 'queued' AND d.next_attempt_at <= $1 AND (d.lease_until IS NULL OR d.lease_until < $1))
           OR (d.status = 'sending' AND d.lease_until < $1))
         AND NOT (d.channel = 'chat' AND EXISTS (
           SELECT 1 FROM chat_connections c WHERE c.workspace_id = d.workspace_id AND c.rate_limited_until > $1))
       ORDER BY d.next_attempt_at, d.id
       LIMIT $4 FOR UPDATE SKIP LOCKED)
     RETURNING ${DELIVERY_COLUMNS}`,
    [now, owner, leaseUntil, limit],
  );
  return result.rows;
}

/** Records that an attempt starts, if the lease is still ours. */
export async function beginAttempt(db: SqlExecutor, id: string, owner: string, now: Date): Promise<boolean> {
  const result = await db.query(
    `UPDATE deliveries SET status = 'sending', attempts = attempts + 1, attempt_started_at = $3, updated_at = $3
     WHERE id = $1 AND lease_owner = $2 AND status IN ('queued', 'sending')`,
    [id, owner, now],
  );
  return result.rowCount > 0;
}

export type Outcome =
  | { status: 'sent'; ref: string; note?: string | null }
  | { status: 'queued'; error: string; nextAttemptAt: Date }
  | { status: 'failed'; error: string }
  | { status: 'skipped'; error: string };

export async function finishAttempt(tx: SqlExecutor, id: string, outcome: Outcome, now: Date): Promise<DeliveryRow | null> {
  const result = await tx.query<DeliveryRow>(
    `UPDATE deliveries SET status = $2, provider_ref = COALESCE($3, provider_ref), last_error = $4,
       sent_at = CASE WHEN $2 = 'sent' THEN $6::timestamptz ELSE sent_at END,
       next_attempt_at = COALESCE($5, next_attempt_at), lease_owner = NULL, lease_until = NULL, updated_at = $6
     WHERE id = $1 RETURNING ${DELIVERY_COLUMNS}`,
    [
      id, outcome.status, outcome.status === 'sent' ? outcome.ref : null,
      outcome.status === 'sent' ? (outcome.note ?? null) : outcome.error, outcome.status === 'queued' ? outcome.nextAttemptAt : null, now,
    ],
  );
  return result.rows[0] ?? null;
}

/** Lets go of a claimed row without an attempt (stopping, or its chat workspace is rate limited). */
export async function release(db: SqlExecutor, id: string, owner: string): Promise<void> {
  await db.query('UPDATE deliveries SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2', [id, owner]);
}

/** An embedded process is the only worker: leases left by its previous run are stale. */
export async function expireAllLeases(db: SqlExecutor, now: Date): Promise<number> {
  const result = await db.query("UPDATE deliveries SET lease_until = $1 WHERE status IN ('queued', 'sending') AND lease_until > $1", [now]);
  return result.rowCount;
}

export async function rateLimit(db: SqlExecutor, workspaceId: string, until: Date): Promise<void> {
  await db.query(
    'UPDATE chat_connections SET rate_limited_until = GREATEST(COALESCE(rate_limited_until, $2), $2) WHERE workspace_id = $1',
    [workspaceId, until],
  );
}

export async function getDelivery(db: SqlExecutor, id: string, forUpdate = false): Promise<DeliveryRow | null> {
  return (await db.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [id])).rows[0] ?? null;
}

export async function listDeliveries(db: SqlExecutor, filter: { status?: string; automationId?: string; limit: number }): Promise<DeliveryRow[]> {
  const result = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE ($1::text IS NULL OR status = $1) AND ($2::uuid IS NULL OR automation_id = $2)
     ORDER BY updated_at DESC, id LIMIT $3`,
    [filter.status ?? null, filter.automationId ?? null, filter.limit],
  );
  return result.rows;
}

/** An operator's retry of a failed (or skipped) delivery: queued again now, with a fresh set of attempts. */
export async function requeue(tx: SqlExecutor, id: string, now: Date): Promise<DeliveryRow | null> {
  const result = await tx.query<DeliveryRow>(
    `UPDATE deliveries SET status = 'queued', attempts = 0, next_attempt_at = $2, lease_owner = NULL, lease_until = NULL, updated_at = $2
     WHERE id = $1 RETURNING ${DELIVERY_COLUMNS}`,
    [id, now],
  );
  return result.rows[0] ?? null;
}

export async function runMessage(db: SqlExecutor, runId: string): Promise<{ message: import('../compose/compose').Message; test: boolean; automation_id: string } | null> {
  const result = await db.query<{ message: import('../compose/compose').Message; test: boolean; automation_id: string }>(
    'SELECT message, test, automation_id::text AS automation_id FROM runs WHERE id = $1',
    [runId],
  );
  return result.rows[0] ?? null;
}
