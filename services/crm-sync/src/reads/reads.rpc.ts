// GET /deals, GET /pipelines and GET /companies (the gateway routes the legacy /accounts to the
// same method, so both paths answer identically). The gateway has authenticated the key
// (deals:read), resolved the website and validated, coerced and clamped the query. A website with
// no CRM data at all is 409 crm-not-connected, never an empty list.
import { companyDomain, CursorCodec, hasPii, metaHead, ProblemError, type RpcMap } from '@sightline/kit';
import { LIMITS, STAGE_BUCKETS, type ApiRequest, type ApiResponse, type StageBucket } from '@sightline/proto-schemas';
import type { CrmSyncDeps } from '../deps';
import { ATTRIBUTION_UNAVAILABLE_NOTE, attributeDeals, attributionTimeoutMs } from './deal-attribution';
import {
  COMPANY_DEFINITIONS,
  DEAL_DEFINITIONS,
  DEALS_PII_NOTE,
  PIPELINE_DEFINITIONS,
  presentCompany,
  presentDeal,
  presentPipeline,
  stageVocabulary,
} from './reads.present';
import { ReadsRepo, type CompanyFilters, type DealFilters, type Position } from './reads.repo';

// Type aliases (not interfaces) so they fit ApiRequest's Record<string, unknown> query.
type DealsQuery = { stage_bucket?: string; updated_since?: string; cursor?: string; limit?: number | string; total_count?: boolean | string };
type CompaniesQuery = { domain?: string; cursor?: string; limit?: number | string; total_count?: boolean | string };
type Website = NonNullable<ApiRequest['website']>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const flag = (value: boolean | string | undefined): boolean => value === true || value === 'true';

function limitOf(raw: number | string | undefined, limits: { default: number; maximum: number }): number {
  const n = Math.trunc(Number(raw ?? limits.default));
  return Number.isFinite(n) && n >= 1 ? Math.min(n, limits.maximum) : limits.default;
}

function requireWebsite(request: ApiRequest): Website {
  if (!request.website) throw new Error(`crm-sync.${request.operation} needs a resolved website`);
  return request.website;
}

function notConnected(website: Website): ProblemError {
  return new ProblemError('crm-not-connected', {
    detail: `No CRM is connected to ${website.domain}, and no deals, companies or contacts were imported for it.`,
    remediation: 'Connect a CRM in the app, or import deals with `sightline import deals`, then retry.',
  });
}

function invalid(detail: string, remediation: string, allowed?: readonly string[]): ProblemError {
  return new ProblemError('invalid-request', { detail, remediation, ...(allowed ? { allowed } : {}) });
}

/** Decodes a cursor bound to `scope` into a keyset position; anything else is invalid-request. */
function positionOf(cursors: CursorCodec, scope: string, cursor: string | undefined): Position | null {
  if (cursor === undefined) return null;
  const position = cursors.decode<unknown>(scope, cursor);
  const valid = Array.isArray(position) && position.length === 2 && typeof position[0] === 'string' && !Number.isNaN(Date.parse(position[0]))
    && typeof position[1] === 'string' && UUID.test(position[1]);
  if (!valid) throw invalid('The cursor does not hold a position.', 'Restart paging without a cursor, and pass cursors back exactly as received.');
  return position as Position;
}

function metaOf(website: Website, extra: Record<string, unknown>) {
  return { ...metaHead(website), ...extra };
}


export function readRpcHandlers(deps: CrmSyncDeps): RpcMap<'crm-sync'> {
  const repo = new ReadsRepo(deps.sql);
  const cursors = new CursorCodec(deps.settings.cursorSecret);
  const timeoutMs = attributionTimeoutMs(deps.settings.rpcTimeoutMs);

  const connectedWebsite = async (request: ApiRequest): Promise<Website> => {
    const website = requireWebsite(request);
    if (!(await repo.isConnected(website.id))) throw notConnected(website);
    return website;
  };

  return {
    'crm-sync.listDeals': async (request: ApiRequest<DealsQuery>): Promise<ApiResponse> => {
      const query = request.query;
      const website = await connectedWebsite(request);
      const bucket = query.stage_bucket;
      if (bucket !== undefined && !(STAGE_BUCKETS as readonly string[]).includes(bucket)) {
        throw invalid(`Unknown stage_bucket "${bucket}".`, 'Use one of the allowed buckets.', STAGE_BUCKETS);
      }
      const since = query.updated_since === undefined ? undefined : new Date(query.updated_since);
      if (since !== undefined && Number.isNaN(since.getTime())) {
        throw invalid(`updated_since "${query.updated_since}" is not a date-time.`, 'Send an ISO 8601 date-time, e.g. 2025-03-01T00:00:00Z.');
      }
      const filters: DealFilters = { websiteId: website.id, bucket: bucket as StageBucket | undefined, updatedSince: since };
      // The cursor is bound to everything that selects rows, so it cannot page another query.
      const scope = JSON.stringify(['deals', website.id, filters.bucket ?? null, since?.toISOString() ?? null]);
      const position = positionOf(cursors, scope, query.cursor);
      const limit = limitOf(query.limit, LIMITS.deals);

      const rows = await repo.deals(filters, position, limit + 1);
      const hasMore = rows.length > limit;
      const page = rows.slice(0, limit);
      const totalCount = flag(query.total_count) ? await repo.countDeals(filters) : null;
      const attribution = await attributeDeals({ ...deps, timeoutMs }, { workspaceId: request.workspace.id, websiteId: website.id }, page);
      const piiIncluded = hasPii(request.key.scopes);
      const last = page.at(-1);
      const body: Record<string, unknown> = {
        data: page.map((row) => presentDeal(website.id, row, attribution.byDeal.get(row.id) ?? null, piiIncluded)),
        meta: metaOf(website, {
          pii_included: piiIncluded,
          ...(piiIncluded ? {} : { pii_note: DEALS_PII_NOTE }),
          row_count: page.length,
          truncated: hasMore,
          has_more: hasMore,
          total_count: totalCount,
          attribution_available: attribution.available,
          ...(attribution.available ? {} : { note: ATTRIBUTION_UNAVAILABLE_NOTE }),
          definitions: DEAL_DEFINITIONS,
        }),
      };
      if (hasMore && last) body['next_cursor'] = cursors.encode(scope, [last.sort_at, last.id] satisfies Position);
      return { status: 200, body };
    },

    'crm-sync.listPipelines': async (request: ApiRequest): Promise<ApiResponse> => {
      const website = await connectedWebsite(request);
      const [pipelines, lifecycle] = await Promise.all([repo.pipelines(website.id), repo.lifecycleStages(website.id)]);
      return {
        status: 200,
        body: {
          data: pipelines.map(presentPipeline),
          meta: metaOf(website, { row_count: pipelines.length, truncated: false, stage_vocabulary: stageVocabulary(lifecycle), definitions: PIPELINE_DEFINITIONS }),
        },
      };
    },

    'crm-sync.listCompanies': async (request: ApiRequest<CompaniesQuery>): Promise<ApiResponse> => {
      const query = request.query;
      const website = await connectedWebsite(request);
      const domain = query.domain === undefined ? undefined : companyDomain(query.domain);
      if (domain === '') throw invalid('domain is empty.', 'Send a domain such as example.com, or leave the parameter out.');
      const filters: CompanyFilters = { websiteId: website.id, domain };
      const scope = JSON.stringify(['companies', website.id, domain ?? null]);
      const position = positionOf(cursors, scope, query.cursor);
      const limit = limitOf(query.limit, LIMITS.companies);

      const rows = await repo.companies(filters, position, limit + 1);
      const hasMore = rows.length > limit;
      const page = rows.slice(0, limit);
      const totalCount = flag(query.total_count) ? await repo.countCompanies(filters) : null;
      const last = page.at(-1);
      const body: Record<string, unknown> = {
        data: page.map(presentCompany),
        meta: metaOf(website, { row_count: page.length, truncated: hasMore, has_more: hasMore, total_count: totalCount, definitions: COMPANY_DEFINITIONS }),
      };
      if (hasMore && last) body['next_cursor'] = cursors.encode(scope, [last.sort_at, last.id] satisfies Position);
      return { status: 200, body };
    },
  };
}
