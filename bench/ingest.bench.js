// Ingest throughput: batches of 200 realistic events (from @sightline/datagen) through POST /v1/events,
// measured until every accepted event is queryable in ClickHouse, with request latency and RSS.
// Baseline in the same run: inserting the same number of rows straight into chDB (no HTTP, bus,
// identity or sessions) — the store's own ceiling on this machine.
//   npm run bench -- ingest                         (embedded, 60 s)
//   BENCH_SECONDS=300 npm run bench -- ingest       (the 5-minute soak, RSS sampled throughout)
//   BENCH_MODE=distributed npm run bench -- ingest  (gateway and ingest as separate processes on RabbitMQ)
const { spawn } = require('node:child_process');
const { Worker } = require('node:worker_threads');
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { recordSection, machine, fmt, deleteRabbitNamespace } = require('./lib');

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const MODE = process.env.BENCH_MODE ?? 'embedded';

async function run() {
  const target = MODE === 'distributed' ? await startDistributed() : await startEmbedded();
  try {
    const admin = async (path, body) => {
      const r = await fetch(`${target.adminUrl}/admin${path}`, { method: 'POST', headers: { authorization: `Bearer ${target.adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return r.json();
    };
    const ws = await admin('/workspaces', { name: 'Bench', plan: 'internal' });
    const site = await admin(`/workspaces/${ws.id}/websites`, { domain: 'bench.test' });
    const { key } = await admin('/keys', { workspace_id: ws.id });
    const rss = [];
    const rssTimer = setInterval(() => rss.push(target.rss()), 1000);
    const started = Date.now();
    const { latencies, sent, failed } = await new Promise((resolve, reject) => {
      const worker = new Worker(join(__dirname, 'ingest-load.js'), { workerData: { baseUrl: target.baseUrl, key, seconds: SECONDS, concurrency: CONCURRENCY, seed: 1 } });
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    const sendSeconds = (Date.now() - started) / 1000;
    let stored = 0;
    for (;;) {
      const r = await fetch(`${target.ingestAdminUrl}/admin/ingest/websites/${site.id}/stats`, { headers: { authorization: `Bearer ${target.adminToken}` } });
      stored = (await r.json()).events;
      if (stored >= sent) break;
      await new Promise((res) => setTimeout(res, 200));
    }
    const queryableSeconds = (Date.now() - started) / 1000;
    clearInterval(rssTimer);
    latencies.sort((a, b) => a - b);
    const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
    const baseline = await chdbBaseline(Math.min(sent, 200_000));
    const perSecond = sent / queryableSeconds;
    const minute = (i) => rss.slice(i * 60, (i + 1) * 60);
    const peak = Math.max(...rss);
    const firstMinutePeak = Math.max(...minute(0));
    const lastMinutePeak = Math.max(...(rss.length > 120 ? rss.slice(-60) : rss));

    const body = [
      `Machine: ${machine()}. Mode: **${MODE}**${MODE === 'distributed' ? ' (gateway and ingest as separate processes; RabbitMQ, PostgreSQL, Redis; ClickHouse = chDB in the ingest process)' : ' (one process: PGlite, chDB, in-memory KV, in-process bus)'}. ${CONCURRENCY} concurrent clients in a worker thread, batches of 200 events from @sightline/datagen, ${SECONDS} s of sending.`,
      '',
      '| figure | value |',
      '|---|---|',
      `| events accepted | ${sent} (${failed} failed requests) |`,
      `| sustained rate, sent → queryable in ClickHouse | **${fmt(perSecond, 0)} events/s** (${fmt(queryableSeconds, 1)} s until the last event was queryable; sending took ${fmt(sendSeconds, 1)} s) |`,
      `| request latency p50 / p99 | ${fmt(pct(50), 1)} ms / ${fmt(pct(99), 1)} ms per 200-event batch |`,
      `| baseline: same rows inserted straight into chDB, 200 per insert | ${fmt(baseline, 0)} rows/s (pipeline = ${fmt(perSecond / baseline * 100, 0)}% of the store's ceiling) |`,
      `| peak RSS (${MODE === 'distributed' ? 'gateway + ingest processes' : 'the process, load worker included'}) | ${fmt(peak / 2 ** 20, 0)} MiB; peak in first minute ${fmt(firstMinutePeak / 2 ** 20, 0)} MiB, in last minute ${fmt(lastMinutePeak / 2 ** 20, 0)} MiB |`,
    ].join('\n');
    process.stdout.write(`${body}\n`);
    recordSection(`ingest (${MODE}, ${SECONDS} s)`, body);
  } finally {
    await target.stop();
  }
}

async function chdbBaseline(rows) {
  const dir = mkdtempSync(join(tmpdir(), 'sightline-bench-chdb-'));
  // A child process: chDB allows one data directory per process.
  const script = `
    const { createStoreProvider, createLogger, runClickHouseMigrations } = require('@sightline/kit');
    const { randomUUID } = require('node:crypto');
    (async () => {
      const p = createStoreProvider({ dataDir: ${JSON.stringify(dir)}, logger: createLogger({ level: 'silent' }) });
      const ch = await p.clickhouse('baseline');
      await runClickHouseMigrations(ch, ${JSON.stringify(join(__dirname, '..', 'services', 'ingest', 'migrations', 'clickhouse'))});
      const row = () => ({ event_id: randomUUID(), workspace_id: randomUUID(), website_id: randomUUID(), origin: 'api', event_type: 'pageview', event_name: '', occurred_at: new Date().toISOString(), received_at: new Date().toISOString(), anonymous_id: randomUUID(), identity_id: randomUUID(), email_hash: '', session_id: randomUUID(), revenue: null, currency: '', properties: '{}', url: 'https://bench.test/pricing?utm_source=google', hostname: 'bench.test', page: '/pricing', title: 'Pricing', referrer: 'https://www.google.com/', referrer_domain: 'google.com', screen: '1920x1080', source: 'google', medium: 'organic', campaign: '', term: '', content: '', channel: 'Organic Search', channel_rule: 'organic-search', click_ids: {}, browser: 'Chrome', operating_system: 'Windows', device_type: 'desktop', country: 'US', region: '', city: '', session_started_at: new Date().toISOString(), session_landing_page: '/pricing', session_channel: 'Organic Search', session_source: 'google', session_medium: 'organic', session_campaign: '', session_referrer_domain: 'google.com' });
      const t0 = Date.now();
      for (let i = 0; i < ${rows}; i += 200) await ch.insert('events', Array.from({ length: 200 }, row), { dedupToken: randomUUID() });
      process.stdout.write(String(${rows} / ((Date.now() - t0) / 1000)));
      await p.close();
    })();`;
  const out = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { cwd: join(__dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (c) => (text += c));
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`baseline exited ${code}`))));
  });
  rmSync(dir, { recursive: true, force: true });
  return Number(out);
}

async function startEmbedded() {
  const { createLogger, loadConfig, startModules } = require('@sightline/kit');
  const { MODULE_REGISTRY, TARGET_NAMES } = require('@sightline/cli');
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-bench-ingest-'));
  const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'error', SIGHTLINE_DEMO: 'off' });
  const proc = await startModules({ config, logger: createLogger({ level: 'error' }), modules: await Promise.all(MODULE_REGISTRY.map((e) => e.create({ demo: false }, TARGET_NAMES))) });
  const adminUrl = `http://127.0.0.1:${proc.adminPort}`;
  return {
    baseUrl: `http://127.0.0.1:${proc.publicPort}`,
    adminUrl,
    ingestAdminUrl: adminUrl,
    adminToken: proc.settings.adminToken,
    rss: () => process.memoryUsage().rss,
    stop: async () => {
      await proc.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Gateway and ingest as separate processes on RabbitMQ, PostgreSQL and Redis, as Kubernetes runs them. */
async function startDistributed() {
  const { Client } = require('pg');
  const database = `sightline_bench_${Date.now()}`;
  const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const adminToken = 'bench-admin-token-0123456789';
  const env = {
    SIGHTLINE_POSTGRES_URL: `postgres://postgres@127.0.0.1:5432/${database}`,
    SIGHTLINE_REDIS_URL: 'redis://127.0.0.1:6379',
    SIGHTLINE_AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
    SIGHTLINE_BUS_NAMESPACE: `bench-${Date.now()}`,
    SIGHTLINE_ADMIN_TOKEN: adminToken,
    SIGHTLINE_LOG_LEVEL: 'error',
  };
  const dirs = [mkdtempSync(join(tmpdir(), 'sightline-bench-gw-')), mkdtempSync(join(tmpdir(), 'sightline-bench-in-'))];
  const gateway = await spawnTarget('gateway', { ...env, SIGHTLINE_PORT: '18080', SIGHTLINE_ADMIN_PORT: '19090', SIGHTLINE_DATA_DIR: dirs[0] });
  const ingest = await spawnTarget('ingest', { ...env, SIGHTLINE_PORT: '18081', SIGHTLINE_ADMIN_PORT: '19091', SIGHTLINE_DATA_DIR: dirs[1] });
  const { rssOf } = module.exports;
  return {
    baseUrl: 'http://127.0.0.1:18080',
    adminUrl: 'http://127.0.0.1:19090',
    ingestAdminUrl: 'http://127.0.0.1:19091',
    adminToken,
    rss: () => rssOf(gateway.pid) + rssOf(ingest.pid),
    stop: async () => {
      for (const child of [ingest, gateway]) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      deleteRabbitNamespace(env.SIGHTLINE_BUS_NAMESPACE);
      const c = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await c.end();
    },
  };
}

async function spawnTarget(target, env) {
  const child = spawn(process.execPath, [join(__dirname, '..', 'packages', 'cli', 'bin', 'sightline.js'), 'start', `--target=${target}`], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
  const ready = `http://127.0.0.1:${env.SIGHTLINE_ADMIN_PORT}/readyz`;
  for (let i = 0; i < 300; i += 1) {
    if (await fetch(ready).then((r) => r.ok, () => false)) return child;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${target} did not become ready`);
}

module.exports = { run, rssOf: (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024 };
