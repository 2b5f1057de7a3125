// What every part of crm-sync is built from: its own Postgres schema, the outbox that publishes
// inside its transactions, the bus (RPC to attribution), and the module options.
import type { Outbox, RuntimeSettings, ServiceBus, SqlStore } from '@sightline/kit';
import type { Logger } from 'pino';

export interface CrmSyncOptions {
  /** Base URL per provider API, e.g. { hubspot: 'https://api.hubapi.com' }; tests point them at local servers. */
  providerUrls?: Record<string, string>;
  /** Base URL per ad-platform API for offline conversion uploads (google_ads, meta_ads). */
  adPlatformUrls?: Record<string, string>;
  /** Secret that seals connection credentials (AES-256-GCM); default derived from the runtime's secrets. */
  credentialsKey?: string;
  /** Cron of the scheduled sync of every active connection; default every 15 minutes. */
  syncCron?: string;
}

export interface CrmSyncDeps {
  sql: SqlStore;
  outbox: Outbox<'crm-sync'>;
  bus: ServiceBus<'crm-sync'>;
  logger: Logger;
  settings: RuntimeSettings;
  options: CrmSyncOptions;
}
