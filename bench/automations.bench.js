// Alerts: (1) from POST /v1/events of a conversion to the message arriving on an SMTP server and on a
// Slack Web API server (both local, in this process), p50/p95; (2) 1,000 active threshold alerts on
// one workspace evaluated in one scheduling tick, against a baseline of one GET /v1/metrics request
// per alert made by a client over HTTP (at the workspace's 4 concurrent analytics queries).
// Both on embedded drivers and on PostgreSQL + Redis + RabbitMQ (ClickHouse is chDB either way).
//   npm run bench -- automations          BENCH_MODE=embedded,distributed  BENCH_SAMPLES=60  BENCH_ALERTS=1000
const { mkdtempSync, rmSync } = require('node:fs');
const { createServer } = require('node:http');
const os = require('node:os');
const { join } = require('node:path');
const { recordSection, machine, fmt, distributedServers } = require('./lib');

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 60);
const ALERTS = Number(process.env.BENCH_ALERTS ?? 1000);
const VISITORS = Number(process.env.BENCH_VISITORS ?? 2000);
const CHANNEL = 'C0BENCH001';

async function run() {
  const load = [os.loadavg()[0]];
  const results = [];
  for (const mode of (process.env.BENCH_MODE ?? 'embedded,distributed').split(',')) results.push(await measure(mode));
  load.push(os.loadavg()[0]);
  const body = [
    `Machine: ${machine()}. Load average (1 min) ${fmt(load[0], 2)} at the start, ${fmt(load[1], 2)} at the end (other engineers share the 2 cores). Embedded: PGlite, chDB, in-memory KV, in-process bus, one process. Distributed: PostgreSQL, Redis, RabbitMQ (chDB for ClickHouse), the services in one process talking over the broker.`,
    '',
    `**Event alert latency**: ${SAMPLES} conversions sent one at a time with POST /v1/events (gateway → ingest → conversion.created → automations → SMTP and Slack), time until each message arrived on the local SMTP server (smtp-server) and the local Slack Web API server.`,
    '',
    '| mode | email p50 ms | email p95 ms | chat p50 ms | chat p95 ms |',
    '|---|---|---|---|---|',
    ...results.map((r) => `| ${r.mode} | ${fmt(r.email.p50)} | ${fmt(r.email.p95)} | ${fmt(r.chat.p50)} | ${fmt(r.chat.p95)} |`),
    '',
    `**Threshold evaluation**: ${ALERTS} active threshold alerts on one website (${VISITORS} seeded visitors over 30 days), each watching one of 4 metrics over one of 4 periods with one of 4 filters, half comparing with the previous period; one scheduling tick evaluates every one (gather, condition, state), sending what fired. Baseline: the same ${ALERTS} figures read by a client as one GET /v1/metrics each, 4 at a time (the workspace's concurrent analytics limit).`,
    '',
    '| mode | alerts due | evaluated | /metrics computations | fired | tick s | baseline: 1 request per alert, s | baseline / tick |',
    '|---|---|---|---|---|---|---|---|',
    ...results.map((r) => `| ${r.mode} | ${r.tick.due} | ${r.tick.evaluated} | ${r.tick.queries} | ${r.tick.fired} | ${fmt(r.tick.duration_ms / 1000, 2)} | ${fmt(r.baselineMs / 1000, 2)} | ${fmt(r.baselineMs / r.tick.duration_ms, 1)}× |`),
    '',
    'Alerts asking for the same window and filters share one /metrics computation (their metrics merged into one query), which is where the ratio comes from; the state of the alerts that send nothing is written in one statement, and each alert that fires gets its own transaction (run, deliveries, state).',
  ].join('\n');
  process.stdout.write(`${body}\n`);
  recordSection('automations', body);
}

/** A Slack Web API stand-in for the benchmark: auth.test, conversations.info, chat.postMessage. */
function startSlack(onPost) {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const method = new URL(req.url, 'http://x').pathname.replace(/^\/api\//, '');
      const raw = Buffer.concat(chunks).toString('utf8');
      const args = (req.headers['content-type'] ?? '').includes('json') ? JSON.parse(raw || '{}') : Object.fromEntries(new URLSearchParams(raw));
      const reply = (body) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
      if (method === 'auth.test') return reply({ ok: true, team: 'Bench', team_id: 'T0BENCH', user_id: 'U0BENCH' });
      if (method === 'conversations.info') return reply({ ok: true, channel: { id: args.channel, is_member: true } });
      if (method === 'chat.postMessage') {
        onPost(String(args.text ?? ''));
        return reply({ ok: true, channel: args.channel, ts: `${Date.now() / 1000}` });
      }
      return reply({ ok: false, error: 'unknown_method' });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}/api`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) })));
}

function startSmtp(onMessage) {
  const { SMTPServer } = require('smtp-server');
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS', 'AUTH'], logger: false,
    onData(stream, _session, callback) {
      const chunks = [];
      stream.on('data', (c) => chunks.push(c));
      stream.on('end', () => { onMessage(Buffer.concat(chunks).toString('utf8')); callback(); });
    },
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `smtp://127.0.0.1:${server.server.address().port}`, close: () => new Promise((r) => server.close(r)) })));
}

const percentiles = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: sorted[Math.floor(sorted.length / 2)], p95: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] };
};

async function measure(mode) {
  const { createLogger, loadConfig, startModules } = require('@sightline/kit');
  const { seedWebsite } = require('@sightline/cli/dist/seed');
  const waiting = new Map(); // marker → { at, email, chat }
  const arrived = (kind, text) => {
    for (const [marker, entry] of waiting) if (text.includes(marker) && entry[kind] === undefined) entry[kind] = Date.now();
  };
  const smtp = await startSmtp((text) => arrived('email', text));
  const slack = await startSlack((text) => arrived('chat', text));
  const dataDir = mkdtempSync(join(os.tmpdir(), 'sightline-bench-automations-'));
  const env = { SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'error', SIGHTLINE_DEMO: 'off' };
  const distributed = mode === 'distributed' ? await distributedServers() : null;
  if (distributed) Object.assign(env, distributed.env);
  const services = ['gateway', 'ingest', 'attribution', 'automations'];
  const proc = await startModules({
    config: loadConfig(env),
    logger: createLogger({ level: 'error' }),
    modules: [
      require('@sightline/service-gateway').createGatewayModule({ availableServices: services, demo: false }),
      require('@sightline/service-ingest').createIngestModule(),
      require('@sightline/service-attribution').createAttributionModule(),
      // The benchmark ticks itself (once, on a whole minute); the queue is worked as runs are made.
      require('@sightline/service-automations').createAutomationsModule({ smtpUrl: smtp.url, slackApiUrl: slack.url, tickCron: '0 0 1 1 *' }),
    ],
  });
  try {
    const adminUrl = `http://127.0.0.1:${proc.adminPort}`;
    const admin = async (method, path, body) => {
      const r = await fetch(`${adminUrl}/admin${path}`, { method, headers: { authorization: `Bearer ${proc.settings.adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
      return r.json();
    };
    const ws = await admin('POST', '/workspaces', { name: 'Bench', plan: 'internal', timezone: 'Europe/Berlin', currency: 'EUR' });
    await admin('POST', `/workspaces/${ws.id}/websites`, { domain: 'bench.test' });
    const { key } = await admin('POST', '/keys', { workspace_id: ws.id });
    await admin('POST', '/automations/chat/connections', { workspace_id: ws.id, bot_token: 'xoxb-bench' });
    const base = `http://127.0.0.1:${proc.publicPort}/v1`;
    const api = async (method, path, body) => {
      const r = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
      const json = await r.json();
      if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
      return json;
    };

    // (1) Event alert latency.
    await api('POST', '/automations?website=bench.test', {
      name: 'Every sale',
      spec: { version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, deliver: [{ channel: 'email', to: ['ops@bench.test'] }, { channel: 'chat', to: [CHANNEL] }] },
    });
    const email = [];
    const chat = [];
    for (let i = 0; i < SAMPLES + 5; i += 1) {
      const marker = `m${i}_${Math.random().toString(36).slice(2, 8)}`;
      const entry = { at: Date.now() };
      waiting.set(marker, entry);
      await api('POST', '/events?website=bench.test', { events: [{ event_type: 'purchase', event_name: marker, email: `${marker}@buyer.test`, revenue: 10, occurred_at: new Date().toISOString() }] });
      const deadline = Date.now() + 30_000;
      while ((entry.email === undefined || entry.chat === undefined) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      waiting.delete(marker);
      if (entry.email === undefined || entry.chat === undefined) throw new Error(`[${mode}] sample ${i}: the message did not arrive`);
      if (i >= 5) {
        email.push(entry.email - entry.at);
        chat.push(entry.chat - entry.at);
      }
    }
    process.stdout.write(`[${mode}] event alert: email p50 ${fmt(percentiles(email).p50)} ms, chat p50 ${fmt(percentiles(chat).p50)} ms\n`);

    // (2) Threshold alerts: data, alerts, one tick, and the baseline.
    process.stdout.write(`[${mode}] seeding ${VISITORS} visitors...\n`);
    await seedWebsite({ url: adminUrl, token: proc.settings.adminToken }, { website: 'bench.test', days: 30, visitors: VISITORS, seed: 7, url: `http://127.0.0.1:${proc.publicPort}`, concurrency: 4, progress: false });
    await new Promise((r) => setTimeout(r, 3_000));
    const metrics = ['conversions', 'revenue', 'visitors', 'sessions'];
    const periods = ['today', 'yesterday', 'last 7 days', 'last 30 days'];
    const filters = [[], [{ field: 'channel', op: 'eq', values: ['Organic Search'] }], [{ field: 'channel', op: 'eq', values: ['Paid Search'] }], [{ field: 'device_type', op: 'eq', values: ['mobile'] }]];
    const specs = Array.from({ length: ALERTS }, (_, i) => {
      const metric = metrics[i % 4];
      const query = { metric, period: periods[Math.floor(i / 4) % 4], ...(filters[Math.floor(i / 16) % 4].length ? { filters: filters[Math.floor(i / 16) % 4] } : {}) };
      const previous = i % 2 === 0;
      return {
        query,
        spec: {
          version: 1, trigger: { kind: 'threshold', cron: '* * * * *' }, gather: { x: query },
          condition: previous ? { figure: 'x', compare: 'previous_period', change: 'percent', op: 'lte', value: -50 - (i % 40) } : { figure: 'x', op: 'gt', value: 1_000_000 + i },
          deliver: [{ channel: 'email', to: ['alerts@bench.test'] }],
        },
      };
    });
    process.stdout.write(`[${mode}] creating ${ALERTS} threshold alerts...\n`);
    const queue = [...specs.entries()];
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let item = queue.shift(); item; item = queue.shift()) await api('POST', '/automations?website=bench.test', { name: `Threshold ${item[0]}`, spec: item[1].spec });
    }));
    // Every alert's first cron time is the next whole minute: tick just after it.
    const minute = Math.ceil((Date.now() + 1000) / 60_000) * 60_000;
    await new Promise((r) => setTimeout(r, minute - Date.now() + 500));
    const tick = await admin('POST', '/automations/tick');
    process.stdout.write(`[${mode}] tick: ${JSON.stringify(tick)}\n`);

    const t0 = Date.now();
    const baselineQueue = [...specs];
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let item = baselineQueue.shift(); item; item = baselineQueue.shift()) {
        const q = new URLSearchParams({ website: 'bench.test', metrics: item.query.metric, period: item.query.period });
        for (const f of item.query.filters ?? []) q.append('filter', `${f.field}:${f.op}:${f.values.join('|')}`);
        await api('GET', `/metrics?${q.toString()}`);
      }
    }));
    const baselineMs = Date.now() - t0;
    process.stdout.write(`[${mode}] baseline: ${ALERTS} /metrics requests in ${baselineMs} ms\n`);
    return { mode, email: percentiles(email), chat: percentiles(chat), tick, baselineMs };
  } finally {
    await proc.stop();
    await smtp.close();
    await slack.close();
    rmSync(dataDir, { recursive: true, force: true });
    await distributed?.cleanup();
  }
}

module.exports = { run };
