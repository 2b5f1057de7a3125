// CRM stage outcomes to the ad platforms on PostgreSQL + Redis + RabbitMQ: the shared suite, then
// a kill -9 of the crm-sync process mid-push. Processes run the built CLI (`sightline start
// --target=...`): one for gateway, ingest, attribution and contacts, one for crm-sync. The ad
// platforms' stand-ins sit behind proxies that can hold answers: the deal is won in HubSpot, the
// next sync queues the uploads, the platforms receive (and accept) them while their answers are
// held, crm-sync is killed with SIGKILL before it records anything, and a new crm-sync process on
// the same stores takes the rows over once the dead process's lease ends
// (SIGHTLINE_CRM_WRITEBACK_LEASE_MS) and sends them again with the same dedup ids (Google
// transactionId, Meta event_id, LinkedIn eventId): each platform holds exactly one event.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distributedServers } from '@sightline/kit/testing/servers';
import {
  AD_CONVERSION_SERVICES,
  adRows,
  arriveAndConvert,
  connectAll,
  crmAdmin,
  crmDealFor,
  describeAdConversions,
  expectSentOnce,
  received,
  startAdStandIns,
  syncAndWait,
  waitFor,
  winDeal,
  type AdStandIns,
} from './ad-conversions.suite';
import { adminClient } from './admin-client';
import { distributedProfile } from './profiles';
import { startSightline, type SightlineProcess } from './processes';

describeAdConversions('PostgreSQL + Redis + RabbitMQ', distributedProfile(AD_CONVERSION_SERVICES));

const ADMIN_TOKEN = 'ad-conversions-crash-admin-token';

describe('a deal won in the CRM reaches each ad platform once through a kill -9 of crm-sync mid-push (RabbitMQ + PostgreSQL + Redis)', () => {
  let main: SightlineProcess;
  let crm: SightlineProcess;
  let standIns: AdStandIns;
  let cleanup: () => Promise<void>;
  let env: Record<string, string>;
  const dirs = [mkdtempSync(join(tmpdir(), 'sightline-adconv-main-')), mkdtempSync(join(tmpdir(), 'sightline-adconv-crm-'))];
  const startCrm = () => startSightline(['start', '--target=crm-sync'], { ...env, SIGHTLINE_DATA_DIR: dirs[1] as string });

  beforeAll(async () => {
    const servers = await distributedServers(AD_CONVERSION_SERVICES);
    cleanup = servers.cleanup;
    standIns = await startAdStandIns();
    env = {
      SIGHTLINE_POSTGRES_URL: servers.postgresUrl,
      SIGHTLINE_REDIS_URL: servers.redisUrl,
      SIGHTLINE_AMQP_URL: servers.amqpUrl,
      SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
      SIGHTLINE_ADMIN_TOKEN: ADMIN_TOKEN,
      SIGHTLINE_CURSOR_SECRET: 'ad-conversions-crash-cursor-secret',
      SIGHTLINE_DEMO: 'off',
      SIGHTLINE_RPC_TIMEOUT_MS: '5000',
      ...standIns.env,
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
    await standIns?.close();
    await cleanup?.();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('sends once per platform although crm-sync died after the platforms received the events and before it recorded them', async () => {
    const post = adminClient(main.adminUrl, ADMIN_TOKEN);
    const ws = await post('/workspaces', { name: 'Crash ads', plan: 'internal', timezone: 'UTC', currency: 'EUR' });
    const site = await post(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' });
    const key = String((await post('/keys', { workspace_id: ws['id'] }))['key']);
    const website = { id: String(site['id']), workspace_id: String(ws['id']) };
    let admin = crmAdmin(crm.adminUrl, ADMIN_TOKEN);
    const connectionId = await connectAll(admin, website, standIns.hubspot);

    const ada = await arriveAndConvert(main.baseUrl, String(site['public_id']), key, 'ada-crash', 'granted');
    const deal = crmDealFor(standIns.hubspot, ada, 9000);
    await syncAndWait(admin, connectionId);

    // The platforms take the events in, but their answers never come back to this process.
    for (const proxy of Object.values(standIns.proxies)) proxy.holding = true;
    winDeal(standIns.hubspot, deal);
    await syncAndWait(admin, connectionId);
    await waitFor('a platform to receive the push', async () => (Object.values(standIns.proxies).some((p) => p.held > 0) ? true : undefined), 30_000);
    crm.child.kill('SIGKILL');
    await crm.stop();
    const heldBeforeKill = Object.fromEntries(Object.entries(standIns.proxies).map(([name, p]) => [name, p.held]));
    const got = received(standIns, ada.conversionId);
    const acceptedBeforeKill = got.google.length + got.meta.length + got.linkedin.length;
    expect(acceptedBeforeKill).toBeGreaterThan(0); // the kill really came after a platform accepted an event
    for (const proxy of Object.values(standIns.proxies)) proxy.holding = false;

    crm = await startCrm();
    admin = crmAdmin(crm.adminUrl, ADMIN_TOKEN);
    const rows = await waitFor('every upload done after the restart', async () => {
      const r = await adRows(admin, website.id, ada.conversionId);
      return ['google_ads', 'meta_ads', 'linkedin_ads'].every((t) => r[t]?.['status'] === 'done') ? r : undefined;
    }, 90_000);
    expect(Object.keys(rows).sort()).toEqual(['google_ads', 'linkedin_ads', 'meta_ads']);
    expectSentOnce(standIns, ada, 9000);

    // The platforms whose answer was lost got the same event a second time, and kept one.
    const posts = {
      google: standIns.google.requests.filter((r) => r.path.includes('events:ingest') && JSON.stringify(r.body).includes(ada.conversionId)).length,
      meta: standIns.meta.meta.requests.filter((r) => JSON.stringify(r.body).includes(ada.conversionId)).length,
      linkedin: standIns.linkedin.requests.filter((r) => JSON.stringify(r.body).includes(ada.conversionId)).length,
    };
    for (const [name, held] of Object.entries(heldBeforeKill)) {
      if (held > 0) expect({ name, posts: posts[name as keyof typeof posts] }).toEqual({ name, posts: 2 });
    }
    // Another sync after the restart sends nothing more.
    await syncAndWait(admin, connectionId);
    await new Promise((r) => setTimeout(r, 2000));
    expectSentOnce(standIns, ada, 9000);
  }, 240_000);
});
