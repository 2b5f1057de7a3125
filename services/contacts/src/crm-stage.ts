// Lifecycle stages from the CRM reach the ledger. crm-sync announces a CRM contact's new lifecycle
// stage as milestone.reached (subject "contact", with the person's email and the CRM's own value in
// stage_raw); every conversion of that website with the email then gets lifecycle_stage_raw set
// the way a PATCH sets it (writeOutcome), so stage.changed is published with the envelope's
// source (crm:<provider>, or import) and no write-back is requested: the CRM already holds it.
//
// Milestones of one website are handled in groups (coalesce): one locking query finds the rows
// of every email in the group. A value the row already holds changes nothing and publishes
// nothing, so a redelivered or repeated milestone is harmless.
import { coalesce, type MessageHandlerOf, type Outbox, type OutboxMessage, type SqlExecutor, type SqlStore, type TypedEnvelope } from '@sightline/kit';
import type { PublishedBy } from '@sightline/proto-schemas';
import { outcomeOf, type ContactRow, type ContactsRepo } from './contacts.repo';
import { writeOutcome } from './outcome-write';
import { diffPatch, parsePatch } from './patch';

export const CRM_STAGE_REASON = 'CRM lifecycle stage';

export interface CrmStageUpdate {
  websiteId: string;
  /** Trimmed and lower-cased, as the ledger is searched by email. */
  email: string;
  /** The CRM's own value (stage_raw), else the stage key. */
  lifecycleStage: string;
  source: string;
}

/** The ledger update a milestone asks for; null for deal milestones and those without an email. */
export function crmStageUpdate(envelope: TypedEnvelope<'milestone.reached'>): CrmStageUpdate | null {
  const milestone = envelope.payload;
  if (milestone.subject !== 'contact') return null;
  const email = milestone.email?.trim().toLowerCase() ?? '';
  const lifecycleStage = milestone.stage_raw ?? milestone.stage;
  if (email === '' || lifecycleStage === '') return null;
  return { websiteId: milestone.website_id, email, lifecycleStage, source: envelope.source };
}

export function crmStageConsumer(sql: SqlStore, repo: ContactsRepo, outbox: Outbox<'contacts'>): MessageHandlerOf<'milestone.reached'> {
  return coalesce({
    keyOf: (envelope) => envelope.payload.website_id,
    handle: async (group) => {
      const updates = group.map(crmStageUpdate).filter((u): u is CrmStageUpdate => u !== null);
      const websiteId = updates[0]?.websiteId;
      if (websiteId === undefined) return;
      const recorded = await sql.transaction((tx) => applyStages(tx, repo, outbox, websiteId, updates));
      if (recorded > 0) outbox.wake();
    },
  });
}

/** Applies the updates in arrival order (a later stage of the same email wins); returns how many messages it recorded. */
async function applyStages(tx: SqlExecutor, repo: ContactsRepo, outbox: Outbox<'contacts'>, websiteId: string, updates: CrmStageUpdate[]): Promise<number> {
  const rows = await repo.lockByEmails(tx, websiteId, [...new Set(updates.map((u) => u.email))]);
  const byEmail = new Map<string, ContactRow[]>();
  for (const row of rows) {
    const key = (row.email ?? '').toLowerCase();
    const same = byEmail.get(key);
    if (same) same.push(row);
    else byEmail.set(key, [row]);
  }
  // The newest state of each row, as the group's earlier updates left it.
  const current = new Map(rows.map((row) => [row.id, row]));
  const messages: OutboxMessage<PublishedBy<'contacts'>>[] = [];
  for (const update of updates) {
    // The same check a PATCH body gets; the message schema keeps stage_raw within its bounds.
    const patch = parsePatch({ lifecycle_stage_raw: update.lifecycleStage });
    for (const { id } of byEmail.get(update.email) ?? []) {
      const row = current.get(id) as ContactRow;
      const changes = diffPatch(outcomeOf(row), patch);
      if (changes.length === 0) continue;
      const written = await writeOutcome(tx, repo, { row, changes, reason: CRM_STAGE_REASON, source: update.source });
      current.set(id, written.updated);
      messages.push(...written.messages);
    }
  }
  await outbox.addMany(tx, messages);
  return messages.length;
}
