// Process configuration: read once from the environment by the entry point, validated against one
// schema. A bad value stops the process with a message naming the variable.
import Ajv from 'ajv';

const ENV_SCHEMA = {
  type: 'object',
  additionalProperties: true,
  properties: {
    SIGHTLINE_TARGET: { type: 'string', pattern: '^[a-z-]+(,[a-z-]+)*$', default: 'all' },
    SIGHTLINE_PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
    SIGHTLINE_ADMIN_PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 9090 },
    SIGHTLINE_ADMIN_TOKEN: { type: 'string', minLength: 16 },
    SIGHTLINE_PUBLIC_URL: { type: 'string', pattern: '^https?://[^\\s]+$' },
    SIGHTLINE_DATA_DIR: { type: 'string', minLength: 1, default: './data' },
    SIGHTLINE_AMQP_URL: { type: 'string', pattern: '^amqps?://' },
    SIGHTLINE_POSTGRES_URL: { type: 'string', pattern: '^postgres(ql)?://' },
    SIGHTLINE_CLICKHOUSE_URL: { type: 'string', pattern: '^https?://' },
    SIGHTLINE_REDIS_URL: { type: 'string', pattern: '^rediss?://' },
    SIGHTLINE_RPC_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 300000, default: 10000 },
    SIGHTLINE_CURSOR_SECRET: { type: 'string', minLength: 16 },
    SIGHTLINE_LOG_LEVEL: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    SIGHTLINE_SHUTDOWN_TIMEOUT_MS: { type: 'integer', minimum: 0, maximum: 600000, default: 15000 },
    SIGHTLINE_DEMO: { enum: ['auto', 'off'], default: 'auto' },
    SIGHTLINE_BUS_NAMESPACE: { type: 'string', pattern: '^[a-z][a-z0-9_-]*$', default: 'sightline' },
  },
} as const;

export interface SightlineConfig {
  target: string[];
  port: number;
  adminPort: number;
  /** Absent in embedded mode: the runner then generates one and keeps it in the data directory. */
  adminToken?: string;
  publicUrl?: string;
  dataDir: string;
  amqpUrl?: string;
  postgresUrl?: string;
  clickhouseUrl?: string;
  redisUrl?: string;
  rpcTimeoutMs: number;
  cursorSecret?: string;
  logLevel: string;
  shutdownTimeoutMs: number;
  demo: 'auto' | 'off';
  busNamespace: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true, strict: false });
const validateEnv = ajv.compile(ENV_SCHEMA);

/** Reads and validates the configuration. Empty variables count as unset. */
export function loadConfig(env: Record<string, string | undefined>): SightlineConfig {
  const input: Record<string, unknown> = {};
  for (const name of Object.keys(ENV_SCHEMA.properties)) {
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
  const config: SightlineConfig = {
    target: String(v['SIGHTLINE_TARGET']).split(','),
    port: Number(v['SIGHTLINE_PORT']),
    adminPort: Number(v['SIGHTLINE_ADMIN_PORT']),
    dataDir: String(v['SIGHTLINE_DATA_DIR']),
    rpcTimeoutMs: Number(v['SIGHTLINE_RPC_TIMEOUT_MS']),
    logLevel: String(v['SIGHTLINE_LOG_LEVEL']),
    shutdownTimeoutMs: Number(v['SIGHTLINE_SHUTDOWN_TIMEOUT_MS']),
    demo: v['SIGHTLINE_DEMO'] === 'off' ? 'off' : 'auto',
    busNamespace: String(v['SIGHTLINE_BUS_NAMESPACE']),
  };
  const optional: [keyof SightlineConfig, string][] = [
    ['adminToken', 'SIGHTLINE_ADMIN_TOKEN'],
    ['publicUrl', 'SIGHTLINE_PUBLIC_URL'],
    ['amqpUrl', 'SIGHTLINE_AMQP_URL'],
    ['postgresUrl', 'SIGHTLINE_POSTGRES_URL'],
    ['clickhouseUrl', 'SIGHTLINE_CLICKHOUSE_URL'],
    ['redisUrl', 'SIGHTLINE_REDIS_URL'],
    ['cursorSecret', 'SIGHTLINE_CURSOR_SECRET'],
  ];
  for (const [key, name] of optional) {
    const value = str(name);
    if (value !== undefined) (config as unknown as Record<string, unknown>)[key] = value;
  }
  return config;
}

/** Embedded when any store or the bus has no server URL: those parts then run in-process. */
export function isEmbedded(config: SightlineConfig): boolean {
  return !config.amqpUrl || !config.postgresUrl || !config.redisUrl;
}
