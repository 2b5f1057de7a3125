// `sightline connections add|list|status|sync|remove`: CRM connections of a running instance,
// through crm-sync's admin routes (/admin/crm/connections). Credentials go in once, with `add`;
// nothing ever prints them back (the API does not return them).
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
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const when = (iso: string | null): string => (iso ? iso.replace(/\.\d{3}Z$/, 'Z') : '-');

/** Rows as an aligned text table. */
export function connectionsTable(rows: readonly ConnectionRow[]): string {
  if (rows.length === 0) return 'no CRM connections (add one with `sightline connections add`)';
  const header = ['ID', 'WEBSITE', 'PROVIDER', 'HEALTH', 'SYNCING', 'LAST SUCCESS', 'SYNCED THROUGH', 'RECORDS', 'LAST ERROR'];
  const lines = rows.map((r) => [
    r.id, r.website_id, r.provider, r.health, r.sync_in_progress ? 'yes' : 'no', when(r.last_success_at), when(r.synced_through),
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

  connections
    .command('add')
    .description('connect a website to a CRM; re-adding replaces the credentials')
    .requiredOption('--website <domain|id>', 'the website whose CRM this is')
    .option('--workspace <id>', 'its workspace (needed when --website is an id)')
    .option('--provider <name>', 'the CRM', 'hubspot')
    .option('--token <token>', 'HubSpot private app access token (visible in shell history: prefer --token-file)')
    .option('--token-file <path>', 'read the access token from this file')
    .option('--credentials <json>', 'provider credentials as a JSON object')
    .option('--json', 'print JSON')
    .action(async (opts: { website: string; workspace?: string; provider: string; token?: string; tokenFile?: string; credentials?: string; json?: boolean }) => {
      const credentials = credentialsOf(opts);
      const { websiteId, workspaceId } = await resolveWebsite(conn(), opts.website, opts.workspace);
      const row = await adminRequest<ConnectionRow>(conn(), 'POST', '/crm/connections', { website_id: websiteId, workspace_id: workspaceId, provider: opts.provider, credentials });
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
    .command('status <id>')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      const row = await adminRequest<ConnectionRow>(conn(), 'GET', `/crm/connections/${encodeURIComponent(id)}`);
      print(row, opts.json, () => connectionsTable([row]));
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
    .command('remove <id>')
    .description('disconnect: the credentials are erased, mirrored records stay')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      const row = await adminRequest<ConnectionRow>(conn(), 'DELETE', `/crm/connections/${encodeURIComponent(id)}`);
      print(row, opts.json, () => `disconnected ${row.id}`);
    });
}
