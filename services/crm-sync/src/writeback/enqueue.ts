// The consumer of outcome.writeback_requested: fills in the click ids of the person's earlier
// visits (earlier-clicks.ts, outside the transaction: it asks attribution), decides the
// destinations (plan.ts) and records them in the queue with their first status, in one
// transaction with the status messages. A redelivered request finds its rows and changes nothing.
import type { Outbox, SqlExecutor, SqlStore, TypedEnvelope } from '@sightline/kit';
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { adDestinations, connectedProvider } from './connection';
import { withEarlierClicks, type EarlierClicksDeps } from './earlier-clicks';
import { CRM_SOURCE_PREFIX, planWriteback, type PlannedRow } from './plan';
import { statusMessage } from './status';
import {
  adOutcomesSent,
  insertRows,
  knownValues,
  lockRequest,
  rememberValues,
  replacePayload,
  requestSeen,
  updateRow,
  waitingCrmRows,
  type WritebackRow,
} from './store';
import { mergeOlderChanges, trimByNewer } from './supersede';

export interface EnqueueDeps {
  sql: SqlStore;
  outbox: Outbox<'crm-sync'>;
  maxAttempts: number;
  now: () => Date;
  /** How to ask attribution for earlier clicks; production always passes it (tests of the planner alone may not). */
  clicks?: EarlierClicksDeps;
}

/** Records a request's write-backs; returns how many rows are queued for the worker. */
export async function enqueueWriteback(deps: EnqueueDeps, envelope: TypedEnvelope<'outcome.writeback_requested'>): Promise<number> {
  // The change's own time orders requests of one contact (a redelivery keeps it).
  const changedAt = new Date(envelope.occurred_at);
  // A redelivery of a recorded request asks nobody anything (checked again under the lock below).
  if (await requestSeen(deps.sql, envelope.payload.request_id)) return 0;
  const request = deps.clicks
    ? await withEarlierClicks(deps.clicks, envelope.payload, changedAt, await adDestinations(deps.sql, envelope.payload.website_id))
    : envelope.payload;
  return deps.sql.transaction(async (tx) => {
    await lockRequest(tx, request.request_id);
    if (await requestSeen(tx, request.request_id)) return 0;
    const now = deps.now();
    const provider = await connectedProvider(tx, request.website_id);
    const plan = planWriteback(request, changedAt, {
      crmProvider: provider,
      crmKnown: provider === null ? new Map() : await knownValues(tx, request.website_id, provider, request.conversion_id),
      destinations: await adDestinations(tx, request.website_id),
      adSent: await adOutcomesSent(tx, request.conversion_id),
    });

    const changed: WritebackRow[] = [];
    const crmRow = plan.rows.find((r) => r.target === 'crm');
    if (provider !== null && crmRow) changed.push(...(await supersedeWaiting(tx, request, crmRow, changedAt, now)));
    if (provider !== null && plan.crmHolds.length > 0) {
      const key = { websiteId: request.website_id, provider, conversionId: request.conversion_id };
      await rememberValues(tx, key, plan.crmHolds, request.requested_by, now);
    }
    const inserted = await insertRows(tx, request, changedAt, plan.rows, deps.maxAttempts, now);
    for (const row of [...changed, ...inserted]) await deps.outbox.add(tx, statusMessage(row));
    return inserted.filter((r) => r.status === 'pending').length;
  });
}

/** Applies supersede.ts to earlier CRM write-backs of the contact still waiting; returns the rows whose status changed. */
async function supersedeWaiting(tx: SqlExecutor, request: OutcomeWritebackRequestedV1, crmRow: PlannedRow, changedAt: Date, now: Date): Promise<WritebackRow[]> {
  const waiting = await waitingCrmRows(tx, request.conversion_id, changedAt, now);
  if (waiting.length === 0) return [];
  const changed: WritebackRow[] = [];
  if (crmRow.status === 'pending') {
    crmRow.payload = mergeOlderChanges(request, waiting.map((w) => w.payload as OutcomeWritebackRequestedV1));
    for (const row of waiting) {
      changed.push(await updateRow(tx, row.id, { status: 'skipped', detail: `superseded by a newer write-back (${request.request_id})`, attempted: false }, now));
    }
    return changed;
  }
  const why = request.requested_by.startsWith(CRM_SOURCE_PREFIX) ? 'the CRM changed these fields since' : 'a newer change set these fields';
  for (const row of waiting) {
    const trimmed = trimByNewer(row.payload as OutcomeWritebackRequestedV1, request);
    if (trimmed === null) changed.push(await updateRow(tx, row.id, { status: 'skipped', detail: `superseded: ${why}`, attempted: false }, now));
    else await replacePayload(tx, row.id, trimmed);
  }
  return changed;
}
