// Helpers shared by the company and deal journey suites: a members sync, a journey call with the
// key's scopes of the test's choosing, and the OpenAPI JourneyResponse validator.
import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { openApiDocument, type ApiRequest, type ApiResponse, type CrmMembersSyncedV1 } from '@sightline/proto-schemas';
import type { AttributionFixture, FixtureWebsite } from './fixture';
import type { CrmJourneyBody } from '../src/crm-journeys/crm-journeys.rpc';

export const DAY_MS = 86_400_000;

/** An instant `days` (and `minutes`) before now, ISO. */
export const daysAgo = (days: number, minutes = 0): string => new Date(Date.now() - days * DAY_MS + minutes * 60_000).toISOString();

export interface SyncInput {
  subject?: CrmMembersSyncedV1['subject'];
  id: string;
  name?: string | null;
  members: CrmMembersSyncedV1['members'];
  syncedAt?: string;
}

export function membersSynced(website: FixtureWebsite, o: SyncInput): CrmMembersSyncedV1 {
  return {
    website_id: website.id,
    workspace_id: website.workspace_id,
    subject: o.subject ?? 'company',
    id: o.id,
    name: o.name === undefined ? 'Example GmbH' : o.name,
    members: o.members,
    synced_at: o.syncedAt ?? new Date().toISOString(),
  };
}

export async function sync(fx: AttributionFixture, website: FixtureWebsite, o: SyncInput): Promise<void> {
  await fx.deliver('crm.members_synced', membersSynced(website, o), website);
}

export interface JourneyCall {
  subject?: 'company' | 'deal';
  id: string;
  query?: Record<string, unknown>;
  scopes?: string[];
}

/** Calls the journey RPC as the gateway would, with the key scopes given (default: with pii:read). */
export async function journey(fx: AttributionFixture, website: FixtureWebsite, call: JourneyCall): Promise<ApiResponse<CrmJourneyBody>> {
  const operation = call.subject === 'deal' ? 'getDealJourney' : 'getCompanyJourney';
  const handler = fx.handlers.rpc[`attribution.${operation}`];
  if (!handler) throw new Error(`attribution does not answer ${operation}`);
  const request: ApiRequest = {
    operation,
    request_id: randomUUID(),
    workspace: { id: website.workspace_id, name: 'Acme', timezone: website.timezone, currency: website.currency, plan: 'pro' },
    website: { id: website.id, domain: website.domain, timezone: website.timezone, currency: website.currency },
    key: { id: 'k', scopes: call.scopes ?? ['deals:read', 'pii:read'] },
    params: { id: call.id },
    query: call.query ?? {},
    body: null,
    headers: {},
  };
  return (await handler(request)) as ApiResponse<CrmJourneyBody>;
}

let validator: ValidateFunction | null = null;

/** Validation errors of a body against the OpenAPI JourneyResponse ([] when it conforms). */
export function journeyResponseErrors(body: unknown): unknown[] {
  if (!validator) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...openApiDocument, $id: 'https://sightline.test/openapi.json' } as object);
    validator = ajv.compile({ $ref: 'https://sightline.test/openapi.json#/components/schemas/JourneyResponse' });
  }
  return validator(body) ? [] : [...(validator.errors ?? [])];
}
