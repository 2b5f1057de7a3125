// The one module registry (as Loki's): each entry is a name, the service's definition, and what it
// must start after. `--target=all` runs every entry in this order; Helm runs one name per pod.
import type { ServiceModule } from '@sightline/kit';
import { createGatewayModule } from '@sightline/service-gateway';
import { createIngestModule } from '@sightline/service-ingest';

export interface RegistryOptions {
  demo: boolean;
}

export interface RegistryEntry {
  name: string;
  dependsOn: string[];
  create(options: RegistryOptions, allNames: readonly string[]): ServiceModule;
}

export const MODULE_REGISTRY: readonly RegistryEntry[] = [
  { name: 'gateway', dependsOn: [], create: (options, allNames) => createGatewayModule({ availableServices: allNames, demo: options.demo }) },
  { name: 'ingest', dependsOn: [], create: () => createIngestModule() },
];

export const TARGET_NAMES = MODULE_REGISTRY.map((entry) => entry.name);

/** Resolves `--target` to registry entries in start order; `all` is every module. */
export function resolveTargets(target: readonly string[]): RegistryEntry[] {
  if (target.includes('all')) return [...MODULE_REGISTRY];
  const unknown = target.filter((name) => !TARGET_NAMES.includes(name));
  if (unknown.length > 0) {
    throw new Error(`unknown target ${unknown.map((n) => `"${n}"`).join(', ')}; valid targets: all, ${TARGET_NAMES.join(', ')}`);
  }
  return MODULE_REGISTRY.filter((entry) => target.includes(entry.name));
}
