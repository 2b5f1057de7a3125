import { distributedServers } from '@sightline/kit/testing/servers';
import { describeAnalytics } from './analytics.suite';

// Distributed profile: PostgreSQL, Redis and RabbitMQ (ClickHouse stays chDB: no server here).
describeAnalytics('PostgreSQL + Redis + RabbitMQ', async () => {
  const servers = await distributedServers(['gateway', 'ingest', 'attribution', 'crm-sync']);
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
