// Ingest throughput: batches of 200 realistic events (from @sightline/datagen) through POST /v1/events,
// measured until every accepted event is queryable in ClickHouse, with request latency, the CPU
// every process spent per 1,000 events (the figure that carries to bigger machines: throughput on a
// shared machine is noisy), the load average beside it, and RSS per minute.
// Baseline in the same run: the same number of rows inserted straight into chDB (no HTTP, bus,
// identity or sessions), 200 rows and 2,500 rows per insert — the store's own ceiling here.
//   npm run bench -- ingest                                        (embedded, 60 s)
//   BENCH_SECONDS=600 npm run bench -- ingest                      (the 10-minute soak, RSS per minute)
//   BENCH_MODE=distributed BENCH_REPLICAS=1,2 npm run bench -- ingest
//       (gateway, N ingest replicas and a ClickHouse server (chDB behind the HTTP shim) as separate
//        processes on RabbitMQ, PostgreSQL and Redis; once with each replica count, and the ratio)
const { spawn } = require('node:child_process');
const { Worker } = require('node:worker_threads');
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { recordSection, machine, fmt, deleteRabbitNamespace } = require('./lib');
const { threadCpu, threadGroups, processCpu, loadAverage } = require('./cpu-meter');

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const MODE = process.env.BENCH_MODE ?? 'embedded';
const REPLICAS = (process.env.BENCH_REPLICAS ?? '1,2').split(',').map(Number);
const PARTITIONS = 16;

async function run() {
  if (MODE === 'distributed') return runDistributed();
  return runEmbedded();
}

/** Sends for SECONDS from a worker thread, then waits until every accepted event is queryable. */
async function measure(target) {
  const { key, siteId } = await setUpWorkspace(target);
  const rss = [];
  const loads = [loadAverage()];
  const rssTimer = setInterval(() => rss.push(target.rss()), 1000);
  // Messages waiting in the bus per minute: a consumer falling behind holds memory that is not a leak.
  const backlog = [];
  const backlogTimer = setInterval(() => void target.backlog?.().then((n) => backlog.push(n), () => undefined), 60_000);
  const loadTimer = setInterval(() => loads.push(loadAverage()), 10_000);
  const cpuBefore = target.cpu();
  const started = Date.now();
  let loadTid = null;
  const result = await new Promise((resolve, reject) => {
    const worker = new Worker(join(__dirname, 'ingest-load.js'), { workerData: { baseUrl: target.baseUrl, key, seconds: SECONDS, concurrency: CONCURRENCY, seed: 1 } });
    worker.on('message', (m) => (m.tid !== undefined ? (loadTid = m.tid) : resolve(m)));
    worker.once('error', reject);
  });
  const sendSeconds = (Date.now() - started) / 1000;
  await storedEvents(target, siteId, result.sent);
  const queryableSeconds = (Date.now() - started) / 1000;
  const cpuAfter = target.cpu();
  clearInterval(rssTimer);
  clearInterval(loadTimer);
  clearInterval(backlogTimer);
  if (target.backlog) backlog.push(await target.backlog());
  loads.push(loadAverage());
  const latencies = result.latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  return { ...result, loadTid, sendSeconds, queryableSeconds, perSecond: result.sent / queryableSeconds, p50: pct(50), p99: pct(99), rss, loads, cpuBefore, cpuAfter, backlog };
}

const loadText = (loads) => `${loads[0].toFixed(1)} → ${Math.max(...loads).toFixed(1)} (peak) → ${loads[loads.length - 1].toFixed(1)}`;
const perThousand = (seconds, events) => (seconds / events) * 1000;

/** RSS per minute (the peak in each), and whether the last 5 minutes stay within 5 % of their first. */
function rssByMinute(rss) {
  const minutes = [];
  for (let i = 0; i * 60 < rss.length; i += 1) minutes.push(Math.max(...rss.slice(i * 60, (i + 1) * 60)) / 2 ** 20);
  return minutes;
}

async function runEmbedded() {
  // The same load twice in one run: the default durable bus (its journal under the data directory)
  // and the memory-only bus (SIGHTLINE_BUS_DURABLE=false, what earlier versions ran) as the baseline.
  const runs = [];
  for (const durable of [true, false]) {
    const target = await startEmbedded(['all'], { SIGHTLINE_BUS_DURABLE: String(durable) });
    try {
      const commitsBefore = target.journalCommits();
      const m = await measure(target);
      m.commits = target.journalCommits() - commitsBefore;
      m.journalBytes = target.journalBytes();
      runs.push({ durable, m });
    } finally {
      await target.stop();
    }
  }
  const [{ m }, { m: memoryOnly }] = runs;
  const groups = threadGroups(m.cpuBefore, m.cpuAfter);
  const serverCpu = Object.values(groups).reduce((s, v) => s + v, 0);
  const memoryCpu = Object.values(threadGroups(memoryOnly.cpuBefore, memoryOnly.cpuAfter)).reduce((s, v) => s + v, 0);
  const baseline = await chdbBaseline(Math.min(m.sent, 200_000));
  const minutes = rssByMinute(m.rss);
  const ratio = m.perSecond / memoryOnly.perSecond;
  const body = [
    `Machine: ${machine()}; load average ${loadText(m.loads)} while measuring the durable run, ${loadText(memoryOnly.loads)} the memory-only one (other work shares the 2 cores). Mode: **embedded** (one process: every module, PGlite, chDB, in-memory KV, in-process bus with one intake partition). ${CONCURRENCY} concurrent clients in a worker thread of the same process, batches of 200 events from @sightline/datagen, ${SECONDS} s of sending; a 503 is sent again after its Retry-After and counted. Two runs in this one: the durable bus (default: every queue journalled in LMDB under the data directory, a publish confirmed once flushed) and the memory-only bus (SIGHTLINE_BUS_DURABLE=false) as the baseline.`,
    '',
    '| figure | durable bus (default) | memory-only bus (baseline) |',
    '|---|---|---|',
    `| events accepted | ${m.sent} (${m.failed} failed requests) | ${memoryOnly.sent} (${memoryOnly.failed} failed) |`,
    `| answered 503 (backlog bound; sent again after Retry-After) | ${m.refused} | ${memoryOnly.refused} |`,
    `| sustained rate, sent → queryable in ClickHouse | **${fmt(m.perSecond, 0)} events/s** (${fmt(m.queryableSeconds, 1)} s until the last event was queryable) | ${fmt(memoryOnly.perSecond, 0)} events/s (${fmt(memoryOnly.queryableSeconds, 1)} s) |`,
    `| durable / memory-only rate | **${fmt(ratio, 2)}×** (${ratio >= 0.85 ? 'within' : 'beyond'} the 15 % the durable bus may cost) | 1.00× |`,
    `| request latency p50 / p99 | ${fmt(m.p50, 1)} / **${fmt(m.p99, 1)} ms** per 200-event batch | ${fmt(memoryOnly.p50, 1)} / ${fmt(memoryOnly.p99, 1)} ms |`,
    `| journal commits (each at most one flush to the disk) per 1,000 events | **${fmt((m.commits / m.sent) * 1000, 1)}** (${m.commits} in all; journal file ${fmt(m.journalBytes / 2 ** 20, 1)} MiB at the end) | — |`,
    `| CPU per 1,000 events, the server (all its threads) | **${fmt(perThousand(serverCpu, m.sent), 3)} CPU-s** (${fmt((serverCpu / m.sent) * 1e6, 0)} µs per event) | ${fmt(perThousand(memoryCpu, memoryOnly.sent), 3)} CPU-s |`,
    `| of which (durable run) | ${Object.entries(groups).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${fmt(perThousand(v, m.sent), 3)}`).join('; ')} | |`,
    `| CPU per 1,000 events, the load generator (worker thread) | ${fmt(perThousand(m.cpuSeconds, m.sent), 3)} CPU-s | ${fmt(perThousand(memoryOnly.cpuSeconds, memoryOnly.sent), 3)} CPU-s |`,
    `| what 2 cores would carry at that cost (server + load generator) | ${fmt(2 / ((serverCpu + m.cpuSeconds) / m.sent), 0)} events/s | ${fmt(2 / ((memoryCpu + memoryOnly.cpuSeconds) / memoryOnly.sent), 0)} events/s |`,
    `| baseline: same rows straight into chDB, 200 / 2,500 per insert | ${fmt(baseline.small, 0)} / ${fmt(baseline.large, 0)} rows/s (${fmt(baseline.smallCpuUs, 1)} / ${fmt(baseline.largeCpuUs, 1)} µs CPU per row) | |`,
    `| RSS (the process, load worker included), peak per minute | ${minutes.map((v) => fmt(v, 0)).join(', ')} MiB | ${rssByMinute(memoryOnly.rss).map((v) => fmt(v, 0)).join(', ')} MiB |`,
  ];
  if (m.backlog.length > 1) body.push(`| messages waiting in the in-process bus, per minute (all queues) | ${m.backlog.map((n) => String(n)).join(', ')} | ${memoryOnly.backlog.map((n) => String(n)).join(', ')} |`);
  if (minutes.length >= 10) {
    const last = minutes.slice(-5);
    const growth = (last[last.length - 1] - last[0]) / last[0] * 100;
    body.push(`| RSS over the last 5 minutes (durable run) | ${fmt(last[0], 0)} → ${fmt(last[last.length - 1], 0)} MiB (${growth >= 0 ? '+' : ''}${fmt(growth, 1)} %): **${Math.abs(growth) <= 5 ? 'flat' : 'not flat'}** (within 5 %) | |`);
  }
  const text = body.join('\n');
  process.stdout.write(`${text}\n`);
  recordSection(`ingest (embedded, ${SECONDS} s)`, text);
}

async function runDistributed() {
  const runs = [];
  for (const replicas of REPLICAS) {
    const target = await startDistributed(replicas);
    try {
      runs.push({ replicas, target, m: await measure(target) });
    } finally {
      await target.stop();
    }
  }
  const baseline = await chdbBaseline(200_000);
  const rows = [];
  for (const { replicas, target, m } of runs) {
    const spent = Object.fromEntries(Object.keys(m.cpuAfter).map((name) => [name, m.cpuAfter[name] - (m.cpuBefore[name] ?? 0)]));
    const ours = Object.entries(spent).filter(([name]) => !name.startsWith('shared:'));
    const total = ours.reduce((s, [, v]) => s + v, 0);
    rows.push({ replicas, m, spent, total, names: target.names });
  }
  const columns = rows.map((r) => `${r.replicas} ingest replica${r.replicas === 1 ? '' : 's'}`);
  const line = (label, f) => `| ${label} | ${rows.map(f).join(' | ')} |`;
  const processNames = [...new Set(rows.flatMap((r) => Object.keys(r.spent)))];
  const body = [
    `Machine: ${machine()}. Mode: **distributed**: gateway, ingest replicas and a ClickHouse server (chDB behind the ClickHouse HTTP shim, the one store every replica writes) as separate processes, on RabbitMQ, PostgreSQL and Redis; ${PARTITIONS} intake partitions. ${CONCURRENCY} concurrent clients in a worker thread of the benchmark process, batches of 200 events from @sightline/datagen, ${SECONDS} s of sending per run. CPU per process from /proc over the run; the shared servers (RabbitMQ, PostgreSQL, Redis) also serve other work on this machine, so theirs is an upper bound.`,
    '',
    `| figure | ${columns.join(' | ')} |`,
    `|---|${columns.map(() => '---').join('|')}|`,
    line('load average (start → peak → end)', (r) => loadText(r.m.loads)),
    line('events accepted (failed requests)', (r) => `${r.m.sent} (${r.m.failed})`),
    line('sustained rate, sent → queryable', (r) => `**${fmt(r.m.perSecond, 0)} events/s**`),
    line('request latency p50 / p99', (r) => `${fmt(r.m.p50, 1)} / ${fmt(r.m.p99, 1)} ms`),
    line('CPU-s per 1,000 events, Sightline processes', (r) => `**${fmt(perThousand(r.total, r.m.sent), 3)}**`),
    ...processNames.map((name) => line(`  ${name.replace('shared:', 'shared server: ')}`, (r) => (r.spent[name] === undefined ? '—' : fmt(perThousand(r.spent[name], r.m.sent), 3)))),
    line('peak RSS, Sightline processes', (r) => `${fmt(Math.max(...r.m.rss) / 2 ** 20, 0)} MiB`),
  ];
  if (rows.length === 2) {
    const [one, two] = rows;
    body.push('', `Ratio ${two.replicas} replicas / ${one.replicas}: events/s ${fmt(two.m.perSecond / one.m.perSecond, 2)}×; CPU-s per 1,000 events in the ingest replicas together ${fmt(ingestCpu(two) / ingestCpu(one), 2)}× (1.00× = adding a replica costs no extra CPU per event).`);
  }
  body.push('', `Baseline in the same run: chDB alone takes ${fmt(baseline.small, 0)} rows/s at 200 rows per insert and ${fmt(baseline.large, 0)} rows/s at 2,500 (${fmt(baseline.smallCpuUs, 1)} / ${fmt(baseline.largeCpuUs, 1)} µs CPU per row).`);
  const text = body.join('\n');
  process.stdout.write(`${text}\n`);
  recordSection(`ingest (distributed, ${REPLICAS.join(' and ')} ingest replicas, ${SECONDS} s)`, text);
}

function ingestCpu(row) {
  return perThousand(Object.entries(row.spent).filter(([name]) => name.startsWith('ingest')).reduce((s, [, v]) => s + v, 0), row.m.sent);
}

/** A workspace, a website and an API key for the load. */
async function setUpWorkspace(target) {
  const admin = async (path, body) => {
    const r = await fetch(`${target.adminUrl}/admin${path}`, { method: 'POST', headers: { authorization: `Bearer ${target.adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return r.json();
  };
  const ws = await admin('/workspaces', { name: 'Bench', plan: 'internal' });
  const site = await admin(`/workspaces/${ws.id}/websites`, { domain: 'bench.test' });
  const { key } = await admin('/keys', { workspace_id: ws.id });
  return { key, siteId: site.id };
}

/** Waits until at least `atLeast` events of the website are queryable; returns how many are. */
async function storedEvents(target, siteId, atLeast) {
  for (;;) {
    const r = await fetch(`${target.ingestAdminUrl}/admin/ingest/websites/${siteId}/stats`, { headers: { authorization: `Bearer ${target.adminToken}` } });
    const stored = (await r.json()).events;
    if (stored >= atLeast) return stored;
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** chDB alone, in a child process (one data directory per process): rows/s and CPU per row at 200 and 2,500 rows per insert. */
async function chdbBaseline(rows) {
  const dir = mkdtempSync(join(tmpdir(), 'sightline-bench-chdb-'));
  const script = `
    const { createStoreProvider, createLogger, runClickHouseMigrations } = require('@sightline/kit');
    const { processCpu } = require(${JSON.stringify(join(__dirname, 'cpu-meter'))});
    const { randomUUID } = require('node:crypto');
    (async () => {
      const p = createStoreProvider({ dataDir: ${JSON.stringify(dir)}, logger: createLogger({ level: 'silent' }) });
      const ch = await p.clickhouse('baseline');
      await runClickHouseMigrations(ch, ${JSON.stringify(join(__dirname, '..', 'services', 'ingest', 'migrations', 'clickhouse'))});
      const row = () => ({ event_id: randomUUID(), workspace_id: randomUUID(), website_id: randomUUID(), origin: 'api', event_type: 'pageview', event_name: '', occurred_at: new Date().toISOString(), received_at: new Date().toISOString(), anonymous_id: randomUUID(), identity_id: randomUUID(), email_hash: '', session_id: randomUUID(), revenue: null, currency: '', properties: '{}', url: 'https://bench.test/pricing?utm_source=google', hostname: 'bench.test', page: '/pricing', title: 'Pricing', referrer: 'https://www.google.com/', referrer_domain: 'google.com', screen: '1920x1080', source: 'google', medium: 'organic', campaign: '', term: '', content: '', channel: 'Organic Search', channel_rule: 'organic-search', click_ids: {}, browser: 'Chrome', operating_system: 'Windows', device_type: 'desktop', country: 'US', region: '', city: '', session_started_at: new Date().toISOString(), session_landing_page: '/pricing', session_channel: 'Organic Search', session_source: 'google', session_medium: 'organic', session_campaign: '', session_referrer_domain: 'google.com' });
      const out = {};
      for (const [name, size] of [['small', 200], ['large', 2500]]) {
        const t0 = Date.now();
        const c0 = processCpu();
        for (let i = 0; i < ${rows}; i += size) await ch.insert('events', Array.from({ length: size }, row), { dedupToken: randomUUID() });
        out[name] = ${rows} / ((Date.now() - t0) / 1000);
        out[name + 'CpuUs'] = (processCpu() - c0) / ${rows} * 1e6;
      }
      process.stdout.write(JSON.stringify(out));
      await p.close();
    })();`;
  const out = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { cwd: join(__dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (c) => (text += c));
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`baseline exited ${code}`))));
  });
  rmSync(dir, { recursive: true, force: true });
  return JSON.parse(out);
}

/** One embedded process; `targets` (default all) picks modules, to measure what each one adds. */
async function startEmbedded(targets = ['all'], env = {}) {
  const { createLogger, loadConfig, startModules } = require('@sightline/kit');
  const { MODULE_REGISTRY, TARGET_NAMES, SETTINGS_SECTIONS, resolveTargets } = require('@sightline/cli');
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-bench-ingest-'));
  const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'error', SIGHTLINE_DEMO: 'off', ...env }, SETTINGS_SECTIONS);
  const entries = targets.includes('all') ? MODULE_REGISTRY : resolveTargets(targets);
  const proc = await startModules({ config, logger: createLogger({ level: 'error' }), modules: await Promise.all(entries.map((e) => e.create(config, TARGET_NAMES))) });
  const adminUrl = `http://127.0.0.1:${proc.adminPort}`;
  return {
    baseUrl: `http://127.0.0.1:${proc.publicPort}`,
    adminUrl,
    ingestAdminUrl: adminUrl,
    adminToken: proc.settings.adminToken,
    rss: () => process.memoryUsage().rss,
    /** Per-thread CPU of this process (the load worker's thread ends before the second reading). */
    cpu: () => threadCpu(),
    metrics: () => proc.metrics.getMetricsAsJSON(),
    /** The in-process bus's journal: committed write transactions so far, and its file's size (0 when memory-only). */
    journalCommits: () => proc.bus.broker?.journal?.commits() ?? 0,
    journalBytes: () => proc.bus.broker?.journal?.sizeBytes() ?? 0,
    stores: () => proc.stores,
    queueStats: (service) => proc.bus.queueStats(service, ['main', 'partitioned', 'dead_letter']),
    deadLetters: (service) => proc.bus.takeDeadLetters(service, 1000),
    /** Messages ready in every service's queues (the in-process broker's own count). */
    backlog: async () => {
      const { consumedTypesByService } = require('@sightline/proto-schemas');
      let n = 0;
      for (const service of consumedTypesByService().keys()) {
        for (const q of await proc.bus.queueStats(service, ['main', 'partitioned', 'dead_letter'])) n += q.messages;
      }
      return n;
    },
    stop: async () => {
      await proc.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Gateway, `replicas` ingest processes and a ClickHouse server, on RabbitMQ, PostgreSQL and Redis, as Kubernetes runs them. */
async function startDistributed(replicas) {
  const { Client } = require('pg');
  const stamp = Date.now();
  const database = `sightline_bench_${stamp}`;
  const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const dirs = [];
  const tempDir = (prefix) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  const clickhouse = await startClickHouse(tempDir('sightline-bench-ch-'), 0);
  const adminToken = 'bench-admin-token-0123456789';
  const env = {
    SIGHTLINE_POSTGRES_URL: `postgres://postgres@127.0.0.1:5432/${database}`,
    SIGHTLINE_REDIS_URL: 'redis://127.0.0.1:6379',
    SIGHTLINE_AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
    SIGHTLINE_CLICKHOUSE_URL: clickhouse.url,
    SIGHTLINE_BUS_NAMESPACE: `bench-${stamp}`,
    SIGHTLINE_BUS_PARTITIONS: String(PARTITIONS),
    SIGHTLINE_ADMIN_TOKEN: adminToken,
    SIGHTLINE_LOG_LEVEL: 'error',
  };
  const gateway = await spawnTarget('gateway', { ...env, SIGHTLINE_PORT: '18080', SIGHTLINE_ADMIN_PORT: '19090', SIGHTLINE_DATA_DIR: tempDir('sightline-bench-gw-') });
  const ingests = [];
  for (let i = 0; i < replicas; i += 1) {
    ingests.push(await spawnTarget('ingest', { ...env, SIGHTLINE_PORT: String(18081 + i), SIGHTLINE_ADMIN_PORT: String(19091 + i), SIGHTLINE_DATA_DIR: tempDir(`sightline-bench-in${i}-`) }));
  }
  const { rssOf } = module.exports;
  const named = [['gateway', gateway.pid], ...ingests.map((c, i) => [`ingest ${i + 1}`, c.pid]), ['ClickHouse (chDB behind the HTTP shim)', clickhouse.pid]];
  const shared = () => [['shared:RabbitMQ', pidsOf('beam.smp')], ['shared:PostgreSQL', pidsOf('postgres')], ['shared:Redis', pidsOf('redis-server')]];
  return {
    baseUrl: 'http://127.0.0.1:18080',
    adminUrl: 'http://127.0.0.1:19090',
    ingestAdminUrl: 'http://127.0.0.1:19091',
    adminToken,
    names: named.map(([n]) => n),
    rss: () => named.reduce((s, [, pid]) => s + rssOf(pid), 0),
    cpu: () => Object.fromEntries([...named.map(([n, pid]) => [n, processCpu(pid)]), ...shared().map(([n, pids]) => [n, pids.reduce((s, pid) => s + safeCpu(pid), 0)])]),
    stop: async () => {
      for (const child of [...ingests, gateway]) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
      await clickhouse.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      deleteRabbitNamespace(env.SIGHTLINE_BUS_NAMESPACE);
      const c = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await c.end();
    },
  };
}

function pidsOf(name) {
  const pids = [];
  for (const entry of require('node:fs').readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

function safeCpu(pid) {
  try {
    return processCpu(pid);
  } catch {
    return 0;
  }
}

/** The ClickHouse HTTP shim over chDB, as its own process: the server every ingest replica writes to. */
async function startClickHouse(dataDir, port) {
  const child = spawn(process.execPath, [join(__dirname, '..', 'packages', 'kit', 'testing', 'run-clickhouse-shim.js'), dataDir, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const found = /^listening (\S+)$/m.exec(out);
      if (found) resolve(found[1]);
    });
    child.once('exit', (code) => reject(new Error(`ClickHouse shim exited ${code}`)));
  });
  return {
    url,
    pid: child.pid,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
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

module.exports = { run, startEmbedded, setUpWorkspace, storedEvents, rssOf: (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024 };
