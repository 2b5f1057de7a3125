// The row of each import kind, defined once: the CLI checks every row of a file against it (to
// report rejected rows by line number) and the admin route checks it again (it trusts no client).
// A row has the same field names as a CSV header or an NDJSON key. Empty cells and nulls count as
// absent; in CSV, list fields hold values separated by ";". Rules JSON Schema cannot say well
// (defaults that depend on other fields, one-of-two shapes) live in rules.ts.
import { AD_LEVEL_NAMES, STAGE_BUCKETS, type AdLevelName, type StageBucket } from '@sightline/proto-schemas';

export const IMPORT_KINDS = ['deals', 'companies', 'contacts', 'spend', 'orders'] as const;
export type ImportKind = (typeof IMPORT_KINDS)[number];

export function isImportKind(value: string): value is ImportKind {
  return (IMPORT_KINDS as readonly string[]).includes(value);
}

/** One deal. Pipeline and stage are names; the 'import' pipelines are built from what rows name. */
export interface DealImportRow {
  crm_id: string;
  name: string;
  amount?: number;
  currency?: string;
  pipeline?: string;
  stage?: string;
  bucket?: StageBucket;
  company_crm_id?: string;
  contact_crm_ids?: string[];
  created_at: string;
  closed_at?: string;
  updated_at?: string;
}

export interface CompanyImportRow {
  crm_id: string;
  name: string;
  domain?: string;
  lifecycle_stage?: string;
  created_at?: string;
  updated_at?: string;
}

/** One contact: crm_id, email, or both (crm_id defaults to the email). */
export interface ContactImportRow {
  crm_id?: string;
  email?: string;
  lifecycle_stage?: string;
  company_crm_id?: string;
  updated_at?: string;
}

/** One day of one ad item (campaign, ad set, ad, keyword...) of one ad account. */
export interface SpendImportRow {
  platform: string;
  account_id: string;
  account_name?: string;
  currency: string;
  date: string;
  level?: AdLevelName;
  item_id?: string;
  item_name?: string;
  campaign_id?: string;
  campaign_name?: string;
  campaign_type?: string;
  ad_set_id?: string;
  ad_set_name?: string;
  ad_id?: string;
  ad_name?: string;
  spend: number;
  impressions?: number;
  clicks?: number;
  platform_conversions?: number;
  platform_revenue?: number;
}

/** One order line (product_id set) or one refund (refund_id set); an order's rows are contiguous. */
export interface OrderImportRow {
  platform?: string;
  order_id: string;
  ordered_at: string;
  currency: string;
  customer_email?: string;
  product_id?: string;
  product_name?: string;
  quantity?: number;
  unit_price?: number;
  unit_cost?: number;
  refund_id?: string;
  refunded_at?: string;
  refund_amount?: number;
}

export interface ImportRows {
  deals: DealImportRow;
  companies: CompanyImportRow;
  contacts: ContactImportRow;
  spend: SpendImportRow;
  orders: OrderImportRow;
}

/** A JSON Schema (draft-07) object schema, as the import schemas are written. */
export interface RowSchema {
  type: 'object';
  description: string;
  required: string[];
  additionalProperties: false;
  properties: Record<string, FieldSchema>;
}

export interface FieldSchema {
  type: 'string' | 'number' | 'integer' | 'array';
  description: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  pattern?: string;
  format?: 'date' | 'instant';
  enum?: readonly string[];
  items?: { type: 'string'; minLength: number; maxLength: number };
  maxItems?: number;
}

const id = (description: string): FieldSchema => ({ type: 'string', minLength: 1, maxLength: 200, description });
const text = (description: string): FieldSchema => ({ type: 'string', maxLength: 500, description });
const instant = (description: string): FieldSchema => ({
  type: 'string', format: 'instant', description: `${description} ISO 8601 date or date-time; without an offset it is UTC.`,
});
const amount = (description: string): FieldSchema => ({ type: 'number', minimum: 0, description });
const count = (description: string): FieldSchema => ({ type: 'integer', minimum: 0, description });
const currency: FieldSchema = { type: 'string', pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, e.g. EUR (lower case is accepted).' };
const email = (description: string): FieldSchema => ({ type: 'string', maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$', description });
const platform = (description: string): FieldSchema => ({ type: 'string', pattern: '^[a-z][a-z0-9_]*$', maxLength: 60, description });

function rowSchema(description: string, required: string[], properties: Record<string, FieldSchema>): RowSchema {
  return { type: 'object', description, required, additionalProperties: false, properties };
}

export const IMPORT_ROW_SCHEMAS: Record<ImportKind, RowSchema> = {
  deals: rowSchema('One deal per row. Re-importing a deal (same crm_id) updates it in place.', ['crm_id', 'name', 'created_at'], {
    crm_id: id('The deal id in your CRM; the key of the deal.'),
    name: text('Deal name.'),
    amount: amount('Deal value.'),
    currency,
    pipeline: text('Pipeline name; default "Imported deals" when a stage or bucket is given.'),
    stage: text('Stage name within the pipeline; default the bucket\'s name (e.g. "Won") when only bucket is given.'),
    bucket: { type: 'string', enum: STAGE_BUCKETS, description: 'What the stage means: open, won, lost or other; default open. The last row naming a stage sets it.' },
    company_crm_id: id('crm_id of the deal\'s company (import companies first).'),
    contact_crm_ids: {
      type: 'array', maxItems: 500, items: { type: 'string', minLength: 1, maxLength: 200 },
      description: 'crm_ids of the deal\'s contacts (import contacts first); ";"-separated in CSV.',
    },
    created_at: instant('When the deal was created.'),
    closed_at: instant('When the deal was won or lost.'),
    updated_at: instant('When the deal last changed; default closed_at, else created_at. An older copy never replaces a newer one.'),
  }),
  companies: rowSchema('One company per row. Re-importing a company (same crm_id) updates it in place.', ['crm_id', 'name'], {
    crm_id: id('The company id in your CRM; the key of the company.'),
    name: text('Company name.'),
    domain: { type: 'string', maxLength: 253, description: 'Web domain, e.g. acme.com.' },
    lifecycle_stage: text('Lifecycle stage, e.g. customer.'),
    created_at: instant('When the company was created; default updated_at, else the time of the import.'),
    updated_at: instant('When the company last changed; default created_at, else the time of the import.'),
  }),
  contacts: rowSchema('One contact per row, with crm_id, email or both. Re-importing a contact updates it in place.', [], {
    crm_id: id('The contact id in your CRM; default the email (lower case).'),
    email: email('Email address: how the contact is matched to visitors and conversions.'),
    lifecycle_stage: text('Lifecycle stage, e.g. mql; a change is announced as a milestone.'),
    company_crm_id: id('crm_id of the contact\'s company.'),
    updated_at: instant('When the contact last changed (the time of a lifecycle milestone); default the time of the import.'),
  }),
  spend: rowSchema('One day of one ad item per row. Re-importing a row (same platform, level, item and date) restates it.', ['platform', 'account_id', 'currency', 'date', 'spend'], {
    platform: platform('Ad platform, e.g. google_ads, meta_ads, linkedin_ads.'),
    account_id: id('Ad account id.'),
    account_name: text('Ad account name.'),
    currency,
    date: { type: 'string', format: 'date', description: 'Day (YYYY-MM-DD) in the ad account\'s reporting timezone.' },
    level: {
      type: 'string', enum: AD_LEVEL_NAMES,
      description: 'What the row describes; default the most specific id given: ad, ad_set, campaign, else account.',
    },
    item_id: id('Id of the item at that level; default ad_id, ad_set_id, campaign_id or account_id for those levels (required for the others).'),
    item_name: text('Name of the item.'),
    campaign_id: id('Campaign id.'),
    campaign_name: text('Campaign name.'),
    campaign_type: text('Campaign type as the platform names it, e.g. search.'),
    ad_set_id: id('Ad set (ad group) id.'),
    ad_set_name: text('Ad set (ad group) name.'),
    ad_id: id('Ad id.'),
    ad_name: text('Ad name.'),
    spend: amount('Cost of the day, in the account currency.'),
    impressions: count('Impressions; default 0.'),
    clicks: count('Clicks; default 0.'),
    platform_conversions: amount('Conversions the platform reports.'),
    platform_revenue: amount('Conversion value the platform reports.'),
  }),
  orders: rowSchema(
    'One order line per row (product_id set) or one refund per row (refund_id set); the rows of an order are contiguous. Re-importing an order restates it whole.',
    ['order_id', 'ordered_at', 'currency'],
    {
      platform: platform('Store platform, e.g. shopify; default import.'),
      order_id: id('Order id; rows with the same platform and order_id make one order.'),
      ordered_at: instant('When the order was placed (the same on every row of the order).'),
      currency,
      customer_email: email('Customer email: how the order is matched to a visitor.'),
      product_id: id('Product (or variant) id of an order line.'),
      product_name: text('Product name; default product_id.'),
      quantity: count('Units of an order line (default 1), or units refunded.'),
      unit_price: amount('Price of one unit; required on an order line.'),
      unit_cost: amount('Cost of one unit (for margins).'),
      refund_id: id('Refund id; makes the row a refund.'),
      refunded_at: instant('When the refund was made; required on a refund.'),
      refund_amount: amount('Amount refunded; required on a refund.'),
    },
  ),
};

/** Fields whose value is a list (";"-separated in CSV). */
export function listFields(kind: ImportKind): string[] {
  return Object.entries(IMPORT_ROW_SCHEMAS[kind].properties).filter(([, f]) => f.type === 'array').map(([name]) => name);
}
