// Payload types of the message catalog, kept by hand beside their schemas. message-examples.ts
// holds one complete example per type (checked by tsc against these types) and the catalog test
// checks each example against its schema, field for field, so the two cannot drift apart.
import type { AdLevelName } from './registry/ads';
import type { PlanName } from './registry/plans';
import type { ScopeName } from './registry/scopes';

export interface WorkspaceCreatedV1 {
  workspace_id: string;
  name: string;
  /** IANA time zone name. */
  timezone: string;
  /** ISO 4217 code. */
  currency: string;
  plan: PlanName;
}

export interface KeyCreatedV1 {
  key_id: string;
  workspace_id: string;
  name: string;
  scopes: ScopeName[];
  all_websites: boolean;
  /** Empty when all_websites is true. */
  website_ids: string[];
}

export interface KeyRevokedV1 {
  key_id: string;
  workspace_id: string;
  reason: string | null;
}

/** The session (touch) a browsing hit belongs to; its attributes are those of its first hit. */
export interface SessionAttributesV1 {
  started_at: string;
  landing_page: string | null;
  channel: string;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  term: string | null;
  content: string | null;
  referrer_domain: string | null;
  click_ids: Record<string, string>;
}

/** One validated, classified event (schemas/ingest/event.v1). The client IP is never part of it. */
export interface ClassifiedEventV1 {
  event_id: string;
  origin: 'tracker' | 'api';
  event_type: string;
  event_name: string | null;
  occurred_at: string;
  received_at: string;
  anonymous_id: string | null;
  email: string | null;
  email_hash: string | null;
  phone: string | null;
  revenue: number | null;
  currency: string | null;
  properties: Record<string, unknown>;
  url: string | null;
  referrer: string | null;
  title: string | null;
  screen: string | null;
  hostname: string | null;
  page: string | null;
  referrer_domain: string | null;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  term: string | null;
  content: string | null;
  channel: string;
  channel_rule: string;
  campaign_key: string;
  click_ids: Record<string, string>;
  browser: string | null;
  operating_system: string | null;
  device_type: string | null;
  country: string | null;
  region: string | null;
  city: string | null;
  identity_id: string | null;
  session_id: string | null;
  session: SessionAttributesV1 | null;
}

export interface IngestWebsiteV1 {
  id: string;
  domain: string;
  timezone: string;
  currency: string;
  workspace_id: string;
}

/** Payload of ingest.batch_received and events.classified. */
export interface EventBatchV1 {
  batch_id: string;
  website: IngestWebsiteV1;
  events: ClassifiedEventV1[];
}

export interface ConversionCreatedV1 {
  conversion_id: string;
  website_id: string;
  workspace_id: string;
  identity_id: string | null;
  anonymous_id: string | null;
  email: string | null;
  phone: string | null;
  event_type: string;
  event_name: string | null;
  occurred_at: string;
  revenue: number | null;
  currency: string | null;
  properties: Record<string, unknown>;
  /** Absent means api. */
  origin?: 'tracker' | 'api' | 'import';
  relationship_started_at?: string | null;
}

export interface IdentityMergedV1 {
  workspace_id: string;
  from_identity_id: string;
  into_identity_id: string;
}

/** A touch as attribution reports it for a conversion (null when none was found). */
export interface AttributedTouchV1 {
  occurred_at: string;
  channel: string;
  source: string | null;
  medium: string | null;
  campaign: string | null;
}

export interface ConversionAttributedV1 {
  conversion_id: string;
  website_id: string;
  workspace_id: string;
  first_touch: AttributedTouchV1 | null;
  last_touch: AttributedTouchV1 | null;
  /** Touches in the journey; journeys only gain touches, so a larger count is a later computation. */
  touch_count: number;
}

/** One changed field of a contact, with its value before and after. */
export interface FieldChangeV1<F extends string = string, V = string | number | boolean> {
  field: F;
  old_value: V | null;
  new_value: V | null;
}

/** Fields every contact change message carries. */
export interface ContactChangeBaseV1 {
  conversion_id: string;
  website_id: string;
  workspace_id: string;
  identity_id: string | null;
  changed_at: string;
}

export interface ConversionValueChangedV1 extends ContactChangeBaseV1 {
  conversion_occurred_at: string;
  sales_value: number | null;
  quote_value: number | null;
  currency: string | null;
  changes: FieldChangeV1<'sales_value' | 'quote_value' | 'currency', number | string>[];
}

export interface ConversionUpdatedV1 extends ContactChangeBaseV1 {
  changes: FieldChangeV1<'notes' | 'is_spam', string | boolean>[];
}

export interface StageChangedV1 extends ContactChangeBaseV1 {
  subject: 'contact';
  changes: FieldChangeV1<'status' | 'lead_status_raw' | 'lifecycle_stage_raw', string>[];
}

/** The outcome fields of a contact as they stand after a change. */
export interface ContactOutcomeV1 {
  status: string | null;
  sales_value: number | null;
  quote_value: number | null;
  currency: string | null;
  lead_status_raw: string | null;
  lifecycle_stage_raw: string | null;
  is_spam: boolean;
}

export type ContactWritableField = 'status' | 'sales_value' | 'quote_value' | 'currency' | 'notes' | 'lead_status_raw' | 'lifecycle_stage_raw' | 'is_spam';

export interface OutcomeWritebackRequestedV1 {
  request_id: string;
  conversion_id: string;
  website_id: string;
  workspace_id: string;
  identity_id: string | null;
  email: string | null;
  /** Optional: the contact's phone as entered (hashed by crm-sync before any ad platform sees it). */
  phone?: string | null;
  /** Optional: consent for ad personalisation; 'denied' is never sent to an ad platform. */
  ad_consent?: 'granted' | 'denied' | null;
  click_ids: Record<string, string>;
  event_name: string | null;
  conversion_occurred_at: string;
  /** Optional: a CRM deal milestone sent to the ad platforms for this conversion (changes is then empty). */
  milestone?: WritebackMilestoneV1 | null;
  /** The fields changed; empty only for a request carrying a milestone. */
  changes: FieldChangeV1<ContactWritableField>[];
  current: ContactOutcomeV1;
  requested_by: string;
}

/** A CRM deal milestone carried by a write-back request: the stage outcome, valued at the deal's amount. */
export interface WritebackMilestoneV1 {
  milestone_id: string;
  /** Stage key: deal_won, deal_lost, deal_created. */
  stage: string;
  deal_id: string | null;
  amount: number | null;
  currency: string | null;
}

export type WritebackTarget = 'crm' | 'google_ads' | 'meta_ads' | 'linkedin_ads';
export type WritebackStatus = 'pending' | 'done' | 'failed' | 'dead' | 'skipped';

/** Where one write-back stands at one destination (crm-sync publishes; contacts shows it). */
export interface OutcomeWritebackUpdatedV1 {
  request_id: string;
  conversion_id: string;
  website_id: string;
  workspace_id: string;
  target: WritebackTarget;
  status: WritebackStatus;
  attempts: number;
  detail: string | null;
  external_id: string | null;
  next_attempt_at: string | null;
  requested_at: string;
  updated_at: string;
}

/** One row of an ad platform's daily report. */
export interface AdReportRowV1 {
  date: string;
  level: AdLevelName;
  item_id: string;
  item_name?: string | null;
  campaign_id?: string | null;
  campaign_name?: string | null;
  campaign_type?: string | null;
  ad_set_id?: string | null;
  ad_set_name?: string | null;
  ad_id?: string | null;
  ad_name?: string | null;
  spend: number;
  impressions: number;
  clicks: number;
  platform_conversions?: number;
  platform_revenue?: number;
}

export interface AdsReportImportedV1 {
  website_id: string;
  workspace_id: string;
  platform: string;
  account_id: string;
  account_name?: string | null;
  /** The ad account's currency: amounts are in it. */
  currency: string;
  rows: AdReportRowV1[];
}

export interface StoreOrderLineV1 {
  product_id: string;
  name: string;
  quantity: number;
  unit_price: number;
  unit_cost?: number | null;
}

export interface StoreRefundV1 {
  refund_id: string;
  refunded_at: string;
  amount: number;
  product_id?: string | null;
  quantity?: number | null;
}

export interface StoreOrderV1 {
  order_id: string;
  ordered_at: string;
  customer_email?: string | null;
  currency: string;
  lines: StoreOrderLineV1[];
  refunds: StoreRefundV1[];
}

export interface StoreOrdersImportedV1 {
  website_id: string;
  workspace_id: string;
  platform: string;
  orders: StoreOrderV1[];
}

export interface MilestoneReachedV1 {
  milestone_id: string;
  website_id: string;
  workspace_id: string;
  stage: string;
  occurred_at: string;
  identity_id?: string | null;
  conversion_id?: string | null;
  email?: string | null;
  deal_id?: string | null;
  company_id?: string | null;
  amount?: number | null;
  currency?: string | null;
  /** The stage as the CRM names it (before stageKey); absent for the deal milestones Sightline names. */
  stage_raw?: string | null;
  /** For a deal milestone: the emails of the deal's CRM contacts (absent: the single email). */
  contact_emails?: string[];
  /** What reached the stage: a CRM contact's lifecycle stage, or a deal. */
  subject?: 'contact' | 'deal' | null;
}

export interface CrmMemberV1 {
  email?: string | null;
  conversion_id?: string | null;
  identity_id?: string | null;
}

export interface CrmMembersSyncedV1 {
  website_id: string;
  workspace_id: string;
  subject: 'company' | 'deal';
  id: string;
  name?: string | null;
  members: CrmMemberV1[];
  synced_at: string;
}

export type StageBucket = 'open' | 'won' | 'lost' | 'other';

/** A deal as crm-sync announces it. */
export interface DealCreatedV1 {
  deal_id: string;
  crm_id: string;
  provider: string;
  website_id: string;
  workspace_id: string;
  name: string;
  amount?: number | null;
  currency?: string | null;
  pipeline_id?: string | null;
  stage_id?: string | null;
  stage_name?: string | null;
  bucket: StageBucket;
  company_id?: string | null;
  contact_emails: string[];
  occurred_at: string;
}

export interface DealStageChangedV1 extends DealCreatedV1 {
  old_stage_id?: string | null;
  old_stage_name?: string | null;
  old_bucket: StageBucket;
}

export type FunnelField = 'name' | 'scope' | 'step_order' | 'window_days' | 'filters' | 'steps';

/** funnel.created / funnel.updated / funnel.deleted: a definition written through the API. */
export interface FunnelChangeV1 {
  funnel_id: string;
  website_id: string;
  workspace_id: string;
  name: string;
  fields: FunnelField[];
  changed_at: string;
}

export type AutomationField = 'name' | 'template_id' | 'status' | 'spec';

/** automation.created / automation.updated / automation.deleted. */
export interface AutomationChangeV1 {
  automation_id: string;
  website_id: string;
  workspace_id: string;
  name: string;
  status: 'active' | 'paused';
  fields: AutomationField[];
  changed_at: string;
}

export interface AutomationRanV1 {
  automation_id: string;
  run_id: string;
  website_id: string;
  workspace_id: string;
  name: string;
  trigger: 'event' | 'digest' | 'schedule' | 'threshold' | 'recovery' | 'manual';
  test: boolean;
  status: 'queued' | 'sent' | 'failed' | 'skipped';
  deliveries: number;
  ran_at: string;
}

/** Message type to the payload of its current version. */
export interface MessagePayloads {
  'gateway.workspace_created': WorkspaceCreatedV1;
  'gateway.key_created': KeyCreatedV1;
  'gateway.key_revoked': KeyRevokedV1;
  'ingest.batch_received': EventBatchV1;
  'events.classified': EventBatchV1;
  'conversion.created': ConversionCreatedV1;
  'identity.merged': IdentityMergedV1;
  'conversion.attributed': ConversionAttributedV1;
  'conversion.value_changed': ConversionValueChangedV1;
  'conversion.updated': ConversionUpdatedV1;
  'stage.changed': StageChangedV1;
  'outcome.writeback_requested': OutcomeWritebackRequestedV1;
  'outcome.writeback_updated': OutcomeWritebackUpdatedV1;
  'ads.report_imported': AdsReportImportedV1;
  'store.orders_imported': StoreOrdersImportedV1;
  'milestone.reached': MilestoneReachedV1;
  'crm.members_synced': CrmMembersSyncedV1;
  'deal.created': DealCreatedV1;
  'deal.stage_changed': DealStageChangedV1;
  'funnel.created': FunnelChangeV1;
  'funnel.updated': FunnelChangeV1;
  'funnel.deleted': FunnelChangeV1;
  'automation.created': AutomationChangeV1;
  'automation.updated': AutomationChangeV1;
  'automation.deleted': AutomationChangeV1;
  'automation.ran': AutomationRanV1;
}

export type MessageType = keyof MessagePayloads;
