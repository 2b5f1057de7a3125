// The login host: the token endpoint's JWT bearer and refresh-token grants (with RS256
// verification), and signJwtAssertion for tests that play the connected app.
import { createHmac, createSign, createVerify, randomBytes } from 'node:crypto';
import type { ServerContext } from './context';
import type { SalesforceReply } from './types';

export const b64url = (b: Buffer | string): string => Buffer.from(b).toString('base64url');

/**
 * Signs a JWT bearer assertion as a connected app would (RS256). `expSeconds` is the lifetime from
 * `now` (default 120 s; Salesforce allows at most 3 minutes); `exp` overrides with an absolute value.
 */
export function signJwtAssertion(input: { privateKeyPem: string; clientId: string; username: string; audience: string; expSeconds?: number; exp?: number; now?: Date; alg?: string }): string {
  const nowS = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const header = b64url(JSON.stringify({ alg: input.alg ?? 'RS256' }));
  const claims = b64url(JSON.stringify({ iss: input.clientId, sub: input.username, aud: input.audience, exp: input.exp ?? nowS + (input.expSeconds ?? 120) }));
  const signer = createSign('RSA-SHA256');
  signer.update(`${header}.${claims}`);
  return `${header}.${claims}.${signer.sign(input.privateKeyPem).toString('base64url')}`;
}

const tokenError = (error: string, description: string): SalesforceReply => ({ status: 400, body: { error, error_description: description } });

/** Session issue and the token endpoint's grants for one server; state lives in ctx. */
export function oauthHandlers(ctx: ServerContext): { newSession: (username: string) => string; tokenGrant: (params: URLSearchParams) => SalesforceReply } {
  const { options, org, clientIds, usernames, sessions, refresh, now, userId } = ctx;
  const signingSecret = randomBytes(32);

  const newSession = (username: string): string => {
    const token = `${org.orgId.slice(0, 15)}!${randomBytes(48).toString('base64url').replace(/[-_]/g, 'x')}`;
    sessions.set(token, { username, issuedAt: now(), revoked: false });
    return token;
  };
  const tokenAnswer = (username: string, scope: string): Record<string, string> => {
    const issued = String(now());
    const id = `${options.loginUrl ?? ctx.url}/id/${org.orgId}/${userId(username)}`;
    return {
      access_token: newSession(username),
      // HMAC-SHA256 over id + issued_at, base64, as Salesforce signs token answers.
      signature: createHmac('sha256', signingSecret).update(id + issued).digest('base64'),
      scope,
      instance_url: ctx.url,
      id,
      token_type: 'Bearer',
      issued_at: issued,
    };
  };

  const tokenGrant = (params: URLSearchParams): SalesforceReply => {
    const grant = params.get('grant_type');
    if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      const assertion = params.get('assertion') ?? '';
      const parts = assertion.split('.');
      if (parts.length !== 3) return tokenError('invalid_grant', 'invalid assertion');
      let header: Record<string, unknown>;
      let claims: Record<string, unknown>;
      try {
        header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'));
        claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
      } catch {
        return tokenError('invalid_grant', 'invalid assertion');
      }
      if (header['alg'] !== 'RS256') return tokenError('invalid_grant', 'invalid assertion');
      if (typeof claims['iss'] !== 'string' || !clientIds.has(claims['iss'])) return tokenError('invalid_client_id', 'client identifier invalid');
      if (!options.jwtPublicKeyPem) return tokenError('invalid_grant', 'invalid assertion');
      const verifier = createVerify('RSA-SHA256');
      verifier.update(`${parts[0]}.${parts[1]}`);
      let ok = false;
      try {
        ok = verifier.verify(options.jwtPublicKeyPem, Buffer.from(parts[2]!, 'base64url'));
      } catch {
        ok = false;
      }
      if (!ok) return tokenError('invalid_grant', 'invalid assertion');
      const aud = claims['aud'];
      const expected = (options.loginUrl ?? ctx.url).replace(/\/$/, '');
      const audOk = (a: unknown): boolean => typeof a === 'string' && a.replace(/\/$/, '') === expected;
      if (!(Array.isArray(aud) ? aud.some(audOk) : audOk(aud))) return tokenError('invalid_grant', 'audience is invalid');
      const exp = claims['exp'];
      const nowS = now() / 1000;
      if (typeof exp !== 'number') return tokenError('invalid_grant', 'invalid assertion');
      if (exp <= nowS) return tokenError('invalid_grant', 'expired authorization code');
      if (exp > nowS + 180) return tokenError('invalid_grant', 'invalid assertion'); // Salesforce: exp within 3 minutes
      if (typeof claims['sub'] !== 'string' || !usernames.has(claims['sub'])) return tokenError('invalid_grant', "user hasn't approved this consumer");
      return { status: 200, body: tokenAnswer(claims['sub'], 'api') };
    }
    if (grant === 'refresh_token') {
      const clientId = params.get('client_id') ?? '';
      if (!clientIds.has(clientId)) return tokenError('invalid_client_id', 'client identifier invalid');
      const secret = params.get('client_secret');
      const wanted = options.clientSecrets?.[clientId];
      if (wanted !== undefined && secret !== null && secret !== wanted) return tokenError('invalid_client', 'invalid client credentials');
      const r = refresh.get(params.get('refresh_token') ?? '');
      if (!r || r.revoked || r.clientId !== clientId) return tokenError('invalid_grant', 'expired access/refresh token');
      return { status: 200, body: tokenAnswer(r.username, 'api refresh_token') };
    }
    return tokenError('unsupported_grant_type', 'grant type not supported');
  };

  return { newSession, tokenGrant };
}
