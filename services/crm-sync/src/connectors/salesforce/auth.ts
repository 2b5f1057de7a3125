// Getting and keeping a Salesforce access token. Three credential shapes (connections add
// salesforce): the OAuth 2.0 JWT bearer flow for server-to-server access ({client_id, username,
// private_key, login_url?}: a connected app with the certificate, no user present), a web-server
// flow's refresh token ({client_id, client_secret, refresh_token, login_url?}), or a session
// ({access_token, instance_url}, short-lived, never refreshed). Tokens are kept in memory per
// credential set and fetched again when Salesforce answers INVALID_SESSION_ID.
import { createHash, createSign } from 'node:crypto';
import { ProviderError, type Credentials } from '../connector';
import { parseJsonOrNull } from '../json-body';

export const SALESFORCE_LOGIN_URL = 'https://login.salesforce.com';

export interface SalesforceSession {
  accessToken: string;
  /** The org's own host, e.g. https://acme.my.salesforce.com: every API call goes there. */
  instanceUrl: string;
}

type Flow = 'jwt' | 'refresh' | 'session';

/** Which flow the credentials are for, or a description of what is missing. */
export function credentialsFlow(credentials: Credentials): Flow | string {
  const has = (k: string): boolean => typeof credentials[k] === 'string' && credentials[k]!.trim() !== '';
  if (has('private_key')) {
    if (!has('client_id') || !has('username')) return 'the JWT bearer flow needs client_id (the connected app\'s consumer key), username and private_key (PEM)';
    if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(credentials['private_key']!)) return 'private_key must be the connected app certificate\'s private key in PEM form';
    return 'jwt';
  }
  if (has('refresh_token')) {
    if (!has('client_id') || !has('client_secret')) return 'a refresh token needs client_id and client_secret (the connected app\'s consumer key and secret)';
    return 'refresh';
  }
  if (has('access_token')) return has('instance_url') ? 'session' : 'a session token needs instance_url (https://<your domain>.my.salesforce.com)';
  return 'Salesforce credentials are {"client_id", "username", "private_key"} (JWT bearer flow), {"client_id", "client_secret", "refresh_token"} (web-server flow) or {"access_token", "instance_url"}';
}

const base64url = (data: string | Buffer): string => Buffer.from(data).toString('base64url');

/** The signed assertion of the JWT bearer flow: iss = consumer key, sub = username, aud = login host, valid three minutes. */
export function jwtAssertion(credentials: Credentials, audience: string, now: Date): string {
  const header = base64url(JSON.stringify({ alg: 'RS256' }));
  const claims = base64url(JSON.stringify({ iss: credentials['client_id'], sub: credentials['username'], aud: audience, exp: Math.floor(now.getTime() / 1000) + 180 }));
  const signature = createSign('RSA-SHA256').update(`${header}.${claims}`).sign(credentials['private_key']!);
  return `${header}.${claims}.${base64url(signature)}`;
}

export class SalesforceAuth {
  private readonly sessions = new Map<string, SalesforceSession>();

  constructor(private readonly defaultLoginUrl: string, private readonly timeoutMs: number, private readonly now: () => Date = () => new Date()) {}

  /** A session for these credentials: the one held, else a new one from the token endpoint. */
  async session(credentials: Credentials, signal: AbortSignal): Promise<SalesforceSession> {
    const key = keyOf(credentials);
    const held = this.sessions.get(key);
    if (held) return held;
    const fresh = await this.login(credentials, signal);
    this.sessions.set(key, fresh);
    return fresh;
  }

  /** Salesforce said the session is invalid: forget it, so the next call logs in again. */
  forget(credentials: Credentials): void {
    this.sessions.delete(keyOf(credentials));
  }

  private async login(credentials: Credentials, signal: AbortSignal): Promise<SalesforceSession> {
    const flow = credentialsFlow(credentials);
    if (flow === 'session') return { accessToken: credentials['access_token']!, instanceUrl: credentials['instance_url']!.replace(/\/$/, '') };
    if (flow !== 'jwt' && flow !== 'refresh') throw new ProviderError(flow, null, false);
    const loginUrl = (credentials['login_url'] ?? this.defaultLoginUrl).replace(/\/$/, '');
    const form: Record<string, string> = flow === 'jwt'
      ? { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: jwtAssertion(credentials, loginUrl, this.now()) }
      : { grant_type: 'refresh_token', refresh_token: credentials['refresh_token']!, client_id: credentials['client_id']!, client_secret: credentials['client_secret']! };
    let response: Response;
    try {
      response = await fetch(`${loginUrl}/services/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams(form).toString(),
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.timeoutMs)]),
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new ProviderError(`Salesforce token endpoint ${loginUrl}: ${error instanceof Error ? error.message : String(error)}`, null, true);
    }
    const text = await response.text();
    const body = parseJsonOrNull(text) as { access_token?: string; instance_url?: string; error?: string; error_description?: string } | null;
    if (response.ok && body?.access_token && body.instance_url) return { accessToken: body.access_token, instanceUrl: body.instance_url.replace(/\/$/, '') };
    // invalid_grant / invalid_client: the credentials themselves are wrong or revoked; a 5xx may pass.
    const retryable = response.status >= 500 || response.status === 429;
    const reason = body?.error ? `${body.error}: ${body.error_description ?? 'no description'}` : `${response.status} ${text.slice(0, 200)}`;
    throw new ProviderError(`Salesforce login (${flow === 'jwt' ? 'JWT bearer flow' : 'refresh token'}) refused: ${reason}`, response.status, retryable);
  }
}

/** Credentials as a map key, never kept in clear beside the session. */
function keyOf(credentials: Credentials): string {
  return createHash('sha256').update(JSON.stringify(Object.entries(credentials).sort())).digest('hex');
}
