// Starts Sightline in the test process the way `sightline start --target=...` does: modules come from
// the CLI's module registry, settings from the one validated configuration. Stand-ins (recorders of
// what reaches a queue, fake services) join the named targets.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveTargets, SETTINGS_SECTIONS, TARGET_NAMES } from '@sightline/cli';
import { createLogger, loadConfig, startModules, type RunnableModule, type RunningProcess } from '@sightline/kit';

export interface Stack {
  proc: RunningProcess;
  /** The public API, e.g. http://127.0.0.1:54321 */
  base: string;
  dataDir: string;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Registry targets to run; `all` runs every module. */
  targets: string[];
  standIns?: RunnableModule[];
  /** Extra variables (a driver profile's server URLs, a service's settings). */
  env?: Record<string, string>;
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-e2e-'));
  try {
    const config = loadConfig(
      { SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'silent', SIGHTLINE_DEMO: 'off', ...options.env },
      SETTINGS_SECTIONS,
    );
    const modules = await Promise.all(resolveTargets(options.targets).map((entry) => entry.create(config, TARGET_NAMES)));
    const proc = await startModules({ config, modules: [...modules, ...(options.standIns ?? [])], logger: createLogger({ level: 'silent' }) });
    return {
      proc,
      base: `http://127.0.0.1:${proc.publicPort ?? 0}`,
      dataDir,
      stop: async () => {
        await proc.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}
