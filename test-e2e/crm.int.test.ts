import { distributedServers } from '@sightline/kit/testing/servers';
import { describeCrm } from './crm.suite';

// Distributed profile: PostgreSQL, Redis and RabbitMQ (ClickHouse stays chDB: no server here).
describeCrm('PostgreSQL + Redis + RabbitMQ', async () => {
  const servers = await distributedServers(['gateway', 'ingest', 'attribution', 'crm-sync', 'changefeed']);
  return {
    env: {
      SIGHTLINE_POSTGRES_URL: servers.postgresUrl,
      SIGHTLINE_REDIS_URL: servers.redisUrl,
      SIGHTLINE_AMQP_URL: servers.amqpUrl,
      SIGHTLINE_BUS_NAMESPACE: servers.busNamespace,
    },
    cleanup: servers.cleanup,
  };
});
