// Runs and their deliveries. A run is inserted with one queued delivery per recipient in the same
// transaction; its trigger key makes a second insert for the same trigger a no-op.
import { randomUUID } from 'node:crypto';
import type { SqlExecutor } from '@sightline/kit';
import type { Message, RunTrigger } from '../compose/compose';
import type { Destination } from '../spec/spec';

export type RunStatus = 'queued' | 'sent' | 'failed' | 'skipped';
export type DeliveryStatus = 'queued' | 'sending' | 'sent' | 'failed' | 'skipped';

export interface RunRow {
  id: string;
  automation_id: string;
  trigger: RunTrigger;
  trigger_key: string;
  test: boolean;
  status: RunStatus;
  message: Message;
  composed_by: 'template' | 'ai';
  compose_note: string | null;
  link: string;
  started_at: Date;
  finished_at: Date | null;
}

export interface DeliveryRow {
  id: string;
  run_id: string;
  automation_id: string;
  workspace_id: string;
  channel: 'email' | 'chat';
  recipient: string;
  status: DeliveryStatus;
  attempts: number;
  max_attempts: number;
  next_attempt_at: Date;
  lease_owner: string | null;
  lease_until: Date | null;
  attempt_started_at: Date | null;
  last_error: string | null;
  provider_ref: string | null;
  sent_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** An email already counted against its workspace's send budget (deliver/budget.ts). */
  budget_counted: boolean;
}

const RUN_COLUMNS = `id::text AS id, automation_id::text AS automation_id, trigger, trigger_key, test, status, message, composed_by, compose_note, link, started_at, finished_at`;
export const DELIVERY_COLUMNS = `id::text AS id, run_id::text AS run_id, automation_id::text AS automation_id, workspace_id, channel, recipient, status, attempts,
  max_attempts, next_attempt_at, lease_owner, lease_until, attempt_started_at, last_error, provider_ref, sent_at, created_at, updated_at, budget_counted`;

export interface NewRun {
  automationId: string;
  workspaceId: string;
  trigger: RunTrigger;
  triggerKey: string;
  test: boolean;
  message: Message;
  composedBy: 'template' | 'ai';
  composeNote: string | null;
  link: string;
  deliver: Destination[];
  maxAttempts: number;
  now: Date;
}

/** Inserts the run and its deliveries; null when this trigger already made a run. */
export async function insertRun(tx: SqlExecutor, run: NewRun): Promise<{ run: RunRow; deliveries: DeliveryRow[] } | null> {
  const inserted = await tx.query<RunRow>(
    `INSERT INTO runs (id, automation_id, trigger, trigger_key, test, status, message, composed_by, compose_note, link, started_at)
     VALUES ($1, $2, $3, $4, $5, 'queued', $6::jsonb, $7, $8, $9, $10)
     ON CONFLICT (automation_id, trigger_key) DO NOTHING
     RETURNING ${RUN_COLUMNS}`,
    [randomUUID(), run.automationId, run.trigger, run.triggerKey, run.test, JSON.stringify(run.message), run.composedBy, run.composeNote, run.link, run.now],
  );
  const row = inserted.rows[0];
  if (!row) return null;
  const recipients = run.deliver.flatMap((d) => d.to.map((to) => ({ channel: d.channel, to })));
  const deliveries = await tx.query<DeliveryRow>(
    `INSERT INTO deliveries (id, run_id, automation_id, workspace_id, channel, recipient, status, max_attempts, next_attempt_at, created_at, updated_at)
     SELECT id, $2, $3, $4, channel, recipient, 'queued', $7, $8, $8, $8
       FROM unnest($1::uuid[], $5::text[], $6::text[]) AS r(id, channel, recipient)
     RETURNING ${DELIVERY_COLUMNS}`,
    [recipients.map(() => randomUUID()), row.id, run.automationId, run.workspaceId, recipients.map((r) => r.channel), recipients.map((r) => r.to), run.maxAttempts, run.now],
  );
  return { run: row, deliveries: deliveries.rows };
}

export async function recentRuns(db: SqlExecutor, automationId: string, limit: number): Promise<{ run: RunRow; deliveries: DeliveryRow[] }[]> {
  const runs = (await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE automation_id = $1 ORDER BY started_at DESC, seq DESC LIMIT $2`, [automationId, limit])).rows;
  if (runs.length === 0) return [];
  const deliveries = (await db.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE run_id = ANY($1::uuid[]) ORDER BY channel, recipient`, [runs.map((r) => r.id)])).rows;
  return runs.map((run) => ({ run, deliveries: deliveries.filter((d) => d.run_id === run.id) }));
}

export async function getRun(db: SqlExecutor, id: string): Promise<RunRow | null> {
  return (await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1`, [id])).rows[0] ?? null;
}

/**
 * Sets a run's status from its deliveries: queued while one is queued or sending, else failed when
 * one failed, else sent (skipped when every one was skipped). Returns the run when its status
 * changed to a final one (the caller announces it), else null.
 */
export async function settleRun(tx: SqlExecutor, runId: string, now: Date): Promise<RunRow | null> {
  const result = await tx.query<RunRow & { changed: boolean }>(
    `WITH counts AS (
       SELECT count(*) FILTER (WHERE status IN ('queued', 'sending')) AS pending,
              count(*) FILTER (WHERE status = 'failed') AS failed,
              count(*) FILTER (WHERE status = 'sent') AS sent
         FROM deliveries WHERE run_id = $1),
     next AS (SELECT CASE WHEN pending > 0 THEN 'queued' WHEN failed > 0 THEN 'failed' WHEN sent > 0 THEN 'sent' ELSE 'skipped' END AS status FROM counts)
     UPDATE runs SET status = next.status, finished_at = CASE WHEN next.status = 'queued' THEN NULL ELSE $2::timestamptz END
       FROM next WHERE runs.id = $1 AND runs.status IS DISTINCT FROM next.status
     RETURNING runs.id::text AS id, runs.automation_id::text AS automation_id, runs.trigger, runs.trigger_key, runs.test, runs.status, runs.message,
       runs.composed_by, runs.compose_note, runs.link, runs.started_at, runs.finished_at`,
    [runId, now],
  );
  const row = result.rows[0];
  return row && row.status !== 'queued' ? row : null;
}

export async function deliveryCount(db: SqlExecutor, runId: string): Promise<number> {
  return (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM deliveries WHERE run_id = $1', [runId])).rows[0]?.n ?? 0;
}
