// Write-back to Pipedrive: the outcome fields that changed, written into custom fields the operator
// names in the connection settings, on the person and/or on a deal:
//   {"writeback": {"person": {"sales_value": "<field key>", "status": "<field key>"},
//                  "deal":   {"sales_value": "<field key>"}}}
// A field with no mapping is not written. Field keys are Pipedrive's 40-character custom field
// hashes (Settings → Data fields, or GET /api/v2/personFields). The person is the one the caller
// names, else the one the person search finds by email; the deal is the request's milestone deal,
// else the person's most recently updated deal.
import type { ContactOutcomeV1, OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { ProviderError, type ConnectionSettings, type PushResult, type PushTarget } from '../connector';
import type { PipedriveHttp, PipedriveList } from './http';
import type { PdDeal } from './mapping';

type FieldValue = string | number | boolean | null;
export const WRITABLE_FIELDS = ['status', 'sales_value', 'quote_value', 'currency', 'lead_status_raw', 'lifecycle_stage_raw'] as const;
export type WritableField = (typeof WRITABLE_FIELDS)[number];
type FieldMap = Partial<Record<WritableField, string>>;

export interface WritebackSettings {
  person: FieldMap;
  deal: FieldMap;
}

const FIELD_KEY = /^[0-9a-f]{40}$/;

/** What is wrong with the settings' `writeback` (absent is fine: nothing is written), or null. */
export function checkWritebackSettings(settings: ConnectionSettings): string | null {
  const allowed = new Set(['writeback', 'stage_history']);
  const extra = Object.keys(settings).filter((k) => !allowed.has(k));
  if (extra.length > 0) return `Pipedrive settings take writeback and stage_history, not ${extra.join(', ')}`;
  if (settings['stage_history'] !== undefined && typeof settings['stage_history'] !== 'boolean') return 'Pipedrive settings: stage_history is true or false';
  const writeback = settings['writeback'];
  if (writeback === undefined) return null;
  if (!isObject(writeback)) return 'Pipedrive settings: writeback is {"person": {...}, "deal": {...}}';
  for (const [target, map] of Object.entries(writeback)) {
    if (target !== 'person' && target !== 'deal') return `Pipedrive settings: writeback takes person and deal, not ${target}`;
    if (!isObject(map)) return `Pipedrive settings: writeback.${target} maps Sightline fields to custom field keys`;
    for (const [field, key] of Object.entries(map)) {
      if (!(WRITABLE_FIELDS as readonly string[]).includes(field)) return `Pipedrive settings: writeback.${target}.${field} is not a field Sightline writes (${WRITABLE_FIELDS.join(', ')})`;
      if (typeof key !== 'string' || !FIELD_KEY.test(key)) return `Pipedrive settings: writeback.${target}.${field} must be a 40-character custom field key`;
    }
  }
  return null;
}

export function writebackOf(settings: ConnectionSettings | undefined): WritebackSettings {
  const raw = settings?.['writeback'];
  const pick = (value: unknown): FieldMap => (isObject(value) ? (Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v === 'string')) as FieldMap) : {});
  return isObject(raw) ? { person: pick(raw['person']), deal: pick(raw['deal']) } : { person: {}, deal: {} };
}

/** custom_fields for one target: the changed, mapped fields with their current values (null clears). */
export function customFieldsFor(map: FieldMap, request: OutcomeWritebackRequestedV1): { body: Record<string, FieldValue>; written: Record<string, FieldValue> } {
  const changed = new Set<string>(request.changes.map((c) => c.field));
  const body: Record<string, FieldValue> = {};
  const written: Record<string, FieldValue> = {};
  for (const field of WRITABLE_FIELDS) {
    const key = map[field];
    if (!key || !changed.has(field)) continue;
    const value = (request.current as ContactOutcomeV1)[field];
    body[key] = value;
    written[field] = value;
  }
  return { body, written };
}

export async function pushToPipedrive(http: PipedriveHttp, request: OutcomeWritebackRequestedV1, target: PushTarget | undefined, settings: ConnectionSettings | undefined): Promise<PushResult> {
  const mapping = writebackOf(settings);
  const person = customFieldsFor(mapping.person, request);
  const deal = customFieldsFor(mapping.deal, request);
  const personId = target?.crm_id ?? (await personIdByEmail(http, request.email));
  const fields: Record<string, FieldValue> = {};
  if (Object.keys(person.body).length > 0) {
    await http.patch(`/api/v2/persons/${encodeURIComponent(personId)}`, { custom_fields: person.body });
    for (const [field, value] of Object.entries(person.written)) fields[`person.${field}`] = value;
  }
  if (Object.keys(deal.body).length > 0) {
    const dealId = request.milestone?.deal_id ?? (await latestDealOf(http, personId));
    if (dealId === null) {
      if (Object.keys(fields).length === 0) throw new ProviderError('the Pipedrive person of this conversion has no deal to write to', 404, false);
    } else {
      await http.patch(`/api/v2/deals/${encodeURIComponent(dealId)}`, { custom_fields: deal.body });
      fields['deal.id'] = dealId;
      for (const [field, value] of Object.entries(deal.written)) fields[`deal.${field}`] = value;
    }
  }
  return { crm_id: personId, fields };
}

interface SearchAnswer {
  success: boolean;
  data: { items: { result_score?: number; item: { id: number; emails?: string[] } }[] } | null;
}

async function personIdByEmail(http: PipedriveHttp, email: string | null): Promise<string> {
  if (!email) throw new ProviderError('the conversion has no email and no Pipedrive person id, so no Pipedrive person can be found', null, false);
  const wanted = email.trim().toLowerCase();
  const found = await http.get<SearchAnswer>('/api/v2/persons/search', { term: wanted, fields: 'email', exact_match: true, limit: 10 });
  const items = found.data?.items ?? [];
  // Search ranks by relevance: prefer the person whose emails hold exactly this address.
  const exact = items.find((i) => (i.item.emails ?? []).some((e) => e.trim().toLowerCase() === wanted)) ?? items[0];
  // The message names no email: errors end up in logs and statuses.
  if (!exact) throw new ProviderError('no Pipedrive person has the email of this conversion', 404, false);
  return String(exact.item.id);
}

async function latestDealOf(http: PipedriveHttp, personId: string): Promise<string | null> {
  const page = await http.get<PipedriveList<PdDeal>>('/api/v2/deals', { person_id: personId, sort_by: 'update_time', sort_direction: 'desc', limit: 1 });
  const d = page.data?.[0];
  return d ? String(d.id) : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
