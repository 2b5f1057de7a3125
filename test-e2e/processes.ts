// Runs the built CLI as separate processes, the way operators and Kubernetes run it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

const CLI = join(__dirname, '..', 'packages', 'cli', 'bin', 'sightline.js');

export interface SightlineProcess {
  baseUrl: string;
  adminUrl: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then the exit code (forces SIGKILL after 20 s). */
  stop(): Promise<number | null>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** Starts `sightline <args>` and resolves once its admin port reports ready. */
export async function startSightline(args: string[], env: Record<string, string>): Promise<SightlineProcess> {
  const port = await freePort();
  const adminPort = await freePort();
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, SIGHTLINE_PORT: String(port), SIGHTLINE_ADMIN_PORT: String(adminPort), SIGHTLINE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve((exitCode = code))));

  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (exitCode !== undefined) throw new Error(`sightline exited with ${exitCode} before it was ready:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`sightline was not ready within 90 s:\n${output}`);
    }
    const ready = await fetch(`${adminUrl}/readyz`).then((r) => r.ok, () => false);
    if (ready) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  let stopped: Promise<number | null> | null = null;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    adminUrl,
    child,
    output: () => output,
    stop: () => {
      stopped ??= (async () => {
        if (exitCode !== undefined) return exitCode;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        const code = await exited;
        clearTimeout(timer);
        return code;
      })();
      return stopped;
    },
  };
}

/** Runs a short CLI command; rejects with its output when it exits non-zero. */
export async function runCli(args: string[], env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, SIGHTLINE_LOG_LEVEL: 'error', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`sightline ${args.join(' ')} exited ${code}: ${stderr || stdout}`);
  return stdout;
}
