// A Salesforce connection in the embedded crm-sync module, against the stand-in org: settings
// checked and stored, a sync that reaches its share of the org's API allocation pauses (committed
// with its cursor, shown on the connection, not a failure) and the next sync resumes there; deals
// carry their stage history into the mirror as one milestone per stage entered, at its own time,
// and an incremental sync announces only the stages entered since.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, defineStandIn, loadConfig, startModules, type Envelope, type RunningProcess, type RunnableModule, type SqlStore } from '@sightline/kit';
import { stageKey, type MilestoneReachedV1 } from '@sightline/proto-schemas';
import { createCrmSyncModule } from '../index';
import { seedOrg, startSalesforceServer, type SalesforceServer } from '../../test/salesforce-server';

const CLIENT = '3MVG9sightline.test.client';
const USER = 'integration@sightline.test';

interface ConnectionJson {
  id: string;
  health: string;
  sync_in_progress: boolean;
  last_success_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  paused_until: string | null;
  pause_reason: string | null;
  api_usage: { used: number; limit: number } | null;
  settings: Record<string, unknown>;
}

const waitFor = async <T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

function captureModule(into: Envelope[]): RunnableModule {
  return defineStandIn({
    name: 'capture',
    needs: {},
    async create() {
      return { consumers: { 'milestone.reached': async (e: Envelope) => void into.push(e) } };
    },
  });
}

describe('crm-sync Salesforce sync (embedded module, stand-in org)', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const workspaceId = randomUUID();
  const websiteId = randomUUID();
  const messages: Envelope[] = [];
  let sf: SalesforceServer;
  let proc: RunningProcess;
  let dataDir: string;
  let id: string;

  const admin = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const response = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${proc.settings.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
  };
  const view = async (): Promise<ConnectionJson> => (await admin<ConnectionJson>('GET', `/crm/connections/${id}`)).body;
  const syncAndWait = async (): Promise<ConnectionJson> => {
    const started = await admin<ConnectionJson>('POST', `/crm/connections/${id}/sync`);
    expect(started.status).toBe(202);
    await waitFor('the sync to end', async () => !(await view()).sync_in_progress);
    return view();
  };
  const sql = (): Promise<SqlStore> => proc.stores.sql('crm_sync');
  const drained = async (): Promise<void> => {
    const store = await sql();
    await waitFor('the outbox to drain', async () => Number((await store.query<{ n: string }>('SELECT count(*) AS n FROM outbox WHERE published_at IS NULL')).rows[0]?.n) === 0);
    await new Promise((r) => setTimeout(r, 200));
  };
  const milestones = (): MilestoneReachedV1[] => messages.map((m) => m.payload as MilestoneReachedV1).filter((m) => m.website_id === websiteId);

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-sf-sync-'));
    sf = await startSalesforceServer({ clientIds: [CLIENT], usernames: [USER], jwtPublicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), dailyAllocation: 40 });
    seedOrg(sf.org, { accounts: 20, contacts: 40, leads: 30, opportunities: 50, seed: 3, days: 30 });
    const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: `sfsync${Date.now()}`, SIGHTLINE_DEMO: 'off' });
    const crmSync = createCrmSyncModule({ providerUrls: { salesforce: sf.url }, credentialsKey: 'sf-sync-test-key-0123456789abcdef', syncCron: '0 0 1 1 *' });
    proc = await startModules({ config, modules: [crmSync, captureModule(messages)], logger: createLogger({ level: 'silent' }) });
  }, 60_000);

  afterAll(async () => {
    await proc?.stop();
    await sf?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('checks the settings and stores them with the connection', async () => {
    const credentials = { client_id: CLIENT, username: USER, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
    const bad = await admin<{ detail: string }>('POST', '/crm/connections', { website_id: websiteId, workspace_id: workspaceId, provider: 'salesforce', credentials, settings: { max_api_share: 2 } });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/max_api_share must be a number above 0 and at most 1/);
    const noUser = await admin<{ detail: string }>('POST', '/crm/connections', { website_id: websiteId, workspace_id: workspaceId, provider: 'salesforce', credentials: { ...credentials, username: undefined } });
    expect(noUser.status).toBe(400);
    const added = await admin<ConnectionJson>('POST', '/crm/connections', {
      website_id: websiteId, workspace_id: workspaceId, provider: 'salesforce', credentials, settings: { page_size: 10, max_api_share: 0.3, pause_minutes: 5 },
    });
    expect(added.status).toBe(201);
    expect(added.body.settings).toEqual({ page_size: 10, max_api_share: 0.3, pause_minutes: 5 });
    expect(JSON.stringify(added.body)).not.toContain('PRIVATE KEY');
    id = added.body.id;
  });

  it('pauses at its share of the allocation, keeps what it read, and resumes from there on the next sync', async () => {
    const paused = await syncAndWait();
    expect(paused).toMatchObject({ health: 'never-synced', last_error: null, last_success_at: null, pause_reason: expect.stringContaining('max_api_share 0.3') });
    expect(Date.parse(paused.paused_until!)).toBeGreaterThan(Date.now() + 4 * 60_000);
    expect(paused.api_usage!.limit).toBe(40);
    expect(paused.api_usage!.used / 40).toBeGreaterThanOrEqual(0.3);
    const store = await sql();
    const kept = Number((await store.query<{ n: string }>('SELECT count(*) AS n FROM crm_contacts WHERE website_id = $1', [websiteId])).rows[0]!.n);
    expect(kept).toBeGreaterThan(0);
    // The schedule leaves it alone while paused.
    const due = (await store.query<{ id: string }>("SELECT id FROM connections WHERE status = 'active' AND (paused_until IS NULL OR paused_until <= now())")).rows.map((r) => r.id);
    expect(due).not.toContain(id);

    sf.resetAllocation(100_000);
    const callsBefore = sf.calls.filter((c) => c.endpoint === 'query').length;
    const done = await syncAndWait();
    expect(done).toMatchObject({ health: 'ok', paused_until: null, pause_reason: null, last_error: null });
    // Resumed, not restarted: the stages phase (the first query of a sync) was not read again.
    const resumedQueries = sf.calls.filter((c) => c.endpoint === 'query').slice(callsBefore);
    expect(resumedQueries.some((c) => /FROM OpportunityStage/.test(c.query['q'] ?? ''))).toBe(false);
    const deals = Number((await store.query<{ n: string }>('SELECT count(*) AS n FROM deals WHERE website_id = $1', [websiteId])).rows[0]!.n);
    expect(deals).toBe(sf.org.all('Opportunity').length);
  });

  it('announces every stage an opportunity entered at its own time, and only new ones after', async () => {
    await drained();
    const opportunity = sf.org.all('Opportunity').find((o) => sf.org.all('OpportunityHistory').filter((h) => h['OpportunityId'] === o['Id']).length >= 3)!;
    const history = sf.org.all('OpportunityHistory').filter((h) => h['OpportunityId'] === opportunity['Id']).sort((a, b) => String(a['CreatedDate']).localeCompare(String(b['CreatedDate'])));
    const mine = () => milestones().filter((m) => m.milestone_id.startsWith(`salesforce:deal:${String(opportunity['Id'])}:`));
    const stages = [...new Set(history.map((h) => stageKey(String(h['StageName']))))];
    const byStage = new Map(mine().map((m) => [m.stage, m.occurred_at]));
    for (const stage of stages) expect(byStage.has(stage)).toBe(true);
    const firstEntered = history[0]!;
    expect(byStage.get(stageKey(String(firstEntered['StageName'])))).toBe(new Date(String(firstEntered['CreatedDate']).replace(/([+-]\d{2})(\d{2})$/, '$1:$2')).toISOString());
    expect(byStage.has('deal_created')).toBe(true);

    const count = mine().length;
    sf.org.update('Opportunity', String(opportunity['Id']), { StageName: 'Perception Analysis' });
    await syncAndWait();
    await drained();
    const after = mine().slice(count);
    expect(after.map((m) => m.stage)).toEqual(['perception_analysis']);
  });

  it('removes what Salesforce deleted from the mirror on the next incremental sync', async () => {
    const store = await sql();
    const count = async (table: string): Promise<number> => Number((await store.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE website_id = $1`, [websiteId])).rows[0]!.n);
    const [deals, contacts] = [await count('deals'), await count('crm_contacts')];
    const opportunity = sf.org.all('Opportunity')[0]!;
    const lead = sf.org.all('Lead').find((l) => l['IsConverted'] !== true)!;
    sf.org.remove('Opportunity', String(opportunity['Id']));
    sf.org.remove('Lead', String(lead['Id']));
    const done = await syncAndWait();
    expect(done.last_error).toBeNull();
    expect([await count('deals'), await count('crm_contacts')]).toEqual([deals - 1, contacts - 1]);
    const gone = await store.query('SELECT 1 FROM deals WHERE website_id = $1 AND crm_id = $2', [websiteId, String(opportunity['Id'])]);
    expect(gone.rows).toEqual([]);
  });
});
