// Retention: runs and their deliveries older than the run retention (default 90 days) are deleted,
// except each alert's newest AUTOMATION_RUNS_RETURNED runs (what GET /automations/{id} shows), and
// runs still queued; local mailbox messages older than the mailbox retention (default 30 days), and
// send-budget counters of windows long past. "Older than" is strict: a row exactly at the age stays.
// Runs on its own cron (every replica; deleting is idempotent and SKIP LOCKED keeps replicas off
// each other's rows), in batches of BATCH rows, at most MAX_BATCHES per table a round, so one round
// never holds long locks; what is left goes in the next round.
import type { SqlStore } from '@sightline/kit';
import { AUTOMATION_RUNS_RETURNED } from '@sightline/proto-schemas';
import { BUDGET_KEEP_MS } from '../deliver/budget';

export interface RetentionSettings {
  runDays: number;
  mailboxDays: number;
  /** Rows deleted per statement. */
  batch?: number;
  /** Statements per table per round. */
  maxBatches?: number;
}

export interface RetentionStats {
  runs: number;
  mailbox: number;
  budget_windows: number;
}

const DAY_MS = 86_400_000;
const BATCH = 500;
const MAX_BATCHES = 20;

export async function applyRetention(sql: SqlStore, settings: RetentionSettings, now: Date): Promise<RetentionStats> {
  const batch = settings.batch ?? BATCH;
  const maxBatches = settings.maxBatches ?? MAX_BATCHES;
  const runsBefore = new Date(now.getTime() - settings.runDays * DAY_MS);
  const mailBefore = new Date(now.getTime() - settings.mailboxDays * DAY_MS);
  const budgetBefore = new Date(now.getTime() - BUDGET_KEEP_MS);
  // A run goes when it is past the age and its alert has AUTOMATION_RUNS_RETURNED newer runs (in the
  // order the API lists them); its deliveries go with it (ON DELETE CASCADE).
  const runs = await inBatches(batch, maxBatches, (limit) => sql.query(
    `DELETE FROM runs WHERE id IN (
       SELECT r.id FROM runs r
        WHERE r.started_at < $1 AND r.status <> 'queued'
          AND EXISTS (SELECT 1 FROM runs n WHERE n.automation_id = r.automation_id AND (n.started_at, n.seq) > (r.started_at, r.seq)
                       ORDER BY n.started_at DESC, n.seq DESC OFFSET $2 LIMIT 1)
        ORDER BY r.started_at LIMIT $3 FOR UPDATE SKIP LOCKED)`,
    [runsBefore, AUTOMATION_RUNS_RETURNED - 1, limit],
  ));
  const mailbox = await inBatches(batch, maxBatches, (limit) => sql.query(
    'DELETE FROM mailbox WHERE id IN (SELECT id FROM mailbox WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)',
    [mailBefore, limit],
  ));
  const budget = await inBatches(batch, maxBatches, (limit) => sql.query(
    `DELETE FROM send_budget WHERE (workspace_id, window_kind, window_start) IN (
       SELECT workspace_id, window_kind, window_start FROM send_budget WHERE window_start < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [budgetBefore, limit],
  ));
  return { runs, mailbox, budget_windows: budget };
}

async function inBatches(batch: number, maxBatches: number, remove: (limit: number) => Promise<{ rowCount: number }>): Promise<number> {
  let total = 0;
  for (let i = 0; i < maxBatches; i += 1) {
    const { rowCount } = await remove(batch);
    total += rowCount;
    if (rowCount < batch) break;
  }
  return total;
}
