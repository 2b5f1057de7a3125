// The one module registry (as Loki's): each entry is a name, the service's definition, and what it
// must start after. `--target=all` runs every entry in this order; Helm runs one name per pod.
// Services load only when a process starts them, so admin commands stay quick.
import type { ServiceModule } from '@sightline/kit';
import type { CrmSyncOptions } from '@sightline/service-crm-sync';

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
  { name: 'crm-sync', dependsOn: [], create: async () => (await import('@sightline/service-crm-sync')).createCrmSyncModule(crmSyncOptionsFromEnv(process.env)) },
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

/**
 * crm-sync's options from the environment (README "Configuration"): SIGHTLINE_CREDENTIALS_KEY,
 * SIGHTLINE_CRM_SYNC_CRON, SIGHTLINE_HUBSPOT_URL, SIGHTLINE_GOOGLE_ADS_URL, SIGHTLINE_META_ADS_URL.
 * A bad value stops the start with a message naming the variable.
 */
export function crmSyncOptionsFromEnv(env: Record<string, string | undefined>): CrmSyncOptions {
  const value = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  const url = (name: string): string | undefined => {
    const v = value(name);
    if (v !== undefined && !/^https?:\/\/[^\s]+$/.test(v)) throw new Error(`invalid configuration:\n  ${name}: must be an http(s) URL (got ${JSON.stringify(v)})`);
    return v?.replace(/\/$/, '');
  };
  const options: CrmSyncOptions = {};
  const key = value('SIGHTLINE_CREDENTIALS_KEY');
  if (key !== undefined) {
    if (key.length < 16) throw new Error('invalid configuration:\n  SIGHTLINE_CREDENTIALS_KEY: must be at least 16 characters (e.g. `openssl rand -hex 32`)');
    options.credentialsKey = key;
  }
  const cron = value('SIGHTLINE_CRM_SYNC_CRON');
  if (cron !== undefined) {
    if (!/^\S+( \S+){4,5}$/.test(cron)) throw new Error(`invalid configuration:\n  SIGHTLINE_CRM_SYNC_CRON: must be a cron expression of 5 or 6 fields (got ${JSON.stringify(cron)})`);
    options.syncCron = cron;
  }
  const hubspot = url('SIGHTLINE_HUBSPOT_URL');
  if (hubspot) options.providerUrls = { hubspot };
  const adPlatforms = Object.fromEntries(
    ([['google_ads', 'SIGHTLINE_GOOGLE_ADS_URL'], ['meta_ads', 'SIGHTLINE_META_ADS_URL']] as const)
      .map(([platform, name]) => [platform, url(name)] as const)
      .filter((entry): entry is readonly [typeof entry[0], string] => entry[1] !== undefined),
  );
  if (Object.keys(adPlatforms).length > 0) options.adPlatformUrls = adPlatforms;
  return options;
}
