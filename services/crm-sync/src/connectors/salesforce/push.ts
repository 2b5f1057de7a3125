// Write-back to Salesforce: the outcome fields that changed, written onto the person's Lead or
// Contact with one PATCH of the fields the connection's mapping names (settings.writeback; by
// default a Lead's Status takes the outcome status). The record is the one the caller names (the
// mirror knows the id; 00Q… is a Lead, 003… a Contact), else the newest Contact with the
// conversion's email, else its unconverted Lead. Field-level refusals (a validation rule, a
// read-only field) come back as a permanent error naming the fields.
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { ProviderError, type PushResult, type PushTarget } from '../connector';
import type { SalesforceHttp } from './http';
import type { SfRecord } from './mapping';
import { soqlString } from './pull';
import type { SalesforceSettings, WritableOutcome } from './settings';

type SfObject = 'Lead' | 'Contact';

/** The Salesforce fields (and values) the request's changes imply on that object. */
export function salesforceFields(request: OutcomeWritebackRequestedV1, mapping: Partial<Record<WritableOutcome, string>>): Record<string, string | number | boolean | null> {
  const changed = new Set(request.changes.map((c) => c.field));
  const fields: Record<string, string | number | boolean | null> = {};
  // Written in this order, so lead_status_raw (the CRM's own value) wins over status on the same field.
  for (const outcome of ['sales_value', 'quote_value', 'currency', 'status', 'lifecycle_stage_raw', 'lead_status_raw'] as const) {
    const field = mapping[outcome];
    if (!field || !changed.has(outcome)) continue;
    fields[field] = request.current[outcome] ?? null;
  }
  return fields;
}

export async function pushToSalesforce(http: SalesforceHttp, request: OutcomeWritebackRequestedV1, settings: SalesforceSettings, target?: PushTarget): Promise<PushResult> {
  const record = target?.crm_id ? recordOf(target.crm_id) : await findByEmail(http, request.email);
  const fields = salesforceFields(request, settings.writeback[record.type]);
  if (Object.keys(fields).length === 0) return { crm_id: record.id, fields: {} };
  await http.patch(`sobjects/${record.type}/${encodeURIComponent(record.id)}`, fields);
  return { crm_id: record.id, fields };
}

function recordOf(id: string): { type: SfObject; id: string } {
  if (id.startsWith('00Q')) return { type: 'Lead', id };
  if (id.startsWith('003')) return { type: 'Contact', id };
  throw new ProviderError(`the CRM id ${id} is neither a Salesforce Lead (00Q…) nor a Contact (003…)`, null, false);
}

async function findByEmail(http: SalesforceHttp, email: string | null): Promise<{ type: SfObject; id: string }> {
  if (!email) throw new ProviderError('the conversion has no email and no Salesforce id, so no Lead or Contact can be found', null, false);
  const address = soqlString(email.trim().toLowerCase());
  const contacts = await http.query<SfRecord>(`SELECT Id FROM Contact WHERE Email = ${address} ORDER BY LastModifiedDate DESC LIMIT 1`);
  if (contacts.records[0]) return { type: 'Contact', id: contacts.records[0].Id };
  const leads = await http.query<SfRecord>(`SELECT Id FROM Lead WHERE Email = ${address} AND IsConverted = false ORDER BY LastModifiedDate DESC LIMIT 1`);
  if (leads.records[0]) return { type: 'Lead', id: leads.records[0].Id };
  // The message names no email: errors end up in logs and statuses.
  throw new ProviderError('no Salesforce Contact or unconverted Lead has the email of this conversion', 404, false);
}
