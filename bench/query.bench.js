// Analytics read latency on a large workspace: the dashboard, five-model attribution by channel
// and by campaign, a daily series, a three-level breakdown, paths and coverage (plus page views by
// channel), answered by attribution's own RPC handlers over embedded chDB (the request validated and
// coerced by the gateway's validator first, as the gateway would). The workspace (10M events by
// default) is generated with SQL straight into the service's fact tables (query-data.js), a
// documented bench-only path: ingest would need half an hour. The read model is then built from
// those facts by the operator rebuild (the same code as `sightline attribution rebuild`), timed.
// Also measured: peak RSS while serving, the time the read model takes to catch up after a bulk
// backfill delivered through the consumer (query-backfill.js), and the scale curve: the same
// 30-day queries over 45 and 180 days of history at the same traffic per day (the 90-day run is
// the main one). Baseline in the same run: the same data in PostgreSQL and five-model attribution
// by channel in plain SQL (query-pg.js), checked for the same totals.
//   npm run bench -- query                        (10M events; about 25 min on 2 cores with the scale curve)
//   npm run bench -- query --events=1000000       (a quick run; also BENCH_QUERY_EVENTS)
//   options: --runs=15 --warmups=2 --budget=60 (s per query) --period="last 30 days" --no-pg
//            --backfill=1000000 (events; 0 skips) --scale=45,180 (days; "none" skips) --scale-runs=15
//            --only=markov,shapley,rules (measure only these cases, by the ids in CASES; the section is
//            then recorded under its own title, so a partial run never replaces the full one)
// A slow query is measured fewer times (see timeCase), so the whole run stays bounded.
const { mkdtempSync, rmSync } = require('node:fs');
const { loadavg, tmpdir } = require('node:os');
const { dirname, join } = require('node:path');
const { randomUUID } = require('node:crypto');
const { recordSection, machine, fmt } = require('./lib');
const { generateWorkspace } = require('./query-data');

const option = (name, fallback) => {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? arg.slice(name.length + 3) : fallback;
};
const EVENTS = Number(option('events', process.env.BENCH_QUERY_EVENTS ?? 10_000_000));
const RUNS = Number(option('runs', 15));
const WARMUPS = Number(option('warmups', 2));
/** Seconds of measuring per query before fewer runs are taken (never fewer than MIN_RUNS). */
const BUDGET_S = Number(option('budget', 60));
const MIN_RUNS = 3;
const PERIOD = option('period', 'last 30 days');
const WITH_PG = !process.argv.includes('--no-pg');
const LOOKBACK_DAYS = 90;
const HALF_LIFE_DAYS = 7;
const TOLERANCE = 1e-6;
const MODELS = ['first_touch', 'last_touch', 'linear', 'u_shaped', 'time_decay'];
const BACKFILL = Number(option('backfill', 1_000_000));
const SCALE_DAYS = option('scale', '45,180') === 'none' ? [] : option('scale', '45,180').split(',').map(Number);
const SCALE_RUNS = Number(option('scale-runs', 15));
const MAIN_DAYS = 90;

/**
 * The measured requests: [label, RPC method, raw query string as a client would send it, target p50
 * ms, id for --only]. The limit of five models per request stays, so last_non_direct is measured
 * beside four of the rule models (last_touch is the one left out: alone with first_touch it reads
 * only the journeys' two ends, and last_non_direct reads every touch anyway).
 */
const ALL_CASES = [
  ['dashboard: visitors, sessions, conversions, revenue by channel', 'attribution.getMetrics', 'metrics=visitors,sessions,conversions,revenue&group_by=channel', 100, 'dashboard'],
  ['five models: conversions, revenue by channel', 'attribution.getMetrics', `metrics=conversions,revenue&group_by=channel&attribution=${MODELS.join(',')}`, 100, 'five'],
  ['five models: conversions, revenue by campaign', 'attribution.getMetrics', `metrics=conversions,revenue&group_by=campaign&attribution=${MODELS.join(',')}`, 200, 'five-campaign'],
  ['daily series: visitors, sessions, conversions', 'attribution.getMetrics', 'metrics=visitors,sessions,conversions&granularity=day', 200, 'daily'],
  ['nested breakdown: sessions, conversions by channel > source > campaign', 'attribution.getMetrics', 'metrics=sessions,conversions&group_by=channel,source,campaign', 200, 'nested'],
  ['paths (default: channel steps)', 'attribution.getPaths', '', 200, 'paths'],
  ['attribution coverage', 'attribution.getAttributionCoverage', '', 200, 'coverage'],
  ['page views: visitors, pageviews by channel', 'attribution.getMetrics', 'metrics=visitors,pageviews&group_by=channel', 200, 'pageviews'],
  ['markov: conversions, revenue by channel', 'attribution.getMetrics', 'metrics=conversions,revenue&group_by=channel&attribution=markov', 500, 'markov'],
  ['shapley: conversions, revenue by channel', 'attribution.getMetrics', 'metrics=conversions,revenue&group_by=channel&attribution=shapley', 500, 'shapley'],
  ['rule models with last_non_direct (first_touch, linear, u_shaped, time_decay, last_non_direct) by channel', 'attribution.getMetrics', 'metrics=conversions,revenue&group_by=channel&attribution=first_touch,linear,u_shaped,time_decay,last_non_direct', 100, 'rules'],
];
const ONLY = option('only', '') === '' ? null : option('only', '').split(',');
const CASES = ONLY ? ALL_CASES.filter((c) => ONLY.includes(c[4])) : ALL_CASES;
if (ONLY && CASES.length !== ONLY.length) throw new Error(`--only takes case ids among ${ALL_CASES.map((c) => c[4]).join(', ')}`);
const FIVE_BY_CHANNEL = ALL_CASES[1][0];

const log = (message) => process.stdout.write(`[query] ${message}\n`);

async function run() {
  const { createLogger, createStoreProvider, runClickHouseMigrations } = require('@sightline/kit');
  const { attributionHandlers } = require('@sightline/service-attribution');
  const started = Date.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-bench-query-'));
  const provider = createStoreProvider({ dataDir, logger: createLogger({ level: 'error' }) });
  let pg = null;
  try {
    const ch = await provider.clickhouse('attribution');
    await runClickHouseMigrations(ch, join(dirname(require.resolve('@sightline/service-attribution/package.json')), 'migrations', 'clickhouse'));
    const end = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    // conversion.attributed messages the read model produces are counted, not sent: there is no bus here.
    let attributed = 0;
    const handlers = attributionHandlers(ch, async (messages) => void (attributed += messages.length));

    const main = await buildSite(ch, handlers.readModel, { events: EVENTS, days: MAIN_DAYS, end, optimize: false });
    const loadSamples = [loadavg()[0]];
    const call = requestMaker(handlers.rpc, main.website);
    // Right after the bulk load and the rebuild, before any merge: the parts of the SQL-generated
    // events (written out of time order) and of the rebuild overlap, and FINAL merges them as it reads.
    const unmerged = [];
    for (const [label, method, query] of CASES) unmerged.push({ label, ...(await timeCase(() => call(method, query), `unmerged: ${label}`, MIN_RUNS + 2)) });
    main.optimizeSeconds = await optimize(ch);
    const rss = rssSampler();
    const results = [];
    for (const [label, method, query, target] of CASES) {
      results.push({ label, method, query, target, ...(await timeCase(() => call(method, query), label)) });
    }
    const peakRss = rss.stop();
    log(`peak RSS while serving: ${fmt(peakRss / 2 ** 20, 0)} MiB`);
    const markovProfile = CASES.some((c) => c[4] === 'markov') ? await profileMarkov(ch, main.website) : null;

    loadSamples.push(loadavg()[0]);
    let baseline = null;
    if (WITH_PG && results.some((r) => r.label === FIVE_BY_CHANNEL)) {
      const { loadPostgres, fiveModelsByChannel } = require('./query-pg');
      log('loading the same data into PostgreSQL...');
      pg = await loadPostgres(ch, { websiteId: main.website.id, workspaceId: main.website.workspace_id, log });
      const five = results.find((r) => r.label === FIVE_BY_CHANNEL);
      const window = five.body?.meta?.window ?? windowOf(PERIOD);
      const args = { from: new Date(window.from), to: new Date(window.to), lookbackDays: LOOKBACK_DAYS, halfLifeDays: HALF_LIFE_DAYS };
      const timing = await timeCase(() => fiveModelsByChannel(pg.client, args), 'PostgreSQL: five models by channel');
      const pgCredit = timing.body;
      baseline = { ...timing, rows: pg.rows, copySeconds: pg.copySeconds, indexSeconds: pg.indexSeconds, pgCredit };
      baseline.agreement = five.skipped ? 'not checked: the Sightline query was skipped' : compareCredit(creditByChannel(five.body), pgCredit);
      log(`agreement: ${baseline.agreement}`);
      await pg.drop().catch((error) => log(`could not drop the PostgreSQL database: ${error.message}`));
      pg = null;
      loadSamples.push(loadavg()[0]);
    }

    const scale = [];
    if (SCALE_DAYS.length > 0) {
      const sites = [{ days: MAIN_DAYS, site: main, call }];
      for (const days of SCALE_DAYS) {
        const site = await buildSite(ch, handlers.readModel, { events: Math.round((EVENTS * days) / MAIN_DAYS), days, end });
        sites.push({ days, site, call: requestMaker(handlers.rpc, site.website) });
      }
      sites.sort((x, y) => x.days - y.days);
      // Each query runs on every history in turn, so a change in the machine's load touches all of them alike.
      const loads = [loadavg()[0]];
      const timings = sites.map(() => []);
      for (const [label, method, query] of CASES) {
        const times = sites.map(() => []);
        for (const s of sites) await s.call(method, query); // warm-up
        for (let run = 0; run < SCALE_RUNS; run += 1) {
          // Each run starts with another history, so no history is always measured first or last.
          for (let i = 0; i < sites.length; i += 1) {
            const k = (run + i) % sites.length;
            const t = process.hrtime.bigint();
            await sites[k].call(method, query);
            times[k].push(Number(process.hrtime.bigint() - t) / 1e6);
          }
        }
        times.forEach((ts, k) => timings[k].push({ label, p50: median(ts) }));
        log(`scale: ${label}: ${sites.map((s, k) => `${s.days} days ${fmt(median(times[k]))} ms`).join(', ')}`);
      }
      loads.push(loadavg()[0]);
      sites.forEach((s, k) => scale.push({ days: s.days, site: s.site, timings: timings[k], loads }));
    }

    let backfilled = null;
    if (BACKFILL > 0) {
      log(`backfilling ${BACKFILL} events through the events.classified consumer...`);
      const { backfill } = require('./query-backfill');
      const before = attributed;
      const rssBackfill = rssSampler();
      backfilled = await backfill(ch, handlers.consumers['events.classified'], { website: main.website, events: BACKFILL, start: main.data.start, end, log });
      backfilled.peakRss = rssBackfill.stop();
      backfilled.attributed = attributed - before;
      backfilled.load = loadavg()[0];
      log(`backfill: ${JSON.stringify(backfilled)}`);
    }

    const body = report({ main, unmerged, results, baseline, peakRss, backfilled, scale, markovProfile, loadAverage: loadSamples.map((l) => l.toFixed(1)).join(' → '), minutes: (Date.now() - started) / 60_000 });
    process.stdout.write(`${body}\n`);
    recordSection(`query (${EVENTS.toLocaleString('en-US')} events${ONLY ? `, only ${ONLY.join(',')}` : ''})`, body);
  } finally {
    if (pg) await pg.drop().catch((error) => log(`could not drop the PostgreSQL database: ${error.message}`));
    await provider.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * A website of its own in the store: its facts generated with SQL (query-data.js), then its read
 * model built by the operator rebuild (the same code as `sightline attribution rebuild`).
 */
async function buildSite(ch, readModel, { events, days, end, optimize: merge = true }) {
  const website = { id: randomUUID(), workspace_id: randomUUID(), domain: `bench-${days}d.test`, timezone: 'UTC', currency: 'EUR' };
  log(`generating ${events} events over ${days} days into chDB...`);
  const t0 = Date.now();
  const data = await generateWorkspace(ch, { websiteId: website.id, workspaceId: website.workspace_id, events, days, end, log });
  const loadSeconds = (Date.now() - t0) / 1000;
  log(`generated in ${loadSeconds.toFixed(0)} s: ${JSON.stringify(data.counts)}`);
  let lastLog = 0;
  const rebuild = await readModel.rebuild({ websiteId: website.id, workspaceId: website.workspace_id }, (p) => {
    if (Date.now() - lastLog < 10_000) return;
    lastLog = Date.now();
    log(`rebuild: ${p.phase} ${p.done}/${p.total}`);
  });
  log(`read model rebuilt in ${fmt(rebuild.seconds)} s: ${JSON.stringify(rebuild)}`);
  return { website, data, loadSeconds, rebuild, optimizeSeconds: merge ? await optimize(ch) : null, days };
}

/**
 * Merges the read model's parts (OPTIMIZE FINAL), as background merges eventually do: a bulk load
 * writes events out of time order, so their parts overlap until merged. Returns the seconds it took.
 */
async function optimize(ch) {
  const t0 = Date.now();
  for (const table of ['outcome_journeys', 'traffic_sessions', 'traffic_events']) await ch.command(`OPTIMIZE TABLE ${table} FINAL`);
  return (Date.now() - t0) / 1000;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Samples the process's resident set every 50 ms until stopped; returns the peak (bytes). */
function rssSampler() {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 50);
  return { stop: () => { clearInterval(timer); return Math.max(peak, process.memoryUsage().rss); } };
}

/**
 * Calls an RPC handler with the ApiRequest the gateway would send: the raw query string
 * validated and coerced by the gateway's own validator (lists split, defaults filled).
 */
function requestMaker(rpc, website) {
  const { openApiDocument } = require('@sightline/proto-schemas');
  const { operationsOf } = require('@sightline/service-gateway/dist/operations');
  const { RequestValidator } = require('@sightline/service-gateway/dist/request-validation');
  const operations = operationsOf(openApiDocument);
  const validator = new RequestValidator(openApiDocument);
  return async (method, queryString) => {
    const op = operations.find((o) => (o.rpcMethod ?? `${o.service}.${o.operationId}`) === method && !o.operationId.endsWith('Legacy'));
    if (!op) throw new Error(`no operation answers ${method}`);
    const search = new URLSearchParams(queryString);
    search.set('period', PERIOD);
    const raw = Object.fromEntries(search);
    const validated = validator.validate(op, raw, {}, undefined);
    const handler = rpc[method];
    if (!handler) throw new Error(`attribution does not answer ${method}: not built yet`);
    const response = await handler({
      operation: method.slice(method.indexOf('.') + 1),
      request_id: 'bench-query',
      workspace: { id: website.workspace_id, name: 'Bench', timezone: website.timezone, currency: website.currency, plan: 'internal' },
      website: { id: website.id, domain: website.domain, timezone: website.timezone, currency: website.currency },
      key: { id: 'bench', scopes: ['analytics:read', 'conversions:read'] },
      params: {},
      query: validated.query,
      body: null,
      headers: {},
    });
    if (response.status !== 200) throw new Error(`${method}?${queryString}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
}

/**
 * p50 and p95 of RUNS sequential calls after WARMUPS. A slow query gets fewer: one warm-up when
 * the first took over a sixth of the budget, and only as many runs (at least MIN_RUNS) as fit in
 * BUDGET_S. A handler that is still a stub is skipped.
 */
async function timeCase(fn, label, maxRuns = RUNS) {
  let body;
  let warmMs = 0;
  try {
    for (let i = 0; i < WARMUPS && (i === 0 || warmMs <= (BUDGET_S * 1000) / 6); i += 1) {
      const t = process.hrtime.bigint();
      body = await fn();
      warmMs = Number(process.hrtime.bigint() - t) / 1e6;
    }
  } catch (error) {
    if (/not built yet/.test(String(error?.message))) {
      log(`${label}: skipped: not built`);
      return { skipped: true };
    }
    throw error;
  }
  const runs = Math.max(MIN_RUNS, Math.min(maxRuns, Math.floor((BUDGET_S * 1000) / Math.max(1, warmMs))));
  const times = [];
  for (let i = 0; i < runs; i += 1) {
    const t = process.hrtime.bigint();
    body = await fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  const p50 = times.length % 2 === 1 ? times[(times.length - 1) / 2] : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
  const p95 = times[Math.min(times.length - 1, Math.ceil(times.length * 0.95) - 1)];
  const rows = Array.isArray(body?.data) ? body.data.length : Object.keys(body ?? {}).length;
  log(`${label}: p50 ${fmt(p50)} ms, p95 ${fmt(p95)} ms over ${runs} runs (${rows} rows)`);
  return { p50, p95, runs, rows, body };
}

/** markov's stages timed alone: the journeys read without and with the non-converting ones, and the chain computed. */
async function profileMarkov(ch, website) {
  const { readWindowJourneys, markovAnswer } = require('@sightline/service-attribution/dist/metrics/data-driven/credit');
  const window = windowOf(PERIOD);
  const w = { websiteId: website.id, from: new Date(window.from), to: new Date(window.to), excludeDirect: false };
  const runs = 5;
  const timed = async (fn) => {
    const times = [];
    let value;
    for (let i = 0; i < runs; i += 1) {
      const t = process.hrtime.bigint();
      value = await fn();
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    return { ms: median(times), value };
  };
  const converting = await timed(() => readWindowJourneys(ch, w, false));
  const both = await timed(() => readWindowJourneys(ch, w, true));
  const compute = await timed(async () => markovAnswer(both.value, false));
  const nonConvertingJourneys = both.value.nonConverting.filter((t) => t.from === '\u0000start').reduce((a, t) => a + t.count, 0);
  const profile = { runs, convertingMs: converting.ms, bothMs: both.ms, computeMs: compute.ms, nonConvertingJourneys };
  log(`markov profile: ${JSON.stringify(profile)}`);
  return profile;
}

function windowOf(period) {
  const { resolveWindow } = require('@sightline/periods');
  return resolveWindow({ timezone: 'UTC', period });
}

/**
 * Sightline's per-channel credit as { channel: { model: {conversions, revenue} } }, from a
 * /metrics answer with several models: each row nests one object per model.
 */
function creditByChannel(body) {
  const out = {};
  for (const row of body.data ?? []) {
    const channel = row.channel;
    out[channel] = {};
    for (const model of MODELS) {
      const values = row[model] ?? row.models?.[model] ?? row.attribution?.[model] ?? {};
      out[channel][model] = { conversions: values.conversions, revenue: values.revenue };
    }
  }
  return out;
}

/** Whether both answers credit every channel the same under every model (relative to 1e-6). */
function compareCredit(sightline, postgres) {
  const channels = new Set([...Object.keys(sightline), ...Object.keys(postgres)]);
  const mismatches = [];
  let compared = 0;
  for (const channel of channels) {
    for (const model of MODELS) {
      for (const metric of ['conversions', 'revenue']) {
        const a = sightline[channel]?.[model]?.[metric];
        const b = postgres[channel]?.[model]?.[metric] ?? 0;
        compared += 1;
        const near = typeof a === 'number' && Math.abs(a - b) <= TOLERANCE * Math.max(1, Math.abs(a), Math.abs(b));
        if (!near) mismatches.push(`${channel} ${model} ${metric}: Sightline ${a}, PostgreSQL ${b}`);
      }
    }
  }
  return mismatches.length === 0
    ? `agree: ${compared} figures (${channels.size} channels × 5 models × conversions, revenue) within ${TOLERANCE} relative`
    : `DISAGREE on ${mismatches.length} of ${compared} figures, e.g. ${mismatches.slice(0, 3).join('; ')}`;
}

function report({ main, unmerged, results, baseline, peakRss, backfilled, scale, markovProfile, loadAverage, minutes }) {
  const c = main.data.counts;
  const t = main.data.timings;
  const r = main.rebuild;
  const n = (x) => Number(x).toLocaleString('en-US');
  const mib = (bytes) => `${fmt(bytes / 2 ** 20, 0)} MiB`;
  const five = results.find((x) => x.label === FIVE_BY_CHANNEL);
  const busy = Math.max(...String(loadAverage).split(/[^0-9.]+/).filter(Boolean).map(Number)) > 2.5;
  const lines = [
    `Machine: ${machine()}; load average ${loadAverage} while measuring${busy ? ' (other work shared the cores)' : ''}. Embedded chDB; each request goes through the gateway's validator, then attribution's RPC handler in-process (no HTTP, no bus). Up to ${RUNS} sequential runs per query after ${WARMUPS} warm-ups; a slow query gets one warm-up and only the runs that fit in ${BUDGET_S} s (at least ${MIN_RUNS}). With under 20 runs, p95 is the slowest run. Period: "${PERIOD}" (the data spans the ${MAIN_DAYS} days up to now; attribution lookback ${LOOKBACK_DAYS} days).`,
    '',
    `Workspace: ${n(c.events)} events, ${n(c.sessions)} sessions (touches), ${n(c.people)} people (${n(c.identities)} identity ids, ${n(c.identities - c.people)} merged pairs), ${n(c.conversions)} conversions (${n(c.purchases)} purchases; ${n(c.converters)} converting identities), ${n(c.outcomes)} written-back sales values. Facts generated with SQL into the service's tables in ${fmt(main.loadSeconds, 0)} s (events ${fmt(t.events, 0)} s, parts merged with OPTIMIZE FINAL ${fmt(t['merge parts (OPTIMIZE FINAL)'], 0)} s; the materialized views fill traffic_events, touches_by_identity and outcome_keys as they go).`,
    '',
    `Read model built by the rebuild path (\`ReadModel.rebuild\`, what \`sightline attribution rebuild\` runs): **${fmt(r.seconds)} s** for ${n(r.sessions)} sessions and ${n(r.outcomes)} outcomes (sessions layout ${fmt(r.trafficSeconds)} s, journeys ${fmt(r.journeySeconds)} s); it would have published ${n(r.published)} conversion.attributed messages (counted, no bus here).`,
    '',
    '| query | rows | runs | p50 ms | p95 ms | target p50 | p50 ms before merges |',
    '|---|---|---|---|---|---|---|',
    ...results.map((x, i) => (x.skipped
      ? `| ${x.label} | – | – | skipped: not built | – | ${x.target ? `≤ ${x.target} ms` : ''} | – |`
      : `| ${x.label} | ${x.rows} | ${x.runs} | ${fmt(x.p50)} | ${fmt(x.p95)} | ${x.target ? `≤ ${x.target} ms: ${x.p50 <= x.target ? 'met' : '**not met**'}` : ''} | ${fmt(unmerged[i].p50)} |`)),
    '',
    `Peak RSS of the process while serving these queries: **${mib(peakRss)}** (chDB runs inside the process).`,
    '',
    `Measured after OPTIMIZE FINAL of the read model's tables (${fmt(main.optimizeSeconds)} s), the state merges lead to. The last column is the same query right after the bulk load and the rebuild, before any merge (${MIN_RUNS + 2} runs): the generated events were written out of time order, so their parts overlap and FINAL merges them while it reads.`,
  ];
  if (markovProfile) {
    const p = markovProfile;
    lines.push(
      '',
      `Profile of markov by channel (median of ${p.runs} runs of each stage alone): the window's conversions by channel set ${fmt(p.convertingMs)} ms; with the Markov transitions of the converting journeys and of the ${Number(p.nonConvertingJourneys).toLocaleString('en-US')} non-converting ones (grouped per person from traffic_sessions) as well ${fmt(p.bothMs)} ms (so about ${fmt(p.bothMs - p.convertingMs)} ms for the transitions); the chain and its removal effects in the service ${fmt(p.computeMs, 2)} ms; the rule-model pass that lists the channel rows is the rest of the request.`,
    );
  }
  if (baseline) {
    const ratio = five.skipped ? null : baseline.p50 / five.p50;
    lines.push(
      '',
      `Baseline: PostgreSQL 15 on the same machine, the same sessions, conversions, outcome values and identity roots (${Object.entries(baseline.rows).map(([k, v]) => `${k} ${n(v)}`).join(', ')}; copied in ${fmt(baseline.copySeconds, 0)} s, indexes and ANALYZE ${fmt(baseline.indexSeconds, 0)} s; work_mem 256MB), five-model attribution by channel in one plain SQL query (window functions over touches joined to conversions; bench/query-pg.js).`,
      '',
      '| query | runs | p50 ms | p95 ms |',
      '|---|---|---|---|',
      `| PostgreSQL: five models by channel | ${baseline.runs} | ${fmt(baseline.p50)} | ${fmt(baseline.p95)} |`,
      '',
      ratio === null
        ? 'Ratio PostgreSQL p50 / Sightline p50: not measured (the Sightline query is not built yet).'
        : `Ratio PostgreSQL p50 / Sightline p50 (five models by channel): **${fmt(ratio, 1)}×** (target ≥ 100×: ${ratio >= 100 ? 'met' : '**not met**'}).`,
      `Same totals per channel: ${baseline.agreement}.`,
    );
  }
  if (backfilled) {
    lines.push(
      '',
      `Backfill: ${n(backfilled.events)} events of earlier sessions (5 page views each, ${n(backfilled.identities)} existing visitors, random times in the history) delivered to the events.classified consumer in messages of 500, 32 in flight, as the bus delivers ingest's batches. Each message settles after its events are stored and the read model has recomputed what they touch. The read model caught up in **${fmt(backfilled.seconds)} s** (${n(Math.round(backfilled.events / backfilled.seconds))} events/s), recomputing ${n(backfilled.recomputedOutcomes)} outcomes (each counted once) and producing ${n(backfilled.attributed)} conversion.attributed messages; peak RSS ${mib(backfilled.peakRss)}; load average ${fmt(backfilled.load)} at the end.`,
    );
  }
  if (scale.length > 1) {
    const first = scale[0];
    const last = scale[scale.length - 1];
    lines.push(
      '',
      `Scale curve: the same ${PERIOD} queries over ${scale.map((x) => `${x.days}`).join(', ')} days of history at the same traffic per day (${scale.map((x) => `${n(x.site.data.counts.events)} events`).join(', ')}; each a website of its own in the same store, generated and rebuilt the same way: rebuild ${scale.map((x) => `${fmt(x.site.rebuild.seconds, 0)} s`).join(', ')}). p50 ms over ${SCALE_RUNS} runs each after a warm-up, each query run on every history in turn, each run starting with another history (load average ${first.loads.map((l) => fmt(l)).join(' → ')}). Target: p50 grows by less than 25% from ${first.days} to ${last.days} days.`,
      '',
      `| query | ${scale.map((x) => `${x.days} days`).join(' | ')} | growth ${first.days} → ${last.days} days |`,
      `|---|${scale.map(() => '---|').join('')}---|`,
      ...CASES.map(([label], i) => {
        const p = scale.map((x) => x.timings[i].p50);
        const growth = p[p.length - 1] / p[0] - 1;
        return `| ${label} | ${p.map((v) => fmt(v)).join(' | ')} | ${growth >= 0 ? '+' : ''}${fmt(growth * 100, 0)}%${growth < 0.25 ? '' : ' **not met**'} |`;
      }),
    );
  }
  lines.push('', `Whole run: ${fmt(minutes, 1)} min (\`npm run bench -- query ${[`--events=${EVENTS}`, ...process.argv.slice(2).filter((a) => a.startsWith('--') && !a.startsWith('--events='))].join(' ')}\`).`);
  return lines.join('\n');
}

module.exports = { run };
