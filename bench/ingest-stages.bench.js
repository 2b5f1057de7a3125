// Where ingest's CPU goes, per event, measured so that it repeats on a shared machine (CPU time, not
// wall time): the embedded process under the ingest benchmark's load, with
//   - the CPU of every thread read from /proc/<pid>/task before and after (the main JavaScript
//     thread, Node's helpers and libuv pool, chDB's own threads), per event;
//   - a CPU profile of the main thread (node:inspector, 1 ms sampling) folded into pipeline stages by
//     the file of the nearest Sightline frame, scaled to the main thread's measured CPU;
//   - the store operations and bus deliveries per 1,000 events (the runtime's own metrics);
//   - what each consumer adds: the same load on gateway + ingest alone, then with each consumer
//     module added, in separate runs.
//   npm run bench -- ingest-stages        (PROFILE_SECONDS=20 of load per run after a 5 s warm-up)
// PROFILE_OUT=/tmp/ingest.cpuprofile keeps the full run's profile (open it in Chrome DevTools).
const { writeFileSync } = require('node:fs');
const { Worker } = require('node:worker_threads');
const { join } = require('node:path');
const { recordSection, machine, fmt } = require('./lib');
const { threadCpu, threadGroups, loadAverage, startProfile, foldProfile, topFunctions } = require('./cpu-meter');
const { startEmbedded, setUpWorkspace, storedEvents } = require('./ingest.bench');

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 20);
const WARMUP = Number(process.env.PROFILE_WARMUP ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);

const dist = (path) => (url) => url.includes(path);
/** Stage of a main-thread sample: the first rule matching a frame, walking from the leaf up. */
const RULES = [
  ['ingest: classification (user agent, geo, referrer, channel rules)', dist('/services/ingest/dist/classify/')],
  ['ingest: identity graph', dist('/services/ingest/dist/identity-graph')],
  ['ingest: sessions', dist('/services/ingest/dist/sessions')],
  ['ingest: raw events insert (rows)', dist('/services/ingest/dist/events.repo')],
  ['ingest: intake (input rules, schema, event building)', dist('/services/ingest/dist/intake')],
  ['ingest: RPC handler (idempotency, partitioning, publish)', dist('/services/ingest/dist/ingest.rpc')],
  ['ingest: pipeline (grouping, publishing downstream)', dist('/services/ingest/dist/')],
  ['attribution consumer and read model', dist('/services/attribution/dist/')],
  ['funnels consumer', dist('/services/funnels/dist/')],
  ['contacts, changefeed, automations consumers', (u) => /\/services\/(contacts|changefeed|automations|crm-sync)\/dist\//.test(u)],
  ['gateway: auth, limits, request validation', dist('/services/gateway/dist/')],
  ['kit: ClickHouse driver (row encoding, chDB calls)', (u) => /\/kit\/dist\/stores\/(chdb|clickhouse)/.test(u)],
  ['kit: PGlite (Postgres in WebAssembly, on this thread)', (u) => /\/kit\/dist\/stores\/(pglite|postgres)|@electric-sql\/pglite|^wasm:/.test(u)],
  ['kit: bus (envelopes, JSON, schema checks, routing)', (u) => /\/kit\/dist\/bus\/|\/proto-schemas\/dist\//.test(u)],
  ['kit: telemetry and store instrumentation', (u) => /\/kit\/dist\/telemetry\//.test(u)],
  ['HTTP server (node:http, express, body parsing)', (u) => /node_modules\/(express|body-parser|raw-body|router|finalhandler|on-finished|iconv-lite|qs|send|type-is)\/|node:_http|node:http/.test(u)],
];

/** One embedded process with `targets`, WARMUP s of load, then SECONDS s measured until queryable. */
async function profileRun(targets, withProfile) {
  const target = await startEmbedded(targets);
  try {
    const { key, siteId } = await setUpWorkspace(target);
    let loadTid = null;
    const load = (seconds, seed) => new Promise((resolve, reject) => {
      const worker = new Worker(join(__dirname, 'ingest-load.js'), { workerData: { baseUrl: target.baseUrl, key, seconds, concurrency: CONCURRENCY, seed } });
      worker.on('message', (m) => (m.tid !== undefined ? (loadTid = m.tid) : resolve(m)));
      worker.once('error', reject);
    });
    await load(WARMUP, 1);
    const already = await storedEvents(target, siteId, 0);
    const loads = [loadAverage()];
    const before = threadCpu();
    const profile = withProfile ? await startProfile() : null;
    const t0 = Date.now();
    const { sent, cpuSeconds } = await load(SECONDS, 1_000);
    const stored = await storedEvents(target, siteId, already + sent);
    const wall = (Date.now() - t0) / 1000;
    const prof = profile ? await profile.stop() : null;
    const after = threadCpu();
    loads.push(loadAverage());
    if (prof && process.env.PROFILE_OUT) writeFileSync(process.env.PROFILE_OUT, JSON.stringify(prof));
    const events = stored - already;
    const groups = threadGroups(before, after, { workers: loadTid === null ? {} : { [loadTid]: 'load generator' } });
    const operations = withProfile ? await operationCounts(target, stored) : [];
    return { targets, events, wall, loads, groups, loadCpu: cpuSeconds, prof, operations };
  } finally {
    await target.stop();
  }
}

/** Store operations and bus deliveries per 1,000 events stored, from the runtime's metrics. */
async function operationCounts(target, events) {
  const out = [];
  for (const family of await target.metrics()) {
    if (!['sightline_store_query_duration_seconds', 'sightline_bus_consume_duration_seconds'].includes(family.name)) continue;
    const counts = new Map();
    for (const v of family.values) {
      if (!v.metricName?.endsWith('_count')) continue;
      const labels = Object.entries(v.labels).filter(([k]) => k !== 'outcome').map(([, x]) => x).join(' ');
      counts.set(labels, (counts.get(labels) ?? 0) + v.value);
    }
    for (const [labels, count] of counts) if (count / events * 1000 >= 0.05) out.push({ what: `${family.name.includes('store') ? 'store' : 'bus delivery'} ${labels}`, per1000: count / events * 1000 });
  }
  return out.sort((a, b) => b.per1000 - a.per1000);
}

const total = (groups) => Object.values(groups).reduce((s, v) => s + v, 0);
const us = (seconds, events) => (seconds / events) * 1e6;

async function run() {
  const full = await profileRun(['all'], true);
  const subsets = [
    ['gateway', 'ingest'],
    ['gateway', 'ingest', 'attribution'],
    ['gateway', 'ingest', 'funnels'],
    ['gateway', 'ingest', 'contacts', 'changefeed', 'automations'],
  ];
  const parts = [];
  for (const targets of subsets) parts.push(await profileRun(targets, false));

  const fullCpu = total(full.groups);
  const main = full.groups['main JavaScript thread'] ?? 0;
  const folded = foldProfile(full.prof, RULES);
  const busy = Object.entries(folded).filter(([k]) => k !== '(idle)').reduce((s, [, v]) => s + v, 0);
  // Samples are wall-clock slices of the main thread; on a shared machine some of that is time the
  // thread waited for a core, so the stages are scaled to the thread's measured CPU.
  const scale = main / busy;
  const base = parts[0];
  const baseUs = us(total(base.groups), base.events);

  const body = [
    `Machine: ${machine()}. Embedded process (every module), load from ${CONCURRENCY} clients in a worker thread as in the ingest benchmark, ${WARMUP} s warm-up, then ${SECONDS} s measured until every event was queryable. Load average ${full.loads.map((l) => fmt(l, 1)).join(' → ')} (full run). Method: per-thread CPU from /proc/<pid>/task; a 1 ms CPU profile of the main thread folded by the nearest Sightline frame and scaled to that thread's CPU (\`npm run bench -- ingest-stages\`, bench/cpu-meter.js).`,
    '',
    `All modules: ${full.events} events in ${fmt(full.wall, 1)} s; **${fmt(us(fullCpu, full.events), 0)} µs CPU per event** in the server (${fmt(fullCpu / full.events * 1000, 3)} CPU-s per 1,000), plus ${fmt(us(full.loadCpu, full.events), 0)} µs in the load generator.`,
    '',
    '| threads | µs CPU per event |',
    '|---|---|',
    ...Object.entries(full.groups).sort((a, b) => b[1] - a[1]).map(([k, v]) => `| ${k} | ${fmt(us(v, full.events), 1)} |`),
    '',
    '| main JavaScript thread, by stage | µs CPU per event |',
    '|---|---|',
    ...Object.entries(folded).filter(([k]) => k !== '(idle)').sort((a, b) => b[1] - a[1]).filter(([, v]) => us(v * scale, full.events) >= 0.5).map(([k, v]) => `| ${k} | ${fmt(us(v * scale, full.events), 1)} |`),
    '',
    'What each consumer adds (separate runs with the same load; the difference to gateway + ingest alone):',
    '',
    '| modules | events/s | µs CPU per event (server) | added by the consumer |',
    '|---|---|---|---|',
    ...parts.map((p, i) => `| ${p.targets.join(' + ')} | ${fmt(p.events / p.wall, 0)} | ${fmt(us(total(p.groups), p.events), 0)} | ${i === 0 ? '—' : fmt(us(total(p.groups), p.events) - baseUs, 0)} |`),
    `| all modules (the run above) | ${fmt(full.events / full.wall, 0)} | ${fmt(us(fullCpu, full.events), 0)} | ${fmt(us(fullCpu, full.events) - baseUs, 0)} (all consumers) |`,
    '',
    'Store operations and bus deliveries per 1,000 events (all modules):',
    '',
    ...full.operations.slice(0, 20).map((o) => `- ${o.what}: ${fmt(o.per1000, 1)}`),
    '',
    'Hottest functions on the main thread (share of its samples):',
    '',
    ...topFunctions(full.prof, 12).filter((f) => !f.name.startsWith('(idle)')).map((f) => `- ${f.name}: ${fmt((f.seconds / busy) * 100, 1)} %`),
  ];
  const text = body.join('\n');
  process.stdout.write(`${text}\n`);
  recordSection('ingest: CPU per event by stage (embedded)', text);
}

module.exports = { run };
if (require.main === module) {
  run().catch((error) => {
    process.stderr.write(`${error.stack || error}\n`);
    process.exit(1);
  });
}
