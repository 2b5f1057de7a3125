// CPU accounting for benchmarks on a shared machine, where wall-clock rates are noisy and CPU time
// is the figure that carries: per-thread CPU of a process from /proc (chDB's native threads, the V8
// helpers, the main JavaScript thread and workers apart), the load average, and a main-thread CPU
// profile (node:inspector) folded into pipeline stages by the file of the nearest Sightline frame.
const { readdirSync, readFileSync } = require('node:fs');
const os = require('node:os');

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds of every thread of `pid`, keyed by thread id: { tid: { name, seconds } }. */
function threadCpu(pid = process.pid) {
  const threads = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // The name is in parentheses and may contain spaces; fields after it are space-separated.
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      threads[tid] = { name, seconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND };
    } catch {
      // The thread ended between listing and reading.
    }
  }
  return threads;
}

/** CPU seconds of the whole process `pid` (all threads, ended ones included). */
function processCpu(pid = process.pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/**
 * Groups the CPU spent between two threadCpu() snapshots: the main thread (tid = pid), named
 * workers (`workers`: tid → label), and the rest by thread name (chDB's pools, V8 and libuv helpers).
 */
function threadGroups(before, after, { pid = process.pid, workers = {} } = {}) {
  const groups = {};
  for (const [tid, t] of Object.entries(after)) {
    const spent = t.seconds - (before[tid]?.seconds ?? 0);
    if (spent <= 0) continue;
    const label = Number(tid) === pid ? 'main JavaScript thread' : workers[tid] ?? groupOfThreadName(t.name);
    groups[label] = (groups[label] ?? 0) + spent;
  }
  return groups;
}

/**
 * Node 20 leaves its helper threads unnamed ("node"): V8's (garbage collection, compilers) and
 * libuv's pool, where chDB's async calls run (an insert's parsing happens on that thread). chDB
 * names its own: background merges apart, the rest is query and insert work.
 */
function groupOfThreadName(name) {
  if (/^V8 |^node$|^libuv-worker/.test(name)) return 'Node helpers (GC, compilers, libuv pool running chDB calls)';
  if (/^MergeMutate/.test(name)) return 'chDB background merges';
  return 'chDB query and insert threads';
}

/** "1.2 → 3.4" style load average (1-minute) readings. */
function loadAverage() {
  return os.loadavg()[0];
}

/**
 * Starts a CPU profile of this thread (node:inspector); `stop()` resolves to the profile.
 * Sampling every 1 ms keeps the overhead near 1-2 %.
 */
async function startProfile() {
  const inspector = require('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 1000 });
  await post('Profiler.start');
  return {
    async stop() {
      const { profile } = await post('Profiler.stop');
      session.disconnect();
      return profile;
    },
  };
}

/**
 * Where the main thread's time went: each sample goes to the stage of the nearest frame (from the
 * leaf up) whose file a rule names; samples with no such frame go by their leaf ((garbage
 * collector), (idle), (program), node internals). Returns { stage: seconds }.
 */
function foldProfile(profile, rules) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOf = new Map();
  const resolve = (id) => {
    if (stageOf.has(id)) return stageOf.get(id);
    const node = byId.get(id);
    const { url, functionName } = node.callFrame;
    let stage = null;
    for (const [name, test] of rules) {
      if (test(url, functionName)) {
        stage = name;
        break;
      }
    }
    if (stage === null) {
      const up = parent.get(id);
      stage = up === undefined ? null : resolve(up);
    }
    stageOf.set(id, stage);
    return stage;
  };
  const leafLabel = (id) => {
    const { url, functionName } = byId.get(id).callFrame;
    if (functionName.startsWith('(')) return functionName;
    if (url.startsWith('node:')) return 'node internals (other)';
    return 'other JavaScript';
  };
  const seconds = {};
  const deltas = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const id = profile.samples[i];
    const dt = (deltas[i + 1] ?? deltas[i] ?? 0) / 1e6;
    const stage = resolve(id) ?? leafLabel(id);
    seconds[stage] = (seconds[stage] ?? 0) + dt;
  }
  return seconds;
}

/** The hottest functions by self time: [{ name, seconds }]. */
function topFunctions(profile, n = 25) {
  const self = new Map();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const deltas = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const { callFrame } = byId.get(profile.samples[i]);
    const file = callFrame.url.replace(/^.*\/(node_modules|services|packages)\//, '$1/');
    const key = `${callFrame.functionName || '(anonymous)'} ${file}:${callFrame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (deltas[i + 1] ?? deltas[i] ?? 0) / 1e6);
  }
  return [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, seconds]) => ({ name, seconds }));
}

module.exports = { threadCpu, processCpu, threadGroups, loadAverage, startProfile, foldProfile, topFunctions };
