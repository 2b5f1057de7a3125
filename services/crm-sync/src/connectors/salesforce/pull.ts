// The Salesforce pull, one page per call so each page is committed with its resume cursor.
// Phases: stages → accounts → leads → contacts → opportunities (with their contact roles and stage
// history), then for incremental pulls only: roles (opportunities whose contact roles changed) and
// the deletions of each object since (queryAll of IsDeleted rows: Salesforce keeps deleted records
// in the recycle bin for 15 days, so a connection not synced for longer misses deletions until a
// full sync, which re-reads what exists). Each object is
// read in SystemModstamp order with a keyset (after the last record's time and id), never with a
// query locator, so a cursor stays valid across restarts and days. Incremental pulls add
// "SystemModstamp >= since". After every page the org's API usage (Sforce-Limit-Info) is checked
// against the connection's max_api_share: at or past it, the page asks the sync to pause; so does
// REQUEST_LIMIT_EXCEEDED, which is never a failure.
import type { CrmRecords } from '../../records';
import { ProviderError, type PullContext, type PullPage } from '../connector';
import { AllocationExhaustedError, type SalesforceHttp } from './http';
import { contactToContact, isoOf, leadToContact, toCompany, toDeal, toPipeline, type SfRecord } from './mapping';
import type { SalesforceSettings } from './settings';

const PHASES = ['stages', 'accounts', 'leads', 'contacts', 'opportunities', 'roles', 'deleted_accounts', 'deleted_leads', 'deleted_contacts', 'deleted_opportunities'] as const;
type Phase = (typeof PHASES)[number];
/** Phases only an incremental pull has: a full pull reads roles with their opportunities and sees no deleted record. */
const INCREMENTAL_ONLY = new Set<Phase>(['roles', 'deleted_accounts', 'deleted_leads', 'deleted_contacts', 'deleted_opportunities']);
type DeletedPhase = 'deleted_accounts' | 'deleted_leads' | 'deleted_contacts' | 'deleted_opportunities';
const DELETED: Record<DeletedPhase, { object: string; kind: 'companies' | 'contacts' | 'deals' }> = {
  deleted_accounts: { object: 'Account', kind: 'companies' },
  deleted_leads: { object: 'Lead', kind: 'contacts' },
  deleted_contacts: { object: 'Contact', kind: 'contacts' },
  deleted_opportunities: { object: 'Opportunity', kind: 'deals' },
};

export interface SalesforceCursor {
  v: 1;
  phase: Phase;
  /** Incremental lower bound (ISO), or null for a full pull. */
  since: string | null;
  /** The last record read in this phase: its SystemModstamp (ISO) and Id. */
  after: { at: string; id: string } | null;
}

export function encodeCursor(cursor: SalesforceCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

export function decodeCursor(text: string): SalesforceCursor {
  try {
    const c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as SalesforceCursor;
    if (c.v === 1 && PHASES.includes(c.phase)) return c;
  } catch {
    // fall through
  }
  throw new ProviderError('the stored Salesforce sync cursor is unreadable; run a full sync (connections sync --full)', null, false);
}

/** A SOQL datetime literal in UTC, with the milliseconds Salesforce's answers carry (.000 in practice). */
export function soqlDateTime(iso: string): string {
  return new Date(iso).toISOString();
}

/** A SOQL string literal: backslash and quote escaped. */
export function soqlString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

const FIELDS: Record<'accounts' | 'leads' | 'contacts' | 'opportunities', (s: SalesforceSettings) => string[]> = {
  accounts: () => ['Id', 'Name', 'Website', 'CreatedDate', 'SystemModstamp'],
  leads: (s) => ['Id', 'Email', s.lead_stage_field, 'IsConverted', 'CreatedDate', 'SystemModstamp'],
  contacts: (s) => ['Id', 'Email', 'AccountId', ...(s.contact_stage_field ? [s.contact_stage_field] : []), 'CreatedDate', 'SystemModstamp'],
  opportunities: (s) => ['Id', 'Name', 'Amount', 'StageName', 'IsClosed', 'IsWon', 'CloseDate', 'AccountId', ...(s.currency_field ? [s.currency_field] : []), 'CreatedDate', 'SystemModstamp'],
};
const OBJECT: Record<'accounts' | 'leads' | 'contacts' | 'opportunities' | 'roles', string> = {
  accounts: 'Account', leads: 'Lead', contacts: 'Contact', opportunities: 'Opportunity', roles: 'OpportunityContactRole',
};

interface Step {
  records: CrmRecords;
  next: SalesforceCursor | null;
}

export async function* pullSalesforce(http: SalesforceHttp, ctx: PullContext, settings: SalesforceSettings, now: () => Date = () => new Date()): AsyncGenerator<PullPage> {
  let cursor: SalesforceCursor | null = ctx.cursor ? decodeCursor(ctx.cursor) : { v: 1, phase: 'stages', since: ctx.since ? new Date(ctx.since).toISOString() : null, after: null };
  while (cursor) {
    let step: Step;
    try {
      step = await stepOf(http, cursor, settings);
    } catch (error) {
      if (!(error instanceof AllocationExhaustedError)) throw error;
      // Nothing read: stay where we are and come back once the allocation has room again.
      yield { records: {}, cursor: encodeCursor(cursor), pause: pauseFor(settings, now, `Salesforce refused the call: the org's daily API allocation is used up (${error.message})`), ...usageOf(http) };
      return;
    }
    const page: PullPage = { records: step.records, cursor: step.next ? encodeCursor(step.next) : null, ...usageOf(http) };
    const usage = http.usage;
    if (step.next && usage && usage.limit > 0 && usage.used / usage.limit >= settings.max_api_share) {
      page.pause = pauseFor(settings, now, `the org has used ${usage.used} of its ${usage.limit} daily API calls, the connection's share (max_api_share ${settings.max_api_share}) is reached`);
      yield page;
      return;
    }
    yield page;
    cursor = step.next;
  }
}

function pauseFor(settings: SalesforceSettings, now: () => Date, reason: string): NonNullable<PullPage['pause']> {
  return { until: new Date(now().getTime() + settings.pause_minutes * 60_000).toISOString(), reason };
}

const usageOf = (http: SalesforceHttp): Pick<PullPage, 'usage'> => (http.usage ? { usage: http.usage } : {});

function nextPhase(cursor: SalesforceCursor): SalesforceCursor | null {
  const phase = PHASES.slice(PHASES.indexOf(cursor.phase) + 1).find((p) => cursor.since !== null || !INCREMENTAL_ONLY.has(p));
  return phase === undefined ? null : { v: 1, phase, since: cursor.since, after: null };
}

async function stepOf(http: SalesforceHttp, cursor: SalesforceCursor, settings: SalesforceSettings): Promise<Step> {
  if (cursor.phase === 'stages') {
    const stages = await queryAll<SfRecord>(http, 'SELECT Id, ApiName, MasterLabel, SortOrder, IsActive, IsClosed, IsWon FROM OpportunityStage ORDER BY SortOrder');
    return { records: { pipelines: [toPipeline(stages)] }, next: nextPhase(cursor) };
  }
  const where: string[] = [];
  if (cursor.phase === 'leads') where.push('IsConverted = false');
  if ((cursor.phase === 'opportunities') && settings.record_types) where.push(`RecordTypeId IN (${settings.record_types.map(soqlString).join(', ')})`);
  if (cursor.since) where.push(`SystemModstamp >= ${soqlDateTime(cursor.since)}`);
  if (cursor.after) {
    const at = soqlDateTime(cursor.after.at);
    where.push(`(SystemModstamp > ${at} OR (SystemModstamp = ${at} AND Id > ${soqlString(cursor.after.id)}))`);
  }
  if (cursor.phase in DELETED) where.unshift('IsDeleted = true');
  const deletedPhase = DELETED[cursor.phase as DeletedPhase] as (typeof DELETED)[DeletedPhase] | undefined;
  const fields = cursor.phase === 'roles' ? ['Id', 'OpportunityId', 'SystemModstamp'] : deletedPhase ? ['Id', 'SystemModstamp'] : FIELDS[cursor.phase as keyof typeof FIELDS](settings);
  const object = deletedPhase ? deletedPhase.object : OBJECT[cursor.phase as keyof typeof OBJECT];
  const soql = `SELECT ${fields.join(', ')} FROM ${object}${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY SystemModstamp, Id LIMIT ${settings.page_size}`;
  const { records } = deletedPhase ? await http.queryAll<SfRecord>(soql) : await http.query<SfRecord>(soql);
  const last = records.at(-1);
  const next = records.length < settings.page_size || !last ? nextPhase(cursor) : { ...cursor, after: { at: isoOf(last['SystemModstamp']) ?? new Date(0).toISOString(), id: last.Id } };
  switch (cursor.phase) {
    case 'accounts':
      return { records: { companies: records.map(toCompany) }, next };
    case 'leads':
      return { records: { contacts: records.map((r) => leadToContact(r, settings)) }, next };
    case 'contacts':
      return { records: { contacts: records.map((r) => contactToContact(r, settings)) }, next };
    case 'opportunities':
      return { records: { deals: await withRolesAndHistory(http, records, settings) }, next };
    case 'deleted_accounts':
    case 'deleted_leads':
    case 'deleted_contacts':
    case 'deleted_opportunities':
      return { records: { deleted: { [DELETED[cursor.phase].kind]: records.map((r) => r.Id) } }, next };
    case 'roles': {
      // Opportunities whose people changed without the opportunity itself changing.
      const ids = [...new Set(records.map((r) => String(r['OpportunityId'])))];
      const opportunities: SfRecord[] = [];
      for (const chunk of chunks(ids.map(soqlString), IDS_PER_QUERY)) {
        opportunities.push(...(await queryAll<SfRecord>(http, `SELECT ${FIELDS.opportunities(settings).join(', ')} FROM Opportunity WHERE Id IN (${chunk.join(', ')})`)));
      }
      return { records: { deals: await withRolesAndHistory(http, opportunities, settings) }, next };
    }
  }
}

/**
 * Ids per IN list: Salesforce refuses a request URI over 16,384 characters, and an 18-character id
 * takes about 30 once quoted, separated and URL-encoded.
 */
export const IDS_PER_QUERY = 300;

/** Deals of a page of opportunities: their contact roles and their stage history, IDS_PER_QUERY ids a query. */
async function withRolesAndHistory(http: SalesforceHttp, opportunities: SfRecord[], settings: SalesforceSettings) {
  if (opportunities.length === 0) return [];
  const roles: SfRecord[] = [];
  const history: SfRecord[] = [];
  for (const chunk of chunks(opportunities.map((o) => soqlString(o.Id)), IDS_PER_QUERY)) {
    const ids = chunk.join(', ');
    const [r, h] = await Promise.all([
      queryAll<SfRecord>(http, `SELECT Id, OpportunityId, ContactId FROM OpportunityContactRole WHERE OpportunityId IN (${ids})`),
      queryAll<SfRecord>(http, `SELECT Id, OpportunityId, StageName, CreatedDate FROM OpportunityHistory WHERE OpportunityId IN (${ids}) ORDER BY OpportunityId, CreatedDate`),
    ]);
    roles.push(...r);
    history.push(...h);
  }
  const rolesOf = groupBy(roles, 'OpportunityId');
  const historyOf = groupBy(history, 'OpportunityId');
  return opportunities.map((o) => toDeal(o, (rolesOf.get(o.Id) ?? []).map((r) => String(r['ContactId'])).filter((id) => id !== 'null'), historyOf.get(o.Id) ?? [], settings));
}

function chunks<T>(list: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

function groupBy(records: SfRecord[], field: string): Map<string, SfRecord[]> {
  const out = new Map<string, SfRecord[]>();
  for (const r of records) {
    const key = String(r[field]);
    const list = out.get(key);
    if (list) list.push(r);
    else out.set(key, [r]);
  }
  return out;
}

/** Every batch of a query (its nextRecordsUrl followed), for reads bounded by a page of ids. */
async function queryAll<R>(http: SalesforceHttp, soql: string): Promise<R[]> {
  let answer = await http.query<R>(soql);
  const out = [...answer.records];
  while (!answer.done && answer.nextRecordsUrl) {
    answer = await http.get(answer.nextRecordsUrl);
    out.push(...answer.records);
  }
  return out;
}
