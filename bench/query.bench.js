// Analytics read latency on a large workspace: the dashboard, five-model attribution by channel
// and by campaign, a daily series, a three-level breakdown, paths and coverage, answered by
// attribution's own RPC handlers over embedded chDB (the request validated and coerced by the
// gateway's validator first, as the gateway would). The workspace (10M events by default) is
// generated with SQL straight into the service's tables (query-data.js), a documented bench-only
// path: ingest would need half an hour. Baseline in the same run: the same data in PostgreSQL and
// five-model attribution by channel in plain SQL (query-pg.js), checked for the same totals.
//   npm run bench -- query                        (10M events: generating takes 4-8 min on 2 cores)
//   npm run bench -- query --events=1000000       (a quick run; also BENCH_QUERY_EVENTS)
//   options: --runs=15 --warmups=2 --budget=60 (s per query) --period="last 30 days" --no-pg
// A slow query is measured fewer times (see timeCase), so the whole run stays bounded: about
// 7 queries x 4 calls x its latency, plus generation and the PostgreSQL copy.
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

/** The measured requests: [label, RPC method, raw query string as a client would send it, target p50 ms]. */
const CASES = [
  ['dashboard: visitors, sessions, conversions, revenue by channel', 'attribution.getMetrics', 'metrics=visitors,sessions,conversions,revenue&group_by=channel', 100],
  ['five models: conversions, revenue by channel', 'attribution.getMetrics', `metrics=conversions,revenue&group_by=channel&attribution=${MODELS.join(',')}`, 250],
  ['five models: conversions, revenue by campaign', 'attribution.getMetrics', `metrics=conversions,revenue&group_by=campaign&attribution=${MODELS.join(',')}`, null],
  ['daily series: visitors, sessions, conversions', 'attribution.getMetrics', 'metrics=visitors,sessions,conversions&granularity=day', null],
  ['nested breakdown: sessions, conversions by channel > source > campaign', 'attribution.getMetrics', 'metrics=sessions,conversions&group_by=channel,source,campaign', null],
  ['paths (default: channel steps)', 'attribution.getPaths', '', null],
  ['attribution coverage', 'attribution.getAttributionCoverage', '', null],
];
const FIVE_BY_CHANNEL = CASES[1][0];

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
    const website = { id: randomUUID(), workspace_id: randomUUID(), domain: 'bench.test', timezone: 'UTC', currency: 'EUR' };
    const end = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);

    log(`generating ${EVENTS} events over 90 days into chDB (${dataDir})...`);
    const t0 = Date.now();
    const data = await generateWorkspace(ch, { websiteId: website.id, workspaceId: website.workspace_id, events: EVENTS, end, log });
    const loadSeconds = (Date.now() - t0) / 1000;
    log(`generated in ${loadSeconds.toFixed(0)} s: ${JSON.stringify(data.counts)}`);

    const loadSamples = [loadavg()[0]];
    const { rpc } = attributionHandlers(ch);
    const call = requestMaker(rpc, website);
    const results = [];
    for (const [label, method, query, target] of CASES) {
      results.push({ label, method, query, target, ...(await timeCase(() => call(method, query), label)) });
    }

    loadSamples.push(loadavg()[0]);
    let baseline = null;
    if (WITH_PG) {
      const { loadPostgres, fiveModelsByChannel } = require('./query-pg');
      log('loading the same data into PostgreSQL...');
      pg = await loadPostgres(ch, { websiteId: website.id, workspaceId: website.workspace_id, log });
      const five = results.find((r) => r.label === FIVE_BY_CHANNEL);
      const window = five.body?.meta?.window ?? windowOf(PERIOD);
      const args = { from: new Date(window.from), to: new Date(window.to), lookbackDays: LOOKBACK_DAYS, halfLifeDays: HALF_LIFE_DAYS };
      const timing = await timeCase(() => fiveModelsByChannel(pg.client, args), 'PostgreSQL: five models by channel');
      const pgCredit = timing.body;
      baseline = { ...timing, rows: pg.rows, copySeconds: pg.copySeconds, indexSeconds: pg.indexSeconds, pgCredit };
      if (five.skipped) {
        baseline.agreement = 'not checked: the Sightline query was skipped';
      } else {
        baseline.agreement = compareCredit(creditByChannel(five.body), pgCredit);
      }
      log(`agreement: ${baseline.agreement}`);
      loadSamples.push(loadavg()[0]);
    }

    const body = report({ data, loadSeconds, results, baseline, loadAverage: loadSamples.map((l) => l.toFixed(1)).join(' → '), minutes: (Date.now() - started) / 60_000 });
    process.stdout.write(`${body}\n`);
    recordSection(`query (${EVENTS.toLocaleString('en-US')} events)`, body);
  } finally {
    if (pg) await pg.drop().catch((error) => log(`could not drop the PostgreSQL database: ${error.message}`));
    await provider.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
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
async function timeCase(fn, label) {
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
  const runs = Math.max(MIN_RUNS, Math.min(RUNS, Math.floor((BUDGET_S * 1000) / Math.max(1, warmMs))));
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

function report({ data, loadSeconds, results, baseline, loadAverage, minutes }) {
  const c = data.counts;
  const t = data.timings;
  const n = (x) => Number(x).toLocaleString('en-US');
  const five = results.find((r) => r.label === FIVE_BY_CHANNEL);
  const lines = [
    `Machine: ${machine()}; load average ${loadAverage} while measuring${Math.max(...String(loadAverage).split(/[^0-9.]+/).filter(Boolean).map(Number)) > 2.5 ? ' (other work shared the cores)' : ''}. Embedded chDB; each request goes through the gateway's validator, then attribution's RPC handler in-process (no HTTP, no bus). Up to ${RUNS} sequential runs per query after ${WARMUPS} warm-ups; a slow query gets one warm-up and only the runs that fit in ${BUDGET_S} s (at least ${MIN_RUNS}). With under 20 runs, p95 is the slowest run. Period: "${PERIOD}" (the data spans the 90 days up to now; attribution lookback ${LOOKBACK_DAYS} days).`,
    '',
    `Workspace: ${n(c.events)} events, ${n(c.sessions)} sessions (touches), ${n(c.people)} people (${n(c.identities)} identity ids, ${n(c.identities - c.people)} merged pairs), ${n(c.conversions)} conversions (${n(c.purchases)} purchases; ${n(c.converters)} converting identities), ${n(c.outcomes)} written-back sales values. Generated with SQL into the service's tables in ${fmt(loadSeconds, 0)} s (events ${fmt(t.events, 0)} s, parts merged with OPTIMIZE FINAL ${fmt(t['merge parts (OPTIMIZE FINAL)'], 0)} s).`,
    '',
    '| query | rows | runs | p50 ms | p95 ms | target p50 |',
    '|---|---|---|---|---|---|',
    ...results.map((r) => (r.skipped
      ? `| ${r.label} | – | – | skipped: not built | – | ${r.target ? `≤ ${r.target} ms` : ''} |`
      : `| ${r.label} | ${r.rows} | ${r.runs} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${r.target ? `≤ ${r.target} ms: ${r.p50 <= r.target ? 'met' : '**not met**'}` : ''} |`)),
  ];
  if (baseline) {
    lines.push(
      '',
      `Baseline: PostgreSQL 15 on the same machine, the same sessions, conversions, outcome values and identity roots (${Object.entries(baseline.rows).map(([k, v]) => `${k} ${n(v)}`).join(', ')}; copied in ${fmt(baseline.copySeconds, 0)} s, indexes and ANALYZE ${fmt(baseline.indexSeconds, 0)} s; work_mem 256MB), five-model attribution by channel in one plain SQL query (window functions over touches joined to conversions; bench/query-pg.js).`,
      '',
      '| query | runs | p50 ms | p95 ms |',
      '|---|---|---|---|',
      `| PostgreSQL: five models by channel | ${baseline.runs} | ${fmt(baseline.p50)} | ${fmt(baseline.p95)} |`,
      '',
      five.skipped
        ? 'Ratio PostgreSQL p50 / Sightline p50: not measured (the Sightline query is not built yet).'
        : `Ratio PostgreSQL p50 / Sightline p50 (five models by channel): **${fmt(baseline.p50 / five.p50, 1)}×**.`,
      `Same totals per channel: ${baseline.agreement}.`,
    );
  }
  lines.push('', `Whole run: ${fmt(minutes, 1)} min (\`npm run bench -- query --events=${EVENTS}\`).`);
  return lines.join('\n');
}

module.exports = { run };
