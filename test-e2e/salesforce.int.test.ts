// Salesforce on PostgreSQL + Redis + RabbitMQ: the shared suite, then a write-back across a kill -9
// of the crm-sync process. Processes run the built CLI (`sightline start --target=...`): one for
// gateway, ingest, attribution and contacts, one for crm-sync. The stand-in org sits behind a proxy
// (the login host; the login answer's instance_url points back at it, so data calls go through it
// too) that can hold answers: the outcome is PATCHed in Sightline, crm-sync sends the Contact PATCH,
// the org applies it while its answer is held, crm-sync is killed with SIGKILL before it records
// anything, and a new crm-sync process on the same stores takes the row over once the dead
// process's lease ends (SIGHTLINE_CRM_WRITEBACK_LEASE_MS) and sends it again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distributedServers } from '@sightline/kit/testing/servers';
import { adminClient } from './admin-client';
import { distributedProfile } from './profiles';
import { startSightline, type SightlineProcess } from './processes';
import { crmAdmin, crmWritebacks, findConversions, patchOutcome, syncAndWait, waitFor } from './crm-e2e';
import {
  SALESFORCE_SERVICES,
  WRITEBACK_SETTINGS,
  browseAndConvert,
  connectSalesforce,
  describeSalesforce,
  patchesTo,
  pickContacts,
  salesforceProxy,
  seedLargeOrg,
  startSalesforceStandIn,
  type SalesforceProxy,
  type SalesforceStandIn,
} from './salesforce.suite';

describeSalesforce('PostgreSQL + Redis + RabbitMQ', distributedProfile(SALESFORCE_SERVICES));

const ADMIN_TOKEN = 'salesforce-crash-admin-token';
const DAY = 86_400_000;

describe('a write-back reaches the Salesforce Contact through a kill -9 of crm-sync while the answer is held (RabbitMQ + PostgreSQL + Redis)', () => {
  let main: SightlineProcess;
  let crm: SightlineProcess;
  let standIn: SalesforceStandIn;
  let proxy: SalesforceProxy;
  let cleanup: () => Promise<void>;
  let env: Record<string, string>;
  const t0 = Date.now();
  const dirs = [mkdtempSync(join(tmpdir(), 'sightline-sf-main-')), mkdtempSync(join(tmpdir(), 'sightline-sf-crm-'))];
  const startCrm = () => startSightline(['start', '--target=crm-sync'], { ...env, SIGHTLINE_DATA_DIR: dirs[1] as string });

  beforeAll(async () => {
    const servers = await distributedServers(SALESFORCE_SERVICES);
    cleanup = servers.cleanup;
    standIn = await startSalesforceStandIn();
    proxy = await salesforceProxy(standIn.sf.url);
    // The connector logs in at the proxy: the JWT's audience is the proxy's URL.
    standIn.options.loginUrl = proxy.url;
    seedLargeOrg(standIn.sf, t0 - 2 * DAY);
    env = {
      SIGHTLINE_POSTGRES_URL: servers.postgresUrl,
      SIGHTLINE_REDIS_URL: servers.redisUrl,
      SIGHTLINE_AMQP_URL: servers.amqpUrl,
      SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
      SIGHTLINE_ADMIN_TOKEN: ADMIN_TOKEN,
      SIGHTLINE_CURSOR_SECRET: 'salesforce-crash-cursor-secret',
      SIGHTLINE_DEMO: 'off',
      SIGHTLINE_RPC_TIMEOUT_MS: '5000',
      SIGHTLINE_CREDENTIALS_KEY: 'salesforce-crash-credentials-key',
      SIGHTLINE_SALESFORCE_LOGIN_URL: proxy.url,
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
    await standIn?.sf.close();
    await cleanup?.();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('the Contact holds the values, the org saw the same PATCH at most twice, and the write-back ends done', async () => {
    const { sf, credentials } = standIn;
    const post = adminClient(main.adminUrl, ADMIN_TOKEN);
    const ws = await post('/workspaces', { name: 'Crash Salesforce', plan: 'internal', timezone: 'UTC', currency: 'USD' });
    const site = await post(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' });
    const key = String((await post('/keys', { workspace_id: ws['id'] }))['key']);
    const website = { id: String(site['id']), workspace_id: String(ws['id']) };
    const { browsers } = await browseAndConvert(main.baseUrl, String(site['public_id']), key, pickContacts(sf, 2), t0);
    await findConversions(main.baseUrl, key, browsers, t0);
    const person = browsers[0]!;

    let admin = crmAdmin(crm.adminUrl, ADMIN_TOKEN);
    // The default page size (2,000): a page's contact roles and history are read in id lists short
    // enough for Salesforce's 16,384-character URI limit, which the stand-in enforces.
    const connectionId = await connectSalesforce(admin, website, credentials, WRITEBACK_SETTINGS);
    await syncAndWait(admin, connectionId, true);
    // Every call went through the proxy (the token answer's instance_url was rewritten).
    expect(sf.calls.filter((c) => c.endpoint === 'query').length).toBeGreaterThan(0);

    // The org applies the PATCH, but its answer never comes back to this crm-sync process.
    proxy.holding = true;
    await patchOutcome(main.baseUrl, key, person.conversionId, { status: 'won', sales_value: 4200 });
    await waitFor('the PATCH to reach the org', async () => (proxy.held > 0 ? true : undefined), 45_000);
    crm.child.kill('SIGKILL');
    await crm.stop();
    expect(patchesTo(sf, 'Contact', person.contactId)).toHaveLength(1);
    // The kill really came after Salesforce applied the write.
    expect(sf.org.get('Contact', person.contactId)).toMatchObject({ Sightline_Status__c: 'won', Sightline_Sales_Value__c: 4200 });
    proxy.holding = false;

    crm = await startCrm();
    admin = crmAdmin(crm.adminUrl, ADMIN_TOKEN);
    const rows = await waitFor('the write-back done after the restart', async () => {
      const r = await crmWritebacks(admin, website.id, person.conversionId);
      return r.length > 0 && r.every((row) => row['status'] === 'done') ? r : undefined;
    }, 90_000);
    expect(rows).toHaveLength(1);
    expect(sf.org.get('Contact', person.contactId)).toMatchObject({ Sightline_Status__c: 'won', Sightline_Sales_Value__c: 4200, Email: person.email });
    // An sObject PATCH sets fields to values: sending it again leaves the record as one PATCH did
    // (idempotent), so the retry after the takeover is safe. At most twice, and every time the same values.
    const patches = proxy.patches.filter((p) => p.path.endsWith(`/sobjects/Contact/${person.contactId}`));
    expect(patches.length).toBeGreaterThanOrEqual(1);
    expect(patches.length).toBeLessThanOrEqual(2);
    expect(patchesTo(sf, 'Contact', person.contactId)).toHaveLength(patches.length);
    for (const p of patches) expect(p.body).toEqual({ Sightline_Status__c: 'won', Sightline_Sales_Value__c: 4200 });

    // Another sync after the restart sends nothing more.
    await syncAndWait(admin, connectionId);
    await new Promise((r) => setTimeout(r, 2000));
    expect(patchesTo(sf, 'Contact', person.contactId)).toHaveLength(patches.length);
  }, 240_000);
});
