// One Pipedrive company's API as JSON calls. Auth is a header, never a URL parameter (so a token
// never lands in a log line): `x-api-token: <api token>` for an API token, `Authorization: Bearer
// <access token>` for OAuth. Short 429 waits (the burst window) are sat out here and the call
// retried; a long one (the daily budget) becomes a retryable ProviderError carrying the wait. Every
// other failure becomes a ProviderError: retryable for 5xx, timeouts and network errors.
import { ProviderError } from '../connector';
import { parseJsonOrNull } from '../json-body';
import { abortReason } from '../sleep';
import type { PipedriveRateGate } from './rate-gate';

export type Query = Record<string, string | number | boolean | undefined>;

export type PipedriveAuth = { kind: 'api_token'; token: string } | { kind: 'oauth'; token: string };

/** Pipedrive's documented error body (v2: error + error_info; v1's 401 also errorCode). */
interface PipedriveErrorBody {
  success?: boolean;
  error?: string;
  error_info?: string;
  errorCode?: number;
}

/** A successful list answer: `data` plus `additional_data.next_cursor` (null or absent at the end). */
export interface PipedriveList<T> {
  success: boolean;
  data: T[] | null;
  additional_data?: { next_cursor?: string | null } | null;
}

export interface PipedriveHttpOptions {
  timeoutMs: number;
  /** Longest 429 wait sat out in place; longer ones are thrown (default 10 s). */
  maxInlineWaitMs: number;
  /** How many 429s in a row one call sits out before giving up. */
  maxInlineRetries: number;
}

export class PipedriveHttp {
  constructor(
    private readonly baseUrl: string,
    private readonly auth: PipedriveAuth,
    private readonly gate: PipedriveRateGate,
    private readonly signal: AbortSignal,
    private readonly options: PipedriveHttpOptions,
  ) {}

  get<T>(path: string, query: Query = {}): Promise<T> {
    return this.request<T>('GET', path, query, undefined);
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, {}, body);
  }

  private async request<T>(method: string, path: string, query: Query, body: unknown): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      await this.gate.admit(this.signal, this.options.maxInlineWaitMs);
      const { response, text } = await this.send(method, path, query, body);
      const wait = this.gate.observe(response.headers, response.status, response.status === 429 ? errorOf(method, path, 429, text, null).message : undefined);
      if (response.ok) return (text ? JSON.parse(text) : {}) as T;
      // A burst 429 clears within seconds: the gate now holds the next try back until then.
      if (response.status === 429 && wait !== null && wait <= this.options.maxInlineWaitMs && attempt < this.options.maxInlineRetries) continue;
      throw errorOf(method, path, response.status, text, wait);
    }
  }

  private async send(method: string, path: string, query: Query, body: unknown): Promise<{ response: Response; text: string }> {
    const url = new URL(path, `${this.baseUrl.replace(/\/$/, '')}/`);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    const authHeader: Record<string, string> = this.auth.kind === 'api_token' ? { 'x-api-token': this.auth.token } : { authorization: `Bearer ${this.auth.token}` };
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: { ...authHeader, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.any([this.signal, AbortSignal.timeout(this.options.timeoutMs)]),
      });
    } catch (error) {
      if (this.signal.aborted) throw abortReason(this.signal);
      const reason = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs} ms` : describeNetworkError(error);
      throw new ProviderError(`Pipedrive ${method} ${path}: ${reason}`, null, true);
    }
    try {
      return { response, text: await response.text() };
    } catch (error) {
      if (this.signal.aborted) throw abortReason(this.signal);
      throw new ProviderError(`Pipedrive response cut off: ${describeNetworkError(error)}`, response.status, true);
    }
  }
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

const HINTS: Record<number, string> = {
  401: ' (check the API token or OAuth access token; a revoked or expired token answers this)',
  403: ' (the token lacks a permission or OAuth scope this call needs)',
  404: ' (no such record, or it was deleted)',
};

export function errorOf(method: string, path: string, status: number, text: string, wait: number | null): ProviderError {
  const parsed = parseJsonOrNull(text);
  const body: PipedriveErrorBody = typeof parsed === 'object' && parsed !== null ? (parsed as PipedriveErrorBody) : {};
  const info = body.error_info ? ` (${body.error_info})` : '';
  const message = `Pipedrive ${method} ${path} answered ${status}: ${body.error ?? 'no error message'}${info}${HINTS[status] ?? ''}`;
  const retryable = status === 429 || status >= 500;
  return new ProviderError(message, status, retryable, retryable ? wait : null);
}
