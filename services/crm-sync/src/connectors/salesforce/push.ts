// Write-back to Salesforce: the outcome fields that changed, written onto the person's Lead or
// Contact with the fields the connection's mapping names (settings.writeback; by default a Lead's
// Status takes the outcome status). The record is the one the caller names (the mirror knows the
// id; 00Q… is a Lead, 003… a Contact), else the newest Contact with the conversion's email, else
// its unconverted Lead. One outcome is one PATCH of the record; many (pushManyToSalesforce) go in
// sObject Collections calls of up to 200 records, each record answered on its own. Field-level
// refusals (a validation rule, a read-only field) come back as a permanent error naming the fields.
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { ProviderError, type PushItem, type PushOutcome, type PushResult, type PushTarget } from '../connector';
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

/** Records per sObject Collections call (Salesforce's limit). */
export const COLLECTION_SIZE = 200;
/** Emails per lookup query: an address takes up to ~100 characters of a URI once encoded. */
const EMAILS_PER_QUERY = 100;
/** Record errors worth another attempt: the row was locked by another transaction. */
const RETRYABLE_RECORD_ERRORS = new Set(['UNABLE_TO_LOCK_ROW']);

interface CollectionResult {
  id?: string | null;
  success: boolean;
  errors?: { statusCode?: string; message?: string; fields?: string[] }[];
}

/**
 * Many outcomes in sObject Collections calls: the records found (by the ids the caller knows, else
 * by email in a few lookup queries), their mapped fields sent 200 records a call with allOrNone
 * false, and each record's own answer kept. Two outcomes for one record go in successive calls, in
 * order, so the later one's values stand.
 */
export async function pushManyToSalesforce(http: SalesforceHttp, items: PushItem[], settings: SalesforceSettings): Promise<PushOutcome[]> {
  const outcomes: (PushOutcome | null)[] = items.map(() => null);
  const records = await recordsOf(http, items);
  const writes: { index: number; type: SfObject; id: string; fields: Record<string, string | number | boolean | null> }[] = [];
  items.forEach((item, index) => {
    const record = records[index];
    if (record instanceof ProviderError) {
      outcomes[index] = { ok: false, error: record };
      return;
    }
    const fields = salesforceFields(item.request, settings.writeback[record!.type]);
    if (Object.keys(fields).length === 0) outcomes[index] = { ok: true, result: { crm_id: record!.id, fields: {} } };
    else writes.push({ index, type: record!.type, id: record!.id, fields });
  });
  for (const call of collectionCalls(writes)) {
    const answer = await http.patch<CollectionResult[]>('composite/sobjects', {
      allOrNone: false,
      records: call.map((w) => ({ attributes: { type: w.type }, id: w.id, ...w.fields })),
    });
    call.forEach((w, i) => {
      const result = answer?.[i];
      if (result?.success) {
        outcomes[w.index] = { ok: true, result: { crm_id: w.id, fields: w.fields } };
        return;
      }
      const error = result?.errors?.[0];
      const code = error?.statusCode ?? 'UNKNOWN';
      const fields = error?.fields && error.fields.length > 0 ? ` (fields: ${error.fields.join(', ')})` : '';
      outcomes[w.index] = { ok: false, error: new ProviderError(`Salesforce refused the ${w.type} ${w.id}: ${code}: ${error?.message ?? 'no message'}${fields}`, 400, RETRYABLE_RECORD_ERRORS.has(code)) };
    });
  }
  return outcomes.map((o) => o ?? { ok: false, error: new ProviderError('Salesforce did not answer for this record', null, true) });
}

/** Calls of at most COLLECTION_SIZE records, no record twice in one call (a repeat goes to the next, keeping order). */
function collectionCalls<W extends { id: string }>(writes: W[]): W[][] {
  const calls: W[][] = [];
  for (const write of writes) {
    // The first call after the last one holding this record, with room left.
    let start = 0;
    calls.forEach((call, i) => {
      if (call.some((w) => w.id === write.id)) start = i + 1;
    });
    let call = calls.slice(start).find((c) => c.length < COLLECTION_SIZE);
    if (!call) {
      call = [];
      calls.push(call);
    }
    call.push(write);
  }
  return calls;
}

/** The record of each item: the id the caller knows, else found by email (Contacts first, then unconverted Leads). */
async function recordsOf(http: SalesforceHttp, items: PushItem[]): Promise<({ type: SfObject; id: string } | ProviderError)[]> {
  const known = items.map((item) => {
    if (!item.target?.crm_id) return null;
    try {
      return recordOf(item.target.crm_id);
    } catch (error) {
      return error as ProviderError;
    }
  });
  const wanted = [...new Set(items.filter((_, i) => known[i] === null).map((item) => item.request.email?.trim().toLowerCase() ?? '').filter((e) => e !== ''))];
  const found = new Map<string, { type: SfObject; id: string }>();
  for (const type of ['Contact', 'Lead'] as const) {
    const missing = wanted.filter((e) => !found.has(e));
    for (let i = 0; i < missing.length; i += EMAILS_PER_QUERY) {
      const list = missing.slice(i, i + EMAILS_PER_QUERY).map(soqlString).join(', ');
      const open = type === 'Lead' ? ' AND IsConverted = false' : '';
      const answer = await http.query<SfRecord>(`SELECT Id, Email FROM ${type} WHERE Email IN (${list})${open} ORDER BY LastModifiedDate DESC`);
      for (const r of answer.records) {
        const email = String(r['Email'] ?? '').trim().toLowerCase();
        // Newest first: the first record of an email is the one written to.
        if (email !== '' && !found.has(email)) found.set(email, { type, id: r.Id });
      }
    }
  }
  return items.map((item, i) => {
    const k = known[i];
    if (k !== null && k !== undefined) return k;
    if (!item.request.email) return new ProviderError('the conversion has no email and no Salesforce id, so no Lead or Contact can be found', null, false);
    return found.get(item.request.email.trim().toLowerCase()) ?? new ProviderError('no Salesforce Contact or unconverted Lead has the email of this conversion', 404, false);
  });
}
