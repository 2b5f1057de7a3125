// Servers of a test's own, on free ports in temp directories, for tests that restart or stop them:
// the shared servers (PostgreSQL 5432, Redis 6379, RabbitMQ 5672) serve every other suite running
// at the same time and are never restarted. Each comes from the same Debian package as the shared one
// (scripts/ensure-services.sh installs them).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** True when 127.0.0.1:port accepts a TCP connection now. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.setTimeout(500, () => (socket.destroy(), resolve(false)));
    socket.once('error', () => (socket.destroy(), resolve(false)));
    socket.connect(port, '127.0.0.1', () => (socket.end(), resolve(true)));
  });
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number, log?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${log ? `\n${log()}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Ends a child process with `signal` and waits for it. */
async function ended(child: ChildProcess | null, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

/** The newest PostgreSQL server binaries of the Debian packages. */
function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error(`no PostgreSQL server binaries under ${root}/*/bin; run \`bash scripts/ensure-services.sh\``);
  return join(root, versions[0] as string, 'bin');
}

/** A throwaway PostgreSQL cluster (initdb + pg_ctl); as root its files belong to `postgres`, which the server requires. */
export class PrivatePostgres {
  readonly dir = mkdtempSync(join(tmpdir(), 'sightline-private-pg-'));
  readonly data = join(this.dir, 'data');
  readonly log = join(this.dir, 'server.log');
  private readonly asRoot = userInfo().uid === 0;
  private readonly bin = postgresBinDir();
  private started = false;

  private constructor(readonly port: number) {
    if (this.asRoot) {
      const { uid, gid } = PrivatePostgres.postgresIds();
      chownSync(this.dir, uid, gid);
      chmodSync(this.dir, 0o700);
    }
  }

  /** initdb and start, on a free port. */
  static async start(options: { maxConnections?: number } = {}): Promise<PrivatePostgres> {
    const cluster = new PrivatePostgres(await freePort());
    await cluster.pg('initdb', ['-D', cluster.data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    const settings = `-p ${cluster.port} -k ${cluster.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=${options.maxConnections ?? 40}`;
    await cluster.pg('pg_ctl', ['-D', cluster.data, '-l', cluster.log, '-o', settings, '-w', '-t', '30', 'start']);
    cluster.started = true;
    return cluster;
  }

  private static postgresIds(): { uid: number; gid: number } {
    const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
    if (!line) throw new Error('running as root, but there is no postgres user to own the private cluster');
    const [, , uid, gid] = line.split(':');
    return { uid: Number(uid), gid: Number(gid) };
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private async pg(tool: string, args: string[]): Promise<void> {
    const [file, argv] = this.asRoot ? ['runuser', ['-u', 'postgres', '--', join(this.bin, tool), ...args]] : [join(this.bin, tool), args];
    try {
      await run(file, argv, { timeout: 60_000 });
    } catch (error) {
      const log = existsSync(this.log) ? readFileSync(this.log, 'utf8').slice(-2000) : '';
      throw new Error(`${tool} ${args.join(' ')} failed: ${String(error)}\n${log}`, { cause: error });
    }
  }

  /** A fast restart: every session ends (57P01), the server comes back on the same port and data. */
  restart(): Promise<void> {
    return this.pg('pg_ctl', ['-D', this.data, '-l', this.log, '-m', 'fast', '-w', '-t', '30', 'restart']);
  }

  async destroy(): Promise<void> {
    if (this.started) await this.pg('pg_ctl', ['-D', this.data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A redis-server without persistence (no RDB, no AOF): a restart loses everything, as such a Redis does. */
export class PrivateRedis {
  private child: ChildProcess | null = null;
  private readonly dir = mkdtempSync(join(tmpdir(), 'sightline-private-redis-'));

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.up();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server (again), empty. */
  async up(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir], { stdio: 'ignore' });
    await until(`redis-server on ${this.port}`, () => accepts(this.port), 15_000);
  }

  /** Killed, as a crash or an eviction ends it. */
  down(): Promise<void> {
    return ended(this.child, 'SIGKILL');
  }

  async destroy(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A RabbitMQ node of its own (node name, ports, Mnesia directory, no plugins). Its durable queues and
 * persistent messages survive a restart, as on any RabbitMQ.
 */
export class PrivateRabbit {
  private child: ChildProcess | null = null;
  /** Every start script this node ran (one per up()); destroy ends any still running. */
  private readonly scripts: ChildProcess[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'sightline-private-rabbit-'));
  private output = '';

  private constructor(readonly port: number, private readonly distPort: number) {
    writeFileSync(join(this.dir, 'enabled_plugins'), '[].\n');
    writeFileSync(join(this.dir, 'rabbitmq.conf'), `listeners.tcp.default = 127.0.0.1:${port}\nloopback_users = none\n`);
    mkdirSync(join(this.dir, 'log'));
  }

  static async start(): Promise<PrivateRabbit> {
    const rabbit = new PrivateRabbit(await freePort(), await freePort());
    await rabbit.up();
    return rabbit;
  }

  get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    const env = {
      ...process.env,
      RABBITMQ_NODENAME: `sltest${this.port}@localhost`,
      RABBITMQ_NODE_PORT: String(this.port),
      RABBITMQ_DIST_PORT: String(this.distPort),
      RABBITMQ_MNESIA_BASE: join(this.dir, 'mnesia'),
      RABBITMQ_LOG_BASE: join(this.dir, 'log'),
      RABBITMQ_ENABLED_PLUGINS_FILE: join(this.dir, 'enabled_plugins'),
      RABBITMQ_CONFIG_FILE: join(this.dir, 'rabbitmq.conf'),
      RABBITMQ_PID_FILE: join(this.dir, 'pid'),
    };
    this.output = '';
    // Its own directory as the working one: a broker killed mid-write leaves its crash dumps there.
    const child = spawn('/usr/lib/rabbitmq/bin/rabbitmq-server', [], { env, cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
    this.child = child;
    this.scripts.push(child);
    await until(`RabbitMQ on ${this.port}`, async () => (await accepts(this.port)) && /completed with/.test(this.output), 60_000, () => this.output.slice(-2000));
  }

  /** The Erlang VM's pid: the start script runs it as a child and does not pass signals on. */
  private brokerPid(): number | null {
    const file = join(this.dir, 'pid');
    const pid = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : NaN;
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  }

  private signalBroker(signal: NodeJS.Signals): void {
    const pid = this.brokerPid();
    if (pid === null) return;
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }

  /** A graceful stop (SIGTERM to the broker): what a rolling restart of the broker does. */
  async down(): Promise<void> {
    this.signalBroker('SIGTERM');
    await until(`RabbitMQ on ${this.port} to close`, async () => !(await accepts(this.port)), 60_000);
    await Promise.race([ended(this.child, 'SIGTERM'), new Promise((r) => setTimeout(r, 10_000))]);
    rmSync(join(this.dir, 'pid'), { force: true });
  }

  async destroy(): Promise<void> {
    this.signalBroker('SIGKILL');
    await Promise.all(this.scripts.map((script) => ended(script, 'SIGKILL')));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The ClickHouse HTTP shim (chDB behind ClickHouse's HTTP interface) as its own process, on a fixed port and data directory. */
export class ClickHouseShimProcess {
  private child: ChildProcess | null = null;
  private readonly dir = mkdtempSync(join(tmpdir(), 'sightline-private-clickhouse-'));

  private constructor(readonly port: number) {}

  static async start(): Promise<ClickHouseShimProcess> {
    const shim = new ClickHouseShimProcess(await freePort());
    await shim.up();
    return shim;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    this.child = spawn(process.execPath, [join(__dirname, 'run-clickhouse-shim.js'), this.dir, String(this.port)], { stdio: 'ignore' });
    await until(`the ClickHouse shim on ${this.port}`, () => accepts(this.port), 30_000);
  }

  down(): Promise<void> {
    return ended(this.child, 'SIGKILL');
  }

  async destroy(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
