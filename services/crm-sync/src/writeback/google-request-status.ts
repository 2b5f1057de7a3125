// The follow-up of Google Data Manager uploads. events:ingest only answers a requestId (the row's
// external_id); Google processes the events later and tells how it went through
// requestStatus:retrieve (google-data-manager.ts retrieveRequestStatus). A periodic round
// (writeback.parts.ts, every 5 minutes) checks sent google_ads rows whose current request has no
// final status yet, at most `batchSize` per round, and records it on the row (status, detail,
// last_error: what GET /admin/crm/writebacks, the contact and `connections status` show), counted
// in sightline_crm_sync_ad_push_total{platform="google_ads"}:
//   - SUCCESS: the row stays done, its detail says "confirmed by Google"          → confirmed;
//   - PARTIAL_SUCCESS (Google took part of the request): the row stays done, so the events Google
//     took are never sent again; Google's per-event reasons become last_error (the account's
//     last rejection)                                                               → rejected;
//   - FAILED as a whole (Google took nothing): with transient reasons only (internal, unspecified,
//     none given) the row goes back to the queue (failed, with backoff) and the worker resends the
//     same body, under the same transactionIds (Google deduplicates on them)          → failed;
//     for a reason a resend cannot fix (an invalid click id, an event too old, no consent), or
//     after the row's last attempt, it is dead with Google's reasons                    → dead;
//   - PROCESSING or unknown: asked again after `recheckMs`. Without a final answer `maxAgeMs`
//     after the send (or when Google no longer knows the request id) the row stays done and says
//     "not confirmed", with the last answer.
// validate_only requests (nothing recorded by Google) and the opt-in uploadClickConversions path
// are never checked. A row changed meanwhile (another replica, a resend) is left as it is.
import type { Outbox, SqlStore } from '@sightline/kit';
import type { Logger } from 'pino';
import { recordAdPush, type AdPushOutcome } from '../ads/ad-metrics';
import type { CredentialsBox } from '../connections/credentials';
import { ProviderError } from '../connectors/connector';
import { retryDelayMs, type RetryPolicy } from './backoff';
import { adCredentials } from './connection';
import { retrieveRequestStatus, type RequestStatusSummary } from './google-data-manager';
import { statusMessage } from './status';
import { getRow, updateRow, type WritebackRow } from './store';

/** Every 5 minutes (node-cron, with seconds), off the queue poll's beat. */
export const REQUEST_STATUS_CRON = '40 */5 * * * *';
export const REQUEST_STATUS_DEFAULTS = { batchSize: 50, recheckMs: 15 * 60_000, maxAgeMs: 3 * 24 * 3600_000 };
/** A claimed row is not claimed again for this long (another replica, a round that died). */
const CLAIM_MS = 5 * 60_000;

/**
 * Reasons after which resending the same request may succeed; any other reason is Google's verdict
 * on the data (PROCESSING_ERROR_REASON_INVALID_GCLID, ..._EVENT_TOO_OLD, ..._NO_CONSENT, ...).
 */
const TRANSIENT = /INTERNAL|UNSPECIFIED|UNKNOWN|DEADLINE|RESOURCE_EXHAUSTED|UNAVAILABLE/;

export interface RequestStatusDeps {
  sql: SqlStore;
  outbox: Outbox<'crm-sync'>;
  box: CredentialsBox;
  logger: Logger;
  /** The Data Manager API's base URL. */
  baseUrl: string;
  policy: RetryPolicy;
  now: () => Date;
  callTimeoutMs: number;
  batchSize: number;
  recheckMs: number;
  maxAgeMs: number;
}

interface Claimed {
  id: string;
  website_id: string;
  external_id: string;
  updated_at: Date;
}

/** One round: checks up to batchSize due rows; answers how many were checked. */
export async function checkRequestStatuses(deps: RequestStatusDeps): Promise<number> {
  const now = deps.now();
  const claimed = await deps.sql.query<Claimed>(
    `UPDATE writebacks SET remote_check_at = $2 WHERE id IN (
       SELECT id FROM writebacks
        WHERE target = 'google_ads' AND status = 'done' AND external_id IS NOT NULL
          AND remote_request_id IS DISTINCT FROM external_id
          AND (remote_check_at IS NULL OR remote_check_at <= $1)
          AND jsonb_typeof(payload -> 'events') = 'array' AND (payload ->> 'validateOnly') IS DISTINCT FROM 'true'
        ORDER BY remote_check_at NULLS FIRST, updated_at
        LIMIT $3
        FOR UPDATE SKIP LOCKED)
     RETURNING id::text AS id, website_id, external_id, updated_at`,
    [now, new Date(now.getTime() + CLAIM_MS), deps.batchSize],
  );
  for (const row of claimed.rows) {
    try {
      await checkOne(deps, row);
    } catch (error) {
      deps.logger.warn({ err: error, writeback_id: row.id }, 'Google request status check failed; it is tried again in the next round');
    }
  }
  return claimed.rows.length;
}

type Verdict =
  | { kind: 'confirmed'; summary: RequestStatusSummary }
  | { kind: 'partial'; summary: RequestStatusSummary }
  | { kind: 'failed'; summary: RequestStatusSummary }
  | { kind: 'unconfirmed'; reason: string }
  | { kind: 'later'; remoteStatus: string | null; delayMs: number };

async function checkOne(deps: RequestStatusDeps, row: Claimed): Promise<void> {
  const now = deps.now();
  const tooOld = now.getTime() - row.updated_at.getTime() >= deps.maxAgeMs;
  const days = Math.round(deps.maxAgeMs / (24 * 3600_000) * 10) / 10;
  let verdict: Verdict;
  const account = await adCredentials(deps.sql, row.website_id, 'google_ads', deps.box);
  if (account === null) {
    verdict = { kind: 'unconfirmed', reason: 'the Google Ads account was removed before Google reported a final status' };
  } else {
    try {
      const summary = await retrieveRequestStatus(deps.baseUrl, account.credentials, row.external_id, AbortSignal.timeout(deps.callTimeoutMs), now);
      if (summary.status === 'SUCCESS') verdict = { kind: 'confirmed', summary };
      else if (summary.status === 'PARTIAL_SUCCESS') verdict = { kind: 'partial', summary };
      else if (summary.status === 'FAILED') verdict = { kind: 'failed', summary };
      else if (tooOld) verdict = { kind: 'unconfirmed', reason: `Google reported no final status within ${days} days (last: ${summary.status})` };
      else verdict = { kind: 'later', remoteStatus: summary.status, delayMs: deps.recheckMs };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof ProviderError && error.status === 404) verdict = { kind: 'unconfirmed', reason: `Google no longer knows the request: ${message}` };
      else if (tooOld) verdict = { kind: 'unconfirmed', reason: `the status could not be read within ${days} days: ${message}` };
      else verdict = { kind: 'later', remoteStatus: null, delayMs: Math.max(deps.recheckMs, error instanceof ProviderError ? (error.retryAfterMs ?? 0) : 0) };
    }
  }
  if (verdict.kind === 'later') {
    await deps.sql.query(
      `UPDATE writebacks SET remote_status = coalesce($3, remote_status), remote_check_at = $4 WHERE id = $1::uuid AND external_id = $2`,
      [row.id, row.external_id, verdict.remoteStatus, new Date(now.getTime() + verdict.delayMs)],
    );
    return;
  }
  const counted = await record(deps, row, verdict, now);
  if (counted !== null) recordAdPush('google_ads', counted);
}

const reasons = (summary: RequestStatusSummary): string => (summary.errors.length > 0 ? summary.errors.join(', ') : 'no reason given');

/** Records a final verdict on the row (with its status message); answers the metric outcome, or null when the row had changed meanwhile. */
async function record(deps: RequestStatusDeps, row: Claimed, verdict: Exclude<Verdict, { kind: 'later' }>, now: Date): Promise<AdPushOutcome | null> {
  return deps.sql.transaction(async (tx) => {
    const current = await getRow(tx, row.id, true);
    if (!current || current.status !== 'done' || current.external_id !== row.external_id) return null;
    const request = `request ${row.external_id}`;
    const remote = (status: string) =>
      tx.query('UPDATE writebacks SET remote_status = $2, remote_request_id = external_id, remote_check_at = NULL WHERE id = $1::uuid', [row.id, status]);
    const annotate = async (detail: string, lastError: string | null): Promise<WritebackRow> => {
      const result = await tx.query<{ id: string }>('UPDATE writebacks SET detail = $2, last_error = $3, updated_at = $4 WHERE id = $1::uuid RETURNING id::text AS id', [row.id, detail, lastError, now]);
      if (!result.rows[0]) throw new Error(`write-back ${row.id} vanished`);
      return (await getRow(tx, row.id))!;
    };
    const sent = current.detail ?? 'sent to Google Ads';
    let updated: WritebackRow;
    let outcome: AdPushOutcome | null;
    switch (verdict.kind) {
      case 'confirmed': {
        const records = verdict.summary.recordCount === null ? '' : `, ${verdict.summary.recordCount} event(s)`;
        await remote('SUCCESS');
        updated = await annotate(`${sent}; confirmed by Google (${request}: SUCCESS${records})`, null);
        outcome = 'confirmed';
        break;
      }
      case 'partial': {
        const why = `Google rejected part of ${request} (PARTIAL_SUCCESS): ${reasons(verdict.summary)}`;
        await remote('PARTIAL_SUCCESS');
        updated = await annotate(`${sent}; ${why}; the events Google took stay sent and are not sent again`, why);
        outcome = 'rejected';
        break;
      }
      case 'failed': {
        const why = `Google failed ${request} as a whole (FAILED): ${reasons(verdict.summary)}`;
        const transient = verdict.summary.errors.every((e) => TRANSIENT.test(e));
        await remote('FAILED');
        if (transient && current.attempts < current.max_attempts) {
          const next = new Date(now.getTime() + retryDelayMs(deps.policy, current.attempts, null));
          updated = await updateRow(tx, row.id, { status: 'failed', error: `${why}; sent again under the same transactionIds`, nextAttemptAt: next }, now);
          outcome = 'failed';
        } else {
          const end = transient ? 'no attempts left' : 'a resend cannot fix this';
          updated = await updateRow(tx, row.id, { status: 'dead', error: why, detail: `${why} (${end})`, attempted: false }, now);
          outcome = 'dead';
        }
        break;
      }
      case 'unconfirmed':
        await remote('UNCONFIRMED');
        updated = await annotate(`${sent}; not confirmed: ${verdict.reason}`, null);
        outcome = null;
        break;
    }
    await deps.outbox.add(tx, statusMessage(updated));
    return outcome;
  }).finally(() => deps.outbox.wake());
}
