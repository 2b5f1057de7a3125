// Contacts and change-feed reads through the gateway: the first page and a page 500 pages deep of
// /v1/contacts over many conversions, a filtered page (status + type), a PATCH, and /v1/changes
// pages over many changes. Rows are bulk-loaded with SQL into the services' own tables (a
// documented bench-only path) so the load takes seconds, not hours.
//   npm run bench -- contacts                       (PostgreSQL + Redis + RabbitMQ, then embedded)
//   BENCH_CONTACTS=1000000 BENCH_CHANGES=10000000   (defaults; embedded uses a tenth of each)
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { recordSection, machine, fmt, distributedServers } = require('./lib');

const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 1_000_000);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 10_000_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 60);

async function run() {
  const rows = [];
  for (const mode of (process.env.BENCH_MODE ?? 'postgres,embedded').split(',')) {
    const scale = mode === 'embedded' ? 10 : 1;
    rows.push(...(await measure(mode, Math.floor(CONTACTS / scale), Math.floor(CHANGES / scale))));
  }
  const body = [
    `Machine: ${machine()}. Requests through the gateway (auth, limits, validation, RPC), one at a time, ${SAMPLES} samples each after 5 warm-up requests. PostgreSQL mode: PostgreSQL + Redis + RabbitMQ; embedded: PGlite + in-memory KV + in-process bus, at a tenth of the rows.`,
    '',
    '| mode | rows | request | p50 ms | p95 ms |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.mode} | ${r.rows} | ${r.name} | ${fmt(r.p50, 1)} | ${fmt(r.p95, 1)} |`),
    '',
    ...['postgres', 'embedded'].flatMap((mode) => {
      const first = rows.find((r) => r.mode === mode && r.name.startsWith('/contacts first page'));
      const deep = rows.find((r) => r.mode === mode && r.name.startsWith('/contacts page 501'));
      return first && deep ? [`Depth ratio (${mode}): page 501 / first page p50 = ${fmt(deep.p50 / first.p50, 2)} (keyset cursors: depth costs nothing).`] : [];
    }),
  ].join('\n');
  process.stdout.write(`${body}\n`);
  recordSection('contacts and changes', body);
}

async function measure(mode, contacts, changes) {
  const { createLogger, loadConfig, startModules } = require('@sightline/kit');
  const { MODULE_REGISTRY, TARGET_NAMES, SETTINGS_SECTIONS } = require('@sightline/cli');
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-bench-contacts-'));
  const env = { SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'error', SIGHTLINE_DEMO: 'off' };
  const distributed = mode === 'postgres' ? await distributedServers() : null;
  if (distributed) Object.assign(env, distributed.env);
  const wanted = ['gateway', 'contacts', 'changefeed'];
  const config = loadConfig(env, SETTINGS_SECTIONS);
  const modules = await Promise.all(MODULE_REGISTRY.filter((e) => wanted.includes(e.name)).map((e) => e.create(config, TARGET_NAMES)));
  const proc = await startModules({ config, logger: createLogger({ level: 'error' }), modules });
  try {
    const admin = async (path, body) =>
      (await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, { method: 'POST', headers: { authorization: `Bearer ${proc.settings.adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
    const ws = await admin('/workspaces', { name: 'Bench', plan: 'internal' });
    const site = await admin(`/workspaces/${ws.id}/websites`, { domain: 'bench.test' });
    const { key } = await admin('/keys', { workspace_id: ws.id });

    process.stdout.write(`[${mode}] loading ${contacts} contacts and ${changes} changes...\n`);
    const t0 = Date.now();
    const contactsDb = await proc.stores.sql('contacts');
    await contactsDb.query(
      `INSERT INTO contacts (id, workspace_id, website_id, identity_id, email, event_type, event_name, occurred_at, status, sales_value, currency)
       SELECT md5('c' || i)::uuid, $1, $2, md5('p' || (i / 2))::text, 'user' || i || '@example.com',
              CASE WHEN i % 3 = 0 THEN 'purchase' ELSE 'conversion' END, 'signup',
              now() - (i % 31536000) * interval '1 second',
              (ARRAY['new', 'qualified', 'won', 'lost'])[1 + i % 4], CASE WHEN i % 3 = 0 THEN (i % 500) + 10 END, 'USD'
         FROM generate_series(1, $3::int) AS i`,
      [ws.id, site.id, contacts],
    );
    const changesDb = await proc.stores.sql('changefeed');
    for (let from = 1; from <= changes; from += 1_000_000) {
      const to = Math.min(changes, from + 999_999);
      await changesDb.query(
        `INSERT INTO changes (seq, message_id, workspace_id, website_id, type, source, object_type, object_id, occurred_at, recorded_at, data)
         SELECT i, 'bench-' || i, $1, $2, (ARRAY['conversion.created', 'conversion.value_changed', 'stage.changed'])[1 + i % 3],
                CASE WHEN i % 2 = 0 THEN 'api:benchkey' ELSE 'crm:hubspot' END, 'contact', md5('c' || i),
                now() - ($4::int - i) * (interval '80 days' / $4::int), now() - ($4::int - i) * (interval '80 days' / $4::int), '{}'::jsonb
           FROM generate_series($3::int, $5::int) AS i`,
        [ws.id, site.id, from, changes, to],
      );
    }
    await changesDb.query('UPDATE change_seq SET last = $1', [changes]);
    await contactsDb.query('ANALYZE contacts');
    await changesDb.query('ANALYZE changes');
    process.stdout.write(`[${mode}] loaded in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);

    const base = `http://127.0.0.1:${proc.publicPort}/v1`;
    const headers = { authorization: `Bearer ${key}` };
    const get = async (path) => {
      const r = await fetch(`${base}${path}`, { headers });
      const body = await r.json();
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(body)}`);
      return body;
    };
    const timeIt = async (name, request) => {
      for (let i = 0; i < 5; i += 1) await request(i);
      const times = [];
      for (let i = 0; i < SAMPLES; i += 1) {
        const t = process.hrtime.bigint();
        await request(i);
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      times.sort((a, b) => a - b);
      return { mode, rows: name.includes('changes') ? changes : contacts, name, p50: times[Math.floor(times.length / 2)], p95: times[Math.floor(times.length * 0.95)] };
    };
    const deepCursor = async (path, pages) => {
      let cursor = null;
      for (let i = 0; i < pages; i += 1) cursor = (await get(`${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).next_cursor;
      return cursor;
    };

    const results = [];
    const list = '/contacts?website=bench.test&limit=50';
    results.push(await timeIt('/contacts first page (50 rows)', () => get(list)));
    const deep = await deepCursor(list, 500);
    results.push(await timeIt('/contacts page 501 (cursor)', () => get(`${list}&cursor=${encodeURIComponent(deep)}`)));
    results.push(await timeIt('/contacts filtered (status=won, type=purchase)', () => get('/contacts?website=bench.test&limit=50&status=won&type=purchase')));
    const ids = (await get(list)).data.map((c) => c.id);
    results.push(await timeIt('PATCH /contacts/{id} (sales_value)', async (i) => {
      const r = await fetch(`${base}/contacts/${ids[i % ids.length]}?website=bench.test`, { method: 'PATCH', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ sales_value: 1000 + i }) });
      await r.json();
    }));
    const since = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const feed = `/changes?website=bench.test&limit=100&since=${encodeURIComponent(since)}`;
    results.push(await timeIt('/changes first page (100, since 30 days)', () => get(feed)));
    const deepFeed = await deepCursor(feed, 500);
    results.push(await timeIt('/changes page 501 (cursor)', () => get(`/changes?website=bench.test&limit=100&cursor=${encodeURIComponent(deepFeed)}`)));
    return results;
  } finally {
    await proc.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await distributed?.cleanup();
  }
}

module.exports = { run };
