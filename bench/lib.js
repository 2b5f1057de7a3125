// Shared helpers: closed-loop load with fixed concurrency, percentiles, and RESULTS.md sections.
const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const os = require('node:os');

/** Runs `request` from `concurrency` loops for `durationMs`; returns latency percentiles and rate. */
async function closedLoop({ request, concurrency, durationMs, warmupMs = 1000 }) {
  const warmEnd = Date.now() + warmupMs;
  await Promise.all(Array.from({ length: concurrency }, async () => { while (Date.now() < warmEnd) await request(); }));
  const latencies = [];
  let errors = 0;
  const start = process.hrtime.bigint();
  const end = Date.now() + durationMs;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < end) {
      const t0 = process.hrtime.bigint();
      const ok = await request();
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (!ok) errors += 1;
    }
  }));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  return { requests: latencies.length, errors, perSecond: latencies.length / seconds, p50: pct(50), p95: pct(95), p99: pct(99) };
}

/** Replaces (or appends) the `## <title>` section of bench/RESULTS.md. */
function recordSection(title, body) {
  const file = join(__dirname, 'RESULTS.md');
  const header = '# Benchmark results\n\nWritten by `npm run bench`; each section is replaced when its benchmark runs again.\n';
  let text = existsSync(file) ? readFileSync(file, 'utf8') : header;
  const section = `## ${title}\n\n${body.trim()}\n`;
  const pattern = new RegExp(`## ${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n[\\s\\S]*?(?=\\n## |$)`);
  text = pattern.test(text) ? text.replace(pattern, section) : `${text.trimEnd()}\n\n${section}`;
  writeFileSync(file, text.endsWith('\n') ? text : `${text}\n`);
}

function machine() {
  return `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
}

const fmt = (n, d = 1) => Number(n).toFixed(d);

/** Deletes a benchmark's RabbitMQ queues and exchange (best effort, through rabbitmqctl). */
function deleteRabbitNamespace(namespace) {
  const { execFileSync } = require('node:child_process');
  try {
    const queues = execFileSync('rabbitmqctl', ['-q', 'list_queues', 'name'], { encoding: 'utf8' }).split('\n');
    for (const queue of queues.filter((q) => q.startsWith(`${namespace}.`))) execFileSync('rabbitmqctl', ['-q', 'delete_queue', queue]);
    execFileSync('rabbitmqadmin', ['delete', 'exchange', `name=${namespace}.events`], { stdio: 'ignore' });
  } catch {
    // rabbitmqadmin may be absent; leftover exchanges hold no messages.
  }
}

/**
 * The distributed profile for a benchmark: a fresh PostgreSQL database, Redis, and a RabbitMQ
 * namespace of its own; cleanup drops the database and deletes the namespace's queues.
 */
async function distributedServers() {
  const { Client } = require('pg');
  const admin = async (sql) => {
    const c = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  const database = `sightline_bench_${Date.now()}`;
  const namespace = `bench-${Date.now()}`;
  await admin(`CREATE DATABASE ${database}`);
  return {
    env: {
      SIGHTLINE_POSTGRES_URL: `postgres://postgres@127.0.0.1:5432/${database}`,
      SIGHTLINE_REDIS_URL: 'redis://127.0.0.1:6379',
      SIGHTLINE_AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
      SIGHTLINE_BUS_NAMESPACE: namespace,
    },
    async cleanup() {
      deleteRabbitNamespace(namespace);
      await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    },
  };
}

/**
 * Lets a benchmark require a TypeScript test helper (a provider's stand-in server) the way jest
 * does: transpiled by @swc/core on load, type-checked elsewhere (npm run lint).
 */
function requireTypeScript(path) {
  if (!require.extensions['.ts']) {
    const { transformSync } = require('@swc/core');
    require.extensions['.ts'] = (module, filename) => {
      const { code } = transformSync(readFileSync(filename, 'utf8'), {
        filename, module: { type: 'commonjs' }, jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      });
      module._compile(code, filename);
    };
  }
  return require(path);
}

module.exports = { closedLoop, recordSection, machine, fmt, deleteRabbitNamespace, distributedServers, requireTypeScript };
