// The email send budget: what one workspace's alerts may send through the operator's mail, per UTC
// hour and per UTC day (SIGHTLINE_AUTOMATIONS_EMAILS_PER_HOUR / _PER_DAY, default 200 and 1,000).
// Counted in PostgreSQL (send_budget), so replicas share it and a restart keeps it. An email counts
// once, when its delivery is first attempted, in the transaction that marks the delivery counted:
// retries and a resend after a crash do not count again. Chat posts go to the workspace's own Slack
// and are not counted.
//
// An email over budget is not dropped: it is held (queued, with an error saying so) until the
// window that is spent ends, and skipped (an operator can retry it) once it has waited longer than
// HOLD_MAX_MS, so a flood cannot pile up in the queue for days.
import type { SqlExecutor, SqlStore } from '@sightline/kit';

export interface EmailBudget {
  perHour: number;
  perDay: number;
}

export type BudgetWindow = 'hour' | 'day';

/** How long an email over budget may wait for its window to end before it is skipped. */
export const HOLD_MAX_MS = 24 * 3_600_000;
/** Counters of windows older than this are deleted by retention. */
export const BUDGET_KEEP_MS = 2 * 24 * 3_600_000;

export type BudgetAnswer = { ok: true } | { ok: false; window: BudgetWindow; limit: number; resetsAt: Date };

class Spent extends Error {
  constructor(readonly answer: Extract<BudgetAnswer, { ok: false }>) {
    super('over budget');
  }
}

function windowOf(kind: BudgetWindow, now: Date): { start: Date; end: Date } {
  const start = new Date(now);
  start.setUTCMinutes(0, 0, 0);
  if (kind === 'day') start.setUTCHours(0);
  const end = new Date(start.getTime() + (kind === 'hour' ? 3_600_000 : 24 * 3_600_000));
  return { start, end };
}

/**
 * Counts one email of the delivery's workspace in both windows and marks the delivery counted, if
 * both have room; otherwise counts nothing and says which window is spent until when.
 */
export async function chargeEmail(sql: SqlStore, delivery: { id: string; workspace_id: string }, budget: EmailBudget, now: Date): Promise<BudgetAnswer> {
  try {
    await sql.transaction(async (tx) => {
      for (const [kind, limit] of [['hour', budget.perHour], ['day', budget.perDay]] as const) {
        const window = windowOf(kind, now);
        if (!(await countOne(tx, delivery.workspace_id, kind, window.start, limit))) throw new Spent({ ok: false, window: kind, limit, resetsAt: window.end });
      }
      await tx.query('UPDATE deliveries SET budget_counted = true WHERE id = $1', [delivery.id]);
    });
    return { ok: true };
  } catch (error) {
    if (error instanceof Spent) return error.answer;
    throw error;
  }
}

/** One more in the window's counter if it is below the limit (the row lock orders concurrent workers). */
async function countOne(tx: SqlExecutor, workspaceId: string, kind: BudgetWindow, start: Date, limit: number): Promise<boolean> {
  if (limit < 1) return false;
  const result = await tx.query(
    `INSERT INTO send_budget (workspace_id, window_kind, window_start, sent) VALUES ($1, $2, $3, 1)
     ON CONFLICT (workspace_id, window_kind, window_start) DO UPDATE SET sent = send_budget.sent + 1 WHERE send_budget.sent < $4
     RETURNING sent`,
    [workspaceId, kind, start, limit],
  );
  return result.rowCount > 0;
}

/** The delivery's error while it waits or once it is skipped: readable, with the setting that decides it. */
export function budgetMessage(answer: Extract<BudgetAnswer, { ok: false }>, held: boolean): string {
  const setting = answer.window === 'hour' ? 'SIGHTLINE_AUTOMATIONS_EMAILS_PER_HOUR' : 'SIGHTLINE_AUTOMATIONS_EMAILS_PER_DAY';
  const spent = `the workspace's alerts have sent the ${answer.limit} emails they may send per ${answer.window} (UTC; ${setting})`;
  return held
    ? `held: ${spent}; it goes out after ${answer.resetsAt.toISOString()}`
    : `skipped: ${spent}, and it waited longer than ${HOLD_MAX_MS / 3_600_000} hours; an operator can retry it`;
}
