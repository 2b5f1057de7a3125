// Operator actions on workspaces, websites and keys, shared by the admin API and the demo setup.
import { normaliseDomain, ProblemError, type ServiceBus } from '@sightline/kit';
import { PLANS, SCOPES, type KeyCreatedV1, type KeyRevokedV1, type WorkspaceCreatedV1 } from '@sightline/proto-schemas';
import type { AccountsRepo, ApiKeySummary, Website, Workspace } from './accounts.repo';
import { generateApiKey } from './api-keys';

const PLAN_NAMES: string[] = PLANS.map((p) => p.name);
const SCOPE_NAMES: string[] = SCOPES.map((s) => s.name);
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
const DOMAIN_PATTERN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export interface CreatedKey extends ApiKeySummary {
  /** The plaintext key: returned once, never stored. */
  key: string;
}

export class AccountsAdmin {
  constructor(private readonly repo: AccountsRepo, private readonly bus: ServiceBus<'gateway'>) {}

  async createWorkspace(input: { name?: unknown; timezone?: unknown; currency?: unknown; plan?: unknown }): Promise<Workspace> {
    const name = requireText(input.name, 'name');
    const timezone = validTimezone(input.timezone ?? 'UTC');
    const currency = validCurrency(input.currency ?? 'USD');
    const plan = oneOf(input.plan ?? 'free', 'plan', PLAN_NAMES);
    const workspace = await this.repo.createWorkspace({ name, timezone, currency, plan });
    await this.bus.publish({
      type: 'gateway.workspace_created',
      source: 'admin',
      workspace_id: workspace.id,
      payload: { workspace_id: workspace.id, name, timezone, currency, plan } as WorkspaceCreatedV1,
    });
    return workspace;
  }

  async addWebsite(workspaceId: string, input: { domain?: unknown; timezone?: unknown; currency?: unknown }): Promise<Website> {
    const workspace = await this.repo.getWorkspace(workspaceId);
    if (!workspace) throw notFound(`No workspace ${workspaceId}.`);
    const domain = normaliseDomain(requireText(input.domain, 'domain'));
    if (!DOMAIN_PATTERN.test(domain)) throw invalid(`"${domain}" is not a domain name.`, 'Pass a bare domain such as example.com.');
    if (await this.repo.findWebsiteByDomain(domain)) {
      throw new ProblemError('conflict', { detail: `A website "${domain}" already exists.`, remediation: 'Domains are unique across the installation; choose another or reuse the existing website.' });
    }
    return this.repo.createWebsite({
      workspaceId,
      domain,
      timezone: validTimezone(input.timezone ?? workspace.timezone),
      currency: validCurrency(input.currency ?? workspace.currency),
    });
  }

  async createKey(input: { workspace_id?: unknown; name?: unknown; scopes?: unknown; plan?: unknown; websites?: unknown }): Promise<CreatedKey> {
    const workspaceId = requireText(input.workspace_id, 'workspace_id');
    const workspace = await this.repo.getWorkspace(workspaceId);
    if (!workspace) throw notFound(`No workspace ${workspaceId}.`);
    const name = input.name === undefined ? 'API key' : requireText(input.name, 'name');
    // New keys get every scope, pii:read included, unless the operator narrows them (API-SPEC "Authentication" 4).
    const scopes = input.scopes === undefined ? [...SCOPE_NAMES] : listOf(input.scopes, 'scopes').map((s) => oneOf(s, 'scopes', SCOPE_NAMES));
    const plan = input.plan === undefined ? workspace.plan : oneOf(input.plan, 'plan', PLAN_NAMES);
    let websiteIds: string[] | 'all' = 'all';
    if (input.websites !== undefined) {
      const owned = await this.repo.listWebsites(workspaceId);
      websiteIds = listOf(input.websites, 'websites').map((d) => {
        const found = owned.find((w) => w.domain === normaliseDomain(d));
        if (!found) throw new ProblemError('website-not-found', { detail: `The workspace has no website "${d}".`, remediation: 'Add the website first or pick one of the allowed domains.', allowed: owned.map((w) => w.domain) });
        return found.id;
      });
    }
    const key = generateApiKey();
    await this.repo.createKey({ key, workspaceId, name, scopes: [...new Set(scopes)], plan, websiteIds });
    await this.bus.publish({
      type: 'gateway.key_created',
      source: 'admin',
      workspace_id: workspaceId,
      payload: {
        key_id: key.keyId,
        workspace_id: workspaceId,
        name,
        scopes: [...new Set(scopes)],
        all_websites: websiteIds === 'all',
        website_ids: websiteIds === 'all' ? [] : websiteIds,
      } as KeyCreatedV1,
    });
    const summary = (await this.repo.listKeys(workspaceId)).find((k) => k.key_id === key.keyId) as ApiKeySummary;
    return { ...summary, key: key.plaintext };
  }

  async revokeKey(keyId: string): Promise<void> {
    const key = await this.repo.getKey(keyId);
    if (!key || !(await this.repo.revokeKey(keyId))) throw notFound(`No active key ${keyId}.`);
    await this.bus.publish({ type: 'gateway.key_revoked', source: 'admin', workspace_id: key.workspace_id, payload: { key_id: keyId, workspace_id: key.workspace_id, reason: null } satisfies KeyRevokedV1 });
  }
}

function requireText(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid(`"${field}" is required and must be a non-empty string.`, `Provide "${field}".`);
  return value.trim();
}

function listOf(value: unknown, field: string): string[] {
  if (typeof value === 'string') return value.split(',').map((v) => v.trim()).filter(Boolean);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  throw invalid(`"${field}" must be a list of strings.`, `Pass "${field}" as an array or a comma-separated string.`);
}

function oneOf(value: unknown, field: string, allowed: string[]): string {
  if (typeof value === 'string' && allowed.includes(value)) return value;
  throw new ProblemError('invalid-request', { detail: `${JSON.stringify(value)} is not a valid ${field} value.`, remediation: `Use one of the allowed values for "${field}".`, allowed });
}

function validTimezone(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
    } catch {
      // fall through to the problem below
    }
  }
  throw invalid(`${JSON.stringify(value)} is not an IANA timezone.`, 'Use an IANA timezone name such as Europe/Berlin or UTC.');
}

function validCurrency(value: unknown): string {
  const code = typeof value === 'string' ? value.toUpperCase() : '';
  if (CURRENCIES.has(code)) return code;
  throw invalid(`${JSON.stringify(value)} is not an ISO 4217 currency code.`, 'Use a three-letter ISO 4217 code such as USD or EUR.');
}

function invalid(detail: string, remediation: string): ProblemError {
  return new ProblemError('invalid-request', { detail, remediation });
}

function notFound(detail: string): ProblemError {
  return new ProblemError('not-found', { detail, remediation: 'Check the id; `sightline workspaces list` and `sightline keys list` show what exists.' });
}
