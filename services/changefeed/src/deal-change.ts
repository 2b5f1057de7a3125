// deal.created and deal.stage_changed (published by crm-sync with source crm:<provider> or import)
// as the feed keeps them: the deal is the object (object_type 'deal', object_id its Sightline id,
// as in GET /deals), and data names the stage the way GET /deals does, {id, name,
// normalized_bucket}, with the stage it left for a stage change. The deal contacts' emails and
// the deal's name (which often names a person) are not kept; contact_count says how many emails
// the CRM listed. occurred_at is when the CRM says it happened, not when the message was sent.
import type { DealCreatedV1, DealStageChangedV1 } from '@sightline/proto-schemas';

export const DEAL_CHANGE_TYPES: readonly string[] = ['deal.created', 'deal.stage_changed'];

export function isDealChange(type: string): boolean {
  return DEAL_CHANGE_TYPES.includes(type);
}

const stage = (id: string | null | undefined, name: string | null | undefined, bucket: string) => ({ id: id ?? null, name: name ?? null, normalized_bucket: bucket });

export function dealChangeData(payload: Record<string, unknown>): Record<string, unknown> {
  const deal = payload as unknown as DealCreatedV1 & Partial<DealStageChangedV1>;
  return {
    crm_id: deal.crm_id,
    provider: deal.provider,
    amount: deal.amount ?? null,
    currency: deal.currency ?? null,
    pipeline: deal.pipeline_id ?? null,
    stage: stage(deal.stage_id, deal.stage_name, deal.bucket),
    ...(deal.old_bucket === undefined ? {} : { old_stage: stage(deal.old_stage_id, deal.old_stage_name, deal.old_bucket) }),
    company_id: deal.company_id ?? null,
    contact_count: Array.isArray(deal.contact_emails) ? deal.contact_emails.length : 0,
  };
}

/** The payload's occurred_at when it is a valid time, else the envelope's. */
export function dealOccurredAt(payload: Record<string, unknown>, fallback: string): string {
  const value = payload['occurred_at'];
  return typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? new Date(value).toISOString() : fallback;
}
