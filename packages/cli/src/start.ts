import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createLogger, loadConfig, startModules, type Logger, type RunningProcess, type SightlineConfig } from '@sightline/kit';
import { resolveTargets, TARGET_NAMES } from './registry';
import { SETTINGS_SECTIONS } from './settings';
import { seedWebsite } from './seed';

/** What the demo workspace is filled with on first start: small enough to take seconds. */
const DEMO_SEED = { days: 30, visitors: 400, seed: 42 };


/** Starts the chosen modules in one process and stops them gracefully on SIGTERM/SIGINT. */
export async function startProcess(config: SightlineConfig): Promise<RunningProcess> {
  const logger = createLogger({ level: config.logLevel, name: `sightline-${config.target.join('+')}` });
  const entries = resolveTargets(config.target);
  const modules = await Promise.all(entries.map((entry) => entry.create(config, TARGET_NAMES)));
  const demoKeyFile = join(resolve(config.dataDir), 'demo-key');
  const demoExisted = existsSync(demoKeyFile);
  const running = await startModules({ config, modules, logger });
  if (!demoExisted && existsSync(demoKeyFile) && entries.some((e) => e.name === 'ingest') && running.publicPort !== null) {
    void seedDemo(running, logger);
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'stopping');
      running.stop().then(() => process.exit(0), () => process.exit(1));
    });
  }
  return running;
}

/** Fills the just-created demo websites through the public ingestion path, in the background. */
async function seedDemo(running: RunningProcess, logger: Logger): Promise<void> {
  const conn = { url: `http://127.0.0.1:${running.adminPort}`, token: running.settings.adminToken };
  const { DEMO_WEBSITES } = await import('@sightline/service-gateway');
  for (const website of DEMO_WEBSITES) {
    try {
      const result = await seedWebsite(conn, { website, ...DEMO_SEED, url: `http://127.0.0.1:${running.publicPort}`, concurrency: 4, progress: false });
      logger.info({ website, events: result.stats.collectEvents + result.stats.serverEvents }, 'demo website seeded');
    } catch (error) {
      if (!running.isReady()) return; // stopped while seeding: nothing to report
      logger.warn({ err: error, website }, 'demo seeding failed; run `sightline seed` to fill it');
    }
  }
}

export function configFromEnvironment(overrides: { target?: string }): SightlineConfig {
  const env = { ...process.env };
  if (overrides.target) env['SIGHTLINE_TARGET'] = overrides.target;
  return loadConfig(env, SETTINGS_SECTIONS);
}
