// The public shapes of the mirror's records (OpenAPI Deal, Company, Pipeline) and what meta says
// about them. Deal rows carry no personal data: the deal contacts' emails stay inside the service.
import { maskEmail, maskName, maskPhone, piiNote } from '@sightline/kit';
import { stageKey } from '@sightline/proto-schemas';
import { companyId } from '../mirror';
import type { DealAttribution } from './deal-attribution';
import type { CompanyRow, DealRow, PipelineRow } from './reads.repo';

/** Stages every CRM gives to stages= on /metrics and /paths (the mirror publishes these milestones). */
export const DEAL_STAGES = ['deal_created', 'deal_won', 'deal_lost'] as const;

export const DEAL_DEFINITIONS: Record<string, string> = {
  'stage.normalized_bucket': 'open, won, lost or other, decided from the CRM\'s stage metadata; stage names are customer-chosen, rely on the bucket.',
  pipeline: 'Id of the deal\'s pipeline (GET /pipelines); pipeline_name is its name.',
  company_id: 'Id of the deal\'s company, as in GET /companies.',
  crm_contact_ids: 'The deal\'s contacts, by their ids in the CRM. Without pii:read, an id that is personal data (an email, a +phone number, or a name with spaces, as imports may use) is masked like a contact\'s email, phone or name.',
  contact_ids: 'Sightline contacts (GET /contacts/{id}: one per conversion) whose email is the email of one of the deal\'s CRM contacts, newest first, at most 100.',
  first_touch: 'The earliest session of the deal\'s people (every device, through the identity graph) that started at or before the deal was created.',
  last_touch: 'The latest session of the deal\'s people that started at or before the deal was created.',
  attribution_basis: 'sessions (browsing history), stored_touches (touches stored with imported contacts), or why there is no touch: no_touch_before_deal, no_matching_contact, no_contacts.',
};

export const COMPANY_DEFINITIONS: Record<string, string> = {
  people_count: 'CRM contacts of the company in the mirror (with or without an email).',
};

export const PIPELINE_DEFINITIONS: Record<string, string> = {
  stages: 'In pipeline order; normalized_bucket is open, won, lost or other.',
  stage_vocabulary: 'Stage keys this CRM data gives to stages= on /metrics and /paths: deal_created, deal_won, deal_lost and the contact lifecycle stages in use, keyed as stages= expects. Stages set on contacts through the API are accepted there too.',
};

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** meta.pii_note of a deals page whose contact ids were masked. */
export const DEALS_PII_NOTE = piiNote('CRM contact ids that are emails, phone numbers or names');

/**
 * A CRM contact id as a key without pii:read may see it. CRM ids are opaque (HubSpot's are numbers),
 * but an import may key its contacts by email, phone or name: those are personal data.
 */
export function maskCrmContactId(id: string): string {
  if (id.includes('@')) return maskEmail(id);
  if (id.trim().startsWith('+')) return maskPhone(id);
  if (/\s/.test(id.trim())) return maskName(id);
  return id;
}

export function presentDeal(websiteId: string, row: DealRow, attribution: DealAttribution | null, piiIncluded = true) {
  return {
    id: row.id,
    crm_id: row.crm_id,
    provider: row.provider,
    name: row.name,
    amount: row.amount === null ? null : Number(row.amount),
    currency: row.currency,
    stage: {
      ...(row.stage_id === null ? {} : { id: row.stage_id }),
      name: row.stage_name ?? row.stage_id ?? '(no stage)',
      normalized_bucket: row.bucket,
    },
    pipeline: row.pipeline_id,
    pipeline_name: row.pipeline_name,
    // The same id the mirror's messages and GET /companies use.
    company_id: row.company_crm_id === null ? null : companyId({ websiteId, workspaceId: '', provider: row.provider, source: '' }, row.company_crm_id),
    crm_contact_ids: piiIncluded ? row.contact_crm_ids : row.contact_crm_ids.map(maskCrmContactId),
    contact_ids: attribution?.contact_ids ?? null,
    first_touch: attribution?.first_touch ?? null,
    last_touch: attribution?.last_touch ?? null,
    attribution_basis: attribution?.basis ?? null,
    created_at: row.created_at.toISOString(),
    closed_at: iso(row.closed_at),
    updated_at: row.updated_at.toISOString(),
  };
}

export function presentCompany(row: CompanyRow) {
  return {
    id: row.id,
    crm_id: row.crm_id,
    provider: row.provider,
    name: row.name,
    domain: row.domain,
    lifecycle_stage: row.lifecycle_stage,
    people_count: Number(row.people_count),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function presentPipeline(row: PipelineRow) {
  return {
    id: row.id,
    name: row.name,
    provider: row.provider,
    stages: [...row.stages]
      .sort((a, b) => a.position - b.position)
      .map((s) => ({ id: s.id, name: s.name, position: s.position, normalized_bucket: s.bucket })),
  };
}

/** The stage keys deal milestones and the contacts' lifecycle stages go by, sorted. */
export function stageVocabulary(lifecycleStages: readonly string[]): string[] {
  const keys = lifecycleStages.map(stageKey).filter((k) => k !== '');
  return [...new Set([...DEAL_STAGES, ...keys])].sort();
}
