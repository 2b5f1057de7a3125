// What a service module is. A module declares its needs up front; the runner builds them from
// config and hands the module only its own handles (no environment reads, no globals).
//
// The contract is typed by the catalogs in proto-schemas (as Trigger.dev types a worker by its job
// catalog): a module named S must return a handler for every message type the catalog says S
// consumes and every RPC method S serves, each with its catalog payload type, and its bus only
// publishes what the catalog says S publishes. A missing handler or a wrong payload is a tsc error.
import type { Router } from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type {
  ConsumedBy,
  MessagePayloads,
  MessageType,
  RpcMethod,
  RpcMethodsOf,
  RpcRequestOf,
  RpcResponseOf,
  ServiceName,
} from '@sightline/proto-schemas';
import type { Envelope } from './bus/types';
import type { ServiceBus } from './bus/service-bus';
import type { ClickHouseStore, KvStore, SqlStore } from './stores/types';

export interface ModuleNeeds {
  /** Own Postgres schema; migrations are `*.sql` files in `migrationsDir`, run at start in name order. */
  postgres?: { schema: string; migrationsDir: string };
  /** Own ClickHouse database; migrations as for postgres. */
  clickhouse?: { database: string; migrationsDir: string };
  /** Key-value store (limits, idempotency, locks). */
  kv?: boolean;
}

/** The stores a module declared, non-optional: `needs: { postgres }` gives `ctx.postgres: SqlStore`. */
export type StoresOf<N extends ModuleNeeds> = (N extends { postgres: object } ? { postgres: SqlStore } : unknown) &
  (N extends { clickhouse: object } ? { clickhouse: ClickHouseStore } : unknown) &
  (N extends { kv: true } ? { kv: KvStore } : unknown);

export type ModuleContext<S extends ServiceName = ServiceName, N extends ModuleNeeds = ModuleNeeds> = {
  name: S;
  logger: Logger;
  bus: ServiceBus<S>;
  metrics: Registry;
  /** The process-wide settings every module may read (ports, secrets, timeouts). */
  settings: RuntimeSettings;
} & StoresOf<N>;

export interface RuntimeSettings {
  publicPort: number;
  adminPort: number;
  adminToken: string;
  /** Bearer token of the admin port's /metrics (the admin token is accepted there too). */
  metricsToken: string;
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

/** An envelope whose payload is the catalog's type for T. */
export interface TypedEnvelope<T extends MessageType> extends Envelope<MessagePayloads[T]> {
  type: T;
}

export type MessageHandlerOf<T extends MessageType> = (envelope: TypedEnvelope<T>) => Promise<void>;

/** One handler per message type service S consumes (ConsumedBy<S> in the catalog). */
export type ConsumerMap<S extends ServiceName> = { [T in ConsumedBy<S>]: MessageHandlerOf<T> };

// Method syntax makes the request bivariant: a handler may declare the narrower query type the
// gateway already validated (ApiRequest<ListQuery>), while an unrelated request type still fails.
export type RpcHandlerOf<M extends RpcMethod> = { handle(request: RpcRequestOf<M>): Promise<RpcResponseOf<M>> }['handle'];

/** One handler per RPC method service S serves (RpcMethodsOf<S> in the catalog). */
export type RpcMap<S extends ServiceName> = { [M in RpcMethodsOf<S>]: RpcHandlerOf<M> };

type RpcPart<S extends ServiceName> = [RpcMethodsOf<S>] extends [never] ? { rpc?: undefined } : { rpc: RpcMap<S> };
type ConsumersPart<S extends ServiceName> = [ConsumedBy<S>] extends [never] ? { consumers?: undefined } : { consumers: ConsumerMap<S> };

export interface ModuleLifecycle {
  schedules?: Schedule[];
  /** Public HTTP routes (gateway only). */
  publicRoutes?: (router: Router) => void;
  /** Admin HTTP routes, mounted on the admin port behind the admin token. */
  adminRoutes?: (router: Router) => void;
  /** Runs once stores, bus and routes are ready. */
  start?: () => Promise<void>;
  /** Runs after consumers drained, before stores close. */
  stop?: () => Promise<void>;
  /**
   * Conditions an operator should see on /readyz without the process being taken out of service
   * (an API version nearing its sunset): listed under `warnings`, never turning the answer into a 503.
   */
  readinessDetails?: () => string[] | Promise<string[]>;
}

export type ModuleInstance<S extends ServiceName = ServiceName> = ModuleLifecycle & RpcPart<S> & ConsumersPart<S>;

export interface ServiceModule<S extends ServiceName = ServiceName, N extends ModuleNeeds = ModuleNeeds> {
  name: S;
  needs: N;
  create(ctx: ModuleContext<S, N>): Promise<ModuleInstance<S>>;
}

/**
 * Any module, whatever its name and needs: what the registry and the runner hold. Each module was
 * checked against its own catalog entries at its defineModule; the runner only wires maps by key.
 */
export interface RunnableModule {
  /** A service name; a test stand-in may use another (it then may publish nothing). */
  name: string;
  /** Set by defineStandIn: the runner binds what it handles instead of holding it to the catalog. */
  standIn?: true;
  needs: ModuleNeeds;
  create(ctx: ModuleContext): Promise<ModuleLifecycle & { rpc?: object; consumers?: object }>;
}

export function defineModule<S extends ServiceName, const N extends ModuleNeeds>(module: ServiceModule<S, N>): ServiceModule<S, N> {
  return module;
}

/**
 * For tests: a module standing in for a service (or recording what reaches a queue) without the
 * catalog's checks, so it may handle a subset of a service's types. Production code uses defineModule.
 */
export function defineStandIn<S extends string, const N extends ModuleNeeds>(module: {
  name: S;
  needs: N;
  create(ctx: ModuleContext<S extends ServiceName ? S : ServiceName, N>): Promise<ModuleLifecycle & { rpc?: object; consumers?: object }>;
}): RunnableModule {
  return { ...(module as RunnableModule), standIn: true };
}
