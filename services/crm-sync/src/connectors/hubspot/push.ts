// Write-back to HubSpot: the outcome fields that changed, written onto the contact's record with
// PATCH /crm/v3/objects/contacts/{id}. The contact is the one the caller names, else the one the
// search API finds by the conversion's email. Field → property (README "HubSpot write-back"):
//   sales_value → sightline_sales_value, quote_value → sightline_quote_value,
//   currency → sightline_currency (three custom contact properties the operator creates),
//   status → hs_lead_status (upper-cased, spaces as _), lead_status_raw → hs_lead_status verbatim
//   (wins over status), lifecycle_stage_raw → lifecyclestage. notes and is_spam stay in Sightline.
import type { ContactOutcomeV1, OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { ProviderError, type PushResult, type PushTarget } from '../connector';
import type { HubspotHttp } from './http';
import type { HubspotObject } from './mapping';

type PropertyValue = string | number | boolean | null;
type WrittenField = Exclude<keyof ContactOutcomeV1, 'is_spam'>;

/** In write order: a later field writing the same property wins. */
export const WRITEBACK_PROPERTIES: readonly (readonly [WrittenField, string])[] = [
  ['sales_value', 'sightline_sales_value'],
  ['quote_value', 'sightline_quote_value'],
  ['currency', 'sightline_currency'],
  ['status', 'hs_lead_status'],
  ['lead_status_raw', 'hs_lead_status'],
  ['lifecycle_stage_raw', 'lifecyclestage'],
];

/** `in progress` → `IN_PROGRESS`, the form of HubSpot's lead status options. */
export function leadStatusOf(status: string): string {
  return status.trim().toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '');
}

/** The HubSpot properties the request's changes imply (null clears a property). */
export function contactProperties(request: OutcomeWritebackRequestedV1): Record<string, PropertyValue> {
  const changed = new Set(request.changes.map((c) => c.field));
  const properties: Record<string, PropertyValue> = {};
  for (const [field, property] of WRITEBACK_PROPERTIES) {
    if (!changed.has(field)) continue;
    const value = request.current[field];
    properties[property] = value === null ? null : field === 'status' ? leadStatusOf(String(value)) : value;
  }
  return properties;
}

export async function pushToHubspot(http: HubspotHttp, request: OutcomeWritebackRequestedV1, target?: PushTarget): Promise<PushResult> {
  const crmId = target?.crm_id ?? (await contactIdByEmail(http, request.email));
  const properties = contactProperties(request);
  if (Object.keys(properties).length === 0) return { crm_id: crmId, fields: {} };
  // HubSpot clears a property given an empty string.
  const body = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, v === null ? '' : v]));
  await http.patch<HubspotObject>(`/crm/v3/objects/contacts/${encodeURIComponent(crmId)}`, { properties: body });
  return { crm_id: crmId, fields: properties };
}

async function contactIdByEmail(http: HubspotHttp, email: string | null): Promise<string> {
  if (!email) throw new ProviderError('the conversion has no email and no HubSpot contact id, so no HubSpot contact can be found', null, false);
  const found = await http.post<{ total?: number; results: HubspotObject[] }>('/crm/v3/objects/contacts/search', {
    filterGroups: [{ filters: [{ propertyName: 'email', operator: 'EQ', value: email.trim().toLowerCase() }] }],
    properties: ['email'],
    limit: 1,
  });
  const id = found.results[0]?.id;
  // The message names no email: errors end up in logs and statuses.
  if (!id) throw new ProviderError('no HubSpot contact has the email of this conversion', 404, false);
  return id;
}
