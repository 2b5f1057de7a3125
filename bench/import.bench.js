// `sightline import` at scale: generated files through the real command (reader, row checks,
// batches, progress) into crm-sync's admin route on one embedded process (gateway + crm-sync,
// PGlite, in-process bus), as an operator runs it. Progress goes to stderr (a bar on a terminal,
// plain lines otherwise); the summary to stdout.
//   npm run bench -- import
//   BENCH_IMPORT_ROWS=100000 (spend and order rows)  BENCH_IMPORT_DEALS=2000 (deals: the mirror writes each one)
const { mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir, loadavg } = require('node:os');
const { join } = require('node:path');
const { recordSection, machine, fmt } = require('./lib');

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
const DEALS = Number(process.env.BENCH_IMPORT_DEALS ?? 2_000);
const BAD_EVERY = 100; // one spend row in a hundred is broken in the rejects run

function day(i) {
  return new Date(Date.UTC(2024, 0, 1) + (i % 365) * 86_400_000).toISOString().slice(0, 10);
}

function spendCsv(rows, badEvery) {
  const lines = ['platform,account_id,account_name,currency,date,campaign_id,campaign_name,ad_set_id,spend,impressions,clicks'];
  const bad = [];
  for (let i = 0; i < rows; i += 1) {
    const campaign = Math.floor(i / 365) % 400;
    const spend = badEvery && i % badEvery === 7 ? 'n/a' : ((i % 1000) / 10).toFixed(1);
    if (spend === 'n/a') bad.push(i + 2); // the header is line 1
    lines.push(`${i % 2 ? 'meta_ads' : 'google_ads'},acct-${i % 4},"Account ${i % 4}, EU",EUR,${day(i)},c${campaign},"Campaign ""${campaign}""",s${Math.floor(i / 365)},${spend},${i % 5000},${i % 70}`);
  }
  return { text: `${lines.join('\n')}\n`, bad };
}

function ordersNdjson(rows) {
  const lines = [];
  for (let i = 0; i < rows; i += 1) {
    const order = Math.floor(i / 3);
    lines.push(JSON.stringify({
      platform: 'shopify', order_id: `o${order}`, ordered_at: `${day(order)}T10:00:00Z`, currency: 'EUR', customer_email: `buyer${order % 5000}@example.com`,
      product_id: `sku${i % 3}`, product_name: `Product ${i % 3}`, quantity: 1 + (i % 2), unit_price: 9.5 + (i % 3),
    }));
  }
  return `${lines.join('\n')}\n`;
}

function dealsCsv(count) {
  const stages = [['Discovery', 'open'], ['Proposal', 'open'], ['Closed Won', 'won'], ['Closed Lost', 'lost']];
  const lines = ['crm_id,name,amount,currency,pipeline,stage,bucket,created_at,closed_at'];
  for (let i = 0; i < count; i += 1) {
    const [stage, bucket] = stages[i % 4];
    lines.push(`d${i},Deal ${i},${100 + i},EUR,Sales,${stage},${bucket},${day(i)}T12:00:00Z,${bucket === 'open' ? '' : `${day(i + 30)}`}`);
  }
  return `${lines.join('\n')}\n`;
}

async function run() {
  const { createLogger, loadConfig, startModules } = require('@sightline/kit');
  const { MODULE_REGISTRY, TARGET_NAMES, SETTINGS_SECTIONS, main } = require('@sightline/cli');
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-bench-import-'));
  const wanted = ['gateway', 'crm-sync'];
  const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'error', SIGHTLINE_DEMO: 'off' }, SETTINGS_SECTIONS);
  const modules = await Promise.all(MODULE_REGISTRY.filter((e) => wanted.includes(e.name)).map((e) => e.create(config, TARGET_NAMES)));
  const proc = await startModules({ config, modules, logger: createLogger({ level: 'error' }) });
  const url = `http://127.0.0.1:${proc.adminPort}`;
  const token = proc.settings.adminToken;
  const admin = async (path, body) => {
    const r = await fetch(`${url}/admin${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return r.json();
  };
  const results = [];
  const loadBefore = loadavg()[0];
  try {
    const ws = await admin('/workspaces', { name: 'Import bench', timezone: 'UTC', currency: 'EUR' });
    const domain = 'import-bench.test';
    const site = await admin(`/workspaces/${ws.id}/websites`, { domain });
    const sql = await proc.stores.sql('crm_sync');
    const outbox = async (type) => Number((await sql.query('SELECT count(*)::text AS n FROM outbox WHERE website_id = $1 AND type = $2', [site.id, type])).rows[0].n);

    const importOnce = async (name, kind, file, rows, extra = []) => {
      const started = Date.now();
      let failure = null;
      await main(['node', 'sightline', '--admin-url', url, '--admin-token', token, 'import', kind, file, '--website', domain, ...extra]).catch((error) => {
        failure = error;
      });
      const seconds = (Date.now() - started) / 1000;
      results.push({ name, rows, seconds, perSecond: rows / seconds });
      return failure;
    };

    const spend = spendCsv(ROWS, 0);
    const spendFile = join(dataDir, 'spend.csv');
    writeFileSync(spendFile, spend.text);
    if (await importOnce(`spend, CSV (${(spend.text.length / 2 ** 20).toFixed(1)} MiB)`, 'spend', spendFile, ROWS)) throw new Error('the spend import failed');
    const spendRows = Number((await sql.query("SELECT sum(jsonb_array_length(payload->'rows'))::text AS n FROM outbox WHERE website_id = $1 AND type = 'ads.report_imported'", [site.id])).rows[0].n);
    if (spendRows !== ROWS) throw new Error(`expected ${ROWS} spend rows published, found ${spendRows}`);

    const broken = spendCsv(ROWS, BAD_EVERY);
    const brokenFile = join(dataDir, 'spend-broken.csv');
    const rejectsFile = join(dataDir, 'spend-broken.rejects');
    writeFileSync(brokenFile, broken.text);
    const failure = await importOnce(`spend, CSV, 1 row in ${BAD_EVERY} broken`, 'spend', brokenFile, ROWS, ['--rejects', rejectsFile]);
    const rejectedLines = readFileSync(rejectsFile, 'utf8').trim().split('\n').map((l) => Number(/^line (\d+):/.exec(l)?.[1]));
    if (!failure || rejectedLines.join(',') !== broken.bad.join(',')) throw new Error(`rejected lines differ from the broken ones (${rejectedLines.length} vs ${broken.bad.length})`);

    const ordersFile = join(dataDir, 'orders.ndjson');
    writeFileSync(ordersFile, ordersNdjson(ROWS));
    if (await importOnce('orders, NDJSON (3 lines per order)', 'orders', ordersFile, ROWS)) throw new Error('the orders import failed');

    const dealsFile = join(dataDir, 'deals.csv');
    writeFileSync(dealsFile, dealsCsv(DEALS));
    if (await importOnce('deals, CSV (new: mirror + 2-3 messages each)', 'deals', dealsFile, DEALS)) throw new Error('the deals import failed');
    const created = await outbox('deal.created');
    if (await importOnce('deals, CSV, the same file again (no change)', 'deals', dealsFile, DEALS)) throw new Error('the deals re-import failed');
    if ((await outbox('deal.created')) !== created || created !== DEALS) throw new Error('the re-import published deals again');
  } finally {
    await proc.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const loadAfter = loadavg()[0];
  const body = [
    `Machine: ${machine()}; load average ${fmt(loadBefore)} → ${fmt(loadAfter)} while measuring. One embedded process (gateway + crm-sync: PGlite, in-process bus) and the \`sightline import\` command in the same Node process: file reading, row checks, batches of at most 500 rows / 96 kB, one request in flight, the route's checks, the mirror or the outbox, and the relay publishing to the bus.`,
    '',
    '| file | rows | seconds | rows/s |',
    '|---|---|---|---|',
    ...results.map((r) => `| ${r.name} | ${r.rows} | ${fmt(r.seconds, 1)} | ${fmt(r.perSecond, 0)} |`),
  ].join('\n');
  process.stdout.write(`${body}\n`);
  recordSection('import', body);
}

module.exports = { run };
