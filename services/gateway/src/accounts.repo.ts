// Workspaces, websites and API keys in the gateway's own Postgres schema.
import { randomBytes, randomUUID } from 'node:crypto';
import type { SqlStore } from '@sightline/kit';
import type { PlanName } from '@sightline/proto-schemas';
import type { NewApiKey } from './api-keys';

export interface Workspace {
  id: string;
  name: string;
  timezone: string;
  currency: string;
  plan: string;
  created_at: string;
}

export interface Website {
  id: string;
  workspace_id: string;
  domain: string;
  public_id: string;
  timezone: string;
  currency: string;
  /** Key of the HMAC a website's backend signs identify() emails with; operators only, never the public API. */
  identify_secret: string;
}

export interface ApiKeyRecord {
  id: string;
  workspace_id: string;
  name: string;
  secret_sha256: Buffer;
  scopes: string[];
  plan: PlanName;
  all_websites: boolean;
  created_at: string;
  revoked_at: string | null;
}

export interface ApiKeySummary {
  key_id: string;
  workspace_id: string;
  name: string;
  scopes: string[];
  plan: string;
  websites: string[];
  created_at: string;
  revoked_at: string | null;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const WEBSITE_COLUMNS = 'id, workspace_id, domain, public_id, timezone, currency, identify_secret';

export class AccountsRepo {
  constructor(private readonly db: SqlStore) {}

  async createWorkspace(input: { name: string; timezone: string; currency: string; plan: string }): Promise<Workspace> {
    const { rows } = await this.db.query<Workspace>(
      `INSERT INTO workspaces (id, name, timezone, currency, plan) VALUES ($1, $2, $3, $4, $5)
       RETURNING id, name, timezone, currency, plan, created_at`,
      [randomUUID(), input.name, input.timezone, input.currency, input.plan],
    );
    return normaliseWorkspace(rows[0] as Workspace);
  }

  async listWorkspaces(): Promise<Workspace[]> {
    const { rows } = await this.db.query<Workspace>('SELECT id, name, timezone, currency, plan, created_at FROM workspaces ORDER BY created_at, id');
    return rows.map(normaliseWorkspace);
  }

  async countWorkspaces(): Promise<number> {
    const { rows } = await this.db.query<{ n: string | number }>('SELECT count(*) AS n FROM workspaces');
    return Number(rows[0]?.n ?? 0);
  }

  async getWorkspace(id: string): Promise<Workspace | null> {
    if (!UUID_PATTERN.test(id)) return null;
    const { rows } = await this.db.query<Workspace>('SELECT id, name, timezone, currency, plan, created_at FROM workspaces WHERE id = $1', [id]);
    return rows[0] ? normaliseWorkspace(rows[0]) : null;
  }

  async createWebsite(input: { workspaceId: string; domain: string; timezone: string; currency: string }): Promise<Website> {
    const { rows } = await this.db.query<Website>(
      `INSERT INTO websites (id, workspace_id, domain, public_id, timezone, currency, identify_secret) VALUES ($1, $2, $3, $4, $5, $6, $7)
       RETURNING ${WEBSITE_COLUMNS}`,
      [randomUUID(), input.workspaceId, input.domain, `site_${randomBytes(8).toString('hex')}`, input.timezone, input.currency, randomBytes(32).toString('hex')],
    );
    return rows[0] as Website;
  }

  async findWebsiteByDomain(domain: string): Promise<Website | null> {
    const { rows } = await this.db.query<Website>(`SELECT ${WEBSITE_COLUMNS} FROM websites WHERE domain = $1`, [domain]);
    return rows[0] ?? null;
  }

  async findWebsiteByPublicId(publicId: string): Promise<Website | null> {
    const { rows } = await this.db.query<Website>(`SELECT ${WEBSITE_COLUMNS} FROM websites WHERE public_id = $1`, [publicId]);
    return rows[0] ?? null;
  }

  async listWebsites(workspaceId: string): Promise<Website[]> {
    if (!UUID_PATTERN.test(workspaceId)) return [];
    const { rows } = await this.db.query<Website>(`SELECT ${WEBSITE_COLUMNS} FROM websites WHERE workspace_id = $1 ORDER BY domain`, [workspaceId]);
    return rows;
  }

  async createKey(input: {
    key: NewApiKey;
    workspaceId: string;
    name: string;
    scopes: string[];
    plan: string;
    websiteIds: string[] | 'all';
  }): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO api_keys (id, workspace_id, name, secret_sha256, scopes, plan, all_websites) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [input.key.keyId, input.workspaceId, input.name, input.key.secretSha256, input.scopes, input.plan, input.websiteIds === 'all'],
      );
      if (input.websiteIds !== 'all') {
        for (const websiteId of input.websiteIds) {
          await tx.query('INSERT INTO api_key_websites (key_id, website_id) VALUES ($1, $2)', [input.key.keyId, websiteId]);
        }
      }
    });
  }

  async getKey(keyId: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.db.query<ApiKeyRecord>(
      'SELECT id, workspace_id, name, secret_sha256, scopes, plan, all_websites, created_at, revoked_at FROM api_keys WHERE id = $1',
      [keyId],
    );
    const row = rows[0];
    return row ? { ...row, secret_sha256: Buffer.from(row.secret_sha256) } : null;
  }

  /** Websites a key reaches, ordered by domain. */
  async websitesOfKey(key: ApiKeyRecord): Promise<Website[]> {
    if (key.all_websites) return this.listWebsites(key.workspace_id);
    const { rows } = await this.db.query<Website>(
      `SELECT w.id, w.workspace_id, w.domain, w.public_id, w.timezone, w.currency, w.identify_secret
         FROM websites w JOIN api_key_websites k ON k.website_id = w.id
        WHERE k.key_id = $1 ORDER BY w.domain`,
      [key.id],
    );
    return rows;
  }

  async listKeys(workspaceId?: string): Promise<ApiKeySummary[]> {
    if (workspaceId !== undefined && !UUID_PATTERN.test(workspaceId)) return [];
    const { rows } = await this.db.query<ApiKeySummary & { all_websites: boolean }>(
      `SELECT k.id AS key_id, k.workspace_id, k.name, k.scopes, k.plan, k.created_at, k.revoked_at, k.all_websites,
              COALESCE(array_agg(w.domain ORDER BY w.domain) FILTER (WHERE w.domain IS NOT NULL), '{}') AS websites
         FROM api_keys k
         LEFT JOIN api_key_websites kw ON kw.key_id = k.id
         LEFT JOIN websites w ON w.id = kw.website_id
        WHERE ($1::uuid IS NULL OR k.workspace_id = $1::uuid)
        GROUP BY k.id ORDER BY k.created_at, k.id`,
      [workspaceId ?? null],
    );
    return rows.map(({ all_websites, ...row }) => ({ ...row, websites: all_websites ? ['*'] : row.websites, created_at: iso(row.created_at), revoked_at: row.revoked_at ? iso(row.revoked_at) : null }));
  }

  /** Returns false when the key does not exist or was already revoked. */
  async revokeKey(keyId: string): Promise<boolean> {
    const { rowCount } = await this.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [keyId]);
    return rowCount > 0;
  }
}

function normaliseWorkspace(row: Workspace): Workspace {
  return { ...row, created_at: iso(row.created_at) };
}

function iso(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}
