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
import { createQueueWorker, type Outbox, type QueueWorker, type SqlStore } from '@sightline/kit';
import type { Logger } from 'pino';
import type { Message } from '../compose/compose';
import { announceRun } from '../runs/announce';
import { settleRun, type DeliveryRow } from '../runs/runs.repo';
import type { EmailSender } from './email';
import { DeliveryError, retryDelayMs, type RetryPolicy } from './errors';
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
        note = `an earlier attempt could not be checked (${error instanceof Error ? error.message : String(error)}); sent again`;
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
    const failure = error instanceof DeliveryError ? error : new DeliveryError(error instanceof Error ? error.message : String(error), true);
    if (failure.retryable && failure.retryAfterMs !== null && row.channel === 'chat') {
      await rateLimit(deps.sql, row.workspace_id, new Date(deps.now().getTime() + failure.retryAfterMs));
    }
    if (!failure.retryable) return finish(deps, row, { status: 'failed', error: `permanent: ${failure.message}` });
    if (attempts >= row.max_attempts) return finish(deps, row, { status: 'failed', error: `gave up after ${attempts} attempts: ${failure.message}` });
    const delay = retryDelayMs(deps.policy, attempts, failure.retryAfterMs);
    await finish(deps, row, { status: 'queued', error: failure.message, nextAttemptAt: new Date(deps.now().getTime() + delay) });
  }
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
  if (outcome.status === 'failed') deps.logger.warn({ delivery: row.id, channel: row.channel, error: outcome.error }, 'automations: delivery failed');
}
