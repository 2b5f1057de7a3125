// Process configuration: read once from the environment by the entry point, validated against one
// schema. A bad value stops the process with a message naming the variable.
import Ajv from 'ajv';
import type { ClickHouseLimits } from './stores/clickhouse-limits';
import type { PostgresPoolSettings } from './stores/postgres-store';
import type { TracingConfig } from './telemetry/tracing';

const PROXY_ENTRY = '(loopback|linklocal|uniquelocal|[0-9A-Fa-f:.]+(/[0-9]{1,3})?)';

const ENV_SCHEMA = {
  type: 'object',
  additionalProperties: true,
  properties: {
    SIGHTLINE_TARGET: { type: 'string', pattern: '^[a-z-]+(,[a-z-]+)*$', default: 'all' },
    SIGHTLINE_PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
    SIGHTLINE_ADMIN_PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 9090 },
    SIGHTLINE_ADMIN_TOKEN: { type: 'string', minLength: 16 },
    SIGHTLINE_METRICS_TOKEN: { type: 'string', minLength: 16 },
    SIGHTLINE_PUBLIC_URL: { type: 'string', pattern: '^https?://[^\\s]+$' },
    SIGHTLINE_DATA_DIR: { type: 'string', minLength: 1, default: './data' },
    SIGHTLINE_AMQP_URL: { type: 'string', pattern: '^amqps?://' },
    SIGHTLINE_POSTGRES_URL: { type: 'string', pattern: '^postgres(ql)?://' },
    // Each schema's (service's) PostgreSQL pool: connections, the longest wait for one (connecting
    // included; 0 forever), the server's statement_timeout (0: none), how long an unused connection
    // stays open (0: always), and TCP keep-alive probes (from 10 s idle) to notice a vanished server.
    SIGHTLINE_POSTGRES_POOL_SIZE: { type: 'integer', minimum: 1, maximum: 1000, default: 10 },
    SIGHTLINE_POSTGRES_CONNECT_TIMEOUT_MS: { type: 'integer', minimum: 0, maximum: 600000, default: 30000 },
    SIGHTLINE_POSTGRES_STATEMENT_TIMEOUT_MS: { type: 'integer', minimum: 0, maximum: 86400000, default: 0 },
    SIGHTLINE_POSTGRES_IDLE_TIMEOUT_MS: { type: 'integer', minimum: 0, maximum: 86400000, default: 10000 },
    SIGHTLINE_POSTGRES_KEEPALIVE: { enum: ['true', 'false'], default: 'true' },
    SIGHTLINE_CLICKHOUSE_URL: { type: 'string', pattern: '^https?://' },
    // Limits of every ClickHouse statement by role (0: none): reads (API requests, alerts) and
    // writes (inserts, rebuilds, DDL). A read over its limit answers 400 window-too-large.
    SIGHTLINE_CLICKHOUSE_READ_MAX_SECONDS: { type: 'integer', minimum: 0, maximum: 86400, default: 60 },
    SIGHTLINE_CLICKHOUSE_READ_MAX_MEMORY_MB: { type: 'integer', minimum: 0, maximum: 1048576, default: 4096 },
    SIGHTLINE_CLICKHOUSE_WRITE_MAX_SECONDS: { type: 'integer', minimum: 0, maximum: 86400, default: 1800 },
    SIGHTLINE_CLICKHOUSE_WRITE_MAX_MEMORY_MB: { type: 'integer', minimum: 0, maximum: 1048576, default: 8192 },
    SIGHTLINE_REDIS_URL: { type: 'string', pattern: '^rediss?://' },
    SIGHTLINE_RPC_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 300000, default: 10000 },
    SIGHTLINE_CURSOR_SECRET: { type: 'string', minLength: 16 },
    SIGHTLINE_LOG_LEVEL: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    SIGHTLINE_SHUTDOWN_TIMEOUT_MS: { type: 'integer', minimum: 0, maximum: 600000, default: 15000 },
    SIGHTLINE_DEMO: { enum: ['auto', 'off'], default: 'auto' },
    SIGHTLINE_BUS_NAMESPACE: { type: 'string', pattern: '^[a-z][a-z0-9_-]*$', default: 'sightline' },
    // Partitions of each partitioned message type (ingest's intake): replicas of a consumer share
    // them, so this bounds how many replicas can work at once. Every process on one broker namespace
    // must use the same number. Default 16 on RabbitMQ, 1 with the in-process bus (one process).
    SIGHTLINE_BUS_PARTITIONS: { type: 'integer', minimum: 1, maximum: 256 },
    // Interfaces the ports listen on: the public port on every interface unless narrowed, the admin
    // port (operator API, metrics) on loopback unless widened (a pod sets 0.0.0.0 for its probes).
    SIGHTLINE_BIND_HOST: { type: 'string', pattern: '^[0-9A-Za-z.:-]+$' },
    SIGHTLINE_ADMIN_BIND_HOST: { type: 'string', pattern: '^[0-9A-Za-z.:-]+$', default: '127.0.0.1' },
    // Proxies whose X-Forwarded-For is believed: a hop count (1-99) or a comma-separated list of
    // addresses, CIDR ranges or loopback|linklocal|uniquelocal. Unset: the socket's address is the client's.
    SIGHTLINE_TRUST_PROXY: { type: 'string', pattern: `^([1-9][0-9]?|${PROXY_ENTRY}(\\s*,\\s*${PROXY_ENTRY})*)$` },
    // Tracing (OpenTelemetry, OTLP over HTTP): off unless an endpoint is set. SIGHTLINE_OTLP_ENDPOINT
    // or the standard OTEL_EXPORTER_OTLP_ENDPOINT is a collector's base URL (spans go to /v1/traces);
    // OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is the full traces URL. The exporter reads the other
    // standard OTEL_EXPORTER_OTLP_* variables (headers, timeout) itself.
    SIGHTLINE_OTLP_ENDPOINT: { type: 'string', pattern: '^https?://[^\\s]+$' },
    OTEL_EXPORTER_OTLP_ENDPOINT: { type: 'string', pattern: '^https?://[^\\s]+$' },
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: { type: 'string', pattern: '^https?://[^\\s]+$' },
    OTEL_SDK_DISABLED: { enum: ['true', 'false'], default: 'false' },
    SIGHTLINE_TRACE_SAMPLE_RATIO: { type: 'number', minimum: 0, maximum: 1, default: 1 },
    OTEL_BSP_SCHEDULE_DELAY: { type: 'integer', minimum: 0, maximum: 600000, default: 5000 },
    // How often the queue-depth gauges ask the broker (at most once per interval, however often scraped).
    SIGHTLINE_QUEUE_POLL_MS: { type: 'integer', minimum: 0, maximum: 600000, default: 10000 },
    // The in-process bus (no SIGHTLINE_AMQP_URL): its queues are journalled under <data dir>/bus
    // unless this is false (memory only: what is queued is lost when the process ends; for benchmarks).
    SIGHTLINE_BUS_DURABLE: { enum: ['true', 'false'], default: 'true' },
    // Most MiB of messages the in-process bus holds for its consumers; past it a request that would
    // publish waits up to SIGHTLINE_BUS_BACKLOG_WAIT_MS for room, then is answered 503 with Retry-After.
    SIGHTLINE_BUS_MAX_BACKLOG_MB: { type: 'integer', minimum: 1, maximum: 65536, default: 64 },
    SIGHTLINE_BUS_BACKLOG_WAIT_MS: { type: 'integer', minimum: 0, maximum: 5000, default: 250 },
    // On SIGTERM, how long consumers may go on with what is queued before the process exits (what is
    // left stays in the journal). At most three quarters of SIGHTLINE_SHUTDOWN_TIMEOUT_MS, the hard stop.
    SIGHTLINE_DRAIN_TIMEOUT_MS: { type: 'integer', minimum: 0, maximum: 600000, default: 10000 },
  },
} as const;

/** One environment variable of a service's settings: its JSON Schema (coerced from the string) and what it is for. */
export interface ConfigVariable {
  schema: Record<string, unknown>;
  description: string;
}

/**
 * A service's settings: its variables join the one validated schema, so a bad value stops the start
 * with the variable named, whatever module it is for. `build` turns the set variables into the
 * module's options (only the entry point reads the environment; modules take options).
 */
export interface ConfigSection<T = unknown> {
  service: string;
  variables: Record<string, ConfigVariable>;
  build(values: Readonly<Record<string, string | number | boolean>>): T;
}

export interface SightlineConfig {
  /** Each section's options by service name (see sectionOf). */
  sections: Record<string, unknown>;
  target: string[];
  port: number;
  adminPort: number;
  /** Absent in embedded mode: the runner then generates one and keeps it in the data directory. */
  adminToken?: string;
  /** Absent in embedded mode: generated like the admin token. Grants /metrics only. */
  metricsToken?: string;
  publicUrl?: string;
  dataDir: string;
  amqpUrl?: string;
  postgresUrl?: string;
  /** The PostgreSQL pools' settings (SIGHTLINE_POSTGRES_*), for createStoreProvider's postgresPool. */
  postgresPool: PostgresPoolSettings;
  clickhouseUrl?: string;
  /** Time and memory limits of ClickHouse statements by role (SIGHTLINE_CLICKHOUSE_*_MAX_*). */
  clickhouseLimits: ClickHouseLimits;
  redisUrl?: string;
  rpcTimeoutMs: number;
  cursorSecret?: string;
  logLevel: string;
  shutdownTimeoutMs: number;
  demo: 'auto' | 'off';
  busNamespace: string;
  /** Partitions of each partitioned message type (SIGHTLINE_BUS_PARTITIONS). */
  busPartitions: number;
  /** Host the public port binds; absent: every interface. */
  bindHost?: string;
  adminBindHost: string;
  /** Express `trust proxy`: hops to trust, or the proxies' addresses; false: X-Forwarded-For is ignored. */
  trustProxy: number | string[] | false;
  /** Least time between two reads of the queue depths from the broker, for the queue gauges. */
  queuePollMs: number;
  /** In-process bus: journal its queues under <data dir>/bus (SIGHTLINE_BUS_DURABLE). */
  busDurable: boolean;
  /** In-process bus: most bytes of messages held for consumers before edge publishes are refused. */
  busMaxBacklogBytes: number;
  /** In-process bus: how long an edge publish waits for room before it is refused. */
  busBacklogWaitMs: number;
  /** On shutdown, how long consumers go on with what is queued (SIGHTLINE_DRAIN_TIMEOUT_MS, at most 3/4 of the shutdown timeout). */
  drainTimeoutMs: number;
  /** Span export; absent: tracing is off (no SDK loaded). */
  tracing?: TracingConfig;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true, strict: false });
const validators = new WeakMap<readonly ConfigSection[], ReturnType<typeof ajv.compile>>();

function validatorFor(sections: readonly ConfigSection[]): ReturnType<typeof ajv.compile> {
  let validate = validators.get(sections);
  if (!validate) {
    const properties: Record<string, unknown> = { ...ENV_SCHEMA.properties };
    for (const section of sections) {
      for (const [name, variable] of Object.entries(section.variables)) {
        if (name in properties) throw new Error(`configuration variable ${name} is declared twice (section ${section.service})`);
        properties[name] = variable.schema;
      }
    }
    validate = ajv.compile({ ...ENV_SCHEMA, properties });
    validators.set(sections, validate);
  }
  return validate;
}

const NO_SECTIONS: readonly ConfigSection[] = [];

/** Reads and validates the configuration, the services' sections included. Empty variables count as unset. */
export function loadConfig(env: Record<string, string | undefined>, sections: readonly ConfigSection[] = NO_SECTIONS): SightlineConfig {
  const validateEnv = validatorFor(sections);
  const names = [...Object.keys(ENV_SCHEMA.properties), ...sections.flatMap((s) => Object.keys(s.variables))];
  const input: Record<string, unknown> = {};
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') input[name] = value.trim();
  }
  if (!validateEnv(input)) {
    const problems = (validateEnv.errors ?? []).map((e) => {
      const variable = e.instancePath.replace(/^\//, '') || String(e.params['missingProperty'] ?? '');
      return `${variable}: ${e.message ?? 'is invalid'} (got ${JSON.stringify(env[variable] ?? null)})`;
    });
    throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const v = input as Record<string, string | number | undefined>;
  const str = (name: string): string | undefined => (v[name] === undefined ? undefined : String(v[name]));
  const built = (section: ConfigSection): unknown => {
    const values: Record<string, string | number | boolean> = {};
    for (const name of Object.keys(section.variables)) if (input[name] !== undefined) values[name] = input[name] as string | number | boolean;
    try {
      return section.build(values);
    } catch (error) {
      throw new ConfigError(`invalid configuration:\n  ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const config: SightlineConfig = {
    sections: Object.fromEntries(sections.map((section) => [section.service, built(section)])),
    target: String(v['SIGHTLINE_TARGET']).split(','),
    port: Number(v['SIGHTLINE_PORT']),
    adminPort: Number(v['SIGHTLINE_ADMIN_PORT']),
    dataDir: String(v['SIGHTLINE_DATA_DIR']),
    rpcTimeoutMs: Number(v['SIGHTLINE_RPC_TIMEOUT_MS']),
    postgresPool: {
      size: Number(v['SIGHTLINE_POSTGRES_POOL_SIZE']),
      connectTimeoutMs: Number(v['SIGHTLINE_POSTGRES_CONNECT_TIMEOUT_MS']),
      statementTimeoutMs: Number(v['SIGHTLINE_POSTGRES_STATEMENT_TIMEOUT_MS']),
      idleTimeoutMs: Number(v['SIGHTLINE_POSTGRES_IDLE_TIMEOUT_MS']),
      keepAlive: v['SIGHTLINE_POSTGRES_KEEPALIVE'] !== 'false',
    },
    clickhouseLimits: {
      read: { maxExecutionSeconds: Number(v['SIGHTLINE_CLICKHOUSE_READ_MAX_SECONDS']), maxMemoryBytes: Number(v['SIGHTLINE_CLICKHOUSE_READ_MAX_MEMORY_MB']) * 1024 * 1024 },
      write: { maxExecutionSeconds: Number(v['SIGHTLINE_CLICKHOUSE_WRITE_MAX_SECONDS']), maxMemoryBytes: Number(v['SIGHTLINE_CLICKHOUSE_WRITE_MAX_MEMORY_MB']) * 1024 * 1024 },
    },
    logLevel: String(v['SIGHTLINE_LOG_LEVEL']),
    shutdownTimeoutMs: Number(v['SIGHTLINE_SHUTDOWN_TIMEOUT_MS']),
    demo: v['SIGHTLINE_DEMO'] === 'off' ? 'off' : 'auto',
    busNamespace: String(v['SIGHTLINE_BUS_NAMESPACE']),
    busPartitions: v['SIGHTLINE_BUS_PARTITIONS'] === undefined ? (v['SIGHTLINE_AMQP_URL'] === undefined ? 1 : 16) : Number(v['SIGHTLINE_BUS_PARTITIONS']),
    adminBindHost: String(v['SIGHTLINE_ADMIN_BIND_HOST']),
    trustProxy: trustProxyOf(str('SIGHTLINE_TRUST_PROXY')),
    queuePollMs: Number(v['SIGHTLINE_QUEUE_POLL_MS']),
    busDurable: v['SIGHTLINE_BUS_DURABLE'] !== 'false',
    busMaxBacklogBytes: Number(v['SIGHTLINE_BUS_MAX_BACKLOG_MB']) * 1024 * 1024,
    busBacklogWaitMs: Number(v['SIGHTLINE_BUS_BACKLOG_WAIT_MS']),
    drainTimeoutMs: Number(v['SIGHTLINE_DRAIN_TIMEOUT_MS']),
  };
  // The drain leaves the stop at least a quarter of the hard-stop time to close the stores and the journal.
  config.drainTimeoutMs = Math.min(config.drainTimeoutMs, Math.floor(config.shutdownTimeoutMs * 0.75));
  const optional: [keyof SightlineConfig, string][] = [
    ['adminToken', 'SIGHTLINE_ADMIN_TOKEN'],
    ['metricsToken', 'SIGHTLINE_METRICS_TOKEN'],
    ['publicUrl', 'SIGHTLINE_PUBLIC_URL'],
    ['amqpUrl', 'SIGHTLINE_AMQP_URL'],
    ['postgresUrl', 'SIGHTLINE_POSTGRES_URL'],
    ['clickhouseUrl', 'SIGHTLINE_CLICKHOUSE_URL'],
    ['redisUrl', 'SIGHTLINE_REDIS_URL'],
    ['cursorSecret', 'SIGHTLINE_CURSOR_SECRET'],
    ['bindHost', 'SIGHTLINE_BIND_HOST'],
  ];
  for (const [key, name] of optional) {
    const value = str(name);
    if (value !== undefined) (config as unknown as Record<string, unknown>)[key] = value;
  }
  const tracesUrl = tracesEndpointOf(str('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'), str('SIGHTLINE_OTLP_ENDPOINT') ?? str('OTEL_EXPORTER_OTLP_ENDPOINT'));
  if (tracesUrl !== undefined && v['OTEL_SDK_DISABLED'] !== 'true') {
    config.tracing = { endpoint: tracesUrl, sampleRatio: Number(v['SIGHTLINE_TRACE_SAMPLE_RATIO']), exportDelayMs: Number(v['OTEL_BSP_SCHEDULE_DELAY']) };
  }
  return config;
}

/** The OTLP/HTTP traces URL: the signal-specific one as given, else the base URL plus /v1/traces. */
function tracesEndpointOf(tracesUrl: string | undefined, baseUrl: string | undefined): string | undefined {
  if (tracesUrl !== undefined) return tracesUrl;
  if (baseUrl === undefined) return undefined;
  return `${baseUrl.replace(/\/+$/, '')}/v1/traces`;
}

function trustProxyOf(value: string | undefined): number | string[] | false {
  if (value === undefined) return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((entry) => entry.trim());
}

/** A service's options as its section built them; the section's defaults when it was not loaded. */
export function sectionOf<T>(config: SightlineConfig, section: ConfigSection<T>): T {
  if (section.service in config.sections) return config.sections[section.service] as T;
  return loadConfig({}, [section]).sections[section.service] as T;
}

/** Embedded when any store or the bus has no server URL: those parts then run in-process. */
export function isEmbedded(config: SightlineConfig): boolean {
  return !config.amqpUrl || !config.postgresUrl || !config.redisUrl;
}
