// Lifecycle stages from the CRM reach the ledger. crm-sync announces a CRM contact's new lifecycle
// stage as milestone.reached (subject "contact", with the person's email and the CRM's own value in
// stage_raw); every conversion of that website with the email then gets lifecycle_stage_raw set
// the way a PATCH sets it (writeOutcome), so stage.changed is published with the envelope's
// source (crm:<provider>, or import); the write-back request a crm:<provider> change makes is for
// the ad platforms' stage rules only (crm-sync never writes it back to the CRM); an import makes none.
//
// Deal milestones (subject "deal": deal_created, deal_won, deal_lost, from a CRM sync) change no
// ledger field; for the ad platforms' stage rules, each of the deal's contacts (contact_emails, else
// email) gets one outcome.writeback_requested carrying the milestone (its stage, the deal's amount
// and currency) for its conversion: the newest one of that email holding an ad click id, else its
// newest. The request id is derived from (milestone, conversion), so a redelivered milestone
// yields the same request and crm-sync records it once. crm-sync never writes it to the CRM
// (requested_by crm:<provider>); a file import (source "import") requests nothing.
//
// Milestones of one website are handled in groups (coalesce): one locking query finds the rows
// of every email in the group. A value the row already holds changes nothing and publishes
// nothing, so a redelivered or repeated milestone is harmless.
import { createHash } from 'node:crypto';
import { coalesce, type MessageHandlerOf, type Outbox, type OutboxMessage, type SqlExecutor, type SqlStore, type TypedEnvelope } from '@sightline/kit';
import type { PublishedBy, WritebackMilestoneV1 } from '@sightline/proto-schemas';
import { outcomeOf, type ContactRow, type ContactsRepo } from './contacts.repo';
import { requestsWriteback, writebackRequest, writeOutcome } from './outcome-write';
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

/** A deal milestone to send to the ad platforms for the conversions of the deal's contacts. */
export interface DealMilestone {
  websiteId: string;
  /** Trimmed, lower-cased, distinct. */
  emails: string[];
  milestone: WritebackMilestoneV1;
  occurredAt: string;
  source: string;
}

/** The ad-platform request a deal milestone asks for; null for contact milestones, imports and deals without an email. */
export function dealMilestone(envelope: TypedEnvelope<'milestone.reached'>): DealMilestone | null {
  const m = envelope.payload;
  if (m.subject !== 'deal' || !requestsWriteback(envelope.source)) return null;
  const emails = [...new Set((m.contact_emails ?? [m.email ?? '']).map((e) => e.trim().toLowerCase()).filter((e) => e !== ''))];
  if (emails.length === 0) return null;
  return {
    websiteId: m.website_id,
    emails,
    milestone: { milestone_id: m.milestone_id, stage: m.stage, deal_id: m.deal_id ?? null, amount: m.amount ?? null, currency: m.currency ?? null },
    occurredAt: m.occurred_at,
    source: envelope.source,
  };
}

/** A stable UUID for the request of one milestone and one conversion (a redelivery makes the same one). */
export function milestoneRequestId(milestoneId: string, conversionId: string): string {
  const hex = createHash('sha256').update(`${milestoneId}\u001f${conversionId}`).digest('hex');
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The conversion of one person a deal stage is sent for: the newest holding an ad click id, else the newest. */
function conversionForDeal(rows: ContactRow[]): ContactRow | undefined {
  const newestFirst = [...rows].sort((a, b) => b.occurred_at.getTime() - a.occurred_at.getTime() || (a.id < b.id ? 1 : -1));
  return newestFirst.find((r) => Object.keys(r.click_ids ?? {}).length > 0) ?? newestFirst[0];
}

export function crmStageConsumer(sql: SqlStore, repo: ContactsRepo, outbox: Outbox<'contacts'>): MessageHandlerOf<'milestone.reached'> {
  return coalesce({
    keyOf: (envelope) => envelope.payload.website_id,
    handle: async (group) => {
      const updates = group.map(crmStageUpdate).filter((u): u is CrmStageUpdate => u !== null);
      const deals = group.map(dealMilestone).filter((d): d is DealMilestone => d !== null);
      const websiteId = updates[0]?.websiteId ?? deals[0]?.websiteId;
      if (websiteId === undefined) return;
      const recorded = await sql.transaction(async (tx) =>
        (await applyStages(tx, repo, outbox, websiteId, updates)) + (await requestDealSends(tx, repo, outbox, websiteId, deals)));
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

/** Records one write-back request per deal milestone and contact (conversionForDeal); returns how many. */
async function requestDealSends(tx: SqlExecutor, repo: ContactsRepo, outbox: Outbox<'contacts'>, websiteId: string, deals: DealMilestone[]): Promise<number> {
  if (deals.length === 0) return 0;
  const rows = await repo.lockByEmails(tx, websiteId, [...new Set(deals.flatMap((d) => d.emails))]);
  const messages: OutboxMessage<PublishedBy<'contacts'>>[] = [];
  for (const deal of deals) {
    for (const email of deal.emails) {
      const row = conversionForDeal(rows.filter((r) => (r.email ?? '').toLowerCase() === email));
      if (!row) continue;
      const payload = writebackRequest(row, [], deal.source, { requestId: milestoneRequestId(deal.milestone.milestone_id, row.id), milestone: deal.milestone });
      messages.push({ type: 'outcome.writeback_requested', source: deal.source, workspace_id: row.workspace_id, website_id: row.website_id, occurred_at: deal.occurredAt, payload });
    }
  }
  await outbox.addMany(tx, messages);
  return messages.length;
}
