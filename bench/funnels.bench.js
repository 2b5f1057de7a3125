// Funnel read latency on a large workspace: a 5-step sequential funnel over the last 30 days, the
// same with compare_days=previous, and a breakdown by channel under five rule models and under markov and shapley, answered by the
// funnels RPC handlers over embedded chDB (the request checked by the gateway's validator first).
// The workspace is the query benchmark's (query-data.js: people, sessions, events and identity
// merges generated with SQL), copied into the funnels facts with INSERT ... SELECT, a documented
// bench-only path (ingest would need half an hour at 10M events); the session lists and the
// funnel's read model are then built by the service's own code (ReadModel, Builder).
// Each read is measured twice in the same run: while the funnel's read model is building (the
// answer from the events, the previous design) and once it is built (the answer from the read
// model). Baseline in the same run: the same funnel written with ClickHouse's windowFunnel over the
// raw events, as a team would write it (where its semantics differ is printed with the results).
//   npm run bench -- funnels                       (1M events: a quick run)
//   npm run bench -- funnels --events=10000000     (the 10M workspace; generating takes 4-8 min)
//   options: --runs=15 --warmups=2 --budget=60 (s per query) --period="last 30 days" --profile
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
const EVENTS = Number(option('events', process.env.BENCH_FUNNELS_EVENTS ?? 1_000_000));
const RUNS = Number(option('runs', 15));
const WARMUPS = Number(option('warmups', 2));
const BUDGET_S = Number(option('budget', 60));
const MIN_RUNS = 3;
const PERIOD = option('period', 'last 30 days');
const PROFILE = process.argv.includes('--profile');
const MODELS = ['first_touch', 'last_touch', 'linear', 'u_shaped', 'time_decay'];
const WINDOW_DAYS = 7;
/** Scratch database of the baseline's raw events, ordered by time as a team would store them. */
const RAW = 'bench_funnels_raw';

/** The measured funnel: landing on the home page, pricing, a call-to-action click, the signup page, a signup. */
const FUNNEL = {
  name: 'Home to signup',
  window_days: WINDOW_DAYS,
  steps: [
    { name: 'Home', conditions: { path_matches: '/' } },
    { name: 'Pricing', conditions: { path_matches: '/pricing' } },
    { name: 'CTA click', conditions: { event_type: 'custom', event_name_matches: 'click_cta' } },
    { name: 'Signup page', conditions: { path_matches: '/signup*' } },
    { name: 'Signed up', conditions: { event_type: 'conversion', event_name_matches: 'signup' } },
  ],
};

/** The same five conditions as windowFunnel arguments (over the raw events). */
const WINDOW_FUNNEL_CONDITIONS = [
  "page = '/'",
  "page = '/pricing'",
  "event_type = 'custom' AND event_name = 'click_cta'",
  "page LIKE '/signup%'",
  "event_type = 'conversion' AND event_name = 'signup'",
];

const log = (message) => process.stdout.write(`[funnels] ${message}\n`);
const load = () => loadavg()[0];

async function run() {
  const { createLogger, createOutbox, createStoreProvider, runClickHouseMigrations, runSqlMigrations } = require('@sightline/kit');
  const { funnelsRpcHandlers, FunnelsRepo, ProjectionRepo, ReadModel, Builder } = require('@sightline/service-funnels');
  const started = Date.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-bench-funnels-'));
  const logger = createLogger({ level: 'error' });
  const provider = createStoreProvider({ dataDir, logger });
  let builder = null;
  try {
    const source = await provider.clickhouse('attribution');
    await runClickHouseMigrations(source, join(dirname(require.resolve('@sightline/service-attribution/package.json')), 'migrations', 'clickhouse'));
    const ch = await provider.clickhouse('funnels');
    const serviceDir = dirname(require.resolve('@sightline/service-funnels/package.json'));
    await runClickHouseMigrations(ch, join(serviceDir, 'migrations', 'clickhouse'));
    const sql = await provider.sql('funnels');
    await runSqlMigrations(sql, join(serviceDir, 'migrations', 'postgres'));

    const website = { id: randomUUID(), workspace_id: randomUUID(), domain: 'bench.test', timezone: 'UTC', currency: 'EUR' };
    const end = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    log(`generating ${EVENTS} events over 90 days into chDB (${dataDir})...`);
    const t0 = Date.now();
    const data = await generateWorkspace(source, { websiteId: website.id, workspaceId: website.workspace_id, events: EVENTS, end, log });
    const t1 = Date.now();
    await copyIntoFacts(ch, website);
    const copySeconds = (Date.now() - t1) / 1000;
    await source.command('DROP DATABASE IF EXISTS attribution');
    const repo = new FunnelsRepo(sql);
    const readModel = new ReadModel(ch, repo);
    const t2 = Date.now();
    await readModel.storeTouches({ websiteId: website.id, workspaceId: website.workspace_id }, null);
    await ch.command('OPTIMIZE TABLE person_touches FINAL');
    const touchesSeconds = (Date.now() - t2) / 1000;
    const loadSeconds = (Date.now() - t0) / 1000;
    log(`generated in ${fmt(loadSeconds, 0)} s (copy ${fmt(copySeconds, 0)} s, session lists ${fmt(touchesSeconds, 1)} s)`);

    builder = new Builder(readModel, repo, logger, { idleMs: 200 });
    const outbox = createOutbox(sql, { publishMany: async () => [] }, logger);
    const rpc = funnelsRpcHandlers({ sql, ch, repo, projection: new ProjectionRepo(ch), outbox, buildWaiting: () => builder.wake() });
    const call = requestMaker(rpc, website);
    const created = await call('funnels.createFunnel', '', { id: null, body: FUNNEL });
    const id = created.data.id;

    const cases = [
      ['steps: 5-step sequential funnel', 'funnels.getFunnelSteps', '', 150],
      ['steps with compare_days=previous', 'funnels.getFunnelSteps', 'compare_days=previous', null],
      ['breakdown by channel, five models', 'funnels.getFunnelBreakdown', `dimension=channel&models=${MODELS.join(',')}`, 300],
      ['breakdown by channel, markov and shapley', 'funnels.getFunnelBreakdown', 'dimension=channel&models=markov,shapley', 300],
    ];
    // The builder has not started: these answers come from the events (a funnel whose read model is building).
    const fromEvents = [];
    for (const [label, method, query] of cases) {
      const timing = await timeCase(() => call(method, query, { id }), `events: ${label}`, { runs: 5, budget: BUDGET_S / 2 });
      if (timing.body.meta.computed_from !== 'events') throw new Error(`expected an answer from the events, got ${timing.body.meta.computed_from}`);
      fromEvents.push({ label, ...timing });
    }

    const buildStart = Date.now();
    const buildLoad = load();
    builder.start();
    for (;;) {
      const row = (await repo.ofWebsite(website.id))[0];
      if (row.read_model === 'ready') break;
      if (row.build_error) throw new Error(`build failed: ${row.build_error}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const buildSeconds = (Date.now() - buildStart) / 1000;
    const [{ n: attempts }] = await ch.query('SELECT count() AS n FROM funnel_attempts FINAL WHERE funnel_id = {f:UUID}', { f: id });
    log(`read model built in ${fmt(buildSeconds, 1)} s: ${attempts} attempts`);
    await ch.command('OPTIMIZE TABLE funnel_attempts FINAL');

    const results = [];
    for (const [label, method, query, target] of cases) {
      const timing = await timeCase(() => call(method, query, { id }), label);
      if (timing.body.meta.computed_from !== 'read_model') throw new Error(`expected an answer from the read model, got ${timing.body.meta.computed_from}`);
      results.push({ label, target, ...timing });
    }
    const same = JSON.stringify(results[0].body.data) === JSON.stringify(fromEvents[0].body.data) && JSON.stringify(results[1].body.previous) === JSON.stringify(fromEvents[1].body.previous);

    const stepsBody = results[0].body;
    const window = stepsBody.meta.window;
    const baseline = await timeCase(() => windowFunnel(ch, website, window), 'baseline: windowFunnel over raw events');

    let profile = null;
    if (PROFILE) profile = await profileReads(ch, website, window, { funnelId: id, generation: 1 });

    const body = report({
      data, loadSeconds, copySeconds, touchesSeconds, buildSeconds, buildLoad, attempts: Number(attempts), results, fromEvents, same, baseline, stepsBody, profile,
      minutes: (Date.now() - started) / 60_000,
    });
    process.stdout.write(`${body}\n`);
    recordSection('funnels', body);
  } finally {
    await builder?.stop();
    await provider.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Copies attribution's generated events, sessions and identity roots into the funnels facts (and the baseline's raw events). */
async function copyIntoFacts(ch, website) {
  const p = { website: website.id, workspace: website.workspace_id };
  await ch.command(
    `INSERT INTO identity_events (website_id, occurred_at, event_id, identity_id, event_type, event_name, page, url, click_text, hostname, page_title, session_id,
                         channel, source, medium, campaign, utm_term, utm_content, referrer_domain, landing_page, country, region, city, device_type, browser, operating_system)
     SELECT website_id, occurred_at, event_id, identity_id, event_type, event_name, page, concat('https://', hostname, page), '', hostname, page_title, session_id,
            channel, source, medium, campaign, term, content, referrer_domain, landing_page, country, region, city, device_type, browser, operating_system
       FROM attribution.touch_events WHERE website_id = {website:UUID}`,
    p,
  );
  // Session keys as the consumer computes them (sessionKey: a lower-case UUID by its value).
  await ch.command(
    `INSERT INTO identity_sessions (website_id, identity_id, started_at, session_id, session_key, first_hit_at, hit_rank, channel, source, medium, campaign, utm_term,
                                    utm_content, referrer_domain, landing_page, country, region, city, device_type, browser, operating_system)
     SELECT website_id, identity_id, started_at, session_id, reinterpretAsUInt128(reverse(unhex(replaceAll(session_id, '-', '')))), started_at,
            toUInt64(9007199254740991 - toUnixTimestamp64Milli(started_at)), channel, source, medium, campaign, term, content, referrer_domain,
            landing_page, country, region, city, device_type, browser, operating_system
       FROM attribution.touches WHERE website_id = {website:UUID}`,
    p,
  );
  await ch.command('INSERT INTO identity_roots (workspace_id, identity_id, root_id, version) SELECT workspace_id, identity_id, root_id, version FROM attribution.identity_roots WHERE workspace_id = {workspace:UUID}', p);
  await ch.command("INSERT INTO identified (workspace_id, identity_id) SELECT DISTINCT workspace_id, identity_id FROM attribution.conversions WHERE workspace_id = {workspace:UUID} AND email != '' AND identity_id != ''", p);
  await ch.command('INSERT INTO workspace_websites (workspace_id, website_id) VALUES ({workspace:UUID}, {website:UUID})', p);
  await ch.command(`CREATE DATABASE IF NOT EXISTS ${RAW}`);
  await ch.command(`CREATE TABLE ${RAW}.events (website_id UUID, occurred_at DateTime64(3, 'UTC'), event_id UUID, identity_id String, event_type LowCardinality(String), event_name String, page String)
    ENGINE = MergeTree PARTITION BY toYYYYMM(occurred_at) ORDER BY (website_id, occurred_at, event_id)`);
  await ch.command(`INSERT INTO ${RAW}.events SELECT website_id, occurred_at, event_id, identity_id, event_type, event_name, page FROM attribution.touch_events WHERE website_id = {website:UUID}`, p);
  for (const table of ['identity_events', 'identity_sessions', 'identity_roots', 'identified', `${RAW}.events`]) await ch.command(`OPTIMIZE TABLE ${table} FINAL`);
}

/** The baseline: what a team would write with windowFunnel (no merges, completion inside the period). */
async function windowFunnel(ch, website, window) {
  const [row] = await ch.query(
    `SELECT ${WINDOW_FUNNEL_CONDITIONS.map((_, k) => `countIf(level >= ${k + 1}) AS r${k}`).join(', ')}
       FROM (SELECT identity_id, windowFunnel({w:UInt64})(toUInt64(toUnixTimestamp64Milli(occurred_at)), ${WINDOW_FUNNEL_CONDITIONS.join(', ')}) AS level
               FROM ${RAW}.events
              WHERE website_id = {website:UUID} AND occurred_at >= {from:DateTime64(3, 'UTC')} AND occurred_at < {to:DateTime64(3, 'UTC')}
              GROUP BY identity_id)`,
    { w: WINDOW_DAYS * 86_400_000, website: website.id, from: new Date(window.from), to: new Date(window.to) },
  );
  return { data: WINDOW_FUNNEL_CONDITIONS.map((_, k) => Number(row[`r${k}`])) };
}

/** Where the time of a steps read goes: each stage run alone (on each path, each includes the ones above it). */
async function profileReads(ch, website, window, ref) {
  const { profileQueries } = require('@sightline/service-funnels');
  const definition = { ...FUNNEL, scope: 'visitor', step_order: 'sequential', filters: {} };
  const w = { fromMs: Date.parse(window.from), toMs: Date.parse(window.to) };
  const out = [];
  for (const [label, q] of Object.entries(profileQueries(definition, w, { websiteId: website.id, workspaceId: website.workspace_id }, ref))) {
    const cpu = process.cpuUsage();
    const timing = await timeCase(() => ch.query(q.sql, q.params), `profile: ${label}`, { runs: 5 });
    const used = process.cpuUsage(cpu);
    out.push({ label, p50: timing.p50, cpu: (used.user + used.system) / 1000 / (timing.runs + WARMUPS), load: timing.load });
  }
  return out;
}

function requestMaker(rpc, website) {
  const { openApiDocument } = require('@sightline/proto-schemas');
  const { operationsOf } = require('@sightline/service-gateway/dist/operations');
  const { RequestValidator } = require('@sightline/service-gateway/dist/request-validation');
  const operations = operationsOf(openApiDocument);
  const validator = new RequestValidator(openApiDocument);
  return async (method, queryString, { id, body = null }) => {
    const op = operations.find((o) => (o.rpcMethod ?? `${o.service}.${o.operationId}`) === method && !o.operationId.endsWith('Legacy'));
    if (!op) throw new Error(`no operation answers ${method}`);
    const search = new URLSearchParams(queryString);
    if (method !== 'funnels.createFunnel') search.set('period', PERIOD);
    const params = id ? { id } : {};
    const validated = validator.validate(op, Object.fromEntries(search), params, body ?? undefined);
    const response = await rpc[method]({
      operation: method.slice(method.indexOf('.') + 1),
      request_id: 'bench-funnels',
      workspace: { id: website.workspace_id, name: 'Bench', timezone: website.timezone, currency: website.currency, plan: 'internal' },
      website: { id: website.id, domain: website.domain, timezone: website.timezone, currency: website.currency },
      key: { id: 'bench', scopes: ['funnels:read', 'funnels:write'] },
      params,
      query: validated.query,
      body: validated.body ?? null,
      headers: {},
    });
    if (response.status !== 200) throw new Error(`${method}?${queryString}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
}

/** p50/p95 of sequential runs after warm-ups, the process CPU per run, and the 1-minute load average at the end. */
async function timeCase(fn, label, { runs: maxRuns = RUNS, budget = BUDGET_S } = {}) {
  let body;
  let warmMs = 0;
  for (let i = 0; i < WARMUPS && (i === 0 || warmMs <= (budget * 1000) / 6); i += 1) {
    const t = process.hrtime.bigint();
    body = await fn();
    warmMs = Number(process.hrtime.bigint() - t) / 1e6;
  }
  const runs = Math.max(MIN_RUNS, Math.min(maxRuns, Math.floor((budget * 1000) / Math.max(1, warmMs))));
  const times = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < runs; i += 1) {
    const t = process.hrtime.bigint();
    body = await fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  const p50 = times.length % 2 === 1 ? times[(times.length - 1) / 2] : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
  const p95 = times[Math.min(times.length - 1, Math.ceil(times.length * 0.95) - 1)];
  const cpuMs = (used.user + used.system) / 1000 / runs;
  log(`${label}: p50 ${fmt(p50)} ms, p95 ${fmt(p95)} ms, cpu ${fmt(cpuMs, 0)} ms/run over ${runs} runs (load ${fmt(load(), 2)})`);
  return { p50, p95, runs, cpuMs, load: load(), body };
}

/** How the figures were taken and what they compare (the same in every run). */
const METHOD = [
  'How these were measured: chDB has no system.query_log, so each read is timed end to end (wall and process CPU, the 1-minute load average beside it), the profile runs each stage of a read alone, and EXPLAIN PIPELINE showed the plans. The "events" rows are the previous design (every read scans the window\'s events, builds each person\'s time-ordered array and passes over it); they are what a funnel answers while its read model is building. The read model keeps each funnel\'s attempts (one per entering event, computed when facts arrive) and each person\'s ordered session list, so a steps read is a max() per person over the window\'s attempts and a breakdown slices each entered person\'s list; designs compared on the way (a per-step hit projection, session grouping at read time, other row layouts) and their figures are in services/funnels/README.md, "Read model".',
].join(' ');

function report({ data, loadSeconds, copySeconds, touchesSeconds, buildSeconds, buildLoad, attempts, results, fromEvents, same, baseline, stepsBody, profile, minutes }) {
  const c = data.counts;
  const n = (x) => Number(x).toLocaleString('en-US');
  const steps = stepsBody.data;
  const loads = [...fromEvents, ...results, baseline].map((r) => r.load);
  const row = (label, r, target) => `| ${label} | ${r.runs} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${fmt(r.cpuMs, 0)} | ${fmt(r.load, 2)} | ${target ? `≤ ${target} ms: ${r.p50 <= target ? 'met' : '**not met**'}` : ''} |`;
  const lines = [
    `Machine: ${machine()}; 1-minute load average ${fmt(Math.min(...loads), 2)} to ${fmt(Math.max(...loads), 2)} while measuring (each figure's own is in its row; other engineers' jobs share the 2 cores). Embedded chDB; each request goes through the gateway's validator, then the funnels RPC handler in-process (no HTTP, no bus). Up to ${RUNS} sequential runs per query after ${WARMUPS} warm-ups (fewer when slow, at least ${MIN_RUNS}); "cpu" is the process CPU time per request (chDB runs in the process; above the wall time when both cores worked). Period: "${PERIOD}" (the data spans the 90 days up to now). Funnel: ${FUNNEL.steps.map((s) => s.name).join(' → ')}, sequential, window ${WINDOW_DAYS} days, visitor scope.`,
    '',
    `Workspace (the query benchmark's generator): ${n(c.events)} events, ${n(c.sessions)} sessions, ${n(c.people)} people (${n(c.identities - c.people)} merged identity pairs). Generated and copied into the funnels facts in ${fmt(loadSeconds, 0)} s (copy ${fmt(copySeconds, 0)} s; every person's session list, one INSERT … SELECT, ${fmt(touchesSeconds, 1)} s). The funnel's read model (${n(attempts)} attempts, one per entering event) was built in the background in ${fmt(buildSeconds, 1)} s (load ${fmt(buildLoad, 2)} at its start), while the definition write returned at once. Run took ${fmt(minutes, 1)} min.`,
    '',
    '| query | runs | p50 ms | p95 ms | cpu ms | load | target p50 |',
    '|---|---|---|---|---|---|---|',
    ...results.map((r) => row(`read model: ${r.label}`, r, r.target)),
    ...fromEvents.map((r) => row(`events (while building): ${r.label}`, r, null)),
    row('baseline: windowFunnel over raw events', baseline, null),
    '',
    `Ratio steps p50 / windowFunnel p50: **${fmt(results[0].p50 / baseline.p50, 2)}×** (from the events, the previous design: ${fmt(fromEvents[0].p50 / baseline.p50, 2)}×). The read model and the events gave the same steps and comparison: ${same ? 'yes' : '**no**'}.`,
    '',
    `Reached per step — Sightline: ${steps.map((s) => n(s.reached)).join(' → ')}; windowFunnel: ${baseline.body.data.map(n).join(' → ')}. Median seconds between steps (Sightline): ${steps.slice(1).map((s) => (s.median_seconds_from_previous === null ? '–' : fmt(s.median_seconds_from_previous, 0))).join(', ')}.`,
    '',
    'Where windowFunnel differs (why the counts above are not equal): one event may advance it by several levels (a signup conversion, recorded on /signup/thanks, fills both "Signup page" and "Signed up"), where Sightline lets one event fill one step; it groups by the raw identity id (a person merged across devices counts once per device); every step must fall inside the period (Sightline counts later steps up to the window after an entry in the period); it returns only the furthest level, with no step times and no attempt to report; events of the same second-or-millisecond are ordered arbitrarily (Sightline orders them in step order); and its default mode lets the chain restart at any first-step event without distinguishing attempts (equivalent for the level).',
  ];
  if (profile) {
    lines.push('', 'Profile of a steps read (each stage run alone; on each path each includes the ones above it):', '', '| stage | p50 ms | cpu ms | load |', '|---|---|---|---|',
      ...profile.map((p) => `| ${p.label} | ${fmt(p.p50)} | ${fmt(p.cpu, 0)} | ${fmt(p.load, 2)} |`));
  }
  lines.push('', METHOD);
  return lines.join('\n');
}

module.exports = { run };
