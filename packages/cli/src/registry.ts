// The one module registry (as Loki's): each entry is a name, the service's definition, and what it
// must start after. `--target=all` runs every entry in this order; Helm runs one name per pod.
// Services load only when a process starts them, so admin commands stay quick.
import type { ServiceModule } from '@sightline/kit';

export interface RegistryOptions {
  demo: boolean;
}

export interface RegistryEntry {
  name: string;
  dependsOn: string[];
  create(options: RegistryOptions, allNames: readonly string[]): Promise<ServiceModule>;
}

export const MODULE_REGISTRY: readonly RegistryEntry[] = [
  {
    name: 'gateway',
    dependsOn: [],
    create: async (options, allNames) => (await import('@sightline/service-gateway')).createGatewayModule({ availableServices: allNames, demo: options.demo }),
  },
  { name: 'ingest', dependsOn: [], create: async () => (await import('@sightline/service-ingest')).createIngestModule() },
  { name: 'attribution', dependsOn: [], create: async () => (await import('@sightline/service-attribution')).createAttributionModule() },
  { name: 'contacts', dependsOn: [], create: async () => (await import('@sightline/service-contacts')).createContactsModule() },
  { name: 'changefeed', dependsOn: [], create: async () => (await import('@sightline/service-changefeed')).createChangefeedModule() },
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
