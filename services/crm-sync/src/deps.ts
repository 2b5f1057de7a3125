// What every part of crm-sync is built from: its own Postgres schema, the outbox that publishes
// inside its transactions, the bus (RPC to attribution), and the module options.
import type { Outbox, RuntimeSettings, ServiceBus, SqlStore } from '@sightline/kit';
import type { Logger } from 'pino';

export interface CrmSyncOptions {
  /** Base URL per provider API, e.g. { hubspot: 'https://api.hubapi.com' }; tests point them at local servers. */
  providerUrls?: Record<string, string>;
  /** Base URL per ad-platform API for offline conversion uploads (google_ads, meta_ads, linkedin_ads: https://api.linkedin.com, without /rest). */
  adPlatformUrls?: Record<string, string>;
  /** Secret that seals connection credentials (AES-256-GCM); default derived from the runtime's secrets. */
  credentialsKey?: string;
  /** Cron of the scheduled sync of every active connection; default every 15 minutes. */
  syncCron?: string;
  /** Cron of the spend pull of every active ad account (ads/spend); default hourly. */
  adSpendPullCron?: string;
  /** Days of cost every spend pull re-reads (a setting per account overrides it); default 3. */
  adSpendCostDays?: number;
  /** Days re-read once a day for conversions the platforms attribute late; default 30. */
  adSpendConversionDays?: number;
  /** How long a write-back worker holds a claimed row (a crashed worker's rows come back after it); default 5 minutes. */
  writebackLeaseMs?: number;
  /** Deadline of one write-back call; default 30 s. */
  writebackCallTimeoutMs?: number;
}

export interface CrmSyncDeps {
  sql: SqlStore;
  outbox: Outbox<'crm-sync'>;
  bus: ServiceBus<'crm-sync'>;
  logger: Logger;
  settings: RuntimeSettings;
  options: CrmSyncOptions;
}
