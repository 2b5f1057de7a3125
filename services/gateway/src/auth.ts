// Bearer-key authentication. Verified keys are cached briefly so the hot path does not hit
// Postgres per request; a revoked key stops working within KEY_CACHE_MS on every replica.
import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import { ProblemError } from '@sightline/kit';
import type { AccountsRepo, ApiKeyRecord, Website, Workspace } from './accounts.repo';
import { parseApiKey, secretMatches } from './api-keys';

export const KEY_CACHE_MS = 5_000;
/** Key ids held at once: unknown ids are cached too (so a guessed id costs one lookup), so the cache is bounded. */
export const KEY_CACHE_ENTRIES = 10_000;

/** Query parameters a client might mistakenly put a key in. */
const KEY_QUERY_PARAMS = ['api_key', 'apikey', 'key', 'token', 'access_token', 'authorization'];

export interface AuthContext {
  key: ApiKeyRecord;
  workspace: Workspace;
  websites: Website[];
}

interface CacheEntry {
  secretSha256: Buffer;
  context: AuthContext | null;
  expires: number;
}

export class Authenticator {
  private readonly cache = new LRUCache<string, CacheEntry>({ max: KEY_CACHE_ENTRIES, ttl: KEY_CACHE_MS });

  constructor(private readonly repo: AccountsRepo) {}

  async authenticate(req: Request): Promise<AuthContext> {
    const queryKey = KEY_QUERY_PARAMS.find((name) => req.query[name] !== undefined);
    if (queryKey) {
      throw new ProblemError('invalid-request', {
        detail: `An API key was sent in the query string (parameter "${queryKey}"); keys are accepted only in the Authorization header.`,
        remediation: 'Remove the key from the URL, send it as "Authorization: Bearer <API_KEY>", and rotate the key if the URL was logged anywhere.',
      });
    }
    const header = req.header('authorization');
    if (!header) throw unauthorized('The request has no Authorization header.');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw unauthorized('The Authorization header is not of the form "Bearer <API_KEY>".');
    const parsed = parseApiKey(match[1] as string);
    if (!parsed) throw unauthorized('The bearer token is not a Sightline API key (they look like sl_<id>_<secret>).');

    const context = await this.lookup(parsed.keyId, parsed.secret);
    if (!context) throw unauthorized('The API key is unknown or has been revoked.');
    return context;
  }

  /** Forgets a key at once on this replica (after revocation through this process's admin API). */
  forget(keyId: string): void {
    this.cache.delete(keyId);
  }

  private async lookup(keyId: string, secret: string): Promise<AuthContext | null> {
    const now = Date.now();
    let entry = this.cache.get(keyId);
    if (!entry || entry.expires <= now) {
      const key = await this.repo.getKey(keyId);
      let context: AuthContext | null = null;
      if (key && !key.revoked_at) {
        const workspace = await this.repo.getWorkspace(key.workspace_id);
        if (workspace) context = { key, workspace, websites: await this.repo.websitesOfKey(key) };
      }
      entry = { secretSha256: key?.secret_sha256 ?? Buffer.alloc(32), context, expires: now + KEY_CACHE_MS };
      this.cache.set(keyId, entry);
    }
    return entry.context && secretMatches(secret, entry.secretSha256) ? entry.context : null;
  }

  /** Entries held: bounded by KEY_CACHE_ENTRIES whatever ids are tried. */
  get cachedKeys(): number {
    return this.cache.size;
  }
}

function unauthorized(detail: string): ProblemError {
  return new ProblemError('unauthorized', {
    detail,
    remediation: 'Send a valid key as "Authorization: Bearer <API_KEY>"; create one with `sightline keys create`.',
    headers: { 'WWW-Authenticate': 'Bearer realm="sightline"' },
  });
}
