// `sightline connections add|list|status|sync|remove`: CRM connections of a running instance,
// through crm-sync's admin routes (/admin/crm/connections), and ad-platform connections
// (`add google-ads|meta-ads|linkedin-ads`, through /admin/crm/ad-destinations). Credentials go in
// once, with `add`; nothing ever prints them back (the API does not return them). `status` without
// an id lists every CRM and ad connection with its last pull and push, rows, last error and next retry.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { adminRequest, type AdminConnection } from './admin-client';

/** A connection as the admin API reports it. */
export interface ConnectionRow {
  id: string;
  website_id: string;
  provider: string;
  status: string;
  health: string;
  sync_in_progress: boolean;
  synced_through: string | null;
  last_success_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  last_sync_records: number | null;
  /** Set while the provider asked the sync to wait (an API allocation used up to its share). */
  paused_until?: string | null;
  pause_reason?: string | null;
  /** The provider's API usage as last reported (Salesforce). */
  api_usage?: { used: number; limit: number } | null;
}

/** A CRM connection's health as shown: paused while the provider asked the sync to wait. */
const crmHealth = (r: ConnectionRow): string => (r.paused_until ? `paused until ${when(r.paused_until)}` : r.health);
const crmUsage = (r: ConnectionRow): string | null => (r.api_usage ? `${r.api_usage.used}/${r.api_usage.limit} calls` : null);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An ad-platform connection as GET /admin/crm/ad-destinations reports it (settings, never credentials). */
export interface AdConnectionRow {
  website_id: string;
  platform: string;
  workspace_id: string;
  settings: unknown;
  status: string;
  updated_at: string;
  api_version: string | null;
  api_version_in_use: string;
  last_pull_at: string | null;
  last_pull_rows: number | null;
  last_pull_error: string | null;
  last_pull_error_at: string | null;
  next_pull_at: string | null;
  last_push_at: string | null;
  pushes: { done: number; waiting: number; dead: number };
  next_retry_at: string | null;
  last_rejection: string | null;
  last_rejection_at: string | null;
  /** No conversion setting: spend is pulled, no conversion is sent (absent from servers before it existed). */
  spend_only?: boolean;
}

/** `connections add <kind>` for ad platforms: the CLI's name → the admin API's platform. */
export const AD_KINDS = { 'google-ads': 'google_ads', 'meta-ads': 'meta_ads', 'linkedin-ads': 'linkedin_ads' } as const;
export type AdKind = keyof typeof AD_KINDS;
export const isAdKind = (kind: string): kind is AdKind => Object.hasOwn(AD_KINDS, kind);

/** The flags of `connections add <ad kind>`. */
export interface AdConnectionOptions {
  token?: string;
  tokenFile?: string;
  credentials?: string;
  settings?: string;
  refreshToken?: string;
  developerToken?: string;
  clientId?: string;
  clientSecret?: string;
  customerId?: string;
  loginCustomerId?: string;
  conversionActionId?: string;
  adAccountId?: string;
  pixelId?: string;
  conversionRuleId?: string[];
  apiVersion?: string;
}

const when = (iso: string | null): string => (iso ? iso.replace(/\.\d{3}Z$/, 'Z') : '-');

/** Rows as an aligned text table. */
export function connectionsTable(rows: readonly ConnectionRow[]): string {
  if (rows.length === 0) return 'no CRM connections (add one with `sightline connections add`)';
  const header = ['ID', 'WEBSITE', 'PROVIDER', 'HEALTH', 'SYNCING', 'LAST SUCCESS', 'SYNCED THROUGH', 'RECORDS', 'LAST ERROR'];
  const lines = rows.map((r) => [
    r.id, r.website_id, r.provider, crmHealth(r), r.sync_in_progress ? 'yes' : 'no', when(r.last_success_at), when(r.synced_through),
    r.last_sync_records === null ? '-' : String(r.last_sync_records),
    r.last_error ? `${when(r.last_error_at)} ${r.last_error.length > 80 ? `${r.last_error.slice(0, 77)}...` : r.last_error}` : '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  return [header, ...lines].map((cells) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** The credentials `add` sends: --credentials JSON, else {access_token} from --token or --token-file. */
export function credentialsOf(opts: { token?: string; tokenFile?: string; credentials?: string }): Record<string, string> {
  const given = [opts.token, opts.tokenFile, opts.credentials].filter((v) => v !== undefined).length;
  if (given !== 1) throw new Error('pass exactly one of --token, --token-file or --credentials');
  if (opts.credentials !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(opts.credentials);
    } catch {
      throw new Error('--credentials must be a JSON object, e.g. \'{"access_token":"pat-..."}\'');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('--credentials must be a JSON object');
    return parsed as Record<string, string>;
  }
  const token = opts.token ?? readFileSync(opts.tokenFile!, 'utf8').trim();
  if (!token) throw new Error('the access token is empty');
  return { access_token: token };
}

/** The flags of `connections add salesforce|pipedrive|hubspot` beyond the token ones. */
export interface CrmConnectionOptions {
  token?: string;
  tokenFile?: string;
  credentials?: string;
  settings?: string;
  clientId?: string;
  clientSecret?: string;
  refreshToken?: string;
  username?: string;
  privateKeyFile?: string;
  loginUrl?: string;
  instanceUrl?: string;
}

/**
 * What `connections add <crm>` sends as credentials. HubSpot: {access_token} (--token). Pipedrive:
 * {api_token} (--token, its personal API token). Salesforce: the JWT bearer flow (--client-id,
 * --username, --private-key-file) or a web-server flow's refresh token (--client-id,
 * --client-secret, --refresh-token), with --login-url for a sandbox or My Domain. --credentials
 * (a JSON object) always works and wins.
 */
export function crmCredentials(provider: string, opts: CrmConnectionOptions): Record<string, string> {
  if (provider === 'salesforce' && opts.credentials === undefined) {
    const jwt = opts.privateKeyFile !== undefined;
    const credentials = defined({
      client_id: opts.clientId, username: jwt ? opts.username : undefined, client_secret: jwt ? undefined : opts.clientSecret,
      refresh_token: jwt ? undefined : opts.refreshToken, login_url: opts.loginUrl, instance_url: opts.instanceUrl,
      private_key: jwt ? readFileSync(opts.privateKeyFile!, 'utf8') : undefined,
    });
    if (jwt && (!credentials['client_id'] || !credentials['username'])) throw new Error('salesforce (JWT bearer flow): pass --client-id (the connected app\'s consumer key), --username (the integration user) and --private-key-file (the PEM of the certificate you uploaded to the app)');
    if (!jwt && (!credentials['client_id'] || !credentials['client_secret'] || !credentials['refresh_token'])) {
      throw new Error('salesforce: pass --client-id, --username and --private-key-file (JWT bearer flow, recommended), or --client-id, --client-secret and --refresh-token (web-server flow); --login-url https://test.salesforce.com for a sandbox');
    }
    return credentials;
  }
  const credentials = credentialsOf(opts);
  // Pipedrive's personal token is its api_token; --credentials passes an OAuth token as it is.
  if (provider === 'pipedrive' && opts.credentials === undefined) return { api_token: credentials['access_token']! };
  return credentials;
}

const jsonObject = (text: string, flag: string): Record<string, unknown> => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${flag} must be a JSON object`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${flag} must be a JSON object`);
  return parsed as Record<string, unknown>;
};

const defined = (entries: Record<string, string | undefined>): Record<string, string> =>
  Object.fromEntries(Object.entries(entries).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));

/**
 * What `connections add google-ads|meta-ads|linkedin-ads` sends to PUT /admin/crm/ad-destinations:
 * the access token (--token or --token-file, or inside --credentials) and each platform's other
 * credentials and settings from their flags; --settings adds anything else (e.g. send rules).
 *   Google: --customer-id (required), --login-customer-id (manager account), --conversion-action-id,
 *           --refresh-token, --client-id, --client-secret, --developer-token (optional);
 *   Meta: --ad-account-id, --pixel-id (the pixel or dataset id conversions go to);
 *   LinkedIn: --ad-account-id, --conversion-rule-id (repeatable: the first is the default rule).
 * Without the conversion setting (--conversion-action-id, --pixel-id, --conversion-rule-id) the
 * account is spend only: its spend is pulled and no conversion is sent.
 */
export function adConnectionRequest(kind: AdKind, opts: AdConnectionOptions): { platform: string; credentials: Record<string, string>; settings: Record<string, unknown>; api_version: string | null } {
  if (opts.token !== undefined && opts.tokenFile !== undefined) throw new Error('pass at most one of --token and --token-file');
  const given = opts.credentials === undefined ? {} : jsonObject(opts.credentials, '--credentials');
  if (!Object.values(given).every((v) => typeof v === 'string')) throw new Error('--credentials must be a JSON object of strings');
  const token = opts.token ?? (opts.tokenFile === undefined ? undefined : readFileSync(opts.tokenFile, 'utf8').trim());
  const credentials: Record<string, string> = {
    ...(given as Record<string, string>),
    ...defined({ access_token: token, refresh_token: opts.refreshToken, client_id: opts.clientId, client_secret: opts.clientSecret, developer_token: opts.developerToken }),
  };
  if (!credentials['access_token']) throw new Error('the access token is missing: pass --token, --token-file or --credentials \'{"access_token":"..."}\'');
  const extra = opts.settings === undefined ? {} : jsonObject(opts.settings, '--settings');
  let settings: Record<string, unknown>;
  if (kind === 'google-ads') {
    settings = { ...extra, ...defined({ customer_id: opts.customerId, login_customer_id: opts.loginCustomerId, conversion_action_id: opts.conversionActionId }) };
    if (settings['customer_id'] === undefined) throw new Error('--customer-id is required for google-ads (the Google Ads account, e.g. 123-456-7890)');
  } else if (kind === 'meta-ads') {
    settings = { ...extra, ...defined({ ad_account_id: opts.adAccountId, pixel_id: opts.pixelId }) };
    if (settings['ad_account_id'] === undefined && settings['pixel_id'] === undefined) throw new Error('--ad-account-id or --pixel-id is required for meta-ads');
  } else {
    const rules = opts.conversionRuleId ?? [];
    settings = {
      ...extra,
      ...defined({ ad_account_id: opts.adAccountId, conversion_rule_id: rules[0] }),
      ...(rules.length > 1 ? { conversion_rule_ids: rules } : {}),
    };
    if (settings['ad_account_id'] === undefined && settings['conversion_rule_id'] === undefined) throw new Error('--ad-account-id or --conversion-rule-id is required for linkedin-ads');
  }
  return { platform: AD_KINDS[kind], credentials, settings, api_version: opts.apiVersion?.trim() || null };
}

/** One line of `connections status`: a CRM connection or an ad connection. */
export interface StatusLine {
  kind: 'crm' | 'ads';
  website_id: string;
  platform: string;
  health: string;
  last_pull_at: string | null;
  rows: number | null;
  last_push_at: string | null;
  next_retry_at: string | null;
  api_version: string | null;
  last_error: string | null;
  /** An ad account that pulls spend and sends no conversions (shown as "spend only" under LAST PUSH). */
  spend_only: boolean;
}

/** What each ad kind needs to send conversions too, for the message after `add` of a spend-only account. */
const CONVERSION_FLAGS: Record<AdKind, string> = { 'google-ads': '--conversion-action-id', 'meta-ads': '--pixel-id', 'linkedin-ads': '--conversion-rule-id' };

/** The line `connections add <ad kind>` prints. */
export function adConnectedMessage(kind: AdKind, website: string, data: { status: string; api_version_in_use: string; spend_only?: boolean }): string {
  const spendOnly = data.spend_only ? `; spend only: conversions are not sent (add ${CONVERSION_FLAGS[kind]} to send them)` : '';
  return `${kind} connected to ${website} (${data.status}, API version ${data.api_version_in_use})${spendOnly}; follow it with: sightline connections status --website ${website}`;
}

/** An ad connection's health: failing after a failed pull, ok once something went through, else never_synced. */
function adHealth(row: AdConnectionRow): string {
  if (row.status !== 'active') return row.status;
  if (row.last_pull_error !== null) return 'failing';
  if (row.last_pull_at !== null || row.last_push_at !== null) return row.pushes.dead > 0 ? 'rejections' : 'ok';
  return row.pushes.dead > 0 ? 'rejections' : 'never_synced';
}

/** The soonest of the next pull after a failure and the next upload retry. */
function nextRetry(row: AdConnectionRow): string | null {
  const candidates = [row.last_pull_error !== null ? row.next_pull_at : null, row.next_retry_at].filter((v): v is string => v !== null);
  return candidates.sort()[0] ?? null;
}

export function statusLines(crm: readonly ConnectionRow[], ads: readonly AdConnectionRow[]): StatusLine[] {
  return [
    ...crm.map((r): StatusLine => ({
      kind: 'crm', website_id: r.website_id, platform: r.provider, health: crmHealth(r), last_pull_at: r.last_success_at, rows: r.last_sync_records,
      last_push_at: null, next_retry_at: r.paused_until ?? null, api_version: crmUsage(r), last_error: r.pause_reason ?? r.last_error, spend_only: false,
    })),
    ...ads.map((r): StatusLine => ({
      kind: 'ads', website_id: r.website_id, platform: r.platform, health: adHealth(r), last_pull_at: r.last_pull_at, rows: r.last_pull_rows,
      last_push_at: r.last_push_at, next_retry_at: nextRetry(r), api_version: r.api_version_in_use,
      last_error: r.last_pull_error !== null ? `pull: ${r.last_pull_error}` : r.last_rejection !== null ? `push rejected: ${r.last_rejection}` : null,
      spend_only: r.spend_only === true,
    })),
  ];
}

/** `connections status` without an id: every CRM and ad connection as an aligned table. */
export function statusTable(lines: readonly StatusLine[]): string {
  if (lines.length === 0) return 'no connections (add one with `sightline connections add hubspot|salesforce|pipedrive|google-ads|meta-ads|linkedin-ads`)';
  const header = ['KIND', 'WEBSITE', 'PLATFORM', 'HEALTH', 'LAST PULL', 'ROWS', 'LAST PUSH', 'NEXT RETRY', 'API', 'LAST ERROR'];
  const cells = lines.map((l) => [
    l.kind, l.website_id, l.platform, l.health, when(l.last_pull_at), l.rows === null ? '-' : String(l.rows), l.spend_only ? 'spend only' : when(l.last_push_at), when(l.next_retry_at),
    l.api_version ?? '-', l.last_error ? (l.last_error.length > 80 ? `${l.last_error.slice(0, 77)}...` : l.last_error) : '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  return [header, ...cells].map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** A website id for a filter: an id as given, a domain resolved through the admin API. */
async function websiteIdOf(conn: AdminConnection, website: string): Promise<string> {
  if (UUID.test(website)) return website;
  return (await adminRequest<{ id: string }>(conn, 'GET', `/websites/${encodeURIComponent(website.toLowerCase())}`)).id;
}

/** A website given by id (with --workspace) or by domain (resolved through the admin API). */
async function resolveWebsite(conn: AdminConnection, website: string, workspace: string | undefined): Promise<{ websiteId: string; workspaceId: string }> {
  if (UUID.test(website)) {
    if (!workspace) throw new Error('--workspace <id> is needed when --website is an id (or give the website\'s domain)');
    return { websiteId: website, workspaceId: workspace };
  }
  const site = await adminRequest<{ id: string; workspace_id: string }>(conn, 'GET', `/websites/${encodeURIComponent(website.toLowerCase())}`);
  if (workspace && workspace !== site.workspace_id) throw new Error(`website ${website} belongs to workspace ${site.workspace_id}, not ${workspace}`);
  return { websiteId: site.id, workspaceId: site.workspace_id };
}

export function registerConnectionsCommands(program: Command, conn: () => AdminConnection): void {
  const print = (value: unknown, json: boolean | undefined, table: () => string): void => {
    process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${table()}\n`);
  };
  const connections = program.command('connections').description('CRM connections (needs crm-sync): add, list, status, sync, remove');

  const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
  connections
    .command('add [kind]')
    .description('connect a website to a CRM (hubspot, the default; salesforce; pipedrive) or an ad platform (google-ads, meta-ads, linkedin-ads); re-adding replaces the credentials and settings')
    .requiredOption('--website <domain|id>', 'the website whose CRM or ad account this is')
    .option('--workspace <id>', 'its workspace (needed when --website is an id)')
    .option('--provider <name>', 'the CRM (when no kind is given)', 'hubspot')
    .option('--token <token>', 'access token (visible in shell history: prefer --token-file)')
    .option('--token-file <path>', 'read the access token from this file')
    .option('--credentials <json>', 'credentials as a JSON object')
    .option('--settings <json>', 'settings as a JSON object (ad platforms: send rules...; salesforce, pipedrive: field mapping and limits)')
    .option('--refresh-token <token>', 'google-ads, salesforce: OAuth refresh token')
    .option('--client-id <id>', 'google-ads: OAuth client id; salesforce: the connected app\'s consumer key')
    .option('--client-secret <secret>', 'google-ads: OAuth client secret; salesforce: the consumer secret (with --refresh-token)')
    .option('--username <user>', 'salesforce: the integration user the JWT bearer flow logs in as')
    .option('--private-key-file <path>', 'salesforce: PEM private key of the certificate uploaded to the connected app (JWT bearer flow)')
    .option('--login-url <url>', 'salesforce: login host (https://test.salesforce.com for a sandbox, or your My Domain)')
    .option('--instance-url <url>', 'salesforce: the org\'s host, with --credentials \'{"access_token": ...}\' (a session)')
    .option('--developer-token <token>', 'google-ads: developer token (optional: the Data Manager API does without it)')
    .option('--customer-id <id>', 'google-ads: the Google Ads customer id')
    .option('--login-customer-id <id>', 'google-ads: the manager account the access goes through')
    .option('--conversion-action-id <id>', 'google-ads: the conversion action uploads count as')
    .option('--ad-account-id <id>', 'meta-ads, linkedin-ads: the ad account spend is pulled from')
    .option('--pixel-id <id>', 'meta-ads: the pixel (dataset) id conversions go to')
    .option('--dataset-id <id>', 'meta-ads: same as --pixel-id')
    .option('--conversion-rule-id <id>', 'linkedin-ads: a conversion rule id (repeat for more; the first is the default)', collect)
    .option('--api-version <version>', 'ad platforms: pin this API version instead of the built-in one')
    .option('--json', 'print JSON')
    .action(async (kind: string | undefined, opts: AdConnectionOptions & CrmConnectionOptions & { website: string; workspace?: string; provider: string; datasetId?: string; json?: boolean }) => {
      if (kind !== undefined && isAdKind(kind)) {
        const request = adConnectionRequest(kind, { ...opts, pixelId: opts.pixelId ?? opts.datasetId });
        const { websiteId, workspaceId } = await resolveWebsite(conn(), opts.website, opts.workspace);
        const { data } = await adminRequest<{ data: { platform: string; status: string; api_version_in_use: string; spend_only?: boolean } }>(
          conn(), 'PUT', `/crm/ad-destinations/${encodeURIComponent(websiteId)}/${request.platform}`,
          { workspace_id: workspaceId, credentials: request.credentials, settings: request.settings, api_version: request.api_version },
        );
        print(data, opts.json, () => adConnectedMessage(kind, opts.website, data));
        return;
      }
      if (kind !== undefined && kind !== opts.provider && opts.provider !== 'hubspot') throw new Error(`give the CRM once: "${kind}" or --provider ${opts.provider}`);
      if (kind !== undefined && !/^[a-z][a-z0-9_-]*$/.test(kind)) throw new Error(`unknown connection kind "${kind}"; kinds: hubspot, ${Object.keys(AD_KINDS).join(', ')}`);
      const provider = kind ?? opts.provider;
      const credentials = crmCredentials(provider, opts);
      const settings = opts.settings === undefined ? undefined : jsonObject(opts.settings, '--settings');
      const { websiteId, workspaceId } = await resolveWebsite(conn(), opts.website, opts.workspace);
      const row = await adminRequest<ConnectionRow>(conn(), 'POST', '/crm/connections', { website_id: websiteId, workspace_id: workspaceId, provider, credentials, ...(settings ? { settings } : {}) });
      print(row, opts.json, () => `connection ${row.id} (${row.provider}, ${row.status}); first sync: sightline connections sync ${row.id}`);
    });

  connections
    .command('list')
    .option('--website <id>', 'only this website')
    .option('--workspace <id>', 'only this workspace')
    .option('--json', 'print JSON')
    .action(async (opts: { website?: string; workspace?: string; json?: boolean }) => {
      const query = new URLSearchParams({ ...(opts.website ? { website_id: opts.website } : {}), ...(opts.workspace ? { workspace_id: opts.workspace } : {}) }).toString();
      const { data } = await adminRequest<{ data: ConnectionRow[] }>(conn(), 'GET', `/crm/connections${query ? `?${query}` : ''}`);
      print(data, opts.json, () => connectionsTable(data));
    });

  connections
    .command('status [id]')
    .description('one CRM connection by id, or every CRM and ad connection (of --website) with last pull and push, rows, last error and next retry')
    .option('--website <domain|id>', 'only this website')
    .option('--json', 'print JSON')
    .action(async (id: string | undefined, opts: { website?: string; json?: boolean }) => {
      if (id !== undefined) {
        const row = await adminRequest<ConnectionRow>(conn(), 'GET', `/crm/connections/${encodeURIComponent(id)}`);
        print(row, opts.json, () => connectionsTable([row]));
        return;
      }
      const websiteId = opts.website === undefined ? undefined : await websiteIdOf(conn(), opts.website);
      const query = websiteId === undefined ? '' : `?website_id=${encodeURIComponent(websiteId)}`;
      const [crm, ads] = await Promise.all([
        adminRequest<{ data: ConnectionRow[] }>(conn(), 'GET', `/crm/connections${query}`),
        adminRequest<{ data: AdConnectionRow[] }>(conn(), 'GET', `/crm/ad-destinations${query}`),
      ]);
      print({ crm: crm.data, ads: ads.data }, opts.json, () => statusTable(statusLines(crm.data, ads.data)));
    });

  connections
    .command('sync <id>')
    .description('sync now (incremental unless --full)')
    .option('--full', 're-read every record instead of what changed since the last sync')
    .option('--wait', 'wait until the sync finishes and print its outcome (exit 1 if it failed)')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { full?: boolean; wait?: boolean; json?: boolean }) => {
      const path = `/crm/connections/${encodeURIComponent(id)}`;
      const started = await adminRequest<ConnectionRow>(conn(), 'POST', `${path}/sync${opts.full ? '?full=true' : ''}`);
      if (!opts.wait) {
        print(started, opts.json, () => `sync of ${id} started${opts.full ? ' (full)' : ''}; follow it with: sightline connections status ${id}`);
        return;
      }
      let row = started;
      while (row.sync_in_progress) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        row = await adminRequest<ConnectionRow>(conn(), 'GET', path);
      }
      print(row, opts.json, () => connectionsTable([row]));
      const failed = row.last_error_at !== null && (row.last_success_at === null || row.last_error_at > row.last_success_at);
      if (failed) throw new Error(`the sync failed: ${row.last_error ?? 'unknown error'}`);
    });

  connections
    .command('remove <id|kind>')
    .description('disconnect a CRM connection by id (credentials erased, mirrored records stay), or an ad connection: remove google-ads|meta-ads|linkedin-ads --website <domain|id>')
    .option('--website <domain|id>', 'the website of the ad connection')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { website?: string; json?: boolean }) => {
      if (isAdKind(id)) {
        if (opts.website === undefined) throw new Error(`--website is needed to remove a ${id} connection`);
        const websiteId = await websiteIdOf(conn(), opts.website);
        await adminRequest<unknown>(conn(), 'DELETE', `/crm/ad-destinations/${encodeURIComponent(websiteId)}/${AD_KINDS[id]}`);
        print({ website_id: websiteId, platform: AD_KINDS[id], removed: true }, opts.json, () => `removed the ${id} connection of ${opts.website}`);
        return;
      }
      const row = await adminRequest<ConnectionRow>(conn(), 'DELETE', `/crm/connections/${encodeURIComponent(id)}`);
      print(row, opts.json, () => `disconnected ${row.id}`);
    });
}
