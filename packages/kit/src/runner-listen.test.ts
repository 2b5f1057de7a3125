// Where the runner listens and what it believes about the client: the admin port on loopback unless
// widened, the public port on every interface unless narrowed, X-Forwarded-For only from configured
// proxies, and requests the HTTP parser refuses still answered with a problem document (issue 16,
// findings 1 and 7).
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from './config';
import { createLogger } from './logger';
import { defineStandIn } from './module';
import { startModules, type RunningProcess } from './runner';

/** An address of this machine that is not loopback: where an outsider would connect. */
const outside = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

/** A public route that says which client address the runner's Express settings produce. */
const echo = defineStandIn({
  name: 'gateway',
  needs: {},
  async create() {
    return { publicRoutes: (router) => void router.get('/whoami', (req, res) => void res.json({ ip: req.ip })) };
  },
});

/** Sends raw bytes and resolves with everything the server answered before closing. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

const reachable = async (url: string): Promise<boolean> => {
  try {
    await fetch(url);
    return true;
  } catch {
    return false;
  }
};

describe('runner: listeners and the client address', () => {
  let dataDir: string;
  const started: RunningProcess[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const proc = await startModules({
      config: loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_BUS_NAMESPACE: `listen${Date.now()}`, ...env }),
      modules: [echo],
      logger: createLogger({ level: 'silent' }),
    });
    started.push(proc);
    return proc;
  };

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'sightline-listen-'));
  });
  afterAll(async () => {
    for (const proc of started) await proc.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('has a non-loopback address to test from', () => {
    expect(outside).toBeDefined();
  });

  it('binds the admin port to loopback and the public port to every interface by default', async () => {
    const proc = await start();
    expect(await reachable(`http://127.0.0.1:${proc.adminPort}/healthz`)).toBe(true);
    expect(await reachable(`http://${outside}:${proc.adminPort}/healthz`)).toBe(false);
    expect(await reachable(`http://${outside}:${proc.publicPort}/whoami`)).toBe(true);
  });

  it('binds where configured: the public port narrowed, the admin port widened', async () => {
    const proc = await start({ SIGHTLINE_BIND_HOST: '127.0.0.1', SIGHTLINE_ADMIN_BIND_HOST: '0.0.0.0' });
    expect(await reachable(`http://${outside}:${proc.publicPort}/whoami`)).toBe(false);
    expect(await reachable(`http://127.0.0.1:${proc.publicPort}/whoami`)).toBe(true);
    expect(await reachable(`http://${outside}:${proc.adminPort}/healthz`)).toBe(true);
  });

  it('ignores X-Forwarded-For unless the proxy is configured, then takes the client from it', async () => {
    const plain = await start();
    const ask = async (proc: RunningProcess) =>
      ((await (await fetch(`http://127.0.0.1:${proc.publicPort}/whoami`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).json()) as { ip: string }).ip;
    expect(await ask(plain)).not.toBe('203.0.113.9');
    const behindProxy = await start({ SIGHTLINE_TRUST_PROXY: 'loopback' });
    expect(await ask(behindProxy)).toBe('203.0.113.9');
  });

  it('answers headers over 16 KB with a 431 problem document carrying a request id and the RateLimit headers', async () => {
    const proc = await start();
    const answer = await raw(proc.publicPort as number, `GET /whoami HTTP/1.1\r\nHost: x\r\nCookie: ${'a'.repeat(20_000)}\r\n\r\n`);
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head).toMatch(/content-type: application\/problem\+json/i);
    for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Sightline-Request-Id']) expect(head).toContain(`${name}: `);
    const problem = JSON.parse(body) as Record<string, unknown>;
    expect(problem).toMatchObject({ status: 431, type: expect.stringMatching(/\/headers-too-large$/), remediation: expect.any(String) });
    expect(head).toContain(`Sightline-Request-Id: ${String(problem['instance'])}`);
    // Just under the limit is read as usual.
    const fits = await raw(proc.publicPort as number, `GET /whoami HTTP/1.1\r\nHost: x\r\nConnection: close\r\nCookie: ${'a'.repeat(15_000)}\r\n\r\n`);
    expect(fits).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('answers malformed HTTP with a 400 problem document', async () => {
    const proc = await start();
    const answer = await raw(proc.publicPort as number, 'GET /whoami HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.split('\r\n\r\n')[1] ?? '')).toMatchObject({ status: 400, type: expect.stringMatching(/\/invalid-request$/) });
  });
});
