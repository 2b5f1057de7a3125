// The Pipedrive connector: API v2 (v1 only for a deal's changelog). Credentials are either
// {"api_token": "..."} (sent as the x-api-token header, to https://api.pipedrive.com unless an
// api_domain is given) or {"access_token": "...", "api_domain": "https://<company>.pipedrive.com"}
// (OAuth: Authorization: Bearer, to the api_domain the token exchange returned). Refreshing OAuth
// tokens is the caller's business. It knows nothing of the mirror, the bus or the schedule.
import { createHash } from 'node:crypto';
import type { Connector, Credentials } from '../connector';
import { ProviderError } from '../connector';
import { PipedriveHttp, type PipedriveAuth } from './http';
import { pullPipedrive } from './pull';
import { checkWritebackSettings, pushToPipedrive } from './push';
import { PipedriveRateGate } from './rate-gate';

export const PIPEDRIVE_API_URL = 'https://api.pipedrive.com';

export interface PipedriveConnectorOptions {
  /** API base URL for every connection (tests, proxies); by default api_domain (OAuth) or https://api.pipedrive.com. */
  baseUrl?: string;
  /** Records per list page (1..500); default 500, Pipedrive's maximum. */
  pageSize?: number;
  /** Deadline per request; default 30 s. */
  timeoutMs?: number;
  /** Longest 429 wait sat out inside a call; longer waits pause the pull or fail the push. Default 10 s. */
  maxInlineWaitMs?: number;
}

export function createPipedriveConnector(options: PipedriveConnectorOptions = {}): Connector {
  const pageSize = Math.min(500, Math.max(1, options.pageSize ?? 500));
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxInlineWaitMs = options.maxInlineWaitMs ?? 10_000;
  // One gate per token (Pipedrive's burst limit is per token), shared by every pull and push here.
  const gates = new Map<string, PipedriveRateGate>();
  const gateFor = (token: string): PipedriveRateGate => {
    const key = createHash('sha256').update(token).digest('hex');
    let gate = gates.get(key);
    if (!gate) gates.set(key, (gate = new PipedriveRateGate()));
    return gate;
  };
  const http = (credentials: Credentials, signal: AbortSignal): PipedriveHttp => {
    const problem = checkCredentials(credentials);
    if (problem) throw new ProviderError(problem, null, false);
    const auth: PipedriveAuth = credentials['api_token'] ? { kind: 'api_token', token: credentials['api_token'] } : { kind: 'oauth', token: credentials['access_token']! };
    const baseUrl = options.baseUrl ?? credentials['api_domain'] ?? PIPEDRIVE_API_URL;
    return new PipedriveHttp(baseUrl, auth, gateFor(auth.token), signal, { timeoutMs, maxInlineWaitMs, maxInlineRetries: 3 });
  };

  return {
    provider: 'pipedrive',
    pull: (ctx) => pullPipedrive(http(ctx.credentials, ctx.signal), ctx, { pageSize, maxInlineWaitMs }),
    push: (credentials, request, signal, target, settings) => pushToPipedrive(http(credentials, signal), request, target, settings),
    validateCredentials: checkCredentials,
    validateSettings: checkWritebackSettings,
  };
}

const SHAPE = 'Pipedrive credentials are {"api_token": "<API token>"} or {"access_token": "<OAuth access token>", "api_domain": "https://<company>.pipedrive.com"}';

function checkCredentials(credentials: Credentials): string | null {
  const apiToken = credentials['api_token'];
  const accessToken = credentials['access_token'];
  const domain = credentials['api_domain'];
  const extra = Object.keys(credentials).filter((k) => !['api_token', 'access_token', 'api_domain'].includes(k));
  if (extra.length > 0) return `Pipedrive credentials take api_token or access_token (+ api_domain), not ${extra.join(', ')}`;
  const present = (v: unknown): boolean => typeof v === 'string' && v.trim() !== '';
  if (present(apiToken) === present(accessToken)) return SHAPE;
  if (present(accessToken) && !present(domain)) return 'Pipedrive OAuth credentials need the api_domain returned with the access token';
  if (domain !== undefined) {
    let url: URL;
    try {
      url = new URL(domain);
    } catch {
      return 'Pipedrive api_domain must be a URL such as https://<company>.pipedrive.com';
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'Pipedrive api_domain must be an http(s) URL';
  }
  return null;
}
