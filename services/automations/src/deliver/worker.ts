// Works the delivery queue: claims due rows with a lease, records `sending` before a message leaves
// and the outcome after, and settles the run (announcing it when it ends) in the same transaction
// as the outcome. Retryable failures come back after a backoff that honours Retry-After; after
// max_attempts, or at once for a permanent error, the row is `failed`: the dead state an operator
// can retry.
//
// A row found `sending` with its lease run out was cut short by a crash, after the attempt was
// recorded and before its outcome was. Chat: the channel's history tells whether the message got
// through (our messages carry the delivery id in their metadata); if it did, the row becomes sent
// without a second post. The same look is taken before any retry of a chat delivery, since a
// timeout can come after Slack took the message. Email has no such check (SMTP cannot be asked what it accepted): the
// message is sent again with the same Message-ID, so a crash in the instant between the server's
// acceptance and our commit can show one copy twice to a mail store that ignores Message-IDs; a
// crash before the server's acceptance (the server then discards the message) never does.
//
// Before an email's first attempt the recipient is checked against the operator's rules again
// (recipients.ts) and the email is counted against its workspace's send budget (budget.ts): over
// budget it is held, then skipped, never sent. Errors shown on a delivery are the sanitised messages
// of DeliveryError; the servers' own text goes to the log.
import { createQueueWorker, type Outbox, type QueueWorker, type SqlStore } from '@sightline/kit';
import type { Logger } from 'pino';
import type { Message } from '../compose/compose';
import { announceRun } from '../runs/announce';
import { settleRun, type DeliveryRow } from '../runs/runs.repo';
import type { AutomationsMetrics, RefusalReason } from '../metrics';
import { budgetMessage, chargeEmail, HOLD_MAX_MS, type EmailBudget } from './budget';
import type { EmailSender } from './email';
import { DeliveryError, retryDelayMs, type RetryPolicy } from './errors';
import { recipientFault } from './recipients';
import { beginAttempt, claimDue, finishAttempt, rateLimit, release, runMessage, type Outcome } from './deliveries.repo';
import type { SlackApi } from './slack';

export interface WorkerDeps {
  sql: SqlStore;
  outbox: Outbox<'automations'>;
  logger: Logger;
  /** This worker's name in leases. */
  owner: string;
  email: EmailSender;
  slack: SlackApi;
  /** The bot token of a workspace's connected Slack, or null when none is connected. */
  chatToken: (workspaceId: string) => Promise<string | null>;
  policy: RetryPolicy;
  now: () => Date;
  leaseMs: number;
  batchSize: number;
  /** Deliveries sent at once. */
  concurrency: number;
  budget: EmailBudget;
  /** The operator's allow-list of recipient email domains; null: any domain. */
  emailDomains: readonly string[] | null;
  metrics: AutomationsMetrics;
}

export type Worker = QueueWorker;

export function createWorker(deps: WorkerDeps): Worker {
  return createQueueWorker<DeliveryRow>({
    claim: (now, leaseUntil, limit) => claimDue(deps.sql, deps.owner, now, leaseUntil, limit),
    work: (row) => processRow(deps, row),
    release: (row) => release(deps.sql, row.id, deps.owner),
    onError: (error, row) => deps.logger.error({ err: error, delivery: row?.id }, row ? 'automations: delivery failed unexpectedly; it is retried when its lease ends' : 'automations: delivery round failed'),
    now: deps.now,
    leaseMs: deps.leaseMs,
    batchSize: deps.batchSize,
    concurrency: deps.concurrency,
  });
}

async function processRow(deps: WorkerDeps, row: DeliveryRow): Promise<void> {
  const run = await runMessage(deps.sql, row.run_id);
  if (!run) return;
  let token: string | null = null;
  if (row.channel === 'chat') {
    token = await deps.chatToken(row.workspace_id);
    if (token === null) return finish(deps, row, { status: 'failed', error: 'no Slack workspace is connected to this workspace (connect one with `sightline automations chat add`, then retry)' });
  }

  if (row.channel === 'email' && !row.budget_counted && !(await admitEmail(deps, row))) return;

  let note: string | null = null;
  // Cut short by a crash (still sending), or an earlier attempt failed: a chat message may have got
  // through all the same (a timeout after Slack took it), so look before posting again.
  if (row.status === 'sending' || (row.channel === 'chat' && row.attempts > 0)) {
    if (row.channel === 'chat' && token !== null) {
      const since = new Date((row.attempt_started_at ?? row.created_at).getTime() - 60_000);
      try {
        const ts = await deps.slack.findPosted(token, row.recipient, row.id, since);
        if (ts !== null) return finish(deps, row, { status: 'sent', ref: ts, note: 'an earlier attempt had got through (found in the channel)' });
        if (row.status === 'sending') note = 'an interrupted attempt had not got through; sent again';
      } catch (error) {
        const failure = error instanceof DeliveryError ? error : null;
        deps.logger.warn({ delivery: row.id, err: failure?.detail ?? (error instanceof Error ? error.message : String(error)) }, 'automations: could not look for an earlier post');
        note = `an earlier attempt could not be checked (${failure ? failure.message : 'unexpected error'}); sent again`;
      }
    } else {
      note = 'an interrupted attempt may have got through; sent again with the same Message-ID';
    }
  }

  if (!(await beginAttempt(deps.sql, row.id, deps.owner, deps.now()))) return;
  const attempts = row.attempts + 1;
  try {
    const ref = await send(deps, row, run.message, token);
    await finish(deps, row, { status: 'sent', ref, note });
  } catch (error) {
    // Not one of ours: its text is for the log only.
    const failure = error instanceof DeliveryError ? error : new DeliveryError('unexpected error while sending', true, null, error instanceof Error ? error.message : String(error));
    deps.logger.info({ delivery: row.id, channel: row.channel, attempts, error: failure.message, detail: failure.detail }, 'automations: delivery attempt failed');
    if (failure.retryable && failure.retryAfterMs !== null && row.channel === 'chat') {
      await rateLimit(deps.sql, row.workspace_id, new Date(deps.now().getTime() + failure.retryAfterMs));
    }
    if (!failure.retryable) return finish(deps, row, { status: 'failed', error: `permanent: ${failure.message}` });
    if (attempts >= row.max_attempts) return finish(deps, row, { status: 'failed', error: `gave up after ${attempts} attempts: ${failure.message}` });
    const delay = retryDelayMs(deps.policy, attempts, failure.retryAfterMs);
    deps.metrics.delivery(row.channel === 'chat' ? 'slack' : 'email', 'retried');
    await finish(deps, row, { status: 'queued', error: failure.message, nextAttemptAt: new Date(deps.now().getTime() + delay) });
  }
}

/**
 * The operator's rules before an email's first attempt: a recipient they refuse fails the delivery;
 * an email over its workspace's budget is held until the spent window ends, or skipped once it has
 * waited HOLD_MAX_MS. Returns whether the email may go out now (it is then counted).
 */
async function admitEmail(deps: WorkerDeps, row: DeliveryRow): Promise<boolean> {
  const fault = recipientFault(row.recipient, deps.emailDomains);
  if (fault !== null) {
    const reason: RefusalReason = fault === 'ip-literal' ? 'ip_literal' : 'recipient_domain';
    deps.metrics.sendRefused(reason, 'failed');
    await finish(deps, row, { status: 'failed', error: fault === 'ip-literal' ? 'permanent: the recipient is at an IP address; alert email goes to mail domains only' : 'permanent: the recipient\'s domain is not among the domains alert email may go to (SIGHTLINE_ALERT_EMAIL_DOMAINS)' });
    return false;
  }
  const now = deps.now();
  const answer = await chargeEmail(deps.sql, row, deps.budget, now);
  if (answer.ok) {
    deps.metrics.budgetedEmail();
    return true;
  }
  const held = now.getTime() - row.created_at.getTime() < HOLD_MAX_MS;
  deps.metrics.sendRefused(answer.window === 'hour' ? 'hour_budget' : 'day_budget', held ? 'held' : 'skipped');
  await finish(deps, row, held
    ? { status: 'queued', error: budgetMessage(answer, true), nextAttemptAt: answer.resetsAt }
    : { status: 'skipped', error: budgetMessage(answer, false) });
  return false;
}

async function send(deps: WorkerDeps, row: DeliveryRow, message: Message, token: string | null): Promise<string> {
  if (row.channel === 'email') return deps.email.send(row.id, row.recipient, message);
  return deps.slack.post(token as string, row.recipient, message.chat, row.id);
}

async function finish(deps: WorkerDeps, row: DeliveryRow, outcome: Outcome): Promise<void> {
  const now = deps.now();
  const announced = await deps.sql.transaction(async (tx) => {
    // Deliveries of one run finish one at a time: two finishing at once would each count the
    // other as still sending, and the run would never settle.
    await tx.query('SELECT 1 FROM runs WHERE id = $1 FOR UPDATE', [row.run_id]);
    const updated = await finishAttempt(tx, row.id, outcome, now);
    if (!updated) return false;
    const settled = await settleRun(tx, row.run_id, now);
    if (settled) await announceRun(tx, deps.outbox, settled);
    return settled !== null;
  });
  if (announced) deps.outbox.wake();
  const channel = row.channel === 'chat' ? 'slack' : 'email';
  if (outcome.status === 'sent') deps.metrics.delivery(channel, 'delivered');
  if (outcome.status === 'failed') {
    deps.metrics.delivery(channel, 'failed');
    deps.logger.warn({ delivery: row.id, channel: row.channel, error: outcome.error }, 'automations: delivery failed');
  }
}
