// One org's REST API as JSON calls: the session from auth.ts (logged in again once when Salesforce
// answers INVALID_SESSION_ID), the org's API usage read from every answer's Sforce-Limit-Info
// header, and every failure turned into a ProviderError. REQUEST_LIMIT_EXCEEDED (the org's daily
// allocation is used up) is its own error: a pull pauses on it, a push waits for the next day.
import { retryAfterOf } from '../../writeback/backoff';
import { ProviderError, type Credentials } from '../connector';
import { parseJsonOrNull } from '../json-body';
import { abortReason } from '../sleep';
import type { SalesforceAuth } from './auth';

/** Salesforce's documented error body: a list of {message, errorCode, fields?}. */
interface SalesforceErrorItem {
  message?: string;
  errorCode?: string;
  fields?: string[];
}

export interface ApiUsage {
  used: number;
  limit: number;
}

/** The org's daily API allocation is used up; retry after `retryAfterMs`. */
export class AllocationExhaustedError extends ProviderError {
  override name = 'AllocationExhaustedError';
}

/** How long a push waits after REQUEST_LIMIT_EXCEEDED: the allocation is a rolling 24 hours. */
const EXHAUSTED_WAIT_MS = 60 * 60_000;

/** "api-usage=18/15000" → {used: 18, limit: 15000}. */
export function parseLimitInfo(header: string | null): ApiUsage | null {
  const match = /api-usage=(\d+)\/(\d+)/.exec(header ?? '');
  return match ? { used: Number(match[1]), limit: Number(match[2]) } : null;
}

export class SalesforceHttp {
  /** The usage the last answer reported. */
  usage: ApiUsage | null = null;
  /** Calls made through this object (a sync's API cost). */
  calls = 0;

  constructor(
    private readonly auth: SalesforceAuth,
    private readonly credentials: Credentials,
    private readonly apiVersion: string,
    private readonly signal: AbortSignal,
    private readonly timeoutMs: number,
  ) {}

  /** A path under /services/data/<version>/ (e.g. "query?q=..."), or an absolute /services/... path (nextRecordsUrl). */
  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path, undefined);
  }

  patch<T>(path: string, body: unknown): Promise<T | null> {
    return this.request<T | null>('PATCH', path, body);
  }

  /** SOQL through the query resource; the answer's records and where the next batch is. */
  query<R>(soql: string): Promise<{ totalSize: number; done: boolean; nextRecordsUrl?: string; records: R[] }> {
    return this.get(`query?q=${encodeURIComponent(soql)}`);
  }

  /** SOQL through queryAll: deleted records (in the recycle bin) are included, with IsDeleted true. */
  queryAll<R>(soql: string): Promise<{ totalSize: number; done: boolean; nextRecordsUrl?: string; records: R[] }> {
    return this.get(`queryAll?q=${encodeURIComponent(soql)}`);
  }

  private async request<T>(method: string, path: string, body: unknown, loggedInAgain = false): Promise<T> {
    const session = await this.auth.session(this.credentials, this.signal);
    const url = path.startsWith('/') ? `${session.instanceUrl}${path}` : `${session.instanceUrl}/services/data/${this.apiVersion}/${path}`;
    let response: Response;
    try {
      this.calls += 1;
      response = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${session.accessToken}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.any([this.signal, AbortSignal.timeout(this.timeoutMs)]),
      });
    } catch (error) {
      if (this.signal.aborted) throw abortReason(this.signal);
      const reason = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : error instanceof Error ? error.message : String(error);
      throw new ProviderError(`Salesforce ${method} ${shortPath(path)}: ${reason}`, null, true);
    }
    this.usage = parseLimitInfo(response.headers.get('sforce-limit-info')) ?? this.usage;
    const text = await response.text().catch((error: unknown) => {
      if (this.signal.aborted) throw abortReason(this.signal);
      throw new ProviderError(`Salesforce response cut off: ${error instanceof Error ? error.message : String(error)}`, response.status, true);
    });
    if (response.ok) return (text === '' ? null : JSON.parse(text)) as T;
    const items = (parseJsonOrNull(text) as SalesforceErrorItem[] | null) ?? [];
    const first = Array.isArray(items) ? items[0] : undefined;
    if (response.status === 401 && !loggedInAgain) {
      // An expired session: log in again once (a revoked grant then fails at the token endpoint).
      this.auth.forget(this.credentials);
      return this.request<T>(method, path, body, true);
    }
    throw errorOf(method, path, response, first, text);
  }
}

function errorOf(method: string, path: string, response: Response, item: SalesforceErrorItem | undefined, text: string): ProviderError {
  const status = response.status;
  const code = item?.errorCode ?? 'ERROR';
  const fields = item?.fields && item.fields.length > 0 ? ` (fields: ${item.fields.join(', ')})` : '';
  const message = `Salesforce ${method} ${shortPath(path)} answered ${status} ${code}: ${item?.message ?? text.slice(0, 200)}${fields}`;
  if (code === 'REQUEST_LIMIT_EXCEEDED') return new AllocationExhaustedError(message, status, true, EXHAUSTED_WAIT_MS);
  const retryable = status === 429 || status >= 500;
  return new ProviderError(message, status, retryable, retryable ? retryAfterOf(response.headers) : null);
}

/** A path for messages: never the whole SOQL text (long, and it can quote values). */
function shortPath(path: string): string {
  return path.split('?')[0] ?? path;
}
