// The write-back status of a contact, as crm-sync announces it (outcome.writeback_updated): the
// latest per destination, shown on GET /contacts/{id} as `writeback`. Statuses of one contact may
// arrive out of order or twice: a status older than the stored one (earlier request, or earlier
// step of the same request) changes nothing.
import type { SqlExecutor } from '@sightline/kit';
import type { OutcomeWritebackUpdatedV1, WritebackStatus, WritebackTarget } from '@sightline/proto-schemas';

export interface WritebackStatusRow {
  target: WritebackTarget;
  request_id: string;
  status: WritebackStatus;
  attempts: number;
  detail: string | null;
  external_id: string | null;
  next_attempt_at: Date | null;
  requested_at: Date;
  updated_at: Date;
}

const TARGET_ORDER: readonly WritebackTarget[] = ['crm', 'google_ads', 'meta_ads', 'linkedin_ads'];

export async function recordWritebackStatus(db: SqlExecutor, status: OutcomeWritebackUpdatedV1): Promise<void> {
  await db.query(
    `INSERT INTO contact_writebacks (contact_id, target, request_id, status, attempts, detail, external_id, next_attempt_at, requested_at, updated_at)
     VALUES ($1::uuid, $2, $3::uuid, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (contact_id, target) DO UPDATE SET request_id = EXCLUDED.request_id, status = EXCLUDED.status, attempts = EXCLUDED.attempts,
       detail = EXCLUDED.detail, external_id = EXCLUDED.external_id, next_attempt_at = EXCLUDED.next_attempt_at,
       requested_at = EXCLUDED.requested_at, updated_at = EXCLUDED.updated_at
     WHERE (contact_writebacks.requested_at, contact_writebacks.updated_at) <= (EXCLUDED.requested_at, EXCLUDED.updated_at)`,
    [
      status.conversion_id, status.target, status.request_id, status.status, status.attempts, status.detail, status.external_id,
      status.next_attempt_at === null ? null : new Date(status.next_attempt_at), new Date(status.requested_at), new Date(status.updated_at),
    ],
  );
}

export async function writebackStatuses(db: SqlExecutor, contactId: string): Promise<WritebackStatusRow[]> {
  const result = await db.query<WritebackStatusRow>(
    `SELECT target, request_id::text AS request_id, status, attempts, detail, external_id, next_attempt_at, requested_at, updated_at
     FROM contact_writebacks WHERE contact_id = $1::uuid`,
    [contactId],
  );
  return result.rows.sort((a, b) => TARGET_ORDER.indexOf(a.target) - TARGET_ORDER.indexOf(b.target));
}

/** The public shape (GET /contacts/{id} `writeback`). */
export function presentWriteback(row: WritebackStatusRow) {
  return {
    target: row.target,
    status: row.status,
    detail: row.detail,
    attempts: row.attempts,
    external_id: row.external_id,
    next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
    request_id: row.request_id,
    requested_at: row.requested_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
