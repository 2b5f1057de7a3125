// The load generator of the ingest benchmark, run in its own worker thread so that building and
// sending requests does not compete with the server's event loop.
const { parentPort, workerData } = require('node:worker_threads');

const { baseUrl, key, seconds, concurrency, seed } = workerData;

/** Endless 200-event batches of realistic events, converted from the generator's tracker hits and server events. */
function* eventBatches() {
  const { generateWorkspace } = require('@sightline/datagen');
  for (let round = seed; ; round += 1) {
    let batch = [];
    for (const item of generateWorkspace({ seed: round, days: 30, visitors: 20_000, domain: 'bench.test' }).batches()) {
      const inbound = item.kind === 'events'
        ? item.body.events
        : item.body.events.map((hit) => ({
          event_type: hit.type,
          ...(hit.name ? { event_name: hit.name } : {}),
          occurred_at: new Date(hit.ts).toISOString(),
          anonymous_id: item.body.aid,
          ...(hit.email ? { email: hit.email } : {}),
          properties: { url: hit.url, ...(hit.referrer ? { referrer: hit.referrer } : {}), title: hit.title },
        }));
      for (const event of inbound) {
        batch.push(event);
        if (batch.length === 200) {
          yield batch;
          batch = [];
        }
      }
    }
  }
}

(async () => {
  // The thread id, so the benchmark can tell this thread's CPU from the server's (/proc/<pid>/task).
  parentPort.postMessage({ tid: Number(require('node:fs').readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0]) });
  const batches = eventBatches();
  const latencies = [];
  let sent = 0;
  let failed = 0;
  // 503s (the in-process backlog is full): the batch is sent again after Retry-After, as a client
  // does; counted, so a refusal is never a silent drop.
  let refused = 0;
  const end = Date.now() + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    let events = null;
    while (Date.now() < end) {
      events ??= batches.next().value;
      const t0 = process.hrtime.bigint();
      const r = await fetch(`${baseUrl}/v1/events`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ events }) });
      const body = await r.json();
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (r.status === 200) {
        sent += body.accepted;
        events = null;
      } else if (r.status === 503) {
        refused += 1;
        await new Promise((resolve) => setTimeout(resolve, Number(r.headers.get('retry-after') ?? 1) * 1000));
      } else {
        failed += 1;
        events = null;
      }
    }
  }));
  // This thread's CPU seconds (the load generator's own cost, apart from the server's).
  const cpuSeconds = Number(require('node:fs').readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e9;
  parentPort.postMessage({ latencies, sent, failed, refused, cpuSeconds });
})();
