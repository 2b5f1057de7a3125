// One HubSpot account's API as JSON calls: Bearer private-app token, limits paced by the account's
// RateGate, and every failure turned into a ProviderError (retryable for 429, 5xx, timeouts and
// network errors). The token goes in the Authorization header only: never in a URL, a message
// or an error.
import { ProviderError } from '../connector';
import { abortReason } from '../sleep';
import { retryAfterOf } from '../../writeback/backoff';
import type { RateGate } from './rate-gate';

export type Query = Record<string, string | number | undefined>;

/** HubSpot's documented error body (and, for 429s, errorType/policyName). */
interface HubspotErrorBody {
  status?: string;
  message?: string;
  correlationId?: string;
  category?: string;
  policyName?: string;
}

export class HubspotHttp {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly gate: RateGate,
    private readonly signal: AbortSignal,
    private readonly timeoutMs: number,
  ) {}

  get<T>(path: string, query: Query = {}): Promise<T> {
    return this.request<T>('GET', path, query, undefined, 'standard');
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, {}, body, path.endsWith('/search') ? 'search' : 'standard');
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, {}, body, 'standard');
  }

  private async request<T>(method: string, path: string, query: Query, body: unknown, kind: 'search' | 'standard'): Promise<T> {
    await this.gate.admit(kind, this.signal);
    const url = new URL(path, `${this.baseUrl.replace(/\/$/, '')}/`);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.any([this.signal, AbortSignal.timeout(this.timeoutMs)]),
      });
    } catch (error) {
      if (this.signal.aborted) throw abortReason(this.signal);
      const reason = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : describeNetworkError(error);
      throw new ProviderError(`HubSpot ${method} ${path}: ${reason}`, null, true);
    }
    const wait = retryAfterOf(response.headers);
    this.gate.observe(response.headers, response.status, wait);
    const text = await readText(response, this.signal);
    if (response.ok) return (text ? JSON.parse(text) : {}) as T;
    throw errorOf(method, path, response.status, text, wait);
  }
}

async function readText(response: Response, signal: AbortSignal): Promise<string> {
  try {
    return await response.text();
  } catch (error) {
    if (signal.aborted) throw abortReason(signal);
    throw new ProviderError(`HubSpot response cut off: ${describeNetworkError(error)}`, response.status, true);
  }
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

function errorOf(method: string, path: string, status: number, text: string, retryAfter: number | null): ProviderError {
  let body: HubspotErrorBody = {};
  try {
    body = JSON.parse(text) as HubspotErrorBody;
  } catch {
    // not JSON (a proxy's page): the status says enough
  }
  const category = body.category ?? body.policyName ?? 'ERROR';
  const hint = status === 401 ? ' (check the private app access token)' : status === 403 ? ' (the private app lacks a scope this call needs)' : '';
  const correlation = body.correlationId ? ` [correlationId ${body.correlationId}]` : '';
  const message = `HubSpot ${method} ${path} answered ${status} ${category}: ${body.message ?? 'no message'}${hint}${correlation}`;
  const retryable = status === 429 || status >= 500;
  return new ProviderError(message, status, retryable, retryable ? retryAfter : null);
}
