// The RPC catalog: every method the gateway calls on an owning service. All public-API methods
// share one request and one response schema; the method name is `<service>.<operationId>`.
import apiRequestV1 from './schemas/rpc/api-request.v1.schema.json';
import apiResponseV1 from './schemas/rpc/api-response.v1.schema.json';
import analyticsSlotReleaseRequestV1 from './schemas/rpc/analytics-slot-release-request.v1.schema.json';
import analyticsSlotReleaseResponseV1 from './schemas/rpc/analytics-slot-release-response.v1.schema.json';
import analyticsSlotRequestV1 from './schemas/rpc/analytics-slot-request.v1.schema.json';
import analyticsSlotResponseV1 from './schemas/rpc/analytics-slot-response.v1.schema.json';
import collectRequestV1 from './schemas/rpc/collect-request.v1.schema.json';
import collectResponseV1 from './schemas/rpc/collect-response.v1.schema.json';
import adClicksRequestV1 from './schemas/rpc/ad-clicks-request.v1.schema.json';
import adClicksResponseV1 from './schemas/rpc/ad-clicks-response.v1.schema.json';
import dealTouchesRequestV1 from './schemas/rpc/deal-touches-request.v1.schema.json';
import dealTouchesResponseV1 from './schemas/rpc/deal-touches-response.v1.schema.json';
import type { IngestWebsiteV1 } from './message-types';
import type { JsonSchema } from './messages';
import { listOperations } from './openapi/index';
import type { ServiceName } from './openapi/types';
import type { PlanName } from './registry/plans';
import type { DEAL_ATTRIBUTION_BASES } from './registry/vocabulary';

/** Listed by hand so a service's handler map can be typed; a test checks it equals the document. */
export const RPC_METHODS = [
  'attribution.getMetrics',
  'attribution.getAdsPerformance',
  'attribution.getPaths',
  'attribution.getProducts',
  'attribution.getAttributionCoverage',
  'attribution.getContactJourney',
  'attribution.getCompanyJourney',
  'attribution.getDealJourney',
  'contacts.listContacts',
  'contacts.getContact',
  'contacts.patchContact',
  'ingest.postEvents',
  'crm-sync.listDeals',
  'crm-sync.listPipelines',
  'crm-sync.listCompanies',
  'changefeed.listChanges',
  'funnels.listFunnels',
  'funnels.createFunnel',
  'funnels.getFunnel',
  'funnels.patchFunnel',
  'funnels.deleteFunnel',
  'funnels.getFunnelSteps',
  'funnels.getFunnelBreakdown',
  'automations.listAutomations',
  'automations.createAutomation',
  'automations.getAutomation',
  'automations.patchAutomation',
  'automations.deleteAutomation',
  'automations.runAutomation',
  'ingest.collect',
  'attribution.getDealTouches',
  'attribution.getAdClicks',
  'gateway.acquireAnalyticsSlot',
  'gateway.releaseAnalyticsSlot',
] as const;

export type RpcMethod = (typeof RPC_METHODS)[number];

/** The methods one service must serve, e.g. `RpcMethodsOf<'funnels'>`. */
export type RpcMethodsOf<S extends string> = Extract<RpcMethod, `${S}.${string}`>;

export interface RpcCatalogEntry {
  method: string;
  service: ServiceName;
  /** The public operation it answers; null for internal methods (their request is not an api-request). */
  operationId: string | null;
  request: JsonSchema;
  response: JsonSchema;
}

export const apiRequestSchema: JsonSchema = apiRequestV1;
export const apiResponseSchema: JsonSchema = apiResponseV1;

function buildCatalog(): Record<string, RpcCatalogEntry> {
  const out: Record<string, RpcCatalogEntry> = {};
  for (const { operation } of listOperations()) {
    const method = operation['x-sightline-rpc'];
    // Legacy aliases reuse their canonical method; the gateway sends the canonical operationId.
    if (method === null || operation.deprecated) continue;
    out[method] = {
      method,
      service: operation['x-sightline-service'],
      operationId: operation.operationId,
      request: apiRequestSchema,
      response: apiResponseSchema,
    };
  }
  // Internal methods: called by one service on another, not through a public operation.
  out['ingest.collect'] = { method: 'ingest.collect', service: 'ingest', operationId: null, request: collectRequestV1, response: collectResponseV1 };
  out['attribution.getDealTouches'] = {
    method: 'attribution.getDealTouches', service: 'attribution', operationId: null, request: dealTouchesRequestV1, response: dealTouchesResponseV1,
  };
  out['attribution.getAdClicks'] = {
    method: 'attribution.getAdClicks', service: 'attribution', operationId: null, request: adClicksRequestV1, response: adClicksResponseV1,
  };
  out['gateway.acquireAnalyticsSlot'] = {
    method: 'gateway.acquireAnalyticsSlot', service: 'gateway', operationId: null, request: analyticsSlotRequestV1, response: analyticsSlotResponseV1,
  };
  out['gateway.releaseAnalyticsSlot'] = {
    method: 'gateway.releaseAnalyticsSlot', service: 'gateway', operationId: null, request: analyticsSlotReleaseRequestV1, response: analyticsSlotReleaseResponseV1,
  };
  return out;
}

export const rpcCatalog: Readonly<Record<string, RpcCatalogEntry>> = buildCatalog();

export function isRpcMethod(value: string): value is RpcMethod {
  return Object.prototype.hasOwnProperty.call(rpcCatalog, value);
}

/** Shape of api-request.v1 (what an owning service's handler receives). */
export interface ApiRequest<Q = Record<string, unknown>, B = unknown> {
  operation: string;
  request_id: string;
  workspace: { id: string; name: string; timezone: string; currency: string; plan: PlanName };
  website: { id: string; domain: string; timezone: string; currency: string } | null;
  key: { id: string; scopes: string[] };
  params: Record<string, string>;
  query: Q;
  body: B;
  headers: { idempotency_key?: string };
}

/** Shape of api-response.v1 (what it replies). */
export interface ApiResponse<B = unknown> {
  status: number;
  body: B;
  headers?: Record<string, string>;
}

/** attribution.getDealTouches request: the deals of one page of GET /deals (crm-sync → attribution). */
export interface DealTouchesRequest {
  workspace_id: string;
  website_id: string;
  deals: { deal_id: string; emails: string[]; created_at: string }[];
}

/** One attributed touch (a session), as the OpenAPI `Touch` component shows it. */
export interface DealTouch {
  occurred_at: string;
  channel: string;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  referrer_domain: string | null;
  landing_page: string | null;
}

/** What a deal's touches were computed from, or why it has none. */
export type DealTouchBasis = (typeof DEAL_ATTRIBUTION_BASES)[number];

export interface DealTouchesResponse {
  deals: { deal_id: string; first_touch: DealTouch | null; last_touch: DealTouch | null; contact_ids: string[]; basis: DealTouchBasis }[];
}

/**
 * attribution.getAdClicks request: the ad click ids one person carried on their visits in
 * [since, until] (crm-sync → attribution, before it plans an ad-platform upload).
 */
export interface AdClicksRequest {
  workspace_id: string;
  website_id: string;
  identity_id: string;
  since: string;
  until: string;
}

/** One click id name's newest value in the window, with the time of the event that carried it. */
export interface AdClick {
  name: string;
  value: string;
  occurred_at: string;
}

export interface AdClicksResponse {
  /** Newest first; at most 50. */
  clicks: AdClick[];
}

/** ingest.collect request: tracker hits the gateway's public /collect forwards (gateway → ingest). */
export interface CollectRequest {
  website: IngestWebsiteV1;
  ip: string | null;
  user_agent: string | null;
  /** The parsed JSON body the tracker sent; ingest validates it. */
  body: unknown;
}

export interface CollectResponse {
  accepted: number;
  rejected: number;
}

/**
 * gateway.acquireAnalyticsSlot: background work (automations gathering figures) takes one of a
 * workspace's analytics slots, the cap the public analytics reads share, for lease_ms at most.
 */
export interface AnalyticsSlotRequest {
  workspace_id: string;
  lease_ms: number;
}

export interface AnalyticsSlotResponse {
  /** null: every slot background work may take is busy now. */
  lease_id: string | null;
  background_slots: number;
}

/** gateway.releaseAnalyticsSlot: gives a granted slot back (any gateway replica can). */
export interface AnalyticsSlotRelease {
  workspace_id: string;
  lease_id: string;
}

/** Request and response types of the internal methods; every public method takes an ApiRequest and answers an ApiResponse. */
interface InternalRpcTypes {
  'ingest.collect': { request: CollectRequest; response: CollectResponse };
  'attribution.getDealTouches': { request: DealTouchesRequest; response: DealTouchesResponse };
  'attribution.getAdClicks': { request: AdClicksRequest; response: AdClicksResponse };
  'gateway.acquireAnalyticsSlot': { request: AnalyticsSlotRequest; response: AnalyticsSlotResponse };
  'gateway.releaseAnalyticsSlot': { request: AnalyticsSlotRelease; response: { released: boolean } };
}

export type RpcRequestOf<M extends RpcMethod> = M extends keyof InternalRpcTypes ? InternalRpcTypes[M]['request'] : ApiRequest;
export type RpcResponseOf<M extends RpcMethod> = M extends keyof InternalRpcTypes ? InternalRpcTypes[M]['response'] : ApiResponse;

/** The services that serve at least one RPC method. */
export type RpcServingService = RpcMethod extends `${infer S}.${string}` ? S : never;
