// A Salesforce connection's settings (connections.settings, set with `connections add salesforce
// --settings`): the mapping from the org's objects and fields onto Sightline's records, and how
// much of the org's daily API allocation a sync may use. Every key is optional; the defaults fit an
// org that uses the standard objects as Salesforce ships them.
import { apiVersion } from '../../api-versions';
import type { ConnectionSettings } from '../connector';

/** The API version the connector calls, from the table of API versions; `api_version` in settings overrides it. */
export const SALESFORCE_API_VERSION = apiVersion('salesforce_rest');

/** Outcome fields a write-back can carry (the request's `current`), as Sightline names them. */
export const WRITABLE_OUTCOMES = ['status', 'sales_value', 'quote_value', 'currency', 'lead_status_raw', 'lifecycle_stage_raw'] as const;
export type WritableOutcome = (typeof WRITABLE_OUTCOMES)[number];

export interface SalesforceSettings {
  api_version: string;
  /** Stop a sync (and resume after `pause_minutes`) once the org's used share of its daily allocation reaches this; 0 < share ≤ 1. */
  max_api_share: number;
  pause_minutes: number;
  /** Records per page (SOQL LIMIT); Salesforce answers up to 2,000 per batch. */
  page_size: number;
  /** Lead field read as the person's lifecycle stage (default Status); converted leads are left to their Contact. */
  lead_stage_field: string;
  /** Contact field read as the lifecycle stage (a custom field such as Lifecycle_Stage__c), or null for none. */
  contact_stage_field: string | null;
  /**
   * Which of the org's lifecycle values count as which Sightline stage: {"Working - Contacted": "mql",
   * "Qualified": "sql"}. A value not listed stays as it is (its stage key is derived from it).
   */
  lifecycle_stages: Record<string, string>;
  /** Opportunity record types to pull (RecordTypeId), or null for every opportunity. */
  record_types: string[] | null;
  /** Opportunity field holding the deal currency (multi-currency orgs: CurrencyIsoCode), or null to leave it empty. */
  currency_field: string | null;
  /** Write-back: outcome field → Salesforce field, per object written (Lead or Contact, whichever the person is). */
  writeback: { Lead: Partial<Record<WritableOutcome, string>>; Contact: Partial<Record<WritableOutcome, string>> };
}

/** Standard fields written by default: a Lead's Status takes the outcome status; nothing else without a mapping. */
const DEFAULT_WRITEBACK: SalesforceSettings['writeback'] = { Lead: { status: 'Status', lead_status_raw: 'Status' }, Contact: {} };

const API_NAME = /^[A-Za-z][A-Za-z0-9_]{0,79}$/;
const RECORD_TYPE_ID = /^012[A-Za-z0-9]{12}(?:[A-Za-z0-9]{3})?$/;

export class SalesforceSettingsError extends Error {
  override name = 'SalesforceSettingsError';
}

/** The settings with defaults filled in; throws SalesforceSettingsError naming the first key that does not fit. */
export function parseSalesforceSettings(raw: ConnectionSettings): SalesforceSettings {
  const known = new Set(['api_version', 'max_api_share', 'pause_minutes', 'page_size', 'lead_stage_field', 'contact_stage_field', 'lifecycle_stages', 'record_types', 'currency_field', 'writeback']);
  const unknown = Object.keys(raw).filter((k) => !known.has(k));
  if (unknown.length > 0) throw new SalesforceSettingsError(`unknown Salesforce setting ${JSON.stringify(unknown[0])}; known: ${[...known].join(', ')}`);
  const apiVersion = raw['api_version'] ?? SALESFORCE_API_VERSION;
  if (typeof apiVersion !== 'string' || !/^v\d{2,3}\.0$/.test(apiVersion)) throw new SalesforceSettingsError('api_version must look like "v68.0"');
  const share = raw['max_api_share'] ?? 0.5;
  if (typeof share !== 'number' || !(share > 0 && share <= 1)) throw new SalesforceSettingsError('max_api_share must be a number above 0 and at most 1 (e.g. 0.5: stop at half the daily allocation)');
  const pause = raw['pause_minutes'] ?? 60;
  if (!Number.isInteger(pause) || (pause as number) < 1 || (pause as number) > 1440) throw new SalesforceSettingsError('pause_minutes must be a whole number of minutes from 1 to 1440');
  const pageSize = raw['page_size'] ?? 2000;
  if (!Number.isInteger(pageSize) || (pageSize as number) < 1 || (pageSize as number) > 2000) throw new SalesforceSettingsError('page_size must be a whole number from 1 to 2000');
  return {
    api_version: apiVersion,
    max_api_share: share,
    pause_minutes: pause as number,
    page_size: pageSize as number,
    lead_stage_field: fieldName(raw['lead_stage_field'] ?? 'Status', 'lead_stage_field'),
    contact_stage_field: raw['contact_stage_field'] === undefined || raw['contact_stage_field'] === null ? null : fieldName(raw['contact_stage_field'], 'contact_stage_field'),
    lifecycle_stages: lifecycleStages(raw['lifecycle_stages']),
    record_types: recordTypes(raw['record_types']),
    currency_field: raw['currency_field'] === undefined ? null : raw['currency_field'] === null ? null : fieldName(raw['currency_field'], 'currency_field'),
    writeback: writeback(raw['writeback']),
  };
}

function fieldName(value: unknown, key: string): string {
  if (typeof value !== 'string' || !API_NAME.test(value)) throw new SalesforceSettingsError(`${key} must be a Salesforce field API name such as Status or Lifecycle_Stage__c`);
  return value;
}

const STAGE_KEY = /^[a-z0-9]+(?:_[a-z0-9]+)*$/;

function lifecycleStages(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length > 200) {
    throw new SalesforceSettingsError('lifecycle_stages must be an object of at most 200 org values → stage keys, e.g. {"Working - Contacted": "mql"}');
  }
  for (const [from, to] of Object.entries(value as Record<string, unknown>)) {
    if (from.trim() === '' || typeof to !== 'string' || !STAGE_KEY.test(to) || to.length > 64) {
      throw new SalesforceSettingsError(`lifecycle_stages[${JSON.stringify(from)}] must be a stage key such as mql or sql (lower case, digits, single underscores)`);
    }
  }
  return value as Record<string, string>;
}

function recordTypes(value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length === 0 || value.length > 100 || !value.every((v) => typeof v === 'string' && RECORD_TYPE_ID.test(v))) {
    throw new SalesforceSettingsError('record_types must be a list of 1 to 100 Opportunity record type ids (15 or 18 characters, starting 012)');
  }
  return value as string[];
}

function writeback(value: unknown): SalesforceSettings['writeback'] {
  if (value === undefined || value === null) return DEFAULT_WRITEBACK;
  if (typeof value !== 'object' || Array.isArray(value)) throw new SalesforceSettingsError('writeback must be an object: {"Lead": {"status": "Status"}, "Contact": {"sales_value": "Sales_Value__c"}}');
  const out: SalesforceSettings['writeback'] = { Lead: {}, Contact: {} };
  for (const [object, fields] of Object.entries(value as Record<string, unknown>)) {
    if (object !== 'Lead' && object !== 'Contact') throw new SalesforceSettingsError(`writeback names ${JSON.stringify(object)}; it writes onto Lead or Contact`);
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new SalesforceSettingsError(`writeback.${object} must be an object of outcome field → Salesforce field`);
    for (const [outcome, field] of Object.entries(fields as Record<string, unknown>)) {
      if (!(WRITABLE_OUTCOMES as readonly string[]).includes(outcome)) throw new SalesforceSettingsError(`writeback.${object}.${outcome}: outcome fields are ${WRITABLE_OUTCOMES.join(', ')}`);
      out[object][outcome as WritableOutcome] = fieldName(field, `writeback.${object}.${outcome}`);
    }
  }
  return out;
}
