// Output shapes. Collect and events bodies are exactly what the public ingestion endpoints accept;
// the other records are what a connected ad platform, store or CRM would hand over.
import type { CollectEvent, CollectEventType, CollectPayload } from '@sightline/tracker';

export type { CollectEvent, CollectEventType };
import type { AdPlatform, CrmStage } from './model';

export interface GenerateOptions {
  seed: number;
  /** Length of the window in days (window ends at endDate). */
  days: number;
  /** Distinct people whose first visit falls in the window. */
  visitors: number;
  /** Website domain, e.g. "shop.example.com"; used for URLs, the Origin header and the brand. */
  domain: string;
  /** Exclusive end of the window; default today at 00:00 UTC. */
  endDate?: Date;
  /** ISO 4217 code for revenue, orders and ad spend; default USD. */
  currency?: string;
  /** The website's public id the tracker puts in `site`; default the domain. */
  siteId?: string;
}

export interface ResolvedOptions {
  seed: number;
  days: number;
  visitors: number;
  domain: string;
  currency: string;
  siteId: string;
  /** Window start (inclusive) and end (exclusive), epoch ms. */
  start: number;
  end: number;
}

export type PropValue = string | number | boolean;

/** Body of `POST /collect`: the tracker's own protocol, so generated hits are exactly what browsers send. */
export type CollectBody = CollectPayload;

export interface CollectBatch {
  kind: 'collect';
  /** When the browser sends it (its last event's time), epoch ms. */
  ts: number;
  userAgent: string;
  /** Public IPv4 for X-Forwarded-For. */
  ip: string;
  /** Value of the Origin header. */
  origin: string;
  body: CollectBody;
}

/** One item of `POST /v1/events` (API-SPEC "Inbound event"). */
export interface InboundEvent {
  event_type?: string;
  event_name?: string;
  occurred_at?: string;
  email?: string;
  phone?: string;
  anonymous_id?: string;
  revenue?: number;
  currency?: string;
  properties?: Record<string, PropValue>;
}

export interface EventsBatch {
  kind: 'events';
  /** When a backend would send it (its last event's time), epoch ms. */
  ts: number;
  body: { events: InboundEvent[] };
}

export type IngestBatch = CollectBatch | EventsBatch;

export interface OrderLine {
  sku: string;
  name: string;
  quantity: number;
  unit_price: number;
  /** Null when the store does not know the cost. */
  unit_cost: number | null;
}

export interface Refund {
  refund_id: string;
  refunded_at: string;
  amount: number;
  reason: string;
}

export interface StoreOrder {
  order_id: string;
  ordered_at: string;
  customer_email: string;
  currency: string;
  lines: OrderLine[];
  total: number;
  /** Refunds issued before the window's end. */
  refunds: Refund[];
  /** web: placed on the site (its purchase event carries the same order_id); offline: phone or in person, no journey. */
  channel: 'web' | 'offline';
}

export interface CrmMilestone {
  email: string;
  stage: CrmStage;
  occurred_at: string;
  deal_id?: string;
  /** Deal or subscription value in major units. */
  amount?: number;
  currency?: string;
}

export interface ImportedContact {
  email: string;
  first_name: string;
  last_name: string;
  company: string | null;
  created_at: string;
  /** Created before the tracking window began (an older CRM record). */
  predates_tracking: boolean;
}

export interface AdSpendRow {
  /** YYYY-MM-DD (UTC). */
  date: string;
  platform: AdPlatform;
  account_id: string;
  account: string;
  campaign_id: string;
  campaign: string;
  ad_set_id: string;
  ad_set: string;
  ad_id: string;
  ad: string;
  spend: number;
  impressions: number;
  clicks: number;
  currency: string;
  /** What the platform itself claims, typically more than attribution will credit. */
  platform_conversions: number;
  platform_revenue: number;
}

export type WorkspaceRecord =
  | CollectBatch
  | EventsBatch
  | { kind: 'order'; ts: number; order: StoreOrder }
  | { kind: 'milestone'; ts: number; milestone: CrmMilestone };

export interface WorkspaceSummary {
  people: number;
  anonymousIds: number;
  sessions: number;
  collectBatches: number;
  collectEvents: number;
  collectEventsByType: Record<CollectEventType, number>;
  eventsBatches: number;
  serverEvents: number;
  conversions: { signup: number; demo_request: number; purchase: number };
  serverEventsWithoutIdentity: number;
  orders: number;
  refunds: number;
  milestones: number;
  adSpendRows: number;
  importedContacts: number;
}
