// Writing outcome changes to one ledger row: the one path every writer takes (a PATCH through the
// API, a lifecycle stage arriving from the CRM). It updates the row and its value history inside
// the caller's transaction and returns the messages that announce the change, for the caller's
// outbox: conversion.value_changed, stage.changed, conversion.updated by kind, and a CRM /
// ad-platform write-back request unless it came from a file import (a crm:<provider> change is
// requested too: crm-sync sends it to the ad platforms and never back to the CRM).
import { randomUUID } from 'node:crypto';
import type { OutboxMessage, SqlExecutor } from '@sightline/kit';
import type { ConversionUpdatedV1, ConversionValueChangedV1, OutcomeWritebackRequestedV1, PublishedBy, StageChangedV1, WritebackMilestoneV1 } from '@sightline/proto-schemas';
import { outcomeOf, type ContactRow, type ContactsRepo } from './contacts.repo';
import { groupChanges, type FieldChange } from './patch';

export interface OutcomeWrite {
  /** The row as it stands, read (and locked) in the caller's transaction. */
  row: ContactRow;
  /** Only real changes (diffPatch's output); empty writes nothing. */
  changes: FieldChange[];
  /** Why, for the value history (e.g. "updated through the API"). */
  reason: string;
  /** Who: api:<key_id>, crm:<provider>, import. The envelope source of every message. */
  source: string;
}

export interface OutcomeWritten {
  updated: ContactRow;
  messages: OutboxMessage<PublishedBy<'contacts'>>[];
}

/**
 * Whether a change from this source is requested as a write-back. A change made in Sightline is
 * (CRM and ad platforms). A change that came from the CRM (a sync, crm:<provider>) is too, for the
 * ad platforms only: crm-sync's planner never writes a crm: request back to the CRM (no echo loop),
 * while a stage set in the CRM (an MQL, a won deal) is what the ad accounts' stage rules send. A
 * file import (source "import") requests nothing: historical records are not conversions to report.
 */
export function requestsWriteback(source: string): boolean {
  return source !== 'import';
}

/** The write-back request for a conversion as it now stands (after `changes`), or carrying a CRM milestone. */
export function writebackRequest(
  row: ContactRow,
  changes: FieldChange[],
  source: string,
  extra: { requestId?: string; milestone?: WritebackMilestoneV1 } = {},
): OutcomeWritebackRequestedV1 {
  const outcome = outcomeOf(row);
  return {
    request_id: extra.requestId ?? randomUUID(),
    conversion_id: row.id,
    website_id: row.website_id,
    workspace_id: row.workspace_id,
    identity_id: row.identity_id,
    email: row.email,
    phone: row.phone,
    ad_consent: row.ad_consent,
    click_ids: row.click_ids,
    event_name: row.event_name,
    conversion_occurred_at: row.occurred_at.toISOString(),
    ...(extra.milestone ? { milestone: extra.milestone } : {}),
    changes,
    current: {
      status: outcome.status as string | null,
      sales_value: outcome.sales_value as number | null,
      quote_value: outcome.quote_value as number | null,
      currency: outcome.currency as string | null,
      lead_status_raw: outcome.lead_status_raw as string | null,
      lifecycle_stage_raw: outcome.lifecycle_stage_raw as string | null,
      is_spam: outcome.is_spam as boolean,
    },
    requested_by: source,
  };
}

export async function writeOutcome(tx: SqlExecutor, repo: ContactsRepo, write: OutcomeWrite): Promise<OutcomeWritten> {
  const { row, changes, reason, source } = write;
  if (changes.length === 0) return { updated: row, messages: [] };
  await repo.applyChanges(tx, row.id, changes);
  await repo.insertHistory(tx, row.id, changes, reason, source);
  const updated = await repo.get(row.website_id, row.id, tx);
  if (!updated) throw new Error('contact vanished inside its own transaction');

  const changedAt = updated.updated_at.toISOString();
  const base = { conversion_id: row.id, website_id: row.website_id, workspace_id: row.workspace_id, identity_id: updated.identity_id, changed_at: changedAt };
  const envelope = { source, workspace_id: row.workspace_id, website_id: row.website_id, occurred_at: changedAt };
  const outcome = outcomeOf(updated);
  const groups = groupChanges(changes);
  const messages: OutboxMessage<PublishedBy<'contacts'>>[] = [];
  if (groups.value.length > 0) {
    const payload: ConversionValueChangedV1 = {
      ...base,
      conversion_occurred_at: updated.occurred_at.toISOString(),
      sales_value: outcome.sales_value as number | null,
      quote_value: outcome.quote_value as number | null,
      currency: outcome.currency as string | null,
      changes: groups.value as ConversionValueChangedV1['changes'],
    };
    messages.push({ ...envelope, type: 'conversion.value_changed', payload });
  }
  if (groups.stage.length > 0) {
    const payload: StageChangedV1 = { ...base, subject: 'contact', changes: groups.stage as StageChangedV1['changes'] };
    messages.push({ ...envelope, type: 'stage.changed', payload });
  }
  if (groups.descriptive.length > 0) {
    const payload: ConversionUpdatedV1 = { ...base, changes: groups.descriptive as ConversionUpdatedV1['changes'] };
    messages.push({ ...envelope, type: 'conversion.updated', payload });
  }
  if (requestsWriteback(source)) {
    messages.push({ ...envelope, type: 'outcome.writeback_requested', payload: writebackRequest(updated, changes, source) });
  }
  return { updated, messages };
}
