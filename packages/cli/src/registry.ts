// The one module registry (as Loki's): each entry is a name and the service's definition.
// `--target=all` starts every entry in this order (no module waits for another: they meet only over
// the bus, whose queues the runner declares first); Helm runs one name per pod. Services load only
// when a process starts them, so admin commands stay quick. A module's settings come from its
// section of the one validated configuration (settings.ts).
import { sectionOf, type RunnableModule, type SightlineConfig } from '@sightline/kit';
import { AUTOMATIONS_SETTINGS, CRM_SYNC_SETTINGS, GATEWAY_SETTINGS } from './settings';

export interface RegistryEntry {
  name: string;
  create(config: SightlineConfig, allNames: readonly string[]): Promise<RunnableModule>;
}

export const MODULE_REGISTRY: readonly RegistryEntry[] = [
  {
    name: 'gateway',
    create: async (config) => (await import('@sightline/service-gateway')).createGatewayModule({ demo: config.demo === 'auto', ...sectionOf(config, GATEWAY_SETTINGS) }),
  },
  { name: 'ingest', create: async () => (await import('@sightline/service-ingest')).createIngestModule() },
  { name: 'attribution', create: async () => (await import('@sightline/service-attribution')).createAttributionModule() },
  { name: 'contacts', create: async () => (await import('@sightline/service-contacts')).createContactsModule() },
  { name: 'changefeed', create: async () => (await import('@sightline/service-changefeed')).createChangefeedModule() },
  { name: 'crm-sync', create: async (config) => (await import('@sightline/service-crm-sync')).createCrmSyncModule(sectionOf(config, CRM_SYNC_SETTINGS)) },
  { name: 'funnels', create: async () => (await import('@sightline/service-funnels')).createFunnelsModule() },
  {
    name: 'automations',
    create: async (config) => {
      // Slack bot tokens are sealed with the same operator key as CRM credentials.
      const { credentialsKey } = sectionOf(config, CRM_SYNC_SETTINGS);
      return (await import('@sightline/service-automations')).createAutomationsModule({ ...sectionOf(config, AUTOMATIONS_SETTINGS), ...(credentialsKey ? { credentialsKey } : {}) });
    },
  },
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
