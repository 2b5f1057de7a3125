// The status message a row's state change publishes (through the outbox, in the transaction that
// made the change): contacts keeps the latest per conversion and destination.
import type { OutboxMessage } from '@sightline/kit';
import type { OutcomeWritebackUpdatedV1 } from '@sightline/proto-schemas';
import type { WritebackRow } from './store';

export const STATUS_SOURCE = 'crm-sync';

export function statusPayload(row: WritebackRow): OutcomeWritebackUpdatedV1 {
  return {
    request_id: row.request_id,
    conversion_id: row.conversion_id,
    website_id: row.website_id,
    workspace_id: row.workspace_id,
    target: row.target,
    status: row.status,
    attempts: row.attempts,
    detail: row.detail,
    external_id: row.external_id,
    next_attempt_at: row.status === 'pending' || row.status === 'failed' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    requested_at: row.requested_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function statusMessage(row: WritebackRow): OutboxMessage<'outcome.writeback_updated'> {
  return {
    type: 'outcome.writeback_updated',
    source: STATUS_SOURCE,
    workspace_id: row.workspace_id,
    website_id: row.website_id,
    occurred_at: row.updated_at.toISOString(),
    payload: statusPayload(row),
  };
}
