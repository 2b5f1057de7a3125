import { distributedServers } from '@sightline/kit/testing/servers';
import { describeGateway } from './gateway.suite';

// Distributed profile: the same suite on PostgreSQL, Redis and RabbitMQ.
describeGateway('PostgreSQL + Redis + RabbitMQ', async () => {
  const servers = await distributedServers(['gateway', 'attribution', 'funnels']);
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
