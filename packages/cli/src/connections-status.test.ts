// `sightline connections add <ad platform>`, `status` and `remove` against a process started here
// (gateway + crm-sync on embedded PGlite): the website resolves by domain through the gateway's
// admin API, the account lands in crm-sync's ad_destinations, and status reads it back with the
// CRM connections, never printing a credential.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadConfig, startModules, type RunningProcess, type SqlStore } from '@sightline/kit';
import { createCrmSyncModule } from '@sightline/service-crm-sync';
import { createGatewayModule } from '@sightline/service-gateway';
import { adminRequest, type AdminConnection } from './admin-client';
import { main } from './main';

describe('sightline connections (ad platforms)', () => {
  const domain = 'ads-connections.test';
  let dataDir: string;
  let proc: RunningProcess;
  let conn: AdminConnection;
  let sql: SqlStore;
  let website: { id: string; workspace_id: string };

  /** Runs the CLI as a user would and returns what it printed. */
  const cli = async (...args: string[]): Promise<string> => {
    const out: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
    try {
      await main(['node', 'sightline', '--admin-url', conn.url, '--admin-token', conn.token, ...args]);
    } finally {
      write.mockRestore();
    }
    return out.join('');
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-connections-'));
    proc = await startModules({
      config: loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'silent', SIGHTLINE_BUS_NAMESPACE: `conn${Date.now()}` }),
      logger: createLogger({ level: 'silent' }),
      modules: [createGatewayModule({ demo: false }), createCrmSyncModule()],
    });
    conn = { url: `http://127.0.0.1:${proc.adminPort}`, token: proc.settings.adminToken };
    const ws = await adminRequest<{ id: string }>(conn, 'POST', '/workspaces', { name: 'Ads', timezone: 'UTC', currency: 'EUR' });
    website = await adminRequest<{ id: string; workspace_id: string }>(conn, 'POST', `/workspaces/${ws.id}/websites`, { domain });
    sql = await proc.stores.sql('crm_sync');
  }, 60_000);
  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('adds Google Ads, Meta and LinkedIn accounts by domain, then lists them with their status', async () => {
    expect(await cli('connections', 'add', 'linkedin-ads', '--website', domain, '--token', 'AQX-secret', '--ad-account-id', '5080001', '--conversion-rule-id', '104001'))
      .toMatch(/^linkedin-ads connected to ads-connections\.test \(active, API version \d{6}\)/);
    expect(await cli('connections', 'add', 'google-ads', '--website', domain, '--token', 'ya29-secret', '--refresh-token', '1//refresh-secret',
      '--customer-id', '123-456-7890', '--login-customer-id', '111-222-3333', '--conversion-action-id', '42')).toMatch(/^google-ads connected .*API version v\d+\)/);
    expect(await cli('connections', 'add', 'meta-ads', '--website', domain, '--token', 'EAAB-secret', '--ad-account-id', 'act_77', '--dataset-id', '555000', '--api-version', 'v24.0'))
      .toContain('API version v24.0');

    const stored = await sql.query<{ platform: string; settings: Record<string, unknown>; api_version: string | null }>('SELECT platform, settings, api_version FROM ad_destinations WHERE website_id = $1 ORDER BY platform', [website.id]);
    expect(stored.rows).toEqual([
      { platform: 'google_ads', settings: { customer_id: '123-456-7890', login_customer_id: '111-222-3333', conversion_action_id: '42' }, api_version: null },
      { platform: 'linkedin_ads', settings: { ad_account_id: '5080001', conversion_rule_id: '104001' }, api_version: null },
      { platform: 'meta_ads', settings: { ad_account_id: 'act_77', pixel_id: '555000' }, api_version: 'v24.0' },
    ]);

    await sql.query(`UPDATE ad_destinations SET last_pull_at = '2026-11-27T06:00:00Z', last_pull_rows = 96 WHERE website_id = $1 AND platform = 'google_ads'`, [website.id]);
    await sql.query(`UPDATE ad_destinations SET last_pull_error = 'LinkedIn 403 ACCESS_DENIED: Not enough permissions to access adAnalytics', next_pull_at = '2026-11-28T03:00:00Z' WHERE website_id = $1 AND platform = 'linkedin_ads'`, [website.id]);
    const table = await cli('connections', 'status', '--website', domain);
    const lines = table.trim().split('\n');
    expect(lines[0]).toMatch(/^KIND\s+WEBSITE\s+PLATFORM\s+HEALTH\s+LAST PULL\s+ROWS\s+LAST PUSH\s+NEXT RETRY\s+API\s+LAST ERROR$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 4))).toEqual([
      ['ads', website.id, 'google_ads', 'ok'], ['ads', website.id, 'linkedin_ads', 'failing'], ['ads', website.id, 'meta_ads', 'never_synced'],
    ]);
    expect(lines[1]).toContain('2026-11-27T06:00:00Z');
    expect(lines[2]).toContain('2026-11-28T03:00:00Z');
    expect(lines[2]).toContain('pull: LinkedIn 403 ACCESS_DENIED');
    expect(table).not.toMatch(/secret/);

    const json = JSON.parse(await cli('connections', 'status', '--website', website.id, '--json')) as { crm: unknown[]; ads: { platform: string; last_pull_rows: number | null }[] };
    expect(json.crm).toEqual([]);
    expect(json.ads.map((a) => [a.platform, a.last_pull_rows])).toEqual([['google_ads', 96], ['linkedin_ads', null], ['meta_ads', null]]);
  });

  it('answers a refusal with the API\'s reason, and removes an ad connection', async () => {
    await expect(cli('connections', 'add', 'google-ads', '--website', domain, '--token', 't', '--customer-id', '1234567890', '--conversion-action-id', '42', '--api-version', 'v25.0'))
      .rejects.toThrow(/admin API 400: .*is not a google_ads version/);
    await expect(cli('connections', 'add', 'meta-ads', '--website', domain, '--pixel-id', '1')).rejects.toThrow(/access token is missing/);
    expect(await cli('connections', 'remove', 'meta-ads', '--website', domain)).toContain('removed the meta-ads connection of ads-connections.test');
    const left = await sql.query<{ platform: string }>('SELECT platform FROM ad_destinations WHERE website_id = $1 ORDER BY platform', [website.id]);
    expect(left.rows.map((r) => r.platform)).toEqual(['google_ads', 'linkedin_ads']);
    await expect(cli('connections', 'remove', 'meta-ads', '--website', domain)).rejects.toThrow(/admin API 404/);
  });
});
