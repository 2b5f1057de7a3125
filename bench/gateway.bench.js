// Gateway overhead: GET /v1/me through the whole pipeline (auth, rate limit, quota, scope, routing)
// on embedded drivers, against a bare node:http server answering a same-size JSON body in the
// same run. The ratio is the cost of the gateway itself.
const http = require('node:http');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { closedLoop, recordSection, machine, fmt } = require('./lib');

async function run() {
  const { createLogger, loadConfig, startModules } = require('@sightline/kit');
  const { MODULE_REGISTRY, TARGET_NAMES, SETTINGS_SECTIONS } = require('@sightline/cli');
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-bench-gw-'));
  const config = loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'silent', SIGHTLINE_DEMO: 'off' }, SETTINGS_SECTIONS);
  const proc = await startModules({ config, logger: createLogger({ level: 'silent' }), modules: await Promise.all(MODULE_REGISTRY.map((e) => e.create(config, TARGET_NAMES))) });
  const admin = async (method, path, body) => {
    const r = await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, { method, headers: { authorization: `Bearer ${proc.settings.adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return r.json();
  };
  const ws = await admin('POST', '/workspaces', { name: 'Bench', plan: 'internal' });
  await admin('POST', `/workspaces/${ws.id}/websites`, { domain: 'bench.test' });
  const { key } = await admin('POST', '/keys', { workspace_id: ws.id });
  const meUrl = `http://127.0.0.1:${proc.publicPort}/v1/me`;
  const sample = await (await fetch(meUrl, { headers: { authorization: `Bearer ${key}` } })).text();

  const bare = http.createServer((_req, res) => { res.setHeader('content-type', 'application/json'); res.end(sample); });
  await new Promise((r) => bare.listen(0, '127.0.0.1', r));
  const bareUrl = `http://127.0.0.1:${bare.address().port}/`;

  const concurrency = 16;
  const durationMs = Number(process.env.BENCH_DURATION_MS ?? 10000);
  const get = (url, headers) => async () => { const r = await fetch(url, { headers }); await r.arrayBuffer(); return r.ok; };
  const baseline = await closedLoop({ request: get(bareUrl, {}), concurrency, durationMs });
  const gateway = await closedLoop({ request: get(meUrl, { authorization: `Bearer ${key}` }), concurrency, durationMs });
  bare.close();
  await proc.stop();
  rmSync(dataDir, { recursive: true, force: true });

  const row = (name, r) => `| ${name} | ${fmt(r.perSecond, 0)} | ${fmt(r.p50, 2)} | ${fmt(r.p95, 2)} | ${fmt(r.p99, 2)} | ${r.errors} |`;
  const body = [
    `Machine: ${machine()}. Embedded drivers (PGlite, in-memory KV, in-process bus), ${concurrency} concurrent clients in the same process, ${durationMs / 1000} s per case after a 1 s warm-up.`,
    '',
    '| case | req/s | p50 ms | p95 ms | p99 ms | errors |',
    '|---|---|---|---|---|---|',
    row('baseline: bare node:http, same body', baseline),
    row('GET /v1/me through the gateway', gateway),
    '',
    `Gateway cost: ${fmt(baseline.perSecond / gateway.perSecond, 2)}× the baseline's time per request (throughput ratio), p50 ${fmt(gateway.p50 - baseline.p50, 2)} ms above it.`,
  ].join('\n');
  process.stdout.write(`${body}\n`);
  recordSection('gateway', body);
}

module.exports = { run };
