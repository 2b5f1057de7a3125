export { main } from './main';
export { MODULE_REGISTRY, TARGET_NAMES, resolveTargets } from './registry';
export { startProcess, configFromEnvironment } from './start';
export { SETTINGS_SECTIONS, CRM_SYNC_SETTINGS } from './settings';
export { rebuildWebsite, rebuildLine, type RebuildJob, type RebuildOptions } from './attribution-command';
export { rebuildFunnels, funnelsRebuildLine, type FunnelsRebuildJob, type FunnelsRebuildOptions } from './funnels-command';
export { redriveDeadLetters, deadLetterCounts, redriveSummary, deadLettersSummary, type RedriveReport } from './bus-command';
