// The RPC catalog: every method the gateway calls on an owning service. All public-API methods
// share one request and one response schema; the method name is `<service>.<operationId>`.
import apiRequestV1 from './schemas/rpc/api-request.v1.schema.json';
import apiResponseV1 from './schemas/rpc/api-response.v1.schema.json';
import collectRequestV1 from './schemas/rpc/collect-request.v1.schema.json';
import collectResponseV1 from './schemas/rpc/collect-response.v1.schema.json';
import type { JsonSchema } from './messages';
import { listOperations } from './openapi/index';
import type { ServiceName } from './openapi/types';
import type { PlanName } from './registry/plans';

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
