// Fixtures for tests that need real servers. A server that cannot be reached fails the test with a
// message naming it: nothing skips silently.
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import amqp from 'amqplib';
import { Client } from 'pg';
import { messageCatalog, partitionedTypes, SERVICE_NAMES } from '@sightline/proto-schemas';
import { busNames } from '../src/bus/names';

export const TEST_SERVERS = {
  postgres: 'postgres://postgres@127.0.0.1:5432/postgres',
  redis: 'redis://127.0.0.1:6379',
  rabbitmq: 'amqp://guest:guest@127.0.0.1:5672',
} as const;

/** Resolves when host:port accepts a TCP connection; otherwise throws naming the server. */
export async function requireServer(name: string, url: string, timeoutMs = 3000): Promise<void> {
  const { hostname, port } = new URL(url);
  await new Promise<void>((resolve, reject) => {
    const socket = new Socket();
    const fail = (why: string) => {
      socket.destroy();
      reject(new Error(`${name} is not reachable at ${hostname}:${port} (${why}); run \`bash scripts/ensure-services.sh\` to install or start it`));
    };
    socket.setTimeout(timeoutMs, () => fail('timed out'));
    socket.once('error', (error) => fail(error.message));
    socket.connect(Number(port), hostname, () => {
      socket.end();
      resolve();
    });
  });
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** Creates an empty database for one suite, so suites running in parallel never share tables. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  await requireServer('PostgreSQL', TEST_SERVERS.postgres);
  const name = uniqueName('sightline_test');
  const admin = new Client({ connectionString: TEST_SERVERS.postgres });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return {
    url: TEST_SERVERS.postgres.replace(/\/postgres$/, `/${name}`),
    async drop() {
      const client = new Client({ connectionString: TEST_SERVERS.postgres });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/**
 * Deletes a test namespace's exchange and queues from RabbitMQ: every catalog service's (the runner
 * declares them all at start, whatever a process runs) and those of the stand-ins named.
 */
export async function deleteBusNamespace(namespace: string, services: string[]): Promise<void> {
  const names = busNames(namespace);
  const readsPartitions = new Set<string>(partitionedTypes().flatMap((type) => messageCatalog[type].consumedBy));
  const connection = await amqp.connect(TEST_SERVERS.rabbitmq);
  try {
    const channel = await connection.createChannel();
    for (const service of new Set([...SERVICE_NAMES, ...services])) {
      // Partition queues too, for services that read a partitioned type (16: the default on RabbitMQ).
      const partitions = readsPartitions.has(service) ? Array.from({ length: 16 }, (_, n) => [names.partitionQueue(service, n), names.partitionRetryQueue(service, n)]).flat() : [];
      for (const queue of [names.serviceQueue(service), names.retryQueue(service), names.deadLetterQueue(service), names.rpcQueue(service), ...partitions]) {
        await channel.deleteQueue(queue);
      }
    }
    await channel.deleteExchange(names.exchange);
    await channel.deleteExchange(names.membersExchange);
    await channel.close();
  } finally {
    await connection.close();
  }
}

/**
 * The three servers of the distributed profile, each checked, with isolated names for this suite:
 * a fresh database and a fresh bus namespace, both removed by `cleanup`.
 */
export async function distributedServers(services: string[]): Promise<{ postgresUrl: string; redisUrl: string; amqpUrl: string; busNamespace: string; cleanup(): Promise<void> }> {
  await requireServer('RabbitMQ', TEST_SERVERS.rabbitmq);
  await requireServer('Redis', TEST_SERVERS.redis);
  const database = await freshPostgresDatabase();
  const busNamespace = uniqueName('sltest').replace(/_/g, '-');
  return {
    postgresUrl: database.url,
    redisUrl: TEST_SERVERS.redis,
    amqpUrl: TEST_SERVERS.rabbitmq,
    busNamespace,
    async cleanup() {
      await deleteBusNamespace(busNamespace, services);
      await database.drop();
    },
  };
}
