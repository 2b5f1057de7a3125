// The module runner: builds what each module declared it needs, wires its RPC methods, consumers,
// schedules and routes, and stops it all in reverse on shutdown (not ready → new requests answered
// 503 → in-flight requests finish → consumers work through what is queued, up to the drain
// deadline → drain in-flight deliveries → module stop → close the bus and the stores).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import cron from 'node-cron';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { consumedTypesByService, consumedTypesOf, messageValidator, partitionedTypes, SERVICE_NAMES, type ServiceName } from '@sightline/proto-schemas';
import { createBus } from './bus';
import { serviceBus } from './bus/service-bus';
import { NonRetryableError, type Bus, type Consumer, type Envelope, type MessageHandler, type RpcHandler } from './bus/types';
import { isEmbedded, type SightlineConfig } from './config';
import { problemOnClientError } from './http/transport-errors';
import type { Logger } from './logger';
import type { ModuleContext, ModuleLifecycle, RunnableModule, RuntimeSettings } from './module';
import { ProblemError } from './errors';
import { adminErrorHandler, adminNotFound } from './http/admin';
import { busAdminRoutes } from './bus-admin';
import { renderProblem, sendProblem } from './http/problem';
import { requestIdMiddleware, requestIdOf } from './http/request-id';
import { createStoreProvider, type StoreProvider } from './stores';
import type { ClickHouseStore, KvStore, SqlStore } from './stores/types';
import { httpSpans } from './telemetry/http-spans';
import { memoizeFor, polledGauge, registerCacheSize, withTimeout } from './telemetry/metric-families';
import { storeHealth } from './telemetry/store-health';
import { instrumentClickHouse, instrumentKv, instrumentSql, registerStoreFamilies } from './telemetry/store-telemetry';
import { startTracing } from './telemetry/tracing';
import { monitorEventLoopDelay } from './telemetry/event-loop-delay';
import type { QueueKind } from './bus/types';

interface StoreHandles {
  postgres: SqlStore;
  clickhouse: ClickHouseStore;
  kv: KvStore;
}
import { runClickHouseMigrations, runSqlMigrations } from './stores/migrations';

export interface StartOptions {
  config: SightlineConfig;
  /** Modules to run, in dependency order. */
  modules: RunnableModule[];
  logger: Logger;
}

export interface RunningProcess {
  settings: RuntimeSettings;
  /** Actual ports (differ from config when it asked for port 0). */
  publicPort: number | null;
  adminPort: number;
  bus: Bus;
  metrics: Registry;
  /** The process's stores, for tools that must share them (PGlite is single-process): bulk loads in benchmarks. */
  stores: StoreProvider;
  isReady(): boolean;
  stop(): Promise<void>;
}

/** What the runner wires of a module instance: handler maps by name (each was typed at its defineModule). */
type WiredInstance = ModuleLifecycle & { rpc?: Record<string, RpcHandler>; consumers?: Record<string, MessageHandler> };

interface StartedModule {
  module: RunnableModule;
  instance: WiredInstance;
  consumers: Consumer[];
  tasks: ReturnType<typeof cron.schedule>[];
}

export async function startModules(options: StartOptions): Promise<RunningProcess> {
  const { config, logger } = options;
  const embedded = isEmbedded(config);
  const dataDir = resolve(config.dataDir);
  mkdirSync(dataDir, { recursive: true });

  const settings: RuntimeSettings = {
    publicPort: config.port,
    adminPort: config.adminPort,
    adminToken: config.adminToken ?? secretInDataDir(dataDir, 'admin-token'),
    metricsToken: config.metricsToken ?? secretInDataDir(dataDir, 'metrics-token'),
    publicUrl: config.publicUrl ?? `http://localhost:${config.port}`,
    rpcTimeoutMs: config.rpcTimeoutMs,
    cursorSecret: config.cursorSecret ?? secretInDataDir(dataDir, 'cursor-secret'),
    dataDir,
    embedded,
  };

  // Spans are named for the target this process runs (sightline-gateway, sightline-all).
  const tracing = await startTracing(`sightline-${config.target.join('+')}`, config.tracing, logger);
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const loopDelay = monitorEventLoopDelay(metrics);
  registerStoreFamilies(metrics);
  const health = storeHealth();
  const stores = createStoreProvider({
    ...(config.postgresUrl ? { postgresUrl: config.postgresUrl } : {}),
    ...(config.clickhouseUrl ? { clickhouseUrl: config.clickhouseUrl } : {}),
    ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}),
    postgresPool: config.postgresPool,
    clickhouseLimits: config.clickhouseLimits,
    dataDir,
    logger,
  });
  // The in-process bus keeps its queues in a journal beside the embedded stores (unless told not to).
  const journalDir = !config.amqpUrl && config.busDurable ? join(dataDir, 'bus') : undefined;
  const bus = await createBus({
    ...(config.amqpUrl ? { url: config.amqpUrl } : {}),
    ...(journalDir ? { journalDir } : {}),
    maxBacklogChars: config.busMaxBacklogBytes,
    backlogWaitMs: config.busBacklogWaitMs,
    namespace: config.busNamespace,
    validator: messageValidator,
    logger,
    metrics,
    partitions: { count: config.busPartitions, types: new Set(partitionedTypes()) },
  }).catch(async (error: unknown) => {
    await tracing.shutdown();
    throw error;
  });

  const started: StartedModule[] = [];
  let ready = false;
  let stopping: Promise<void> | null = null;
  const servers: Server[] = [];
  let adminServerRef: Server | null = null;
  /** Public requests being answered now (a drain waits for them before it waits for the queues). */
  let inflightRequests = 0;

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      ready = false;
      const hardStop = setTimeout(() => {
        logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown timed out; exiting');
        process.exit(1);
      }, config.shutdownTimeoutMs);
      hardStop.unref();
      const drainDeadline = Date.now() + config.drainTimeoutMs;
      // New public requests are answered 503 with Retry-After from here on (the middleware below);
      // those already in flight finish. The admin port stays open while modules drain, so /readyz
      // answers 503 (draining) until the end.
      while (inflightRequests > 0 && Date.now() < drainDeadline) await new Promise((r) => setTimeout(r, 10));
      for (const s of started) for (const task of s.tasks) task.stop();
      // Consumers go on with what is queued until the deadline; what is left stays in the bus's
      // journal (in-process) or in RabbitMQ for the next start.
      const left = await bus.finishQueued(Math.max(0, drainDeadline - Date.now()));
      if (left > 0) logger.warn({ left, drainTimeoutMs: config.drainTimeoutMs }, `drain deadline reached with messages still queued; they stay ${journalDir ? 'in the bus journal' : 'queued'} for the next start`);
      await Promise.all(servers.map((s) => closeServer(s)));
      for (const s of [...started].reverse()) {
        await Promise.all(s.consumers.map((c) => c.drain()));
        await s.instance.stop?.().catch((error: unknown) => logger.error({ err: error, module: s.module.name }, 'module stop failed'));
      }
      await bus.close().catch((error: unknown) => logger.error({ err: error }, 'bus close failed'));
      await stores.close().catch((error: unknown) => logger.error({ err: error }, 'store close failed'));
      if (adminServerRef) await closeServer(adminServerRef);
      await tracing.shutdown();
      loopDelay.stop();
      clearTimeout(hardStop);
      logger.info('stopped');
    })();
    return stopping;
  };

  try {
    const publicApp = express();
    publicApp.disable('x-powered-by');
    publicApp.use(httpSpans('public'));
    // X-Forwarded-For is believed only for the proxies configured (SIGHTLINE_TRUST_PROXY); req.ip is then the client's.
    publicApp.set('trust proxy', config.trustProxy);
    // Once stopping, new requests are refused with a 503 the client can retry elsewhere or later,
    // and keep-alive clients are told to go away, so in-flight work drains and ends.
    publicApp.use((req, res, next) => {
      if (stopping) {
        res.setHeader('Connection', 'close');
        requestIdMiddleware(req, res, () => undefined);
        const draining = new ProblemError('service-unavailable', {
          detail: 'This Sightline process is shutting down and takes no new requests.',
          remediation: 'Retry after Retry-After with the request unchanged; another instance, or this one after its restart, will answer.',
          headers: { 'Retry-After': '2' },
        });
        sendProblem(res, renderProblem(draining, requestIdOf(res), settings.publicUrl));
        return;
      }
      inflightRequests += 1;
      res.once('close', () => (inflightRequests -= 1));
      next();
    });
    const adminApp = express();
    adminApp.disable('x-powered-by');
    // Probes and scrapes every few seconds would bury the operator requests worth tracing.
    adminApp.use(httpSpans('admin', new Set(['/healthz', '/readyz', '/metrics'])));
    const adminRouter = express.Router();
    busAdminRoutes(adminRouter, bus, () => started.filter((s) => Object.keys(s.instance.consumers ?? {}).length > 0).map((s) => s.module.name));
    let hasPublicRoutes = false;

    // The admin port opens first, so probes see /readyz 503 while modules start (and while they drain).
    adminApp.get('/healthz', (_req, res) => res.json({ status: 'ok' }));
    adminApp.get('/readyz', async (_req, res) => {
      const busHealth = bus.health();
      const consumersDown = started.flatMap((s) => s.consumers.filter((c) => !c.isHealthy()).map(() => s.module.name));
      // Stores are pinged only while serving: starting or draining already answers 503.
      const storesDown = ready && !stopping ? await health.problems() : [];
      const problems = [
        ...(ready ? [] : [stopping ? 'draining' : 'starting']),
        ...(busHealth.ok ? [] : [`bus: ${busHealth.detail ?? 'down'}`]),
        ...consumersDown.map((name) => `${name}: a consumer is not subscribed`),
        ...storesDown,
      ];
      const warnings = (await Promise.all(started.map((s) => readinessWarnings(s, logger)))).flat();
      res.status(problems.length === 0 ? 200 : 503).json({ status: problems.length === 0 ? 'ready' : 'not-ready', problems, warnings, modules: started.map((s) => s.module.name) });
    });
    // The scrape shows queue names, tenants' cache sizes and traffic: it needs the metrics token (or the admin token).
    adminApp.get('/metrics', requestIdMiddleware, tokenGuard([settings.metricsToken, settings.adminToken], 'metrics'), (_req, res, next) => {
      metrics.metrics().then((text) => res.type(metrics.contentType).send(text), next);
    });
    adminApp.use('/admin', requestIdMiddleware, tokenGuard([settings.adminToken], 'admin'), express.json({ limit: '100kb' }), adminRouter, adminNotFound());
    adminApp.use(adminErrorHandler(() => settings.publicUrl, logger));

    const adminServer = await listen(adminApp, config.adminPort, config.adminBindHost);
    adminServerRef = adminServer;

    // Every consuming service's durable queue, from the catalog, whatever this process runs: a
    // message published before its consumer is deployed waits for it instead of being unroutable.
    for (const [service, types] of consumedTypesByService()) await bus.declareQueue(service, types);
    const queues = queueGauges(metrics, bus, config.queuePollMs);

    let kvGauged = false;
    for (const module of options.modules) {
      const moduleLogger = logger.child({ module: module.name });
      const ctx: ModuleContext & Partial<StoreHandles> = { name: module.name as ServiceName, logger: moduleLogger, bus: serviceBus(bus, module.name as ServiceName), metrics, settings };
      // Every store a module gets is measured and traced as that module's, and watched by /readyz.
      const owner = { service: module.name, metrics };
      if (module.needs.postgres) {
        const { schema } = module.needs.postgres;
        const raw = await stores.sql(schema);
        health.watch(`postgres (schema ${schema})`, raw);
        ctx.postgres = instrumentSql(raw, owner);
        await runSqlMigrations(ctx.postgres, module.needs.postgres.migrationsDir);
      }
      if (module.needs.clickhouse) {
        const { database } = module.needs.clickhouse;
        const raw = await stores.clickhouse(database);
        health.watch(`clickhouse (database ${database})`, raw);
        ctx.clickhouse = instrumentClickHouse(raw, owner);
        await runClickHouseMigrations(ctx.clickhouse, module.needs.clickhouse.migrationsDir);
      }
      if (module.needs.kv) {
        const raw = await stores.kv();
        health.watch('redis', raw);
        ctx.kv = instrumentKv(raw, owner);
        const held = raw.memoryEntries?.bind(raw);
        if (held && !kvGauged) {
          // The in-process KV holds everything in this process's memory: its sizes are gauges too.
          kvGauged = true;
          registerCacheSize(metrics, { service: 'runtime', cache: 'kv_entries', size: () => held().entries });
          registerCacheSize(metrics, { service: 'runtime', cache: 'kv_evictable', size: () => held().evictable });
        }
      }

      const instance = (await module.create(ctx)) as WiredInstance;
      const record: StartedModule = { module, instance, consumers: [], tasks: [] };
      started.push(record);
      if (instance.publicRoutes) {
        hasPublicRoutes = true;
        const router = express.Router();
        instance.publicRoutes(router);
        publicApp.use(router);
      }
      if (instance.adminRoutes) instance.adminRoutes(adminRouter);
      if (instance.rpc && Object.keys(instance.rpc).length > 0) {
        record.consumers.push(await bus.serveRpc({ service: module.name, methods: instance.rpc }));
      }
      const consumers = instance.consumers;
      if (consumers && Object.keys(consumers).length > 0) {
        record.consumers.push(
          await bus.consume({
            service: module.name,
            types: consumerTypes(module, consumers),
            handler: async (envelope: Envelope) => {
              const handler = consumers[envelope.type];
              // Bound by an older topology, or a type this build no longer handles: an operator must look.
              if (!handler) throw new NonRetryableError(`${module.name} has no handler for ${envelope.type}`);
              await handler(envelope);
            },
          }),
        );
      }
      const partitioned = new Set<string>(partitionedTypes());
      const kinds: QueueKind[] = [
        ...(instance.consumers && Object.keys(instance.consumers).length > 0 ? (['main', 'retry', 'dead_letter'] as const) : []),
        ...(instance.consumers && Object.keys(instance.consumers).some((t) => partitioned.has(t)) ? (['partitioned'] as const) : []),
        ...(instance.rpc && Object.keys(instance.rpc).length > 0 ? (['rpc'] as const) : []),
      ];
      if (kinds.length > 0) queues.watch(module.name, kinds);
      for (const schedule of instance.schedules ?? []) {
        record.tasks.push(
          cron.schedule(schedule.cron, () => {
            schedule.run().catch((error: unknown) => moduleLogger.error({ err: error, schedule: schedule.name }, 'scheduled job failed'));
          }),
        );
      }
      await instance.start?.();
      moduleLogger.info('module started');
    }

    let publicPort: number | null = null;
    if (hasPublicRoutes) {
      const publicServer = await listen(publicApp, config.port, config.bindHost);
      // Requests the HTTP parser refuses (oversize headers, malformed HTTP) still get a problem document.
      publicServer.on('clientError', problemOnClientError(() => settings.publicUrl));
      servers.push(publicServer);
      publicPort = (publicServer.address() as AddressInfo).port;
      if (!config.publicUrl) settings.publicUrl = `http://localhost:${publicPort}`;
    }
    ready = true;
    logger.info({ modules: started.map((s) => s.module.name), publicPort, adminPort: (adminServer.address() as AddressInfo).port, embedded }, 'ready');
    return {
      settings,
      publicPort,
      adminPort: (adminServer.address() as AddressInfo).port,
      bus,
      metrics,
      stores,
      isReady: () => ready,
      stop,
    };
  } catch (error) {
    // One module failing stops the process rather than limping on.
    logger.error({ err: error }, 'start failed; stopping');
    await stop();
    throw error;
  }
}

/**
 * `sightline_bus_queue_messages` and `sightline_bus_queue_consumers` for the queues of the services
 * this process runs (replicas of one service report the same queue: dashboards take the max).
 */
function queueGauges(metrics: Registry, bus: Bus, pollMs: number): { watch(service: string, kinds: QueueKind[]): void } {
  const labelNames = ['service', 'queue'] as const;
  const messages = polledGauge(metrics, { name: 'sightline_bus_queue_messages', help: 'Messages ready in a service\'s queue (main, retry, dead_letter, rpc; partitioned: its partition queues summed): its consumers\' lag in messages.', labelNames, timeoutMs: 2_000 });
  const consumers = polledGauge(metrics, { name: 'sightline_bus_queue_consumers', help: 'Consumers subscribed to a service\'s queue (main, retry, dead_letter, rpc; partitioned: summed over its partitions, active and waiting).', labelNames, timeoutMs: 2_000 });
  return {
    watch(service, kinds) {
      // Asked of the broker at most once per pollMs, however often Prometheus scrapes.
      const read = memoizeFor(pollMs, () => bus.queueStats(service, kinds));
      messages.add(async () => (await read()).map((q) => ({ labels: { service, queue: q.queue }, value: q.messages })));
      consumers.add(async () => (await read()).map((q) => ({ labels: { service, queue: q.queue }, value: q.consumers })));
    },
  };
}

/** A module's /readyz warnings, each prefixed with its name; one that fails (or takes over a second) to answer says so instead. */
async function readinessWarnings(started: StartedModule, logger: Logger): Promise<string[]> {
  const details = started.instance.readinessDetails;
  if (!details) return [];
  try {
    return (await withTimeout(Promise.resolve(details()), 1000, 'readiness details')).map((detail) => `${started.module.name}: ${detail}`);
  } catch (error) {
    logger.warn({ err: error, module: started.module.name }, 'readiness details failed');
    return [`${started.module.name}: readiness details unavailable`];
  }
}

/**
 * The types a module's queue binds. For a service these are the catalog's, and its handler map must
 * hold exactly them (tsc checks this at defineModule; this catches a map widened by a cast or a
 * spread). A test stand-in binds the types it has handlers for.
 */
function consumerTypes(module: RunnableModule, consumers: Record<string, MessageHandler>): string[] {
  const { name } = module;
  const handled = Object.keys(consumers).sort();
  if (module.standIn || !(SERVICE_NAMES as readonly string[]).includes(name)) return handled;
  const declared: string[] = consumedTypesOf(name as ServiceName).sort();
  const missing = declared.filter((t) => !handled.includes(t));
  const extra = handled.filter((t) => !declared.includes(t));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(`${name}'s consumers do not match the catalog: missing ${JSON.stringify(missing)}, not declared ${JSON.stringify(extra)}`);
  }
  return declared;
}

/** A secret kept beside the embedded stores so restarts and the CLI agree on it. */
function secretInDataDir(dataDir: string, name: string): string {
  const file = join(dataDir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(24).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/** Lets a request through when it carries one of `tokens` as its bearer token. */
function tokenGuard(tokens: readonly string[], kind: 'admin' | 'metrics') {
  const expected = tokens.map((token) => Buffer.from(`Bearer ${token}`));
  return (req: Request, _res: Response, next: NextFunction): void => {
    const given = Buffer.from(req.header('authorization') ?? '');
    if (expected.some((e) => given.length === e.length && timingSafeEqual(given, e))) return next();
    next(new ProblemError('unauthorized', kind === 'admin'
      ? {
          detail: 'The admin API needs the admin token.',
          remediation: 'Send Authorization: Bearer <SIGHTLINE_ADMIN_TOKEN> (embedded instances keep it in <data dir>/admin-token).',
        }
      : {
          detail: '/metrics needs the metrics token (or the admin token).',
          remediation: 'Send Authorization: Bearer <SIGHTLINE_METRICS_TOKEN> (embedded instances keep it in <data dir>/metrics-token); the Helm chart gives it to the ServiceMonitor.',
        }));
  };
}

function listen(app: express.Express, port: number, host: string | undefined): Promise<Server> {
  return new Promise((resolveListen, reject) => {
    const server = host === undefined ? app.listen(port, () => resolveListen(server)) : app.listen(port, host, () => resolveListen(server));
    server.once('error', reject);
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolveClose) => {
    // In-flight requests finish; keep-alive sockets are closed as soon as they fall idle.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(sweep);
      resolveClose();
    });
    server.closeIdleConnections();
  });
}
