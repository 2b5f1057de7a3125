// Pipedrive on PostgreSQL + Redis + RabbitMQ: the shared suite, then a write-back across a kill -9
// of the crm-sync process. Processes run the built CLI (`sightline start --target=...`): one for
// gateway, ingest, attribution and contacts, one for crm-sync, whose Pipedrive API base URL
// (SIGHTLINE_PIPEDRIVE_URL) is a proxy in front of the stand-in company that can hold answers: the
// outcome is PATCHed in Sightline, crm-sync sends the person PATCH, the company applies it while
// its answer is held, crm-sync is killed with SIGKILL before it records anything, and a new
// crm-sync process on the same stores takes the row over once the dead process's lease ends
// (SIGHTLINE_CRM_WRITEBACK_LEASE_MS) and sends it again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distributedServers } from '@sightline/kit/testing/servers';
import { adminClient } from './admin-client';
import { DAY, browseAndConvert, crmAdmin, findConversions, holdingProxy, patchOutcome, syncAndWait, waitFor, writebacksDone, type HoldingProxy } from './crm-e2e';
import { PIPEDRIVE_SERVICES, apiCalls, connectPipedrive, describePipedrive, personPatches, pickPersons, seedCompany, startPipedriveStandIn, type PipedriveStandIn } from './pipedrive.suite';
import { distributedProfile } from './profiles';
import { startSightline, type SightlineProcess } from './processes';

describePipedrive('PostgreSQL + Redis + RabbitMQ', distributedProfile(PIPEDRIVE_SERVICES));

const ADMIN_TOKEN = 'pipedrive-crash-admin-token';

describe('a write-back reaches the Pipedrive person through a kill -9 of crm-sync while the answer is held (RabbitMQ + PostgreSQL + Redis)', () => {
  let main: SightlineProcess;
  let crm: SightlineProcess;
  let standIn: PipedriveStandIn;
  let proxy: HoldingProxy;
  let cleanup: () => Promise<void>;
  let env: Record<string, string>;
  const t0 = Date.now();
  const dirs = [mkdtempSync(join(tmpdir(), 'sightline-pd-main-')), mkdtempSync(join(tmpdir(), 'sightline-pd-crm-'))];
  const startCrm = () => startSightline(['start', '--target=crm-sync'], { ...env, SIGHTLINE_DATA_DIR: dirs[1] as string });

  beforeAll(async () => {
    const servers = await distributedServers(PIPEDRIVE_SERVICES);
    cleanup = servers.cleanup;
    standIn = await startPipedriveStandIn();
    proxy = await holdingProxy(standIn.fake.url);
    seedCompany(standIn.fake, 300, t0);
    standIn.fake.setNow(new Date(t0 - DAY).toISOString());
    env = {
      SIGHTLINE_POSTGRES_URL: servers.postgresUrl,
      SIGHTLINE_REDIS_URL: servers.redisUrl,
      SIGHTLINE_AMQP_URL: servers.amqpUrl,
      SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
      SIGHTLINE_ADMIN_TOKEN: ADMIN_TOKEN,
      SIGHTLINE_CURSOR_SECRET: 'pipedrive-crash-cursor-secret',
      SIGHTLINE_DEMO: 'off',
      SIGHTLINE_RPC_TIMEOUT_MS: '5000',
      SIGHTLINE_CREDENTIALS_KEY: 'pipedrive-crash-credentials-key',
      SIGHTLINE_PIPEDRIVE_URL: proxy.url,
      SIGHTLINE_CRM_SYNC_CRON: '0 0 1 1 *',
      SIGHTLINE_AD_SPEND_PULL_CRON: '0 0 1 1 *',
      // A dead worker's rows come back after 8 s instead of 5 minutes; a call gives up after 4 s.
      SIGHTLINE_CRM_WRITEBACK_LEASE_MS: '8000',
      SIGHTLINE_CRM_WRITEBACK_CALL_TIMEOUT_MS: '4000',
    };
    main = await startSightline(['start', '--target=gateway,ingest,attribution,contacts'], { ...env, SIGHTLINE_DATA_DIR: dirs[0] as string });
    crm = await startCrm();
  }, 180_000);

  afterAll(async () => {
    await crm?.stop();
    await main?.stop();
    await proxy?.close();
    await standIn?.fake.close();
    await cleanup?.();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('the person holds the values, Pipedrive saw the same PATCH at most twice, and the write-back ends done', async () => {
    const { fake, fields } = standIn;
    const post = adminClient(main.adminUrl, ADMIN_TOKEN);
    const ws = await post('/workspaces', { name: 'Crash Pipedrive', plan: 'internal', timezone: 'UTC', currency: 'USD' });
    const site = await post(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' });
    const key = String((await post('/keys', { workspace_id: ws['id'] }))['key']);
    const website = { id: String(site['id']), workspace_id: String(ws['id']) };
    const { browsers } = await browseAndConvert(main.baseUrl, String(site['public_id']), key, pickPersons(fake, 2), t0, 'pd');
    await findConversions(main.baseUrl, key, browsers, t0);
    const person = browsers[0]!;
    const values = { [fields.status]: 'won', [fields.sales_value]: 4200 };

    let admin = crmAdmin(crm.adminUrl, ADMIN_TOKEN);
    const connectionId = await connectPipedrive(admin, website, standIn);
    await syncAndWait(admin, connectionId, true);
    // crm-sync knows only the proxy's URL: every call the company saw went through it.
    expect(fake.requests.filter((r) => r.path === '/api/v2/deals').length).toBeGreaterThan(0);

    // The company applies the PATCH, but its answer never comes back to this crm-sync process.
    proxy.holding = true;
    await patchOutcome(main.baseUrl, key, person.conversionId, { status: 'won', sales_value: 4200 }, 'pd');
    await waitFor('the PATCH to reach Pipedrive', async () => (proxy.held > 0 ? true : undefined), 45_000);
    crm.child.kill('SIGKILL');
    await crm.stop();
    expect(personPatches(fake, person.personId)).toHaveLength(1);
    // The kill really came after Pipedrive applied the write.
    expect(fake.persons.get(person.personId)!.custom_fields).toMatchObject(values);
    proxy.holding = false;

    crm = await startCrm();
    admin = crmAdmin(crm.adminUrl, ADMIN_TOKEN);
    const rows = await writebacksDone(admin, website.id, person.conversionId, 90_000);
    expect(rows).toHaveLength(1);
    expect(fake.persons.get(person.personId)!.custom_fields).toMatchObject(values);
    expect(fake.persons.get(person.personId)!.emails[0]!.value).toBe(person.email);
    // A person PATCH sets custom fields to values: sending it again leaves the person as one PATCH
    // did, so the retry after the takeover is safe. At most twice, and every time the same values.
    const patches = proxy.patches.filter((p) => p.path === `/api/v2/persons/${person.personId}`);
    expect(patches.length).toBeGreaterThanOrEqual(1);
    expect(patches.length).toBeLessThanOrEqual(2);
    expect(personPatches(fake, person.personId)).toHaveLength(patches.length);
    for (const p of patches) expect(p.body).toEqual({ custom_fields: values });

    // Another sync after the restart sends nothing more.
    await syncAndWait(admin, connectionId);
    await new Promise((r) => setTimeout(r, 2000));
    expect(personPatches(fake, person.personId)).toHaveLength(patches.length);
    expect(apiCalls(fake.requests).filter((r) => r.method !== 'GET')).toHaveLength(patches.length);
  }, 240_000);
});
