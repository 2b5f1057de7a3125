import { createLogger, loadConfig, startModules, type RunningProcess, type SightlineConfig } from '@sightline/kit';
import { resolveTargets, TARGET_NAMES } from './registry';

/** Starts the chosen modules in one process and stops them gracefully on SIGTERM/SIGINT. */
export async function startProcess(config: SightlineConfig): Promise<RunningProcess> {
  const logger = createLogger({ level: config.logLevel, name: `sightline-${config.target.join('+')}` });
  const entries = resolveTargets(config.target);
  const modules = entries.map((entry) => entry.create({ demo: config.demo === 'auto' }, TARGET_NAMES));
  const running = await startModules({ config, modules, logger });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'stopping');
      running.stop().then(() => process.exit(0), () => process.exit(1));
    });
  }
  return running;
}

export function configFromEnvironment(overrides: { target?: string }): SightlineConfig {
  const env = { ...process.env };
  if (overrides.target) env['SIGHTLINE_TARGET'] = overrides.target;
  return loadConfig(env);
}
