// The HubSpot connector: CRM v3 API with a private-app access token. Credentials are
// {"access_token": "pat-..."}; the base URL is https://api.hubapi.com unless configured (tests and
// proxies). It knows nothing of the mirror, the bus or the schedule.
import { createHash } from 'node:crypto';
import type { Connector, Credentials } from '../connector';
import { ProviderError } from '../connector';
import { HubspotHttp } from './http';
import { pullHubspot } from './pull';
import { pushToHubspot } from './push';
import { RateGate } from './rate-gate';

export const HUBSPOT_API_URL = 'https://api.hubapi.com';

export interface HubspotConnectorOptions {
  /** API base URL; default https://api.hubapi.com. */
  baseUrl?: string;
  /** Objects per page (1..100); default 100, HubSpot's maximum for list calls. */
  pageSize?: number;
  /** Results one search may page through; default 10,000 (HubSpot's cap). */
  searchResultCap?: number;
  /** Least time between search calls; default 220 ms (HubSpot allows 5 searches a second; 20 ms of margin). */
  searchSpacingMs?: number;
  /** Deadline per request; default 30 s. */
  timeoutMs?: number;
}

export function createHubspotConnector(options: HubspotConnectorOptions = {}): Connector {
  const baseUrl = options.baseUrl ?? HUBSPOT_API_URL;
  const pageSize = Math.min(100, Math.max(1, options.pageSize ?? 100));
  const searchResultCap = options.searchResultCap ?? 10_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  // One gate per HubSpot account token, shared by every pull and push of this process.
  const gates = new Map<string, RateGate>();
  const gateFor = (token: string): RateGate => {
    const key = createHash('sha256').update(token).digest('hex');
    let gate = gates.get(key);
    if (!gate) {
      gate = new RateGate({ searchSpacingMs: options.searchSpacingMs ?? 220 });
      gates.set(key, gate);
    }
    return gate;
  };
  const http = (credentials: Credentials, signal: AbortSignal): HubspotHttp => {
    const token = credentials['access_token'];
    if (!token) throw new ProviderError('the HubSpot connection has no access_token', null, false);
    return new HubspotHttp(baseUrl, token, gateFor(token), signal, timeoutMs);
  };

  return {
    provider: 'hubspot',
    pull: (ctx) => pullHubspot(http(ctx.credentials, ctx.signal), ctx, { pageSize, searchResultCap }),
    push: (credentials, request, signal, target) => pushToHubspot(http(credentials, signal), request, target),
    validateCredentials(credentials) {
      const token = credentials['access_token'];
      const extra = Object.keys(credentials).filter((k) => k !== 'access_token');
      if (typeof token !== 'string' || token.trim() === '') return 'HubSpot credentials are {"access_token": "<private app access token>"}';
      if (extra.length > 0) return `HubSpot credentials take only access_token, not ${extra.join(', ')}`;
      return null;
    },
  };
}
