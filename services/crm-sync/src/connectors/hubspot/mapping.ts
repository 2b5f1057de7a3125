// HubSpot CRM v3 objects → provider-neutral records. Which properties are asked for, how a stage
// becomes a bucket, and which association is a deal's company, all live here.
import type { StageBucket } from '@sightline/proto-schemas';
import type { CrmCompany, CrmContact, CrmDeal, CrmPipeline } from '../../records';

/** A CRM object as list, search and PATCH return it. */
export interface HubspotObject {
  id: string;
  properties: Record<string, string | null | undefined>;
  createdAt?: string;
  updatedAt?: string;
  archived?: boolean;
  /** Only on list/read calls that asked for `associations=...`. */
  associations?: Record<string, { results: { id: string; type: string }[] }>;
}

export interface HubspotStage {
  id: string;
  label: string;
  displayOrder: number;
  archived?: boolean;
  /** HubSpot sends these as strings ("true", "0.2"); tolerate real booleans and numbers too. */
  metadata?: { isClosed?: string | boolean; probability?: string | number | null } & Record<string, unknown>;
}

export interface HubspotPipeline {
  id: string;
  label: string;
  displayOrder: number;
  archived?: boolean;
  stages: HubspotStage[];
}

export type ObjectType = 'companies' | 'contacts' | 'deals';

export const PROPERTIES: Record<ObjectType, readonly string[]> = {
  companies: ['name', 'domain', 'lifecyclestage', 'createdate', 'hs_lastmodifieddate'],
  contacts: ['email', 'lifecyclestage', 'associatedcompanyid', 'createdate', 'lastmodifieddate'],
  deals: ['dealname', 'amount', 'deal_currency_code', 'pipeline', 'dealstage', 'createdate', 'closedate', 'hs_is_closed', 'hs_lastmodifieddate'],
};

/** The property search filters and sorts on for "modified since" (contacts name it differently). */
export const MODIFIED_PROPERTY: Record<ObjectType, string> = {
  companies: 'hs_lastmodifieddate',
  contacts: 'lastmodifieddate',
  deals: 'hs_lastmodifieddate',
};

/**
 * A deal stage's bucket from its metadata: closed with probability 1 is won, closed with
 * probability 0 is lost, not closed is open; anything else (closed at 0.5, no metadata) is other.
 */
export function stageBucket(stage: HubspotStage): StageBucket {
  const closed = stage.metadata?.isClosed;
  const isClosed = closed === true || closed === 'true';
  const isOpen = closed === false || closed === 'false';
  const raw = stage.metadata?.probability;
  const probability = raw === null || raw === undefined || raw === '' ? Number.NaN : Number(raw);
  if (isOpen) return 'open';
  if (isClosed && probability === 1) return 'won';
  if (isClosed && probability === 0) return 'lost';
  return 'other';
}

export function toPipeline(p: HubspotPipeline): CrmPipeline {
  const stages = p.stages
    .filter((s) => s.archived !== true)
    .sort((a, b) => a.displayOrder - b.displayOrder || a.label.localeCompare(b.label));
  return { id: p.id, name: p.label, stages: stages.map((s, position) => ({ id: s.id, name: s.label, position, bucket: stageBucket(s) })) };
}

const text = (value: string | null | undefined): string | null => (value === null || value === undefined || value.trim() === '' ? null : value.trim());

/** HubSpot dates arrive as ISO strings (or epoch milliseconds on some date properties). */
function instant(...candidates: (string | null | undefined)[]): string | null {
  for (const value of candidates) {
    const v = text(value);
    if (v === null) continue;
    const ms = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
    if (!Number.isNaN(ms)) return new Date(ms).toISOString();
  }
  return null;
}

function updatedAt(o: HubspotObject, property: string): string {
  return instant(o.updatedAt, o.properties[property], o.createdAt) ?? new Date(0).toISOString();
}

export function toCompany(o: HubspotObject): CrmCompany {
  const updated = updatedAt(o, 'hs_lastmodifieddate');
  return {
    crm_id: o.id,
    name: text(o.properties['name']) ?? text(o.properties['domain']) ?? `Company ${o.id}`,
    domain: text(o.properties['domain'])?.toLowerCase() ?? null,
    lifecycle_stage: text(o.properties['lifecyclestage']),
    created_at: instant(o.properties['createdate'], o.createdAt) ?? updated,
    updated_at: updated,
  };
}

export function toContact(o: HubspotObject): CrmContact {
  return {
    crm_id: o.id,
    email: text(o.properties['email']),
    lifecycle_stage: text(o.properties['lifecyclestage']),
    // The contact's primary company, as a property: present on list and search alike.
    company_crm_id: text(o.properties['associatedcompanyid']) ?? primaryAssociation(o, 'companies', 'contact_to_company'),
    updated_at: updatedAt(o, 'lastmodifieddate'),
  };
}

/** Associations of one deal, from a list call's `associations` or from the associations API. */
export interface DealLinks {
  companyId: string | null;
  contactIds: string[];
}

export function linksFromObject(o: HubspotObject): DealLinks {
  const contacts = o.associations?.['contacts']?.results ?? [];
  return { companyId: primaryAssociation(o, 'companies', 'deal_to_company'), contactIds: [...new Set(contacts.map((r) => r.id))] };
}

/** The primary association (type `<from>_to_<to>`; other links are `..._unlabeled` or labelled), else the first. */
function primaryAssociation(o: HubspotObject, to: string, primaryType: string): string | null {
  const results = o.associations?.[to]?.results ?? [];
  return (results.find((r) => r.type === primaryType) ?? results[0])?.id ?? null;
}

export function toDeal(o: HubspotObject, links: DealLinks): CrmDeal {
  const updated = updatedAt(o, 'hs_lastmodifieddate');
  const amount = text(o.properties['amount']);
  const parsed = amount === null ? null : Number(amount);
  const closed = o.properties['hs_is_closed'] === 'true';
  return {
    crm_id: o.id,
    name: text(o.properties['dealname']) ?? `Deal ${o.id}`,
    amount: parsed !== null && Number.isFinite(parsed) ? parsed : null,
    currency: text(o.properties['deal_currency_code'])?.toUpperCase() ?? null,
    pipeline_id: text(o.properties['pipeline']),
    stage_id: text(o.properties['dealstage']),
    company_crm_id: links.companyId,
    contact_crm_ids: links.contactIds,
    created_at: instant(o.properties['createdate'], o.createdAt) ?? updated,
    // closedate is the *expected* close date while a deal is open: only a closed deal has closed.
    closed_at: closed ? instant(o.properties['closedate']) : null,
    updated_at: updated,
  };
}
