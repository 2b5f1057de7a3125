// A Salesforce backfill through the connector, against the stand-in org (test/salesforce-server.ts,
// answering as Salesforce documents, in this process): one embedded crm-sync (PGlite, in-process
// bus) pulls an org of 100,000 records (leads, contacts, accounts, opportunities with contact roles
// and stage histories) page by page into its mirror, announcing every deal, stage and membership
// through its outbox. Then incremental syncs: with nothing changed (the fixed cost of a sync), and
// after 50 edits and 5 deletions, to show an incremental sync's API calls follow the changes, not
// the org. Measured: wall time, API calls by endpoint, peak RSS of the process.
//   npm run bench -- salesforce
//   BENCH_SF_RECORDS=100000 (split 30% leads, 30% contacts, 10% accounts, 30% opportunities)
const { generateKeyPairSync, randomUUID } = require('node:crypto');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir, loadavg } = require('node:os');
const { join } = require('node:path');
const { recordSection, machine, fmt, requireTypeScript } = require('./lib');

const RECORDS = Number(process.env.BENCH_SF_RECORDS ?? 100_000);
const CLIENT = '3MVG9sightline.bench.client';
const USER = 'integration@bench.test';

async function run() {
  const { seedOrg, startSalesforceServer } = requireTypeScript(join(__dirname, '..', 'services', 'crm-sync', 'test', 'salesforce-server.ts'));
  const { createLogger, loadConfig, startModules } = require('@sightline/kit');
  const { MODULE_REGISTRY, TARGET_NAMES, SETTINGS_SECTIONS } = require('@sightline/cli');
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const sf = await startSalesforceServer({ clientIds: [CLIENT], usernames: [USER], jwtPublicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }), dailyAllocation: 1_000_000 });
  const seedStarted = Date.now();
  seedOrg(sf.org, { leads: Math.round(RECORDS * 0.3), contacts: Math.round(RECORDS * 0.3), accounts: Math.round(RECORDS * 0.1), opportunities: Math.round(RECORDS * 0.3), seed: 11, days: 365 });
  const seeded = ['Lead', 'Contact', 'Account', 'Opportunity', 'OpportunityContactRole', 'OpportunityHistory'].map((t) => [t, sf.org.all(t).length]);
  process.stdout.write(`seeded ${seeded.map(([t, n]) => `${n} ${t}`).join(', ')} in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s\n`);

  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-bench-salesforce-'));
  const config = loadConfig({
    SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'error', SIGHTLINE_DEMO: 'off',
    SIGHTLINE_SALESFORCE_LOGIN_URL: sf.url, SIGHTLINE_CRM_SYNC_CRON: '0 0 1 1 *',
  }, SETTINGS_SECTIONS);
  const modules = await Promise.all(MODULE_REGISTRY.filter((e) => e.name === 'crm-sync').map((e) => e.create(config, TARGET_NAMES)));
  const proc = await startModules({ config, modules, logger: createLogger({ level: 'error' }) });
  // The embedded stores run on this process's main thread: while a page is applied, a status poll
  // can find its kept-alive socket closed. Polls (GET) are asked again; nothing else is.
  const admin = async (method, path, body) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const r = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, {
          method, headers: { authorization: `Bearer ${proc.settings.adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}),
        });
        return await r.json();
      } catch (error) {
        if (method !== 'GET' || attempt >= 5) throw error;
      }
    }
  };
  let peakRss = 0;
  const sampler = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage().rss); }, 100);
  const loadBefore = loadavg()[0];
  const results = [];
  try {
    const connection = await admin('POST', '/crm/connections', {
      website_id: randomUUID(), workspace_id: randomUUID(), provider: 'salesforce',
      credentials: { client_id: CLIENT, username: USER, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) },
      settings: { max_api_share: 1 },
    });
    const sync = async (name, full) => {
      const callsBefore = sf.calls.length;
      peakRss = process.memoryUsage().rss;
      const started = Date.now();
      const before = await admin('GET', `/crm/connections/${connection.id}`);
      await admin('POST', `/crm/connections/${connection.id}/sync${full ? '?full=true' : ''}`);
      for (;;) {
        await new Promise((r) => setTimeout(r, 200));
        const now = await admin('GET', `/crm/connections/${connection.id}`);
        if (!now.sync_in_progress && (now.last_success_at !== before.last_success_at || now.last_error_at !== before.last_error_at)) {
          if (now.last_error_at !== before.last_error_at) throw new Error(`sync failed: ${now.last_error}`);
          const calls = sf.calls.slice(callsBefore);
          const byEndpoint = {};
          for (const c of calls) byEndpoint[c.endpoint] = (byEndpoint[c.endpoint] ?? 0) + 1;
          results.push({ name, seconds: (Date.now() - started) / 1000, records: now.last_sync_records, calls: calls.length, byEndpoint, rssMb: peakRss / 2 ** 20 });
          process.stdout.write(`${name}: ${JSON.stringify(results.at(-1))}\n`);
          return;
        }
      }
    };
    await sync('full backfill', true);
    await sync('incremental, nothing changed', false);
    // 50 edits and 5 deletions across the objects, one minute after the last sync began.
    const at = Date.now() + 60_000;
    const opportunities = sf.org.all('Opportunity').filter((o) => o.IsClosed === false).slice(0, 20);
    for (const o of opportunities) sf.org.update('Opportunity', o.Id, { StageName: 'Negotiation/Review' }, at);
    for (const c of sf.org.all('Contact').slice(0, 15)) sf.org.update('Contact', c.Id, { Email: `moved.${c.Id}@bench.test` }, at);
    for (const a of sf.org.all('Account').slice(0, 15)) sf.org.update('Account', a.Id, { Name: `Renamed ${a.Id}` }, at);
    for (const l of sf.org.all('Lead').filter((x) => x.IsConverted === false).slice(0, 5)) sf.org.remove('Lead', l.Id, at);
    await sync('incremental, 50 edits + 5 deletions', false);
  } finally {
    clearInterval(sampler);
    await proc.stop();
    await sf.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const loadAfter = loadavg()[0];
  const total = seeded.reduce((n, [, c]) => n + c, 0);
  const rows = results.map((r) => `| ${r.name} | ${fmt(r.seconds)} | ${r.records} | ${fmt(r.records / r.seconds, 0)} | ${r.calls} | ${Object.entries(r.byEndpoint).map(([k, v]) => `${k} ${v}`).join(', ')} | ${fmt(r.rssMb, 0)} |`);
  const body = [
    `Machine: ${machine()}; load average ${fmt(loadBefore)} → ${fmt(loadAfter)} while measuring. One embedded crm-sync (PGlite, in-process bus) and the Salesforce stand-in in the same Node process (its SOQL evaluation and JSON encoding are in these figures). The org: ${seeded.map(([t, n]) => `${n} ${t}`).join(', ')} (${total} rows). Pages of 2,000 records; each page of opportunities also reads their contact roles and history (2 more queries). The baseline is the incremental sync with nothing changed: the fixed cost every scheduled sync pays.`,
    '',
    '| sync | seconds | records applied | records/s | API calls | by endpoint | peak RSS (MB) |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  recordSection('salesforce', body);
}

module.exports = { run };
