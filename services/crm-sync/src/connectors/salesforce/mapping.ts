// Salesforce objects → provider-neutral records. Stages come from OpportunityStage (won, closed
// and lost from its IsWon / IsClosed flags); every opportunity is in one pipeline, "opportunities"
// (record types filter which are pulled, they are not pipelines here); a deal's people are its
// OpportunityContactRoles and its stage history is OpportunityHistory with repeats of the same
// stage (amount or close date edits) left out.
import type { StageBucket } from '@sightline/proto-schemas';
import type { CrmCompany, CrmContact, CrmDeal, CrmPipeline, CrmStageChange } from '../../records';
import type { SalesforceSettings } from './settings';

export const PIPELINE_ID = 'opportunities';

/** A record as the query resource returns it (fields by API name, plus `attributes`). */
export type SfRecord = Record<string, unknown> & { Id: string };

/** "2026-11-20T10:00:00.000+0000" (Salesforce) → ISO 8601 in UTC; a date alone is midnight UTC. */
export function isoOf(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return null;
  const text = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);

export function stageBucket(stage: SfRecord): StageBucket {
  if (stage['IsWon'] === true) return 'won';
  if (stage['IsClosed'] === true) return 'lost';
  return 'open';
}

/** The stage's id as opportunities name it: its API name (older orgs: the label). */
export const stageIdOf = (stage: SfRecord): string => text(stage['ApiName']) ?? String(stage['MasterLabel']);

export function toPipeline(stages: SfRecord[]): CrmPipeline {
  const sorted = [...stages].sort((a, b) => Number(a['SortOrder'] ?? 0) - Number(b['SortOrder'] ?? 0));
  return {
    id: PIPELINE_ID,
    name: 'Opportunities',
    stages: sorted.map((s, i) => ({ id: stageIdOf(s), name: String(s['MasterLabel'] ?? stageIdOf(s)), position: i, bucket: stageBucket(s) })),
  };
}

export function toCompany(a: SfRecord): CrmCompany {
  const website = text(a['Website']);
  let domain: string | null = null;
  if (website) {
    try {
      domain = new URL(/^https?:\/\//i.test(website) ? website : `https://${website}`).hostname.replace(/^www\./, '').toLowerCase();
    } catch {
      domain = null;
    }
  }
  const updated = isoOf(a['SystemModstamp']) ?? new Date(0).toISOString();
  return { crm_id: a.Id, name: text(a['Name']) ?? a.Id, domain, lifecycle_stage: null, created_at: isoOf(a['CreatedDate']) ?? updated, updated_at: updated };
}

/** An org lifecycle value as the connection maps it (lifecycle_stages), else as it is. */
function lifecycle(value: unknown, settings: SalesforceSettings): string | null {
  const raw = text(value);
  return raw === null ? null : settings.lifecycle_stages[raw] ?? raw;
}

export function leadToContact(lead: SfRecord, settings: SalesforceSettings): CrmContact {
  return {
    crm_id: lead.Id,
    email: text(lead['Email'])?.trim().toLowerCase() ?? null,
    lifecycle_stage: lifecycle(lead[settings.lead_stage_field], settings),
    company_crm_id: null,
    updated_at: isoOf(lead['SystemModstamp']) ?? new Date(0).toISOString(),
  };
}

export function contactToContact(contact: SfRecord, settings: SalesforceSettings): CrmContact {
  return {
    crm_id: contact.Id,
    email: text(contact['Email'])?.trim().toLowerCase() ?? null,
    lifecycle_stage: settings.contact_stage_field ? lifecycle(contact[settings.contact_stage_field], settings) : null,
    company_crm_id: text(contact['AccountId']),
    updated_at: isoOf(contact['SystemModstamp']) ?? new Date(0).toISOString(),
  };
}

/** Stage entries oldest first, a stage repeated by an amount or date edit kept once. */
export function stageHistory(history: SfRecord[]): CrmStageChange[] {
  const ordered = [...history].sort((a, b) => String(a['CreatedDate']).localeCompare(String(b['CreatedDate'])) || a.Id.localeCompare(b.Id));
  const out: CrmStageChange[] = [];
  for (const h of ordered) {
    const stage = text(h['StageName']);
    const at = isoOf(h['CreatedDate']);
    if (!stage || !at || out.at(-1)?.stage_id === stage) continue;
    out.push({ stage_id: stage, pipeline_id: PIPELINE_ID, at });
  }
  return out;
}

export function toDeal(o: SfRecord, contactIds: string[], history: SfRecord[], settings: SalesforceSettings): CrmDeal {
  const amount = typeof o['Amount'] === 'number' ? (o['Amount'] as number) : null;
  const stages = stageHistory(history);
  const updated = isoOf(o['SystemModstamp']) ?? new Date(0).toISOString();
  // Closed: when it entered its closing stage, as the history says; else its close date.
  const closedAt = o['IsClosed'] === true ? (stages.at(-1)?.stage_id === o['StageName'] ? stages.at(-1)!.at : isoOf(o['CloseDate'])) : null;
  const deal: CrmDeal = {
    crm_id: o.Id,
    name: text(o['Name']) ?? o.Id,
    amount,
    currency: settings.currency_field ? text(o[settings.currency_field]) : null,
    pipeline_id: PIPELINE_ID,
    stage_id: text(o['StageName']),
    company_crm_id: text(o['AccountId']),
    contact_crm_ids: [...new Set(contactIds)],
    created_at: isoOf(o['CreatedDate']) ?? updated,
    closed_at: closedAt,
    updated_at: updated,
  };
  if (stages.length > 0) deal.stage_history = stages;
  return deal;
}
