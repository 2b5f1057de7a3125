// The shapes shared by the Pipedrive stand-in's modules: options, the request log entry, the
// stored records, the documented token costs and the error a route throws to answer non-2xx.

export interface FakePipedriveOptions {
  /** The API token the company accepts (x-api-token). */
  apiToken?: string;
  /** The OAuth access token the company accepts (Authorization: Bearer). */
  accessToken?: string;
  /** Burst limit per token: requests per window (Pipedrive: per 2 s, by plan). */
  burst?: { limit: number; windowMs: number };
  /** Daily token budget of the company (Pipedrive: 30,000 × plan multiplier × seats). */
  dailyBudget?: number;
  /** Start the clock frozen at this instant (ISO); otherwise it follows the real time until frozen. */
  now?: string;
}

export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  auth: 'api_token' | 'oauth' | null;
  status: number;
}

export type Status = 'open' | 'won' | 'lost' | 'deleted';

export interface StoredPipeline { id: number; name: string; order_nr: number; is_deleted: boolean; is_deal_probability_enabled: boolean; add: number; update: number }
export interface StoredStage { id: number; name: string; order_nr: number; pipeline_id: number; deal_probability: number; is_deleted: boolean; add: number; update: number }
export interface StoredOrg { id: number; name: string; owner_id: number; is_deleted: boolean; add: number; update: number; custom_fields: Record<string, unknown> }
export interface StoredPerson { id: number; name: string; owner_id: number; org_id: number | null; emails: { value: string; primary: boolean; label: string }[]; is_deleted: boolean; add: number; update: number; custom_fields: Record<string, unknown> }
export interface StoredDeal {
  id: number; title: string; owner_id: number; person_id: number | null; org_id: number | null; pipeline_id: number; stage_id: number;
  value: number; currency: string; status: Status; add: number; update: number; stage_change: number | null;
  won: number | null; lost: number | null; close: number | null; is_archived: boolean; custom_fields: Record<string, unknown>;
}
export interface Change { field_key: string; old_value: string | null; new_value: string | null; at: number; source: string }

export interface DealInput {
  title: string; pipeline_id?: number; stage_id: number; value?: number; currency?: string;
  person_id?: number | null; org_id?: number | null; status?: Status; custom_fields?: Record<string, unknown>;
}
export type DealPatch = Partial<Pick<StoredDeal, 'title' | 'stage_id' | 'pipeline_id' | 'value' | 'currency' | 'status' | 'person_id' | 'org_id'>> & { custom_fields?: Record<string, unknown> };

/** Documented token costs (x-token-cost in Pipedrive's OpenAPI descriptions) of the calls served. */
export const COST = { list: 10, small: 5, single: 1, write: 5, search: 20, changelog: 20 } as const;
export const DAILY_WRITES = 10_000;
export const USER_ID = 7001;

export class HttpError extends Error {
  constructor(readonly status: number, readonly error: string, readonly extra: Record<string, unknown> = {}) {
    super(error);
  }
}
