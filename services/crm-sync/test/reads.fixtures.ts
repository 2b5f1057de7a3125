// The read side in-process: crm-sync's own migrations on PGlite, the read handlers served on an
// in-process bus (so requests and replies pass the RPC schemas), and a stand-in attribution
// service answering attribution.getDealTouches as the test tells it to. Records enter the mirror
// through applyRecords in a transaction, as a sync or an import puts them there.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { createBus, createLogger, createOutbox, createStoreProvider, runSqlMigrations, serviceBus, type Bus, type RpcHandler, type SqlStore } from '@sightline/kit';
import { messageValidator, openApiDocument, type ApiRequest, type ApiResponse, type DealTouchesRequest, type DealTouchesResponse } from '@sightline/proto-schemas';
import type { CrmSyncDeps } from '../src/deps';
import { applyRecords } from '../src/mirror';
import type { CrmRecords, MirrorScope } from '../src/records';
import { readRpcHandlers } from '../src/reads/reads.rpc';

export type Touches = (request: DealTouchesRequest) => Promise<DealTouchesResponse>;

export interface ReadsFixture {
  sql: SqlStore;
  bus: Bus;
  /** What attribution answers; replace it per test. */
  attribution: { answer: Touches; calls: DealTouchesRequest[] };
  apply(scope: MirrorScope, records: CrmRecords): Promise<void>;
  /** Calls a read operation across the bus as the gateway would. */
  read<B = Record<string, unknown>>(operation: 'listDeals' | 'listPipelines' | 'listCompanies', website: TestWebsite, query?: Record<string, unknown>, scopes?: string[]): Promise<ApiResponse<B>>;
  close(): Promise<void>;
}

export interface TestWebsite {
  id: string;
  workspace_id: string;
  domain: string;
}

export function newWebsite(): TestWebsite {
  return { id: randomUUID(), workspace_id: randomUUID(), domain: `crm-${randomUUID().slice(0, 8)}.test` };
}

export function scopeOf(website: TestWebsite, provider = 'hubspot'): MirrorScope {
  return { workspaceId: website.workspace_id, websiteId: website.id, provider, source: provider === 'import' ? 'import' : `crm:${provider}` };
}

/** Attribution's answer when it knows nothing about any deal. */
export const noTouches: Touches = async (request) => ({
  deals: request.deals.map((d) => ({ deal_id: d.deal_id, first_touch: null, last_touch: null, contact_ids: [], basis: d.emails.length === 0 ? 'no_contacts' : 'no_matching_contact' })),
});

export async function openReads(options: { rpcTimeoutMs?: number } = {}): Promise<ReadsFixture> {
  const logger = createLogger({ level: 'silent' });
  const provider = createStoreProvider({ logger });
  const sql = await provider.sql(`crm_sync_${randomUUID().slice(0, 8)}`);
  await runSqlMigrations(sql, join(__dirname, '..', 'migrations', 'postgres'));
  const bus = await createBus({ url: `memory://crm-reads-${randomUUID()}`, validator: messageValidator, logger });
  const outbox = createOutbox(sql, bus, logger);
  const attribution: ReadsFixture['attribution'] = { answer: noTouches, calls: [] };
  await bus.serveRpc({
    service: 'attribution',
    methods: {
      'attribution.getDealTouches': async (raw) => {
        attribution.calls.push(raw as DealTouchesRequest);
        return attribution.answer(raw as DealTouchesRequest);
      },
    },
  });
  const deps: CrmSyncDeps = {
    sql,
    outbox,
    bus: serviceBus(bus, 'crm-sync'),
    logger,
    settings: {
      publicPort: 0, adminPort: 0, adminToken: 'test', metricsToken: 'test', publicUrl: 'http://localhost', rpcTimeoutMs: options.rpcTimeoutMs ?? 2_000,
      cursorSecret: 'reads-test-cursor-secret', dataDir: '', embedded: true,
    },
    options: {},
  };
  await bus.serveRpc({ service: 'crm-sync', methods: readRpcHandlers(deps) as unknown as Record<string, RpcHandler> });
  return {
    sql,
    bus,
    attribution,
    async apply(scope, records) {
      await sql.transaction((tx) => applyRecords(tx, outbox, scope, records));
    },
    async read<B>(operation: string, website: TestWebsite, query: Record<string, unknown> = {}, scopes: string[] = ['deals:read']) {
      const request: ApiRequest = {
        operation,
        request_id: randomUUID(),
        workspace: { id: website.workspace_id, name: 'Acme', timezone: 'UTC', currency: 'EUR', plan: 'pro' },
        website: { id: website.id, domain: website.domain, timezone: 'UTC', currency: 'EUR' },
        key: { id: 'k', scopes },
        params: {},
        query,
        body: null,
        headers: {},
      };
      return bus.rpc<ApiResponse<B>>(`crm-sync.${operation}`, request, { timeoutMs: 10_000 });
    },
    async close() {
      await bus.close();
      await provider.close();
    },
  };
}

const validators = new Map<string, ValidateFunction>();

/** Validation errors of a body against an OpenAPI component ([] when it conforms). */
export function schemaErrors(component: string, body: unknown): unknown[] {
  let validate = validators.get(component);
  if (!validate) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...openApiDocument, $id: 'https://sightline.test/openapi.json' } as object);
    validate = ajv.compile({ $ref: `https://sightline.test/openapi.json#/components/schemas/${component}` });
    validators.set(component, validate);
  }
  return validate(body) ? [] : [...(validate.errors ?? [])];
}
