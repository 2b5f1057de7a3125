// crm-sync's HubSpot sync as the runner starts it: embedded PGlite, the in-process bus, a stand-in
// module capturing what crm-sync publishes, the admin API, and a local HubSpot. One process (and
// one PGlite) serves the file's tests in order; the crash test restarts it on the same data dir.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { defineStandIn, loadConfig, startModules, type Envelope, type RunningProcess, type RunnableModule, type SqlStore } from '@sightline/kit';
import type { DealStageChangedV1, MilestoneReachedV1, CrmMembersSyncedV1, DealCreatedV1 } from '@sightline/proto-schemas';
import { createCrmSyncModule } from '../index';
import { PROVIDERS } from '../connectors/registry';
import { FakeHubspot, seedExampleCrm, type ExampleCrm } from '../../test/hubspot-server';

const CAPTURED = ['deal.created', 'deal.stage_changed', 'milestone.reached', 'crm.members_synced'] as const;

/** A module that only listens: everything crm-sync publishes, as the bus delivers it. */
function captureModule(into: Envelope[]): RunnableModule {
  return defineStandIn({
    name: 'capture',
    needs: {},
    async create() {
      const handler = async (envelope: Envelope): Promise<void> => {
        into.push(envelope);
      };
      return { consumers: Object.fromEntries(CAPTURED.map((type) => [type, handler])) };
    },
  });
}

interface AdminAnswer<T> {
  status: number;
  body: T;
}

interface ConnectionJson {
  id: string;
  status: string;
  health: string;
  sync_in_progress: boolean;
  synced_through: string | null;
  sync_started_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  last_sync_records: number | null;
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

describe('crm-sync HubSpot sync (embedded module)', () => {
  const workspaceId = randomUUID();
  const websiteId = randomUUID();
  const otherWebsiteId = randomUUID();
  const credentialsKey = 'test-credentials-key-0123456789abcdef';
  const logLines: string[] = [];
  const responses: string[] = [];
  const messages: Envelope[] = [];
  let dataDir: string;
  let fake: FakeHubspot;
  let crm: ExampleCrm;
  let proc: RunningProcess;
  let connectionId: string;

  const start = async (): Promise<RunningProcess> => {
    const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: `crmsync${Date.now()}`, SIGHTLINE_DEMO: 'off' });
    const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
    // The schedule is set never to fire during the test: syncs here start through the admin API.
    const crmSync = createCrmSyncModule({ providerUrls: { hubspot: fake.url }, credentialsKey, syncCron: '0 0 1 1 *' });
    return startModules({ config, modules: [crmSync, captureModule(messages)], logger });
  };

  const admin = async <T>(method: string, path: string, body?: unknown): Promise<AdminAnswer<T>> => {
    const response = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${proc.settings.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    responses.push(text);
    return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
  };

  const sql = (): Promise<SqlStore> => proc.stores.sql('crm_sync');

  /** Starts a sync through the admin API and waits until the connection reports it finished. */
  const syncAndWait = async (id: string, full = false): Promise<ConnectionJson> => {
    const before = (await admin<ConnectionJson>('GET', `/crm/connections/${id}`)).body;
    const started = await admin<ConnectionJson>('POST', `/crm/connections/${id}/sync${full ? '?full=true' : ''}`);
    expect(started.status).toBe(202);
    expect(started.body.sync_in_progress).toBe(true);
    return waitFor('the sync to finish', async () => {
      const now = (await admin<ConnectionJson>('GET', `/crm/connections/${id}`)).body;
      const finished = !now.sync_in_progress && (now.last_success_at !== before.last_success_at || now.last_error_at !== before.last_error_at);
      return finished ? now : null;
    });
  };

  const ofType = <P>(type: string, website = websiteId): Envelope<P>[] => messages.filter((m) => m.type === type && m.website_id === website) as Envelope<P>[];

  /** Waits until the outbox has published everything committed so far. */
  const drained = async (): Promise<void> => {
    const store = await sql();
    await waitFor('the outbox to drain', async () => Number((await store.query<{ n: string }>('SELECT count(*) AS n FROM outbox WHERE published_at IS NULL')).rows[0]?.n) === 0);
    await new Promise((r) => setTimeout(r, 200));
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-crm-sync-'));
    fake = new FakeHubspot({ maxPageSize: 2, rateLimit: { max: 5, intervalMs: 1000 }, customContactProperties: ['sightline_sales_value'] });
    await fake.start();
    crm = seedExampleCrm(fake);
    proc = await start();
  }, 60_000);

  afterAll(async () => {
    await proc?.stop();
    await fake?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('adds a connection, validating the provider and credentials, and never echoes them', async () => {
    const unknown = await admin<{ allowed: string[] }>('POST', '/crm/connections', { website_id: websiteId, workspace_id: workspaceId, provider: 'zoho', credentials: { access_token: 'x' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.allowed).toEqual([...PROVIDERS]);
    expect(PROVIDERS).toContain('hubspot');
    // HubSpot takes no settings: a mapping meant for another CRM is refused, not stored.
    const withSettings = await admin('POST', '/crm/connections', { website_id: websiteId, workspace_id: workspaceId, provider: 'hubspot', credentials: { access_token: fake.token }, settings: { lead_stage_field: 'Status' } });
    expect(withSettings.status).toBe(400);
    const noToken = await admin('POST', '/crm/connections', { website_id: websiteId, workspace_id: workspaceId, provider: 'hubspot', credentials: { token: fake.token } });
    expect(noToken.status).toBe(400);

    const created = await admin<ConnectionJson>('POST', '/crm/connections', { website_id: websiteId, workspace_id: workspaceId, provider: 'hubspot', credentials: { access_token: fake.token } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'active', health: 'never-synced', sync_in_progress: false });
    expect(JSON.stringify(created.body)).not.toMatch(/credentials|access_token/);
    connectionId = created.body.id;

    const list = await admin<{ data: ConnectionJson[] }>('GET', `/crm/connections?website_id=${websiteId}`);
    expect(list.body.data.map((c) => c.id)).toEqual([connectionId]);
    const stored = await (await sql()).query<{ credentials: Buffer }>('SELECT credentials FROM connections WHERE id = $1', [connectionId]);
    expect(stored.rows[0]?.credentials.toString('latin1')).not.toContain(fake.token);
  });

  it('mirrors a full sync and publishes each deal, milestone and membership once', async () => {
    const status = await syncAndWait(connectionId);
    expect(status).toMatchObject({ health: 'ok', last_error: null, last_sync_records: 2 + 3 + 5 + 4 });
    // The next sync starts two minutes before this one started (an overlap for late writes).
    expect(Date.parse(status.sync_started_at!) - Date.parse(status.synced_through!)).toBe(120_000);

    const store = await sql();
    const count = async (table: string) => Number((await store.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE website_id = $1`, [websiteId])).rows[0]?.n);
    expect([await count('pipelines'), await count('companies'), await count('crm_contacts'), await count('deals')]).toEqual([2, 3, 5, 4]);
    const buckets = await store.query<{ crm_id: string; bucket: string; stage_name: string }>('SELECT crm_id, bucket, stage_name FROM deals WHERE website_id = $1', [websiteId]);
    expect(Object.fromEntries(buckets.rows.map((r) => [r.crm_id, r.bucket]))).toEqual({
      [crm.deals.expansion]: 'open', [crm.deals.pilot]: 'won', [crm.deals.lost]: 'lost', [crm.deals.renewal]: 'open',
    });

    await drained();
    const created = ofType<DealCreatedV1>('deal.created');
    expect(created.map((m) => m.payload.crm_id).sort()).toEqual(Object.values(crm.deals).sort());
    expect(created.find((m) => m.payload.crm_id === crm.deals.expansion)?.payload).toMatchObject({
      amount: 12000, currency: 'EUR', bucket: 'open', stage_name: 'Qualified To Buy', contact_emails: ['ada@acme.com', 'bob@acme.com'],
    });
    expect(created.every((m) => m.source === 'crm:hubspot')).toBe(true);

    const milestones = ofType<MilestoneReachedV1>('milestone.reached');
    const ids = milestones.map((m) => m.payload.milestone_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(milestones.filter((m) => m.payload.stage === 'deal_created')).toHaveLength(4);
    expect(milestones.filter((m) => m.payload.stage === 'deal_won').map((m) => m.payload.amount)).toEqual([5000]);
    // A deal milestone names every contact of the deal (contacts sends a deal stage to the ad platforms for their conversions).
    expect(milestones.find((m) => m.payload.stage === 'deal_created' && m.payload.amount === 12000)?.payload.contact_emails).toEqual(['ada@acme.com', 'bob@acme.com']);
    expect(milestones.find((m) => m.payload.stage === 'deal_won')?.payload.contact_emails).toEqual(['cy@globex.com']);
    expect(milestones.filter((m) => m.payload.stage === 'deal_lost')).toHaveLength(1);

    const members = ofType<CrmMembersSyncedV1>('crm.members_synced');
    const dealMembers = members.filter((m) => m.payload.subject === 'deal');
    expect(dealMembers).toHaveLength(4);
    const acme = members.filter((m) => m.payload.subject === 'company' && m.payload.name === 'Acme').at(-1);
    expect(acme?.payload.members.map((p) => p.email)).toEqual(['ada@acme.com', 'bob@acme.com']);
  });

  it('syncs incrementally: only changed records are fetched, and a stage move is announced with both buckets', async () => {
    const messagesBefore = messages.length;
    fake.upsert('deals', { dealstage: 'closedwon', closedate: new Date().toISOString() }, crm.deals.expansion);
    const newContact = fake.upsert('contacts', { email: 'fay@globex.com', lifecyclestage: 'lead', associatedcompanyid: crm.companies.globex });
    const requestsBefore = fake.requests.length;

    const status = await syncAndWait(connectionId);
    expect(status).toMatchObject({ health: 'ok', last_sync_records: 2 + 1 + 1 });
    const calls = fake.requests.slice(requestsBefore);
    expect(calls.some((r) => r.method === 'GET' && r.path.startsWith('/crm/v3/objects/'))).toBe(false);
    expect(calls.filter((r) => r.path.endsWith('/search')).map((r) => r.path)).toEqual([
      '/crm/v3/objects/companies/search', '/crm/v3/objects/contacts/search', '/crm/v3/objects/deals/search',
    ]);

    await drained();
    const fresh = messages.slice(messagesBefore).filter((m) => m.website_id === websiteId);
    expect(fresh.filter((m) => m.type === 'deal.created')).toEqual([]);
    const moved = fresh.filter((m) => m.type === 'deal.stage_changed') as Envelope<DealStageChangedV1>[];
    expect(moved).toHaveLength(1);
    expect(moved[0]?.payload).toMatchObject({ crm_id: crm.deals.expansion, old_stage_id: 'qualifiedtobuy', stage_id: 'closedwon', old_bucket: 'open', bucket: 'won' });
    expect(fresh.filter((m) => m.type === 'milestone.reached').map((m) => (m.payload as MilestoneReachedV1).stage).sort()).toEqual(['deal_won', 'lead']);
    const globex = fresh.filter((m) => m.type === 'crm.members_synced').map((m) => m.payload as CrmMembersSyncedV1);
    expect(globex.map((g) => g.members.map((p) => p.email))).toEqual([['cy@globex.com', 'fay@globex.com']]);
    const contact = await (await sql()).query('SELECT email FROM crm_contacts WHERE website_id = $1 AND crm_id = $2', [websiteId, newContact]);
    expect(contact.rows).toEqual([{ email: 'fay@globex.com' }]);
  });

  it('rides out a 429 storm, waiting as asked and never exceeding the stated rate', async () => {
    const messagesBefore = messages.length;
    const requestsBefore = fake.requests.length;
    fake.rateLimitStorm(3, 1);
    const status = await syncAndWait(connectionId, true);
    expect(status).toMatchObject({ health: 'ok', last_sync_records: 2 + 3 + 6 + 4 });
    const calls = fake.requests.slice(requestsBefore);
    const limited = calls.filter((r) => r.status === 429);
    expect(limited).toHaveLength(3);
    // Retry-After: 1 was honoured between the storm's answers.
    const storm = calls.slice(0, 4).map((r) => r.at);
    for (let i = 1; i < storm.length; i++) expect(storm[i]! - storm[i - 1]!).toBeGreaterThanOrEqual(1000);
    // X-HubSpot-RateLimit-Max 5 per Interval-Milliseconds 1000: no window of 1000 ms held more.
    expect(fake.maxInWindow(1000, (r) => r.at >= calls[0]!.at && !r.path.endsWith('/search'))).toBeLessThanOrEqual(5);
    // A full re-sync of an unchanged CRM announces nothing.
    await drained();
    expect(messages.slice(messagesBefore).filter((m) => m.website_id === websiteId)).toEqual([]);
  });

  it('reports a failure on the connection, and success again once fixed', async () => {
    const replaced = await admin<ConnectionJson>('POST', '/crm/connections', { website_id: websiteId, workspace_id: workspaceId, provider: 'hubspot', credentials: { access_token: 'pat-na1-revoked-token' } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.id).toBe(connectionId);
    const failed = await syncAndWait(connectionId);
    expect(failed).toMatchObject({ health: 'failing' });
    expect(failed.last_error).toContain('401');
    expect(failed.last_error).not.toContain('pat-na1-revoked-token');

    await admin('POST', '/crm/connections', { website_id: websiteId, workspace_id: workspaceId, provider: 'hubspot', credentials: { access_token: fake.token } });
    const fixed = await syncAndWait(connectionId);
    expect(fixed).toMatchObject({ health: 'ok' });
    expect(Date.parse(fixed.last_success_at!)).toBeGreaterThan(Date.parse(fixed.last_error_at!));
  });

  it('refuses a second sync of the same connection while one runs', async () => {
    fake.failAfterPages(1, 'hang');
    const first = await admin('POST', `/crm/connections/${connectionId}/sync?full=true`);
    expect(first.status).toBe(202);
    const second = await admin<{ title: string }>('POST', `/crm/connections/${connectionId}/sync`);
    expect(second.status).toBe(409);
    fake.clearFaults();
    await waitFor('the sync to finish', async () => !(await admin<ConnectionJson>('GET', `/crm/connections/${connectionId}`)).body.sync_in_progress);
  });

  it('resumes a sync interrupted mid-way (process stopped) after its last committed page, with no duplicates', async () => {
    const added = await admin<ConnectionJson>('POST', '/crm/connections', { website_id: otherWebsiteId, workspace_id: workspaceId, provider: 'hubspot', credentials: { access_token: fake.token } });
    const otherId = added.body.id;
    // Pipelines, two pages of companies and one of contacts commit; the next request hangs.
    fake.failAfterPages(4, 'hang');
    expect((await admin('POST', `/crm/connections/${otherId}/sync`)).status).toBe(202);
    await fake.whenHanging();
    await proc.stop();

    const requestsBefore = fake.requests.length;
    fake.clearFaults();
    proc = await start();
    const interrupted = (await admin<ConnectionJson & { resume_cursor?: string }>('GET', `/crm/connections/${otherId}`)).body;
    expect(interrupted.last_error).toMatch(/interrupted/);
    const cursor = await (await sql()).query<{ resume_cursor: string | null }>('SELECT resume_cursor FROM connections WHERE id = $1', [otherId]);
    expect(cursor.rows[0]?.resume_cursor).not.toBeNull();

    const status = await syncAndWait(otherId);
    expect(status.health).toBe('ok');
    const resumed = fake.requests.slice(requestsBefore);
    expect(resumed[0]?.path).toBe('/crm/v3/objects/contacts');
    expect(resumed[0]?.query['after']).toBeDefined();

    const store = await sql();
    const count = async (table: string) => Number((await store.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE website_id = $1`, [otherWebsiteId])).rows[0]?.n);
    expect([await count('pipelines'), await count('companies'), await count('crm_contacts'), await count('deals')]).toEqual([2, 3, 6, 4]);
    await drained();
    const created = ofType<DealCreatedV1>('deal.created', otherWebsiteId);
    expect(created.map((m) => m.payload.crm_id).sort()).toEqual(Object.values(crm.deals).sort());
    const milestoneIds = ofType<MilestoneReachedV1>('milestone.reached', otherWebsiteId).map((m) => m.payload.milestone_id);
    expect(new Set(milestoneIds).size).toBe(milestoneIds.length);
    const envelopeIds = messages.map((m) => m.id);
    expect(new Set(envelopeIds).size).toBe(envelopeIds.length);
  });

  it('disconnects: credentials erased, no further syncs', async () => {
    const removed = await admin<ConnectionJson>('DELETE', `/crm/connections/${connectionId}`);
    expect(removed.body).toMatchObject({ status: 'disconnected', health: 'disconnected' });
    expect((await admin('POST', `/crm/connections/${connectionId}/sync`)).status).toBe(409);
    const stored = await (await sql()).query<{ credentials: Buffer }>('SELECT credentials FROM connections WHERE id = $1', [connectionId]);
    expect(stored.rows[0]?.credentials.length).toBe(0);
  });

  it('never put a credential in an answer or a log line', () => {
    expect(logLines.length).toBeGreaterThan(0);
    for (const secret of [fake.token, 'pat-na1-revoked-token']) {
      expect(responses.filter((r) => r.includes(secret))).toEqual([]);
      expect(logLines.filter((l) => l.includes(secret))).toEqual([]);
    }
  });
});
