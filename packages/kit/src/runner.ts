// The module runner: builds what each module declared it needs, wires its RPC methods, consumers,
// schedules and routes, and stops it all in reverse on shutdown (not ready → stop taking work →
// drain → module stop → close stores).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import cron from 'node-cron';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { messageValidator } from '@sightline/proto-schemas';
import { createBus } from './bus';
import type { Bus, Consumer, Envelope } from './bus/types';
import { isEmbedded, type SightlineConfig } from './config';
import type { Logger } from './logger';
import type { ModuleContext, ModuleInstance, RuntimeSettings, ServiceModule } from './module';
import { createStoreProvider, type StoreProvider } from './stores';
import { runClickHouseMigrations, runSqlMigrations } from './stores/migrations';

export interface StartOptions {
  config: SightlineConfig;
  /** Modules to run, in dependency order. */
  modules: ServiceModule[];
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

interface StartedModule {
  module: ServiceModule;
  instance: ModuleInstance;
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
    publicUrl: config.publicUrl ?? `http://localhost:${config.port}`,
    rpcTimeoutMs: config.rpcTimeoutMs,
    cursorSecret: config.cursorSecret ?? secretInDataDir(dataDir, 'cursor-secret'),
    dataDir,
    embedded,
  };

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const stores = createStoreProvider({
    ...(config.postgresUrl ? { postgresUrl: config.postgresUrl } : {}),
    ...(config.clickhouseUrl ? { clickhouseUrl: config.clickhouseUrl } : {}),
    ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}),
    dataDir,
    logger,
  });
  const bus = await createBus({
    ...(config.amqpUrl ? { url: config.amqpUrl } : {}),
    namespace: config.busNamespace,
    validator: messageValidator,
    logger,
  });

  const started: StartedModule[] = [];
  let ready = false;
  let stopping: Promise<void> | null = null;
  const servers: Server[] = [];

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      ready = false;
      const hardStop = setTimeout(() => {
        logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown timed out; exiting');
        process.exit(1);
      }, config.shutdownTimeoutMs);
      hardStop.unref();
      // Stop taking new HTTP work; server.close waits for in-flight requests.
      await Promise.all(servers.map((s) => closeServer(s)));
      for (const s of [...started].reverse()) {
        for (const task of s.tasks) task.stop();
        await Promise.all(s.consumers.map((c) => c.drain()));
        await s.instance.stop?.().catch((error: unknown) => logger.error({ err: error, module: s.module.name }, 'module stop failed'));
      }
      await bus.close().catch((error: unknown) => logger.error({ err: error }, 'bus close failed'));
      await stores.close().catch((error: unknown) => logger.error({ err: error }, 'store close failed'));
      clearTimeout(hardStop);
      logger.info('stopped');
    })();
    return stopping;
  };

  try {
    const publicApp = express();
    publicApp.disable('x-powered-by');
    // Once stopping, keep-alive clients are told to go away, so in-flight work drains and ends.
    publicApp.use((_req, res, next) => {
      if (stopping) res.setHeader('Connection', 'close');
      next();
    });
    const adminApp = express();
    adminApp.disable('x-powered-by');
    const adminRouter = express.Router();
    let hasPublicRoutes = false;

    for (const module of options.modules) {
      const moduleLogger = logger.child({ module: module.name });
      const ctx: ModuleContext = { name: module.name, logger: moduleLogger, bus, metrics, settings };
      if (module.needs.postgres) {
        ctx.postgres = await stores.sql(module.needs.postgres.schema);
        await runSqlMigrations(ctx.postgres, module.needs.postgres.migrationsDir);
      }
      if (module.needs.clickhouse) {
        ctx.clickhouse = await stores.clickhouse(module.needs.clickhouse.database);
        await runClickHouseMigrations(ctx.clickhouse, module.needs.clickhouse.migrationsDir);
      }
      if (module.needs.kv) ctx.kv = await stores.kv();

      const instance = await module.create(ctx);
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
            types: Object.keys(consumers),
            handler: async (envelope: Envelope) => {
              const handler = consumers[envelope.type];
              if (handler) await handler(envelope);
            },
          }),
        );
      }
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

    adminApp.get('/healthz', (_req, res) => res.json({ status: 'ok' }));
    adminApp.get('/readyz', (_req, res) => res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not-ready', modules: started.map((s) => s.module.name) }));
    adminApp.get('/metrics', (_req, res, next) => {
      metrics.metrics().then((text) => res.type(metrics.contentType).send(text), next);
    });
    adminApp.use('/admin', adminTokenGuard(settings.adminToken), express.json({ limit: '100kb' }), adminRouter);

    const adminServer = await listen(adminApp, config.adminPort);
    servers.push(adminServer);
    let publicPort: number | null = null;
    if (hasPublicRoutes) {
      const publicServer = await listen(publicApp, config.port);
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

/** A secret kept beside the embedded stores so restarts and the CLI agree on it. */
function secretInDataDir(dataDir: string, name: string): string {
  const file = join(dataDir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(24).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

function adminTokenGuard(token: string) {
  const expected = Buffer.from(`Bearer ${token}`);
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = Buffer.from(req.header('authorization') ?? '');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return next();
    res.status(401).json({ error: 'admin token required: send Authorization: Bearer <SIGHTLINE_ADMIN_TOKEN>' });
  };
}

function listen(app: express.Express, port: number): Promise<Server> {
  return new Promise((resolveListen, reject) => {
    const server = app.listen(port, () => resolveListen(server));
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
