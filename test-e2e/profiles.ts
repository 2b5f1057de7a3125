// The two driver profiles every e2e suite runs on: embedded (PGlite, chDB, in-memory KV, in-process
// bus) and distributed (PostgreSQL, Redis and RabbitMQ; ClickHouse stays chDB: no server here).
import { distributedServers } from '@sightline/kit/testing/servers';
import type { DriverProfile } from './ingest.suite';

export const embeddedProfile = async (): Promise<DriverProfile> => ({ env: {}, cleanup: async () => undefined });

/** Fresh database, bus namespace and queues for `services`, removed by cleanup. */
export function distributedProfile(services: string[]): () => Promise<DriverProfile> {
  return async () => {
    const servers = await distributedServers(services);
    return {
      env: {
        SIGHTLINE_POSTGRES_URL: servers.postgresUrl,
        SIGHTLINE_REDIS_URL: servers.redisUrl,
        SIGHTLINE_AMQP_URL: servers.amqpUrl,
        SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
      },
      cleanup: servers.cleanup,
    };
  };
}
