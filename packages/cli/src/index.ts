export { main } from './main';
export { MODULE_REGISTRY, TARGET_NAMES, resolveTargets } from './registry';
export { startProcess, configFromEnvironment } from './start';
