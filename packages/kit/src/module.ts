// What a service module is. A module declares its needs up front; the runner builds them from
// config and hands the module only its own handles (no environment reads, no globals).
import type { Router } from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Bus, MessageHandler, RpcHandler } from './bus/types';
import type { ClickHouseStore, KvStore, SqlStore } from './stores/types';

export interface ModuleNeeds {
  /** Own Postgres schema; migrations are `*.sql` files in `migrationsDir`, run at start in name order. */
  postgres?: { schema: string; migrationsDir: string };
  /** Own ClickHouse database; migrations as for postgres. */
  clickhouse?: { database: string; migrationsDir: string };
  /** Key-value store (limits, idempotency, locks). */
  kv?: boolean;
}

export interface ModuleContext {
  name: string;
  logger: Logger;
  bus: Bus;
  metrics: Registry;
  postgres?: SqlStore;
  clickhouse?: ClickHouseStore;
  kv?: KvStore;
  /** The process-wide settings every module may read (ports, secrets, timeouts). */
  settings: RuntimeSettings;
}

export interface RuntimeSettings {
  publicPort: number;
  adminPort: number;
  adminToken: string;
  publicUrl: string;
  rpcTimeoutMs: number;
  cursorSecret: string;
  dataDir: string;
  /** True when this process runs on embedded drivers (PGlite, chDB, in-process bus). */
  embedded: boolean;
}

export interface Schedule {
  name: string;
  /** node-cron expression. */
  cron: string;
  run: () => Promise<void>;
}

export interface ModuleInstance {
  /** RPC methods this module answers, named `<module>.<verb>`. */
  rpc?: Record<string, RpcHandler>;
  /** Message types this module consumes, each with its handler. */
  consumers?: Record<string, MessageHandler>;
  schedules?: Schedule[];
  /** Public HTTP routes (gateway only). */
  publicRoutes?: (router: Router) => void;
  /** Admin HTTP routes, mounted on the admin port behind the admin token. */
  adminRoutes?: (router: Router) => void;
  /** Runs once stores, bus and routes are ready. */
  start?: () => Promise<void>;
  /** Runs after consumers drained, before stores close. */
  stop?: () => Promise<void>;
}

export interface ServiceModule {
  name: string;
  needs: ModuleNeeds;
  create(ctx: ModuleContext): Promise<ModuleInstance>;
}

export function defineModule(module: ServiceModule): ServiceModule {
  return module;
}
