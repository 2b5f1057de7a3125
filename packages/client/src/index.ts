// @sightline/client: the Sightline public API as typed calls. Types are generated from the OpenAPI
// document (src/schema.ts, openapi-typescript); requests go through openapi-fetch with the API key,
// query lists serialized as the document states, and 429/5xx retried after Retry-After.
import createClient, { type Client } from 'openapi-fetch';
import { retryingFetch, type FetchLike, type RetryOptions } from './retry';
import { REPEATED_QUERY_PARAMETERS, type components, type operations, type paths } from './schema';

export { items, pages, type ItemOf, type PagedPath, type PageOf, type PageParams } from './paging';
export { isProblem, problemKind, SightlineApiError, type Problem } from './problem';
export { isRetryableStatus, retryAfterSeconds, retryingFetch, type FetchLike, type RetryOptions } from './retry';
export type { components, operations, paths };

/** Component schemas by name, e.g. `Schemas['InboundEvent']`. */
export type Schemas = components['schemas'];
export type SightlineClient = Client<paths>;

export interface SightlineClientOptions {
  /** Where the API is served, without /v1: `http://localhost:8080`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never in a URL. */
  apiKey: string;
  /** Retry policy for 429 and 5xx; `{ maxAttempts: 1 }` turns it off. */
  retry?: RetryOptions;
  /** The fetch under the retries (default the global one): a proxy agent, a recorder in tests. */
  fetch?: FetchLike;
  /** Extra headers on every request (a User-Agent, say). */
  headers?: Record<string, string>;
}

export function createSightlineClient(options: SightlineClientOptions): SightlineClient {
  const base: FetchLike = options.fetch ?? ((request) => globalThis.fetch(request));
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { ...options.headers, Authorization: `Bearer ${options.apiKey}` },
    fetch: retryingFetch(base, options.retry),
    querySerializer: serializeQuery,
  });
}

/**
 * Query strings as the document describes them: lists are comma-separated (style form, explode
 * false) except the parameters sent once per value (`filter`); null and undefined are left out.
 */
export function serializeQuery(query: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      if (REPEATED_QUERY_PARAMETERS.includes(name)) for (const item of value) search.append(name, String(item));
      else if (value.length > 0) search.append(name, value.map(String).join(','));
      continue;
    }
    search.append(name, String(value));
  }
  return search.toString();
}
