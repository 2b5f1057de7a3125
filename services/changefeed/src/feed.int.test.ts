import { createLogger, createStoreProvider } from '@sightline/kit';
import { freshPostgresDatabase } from '@sightline/kit/testing/servers';
import { describeFeed } from './feed.suite';

// PostgreSQL: real concurrent connections, so concurrent inserts and a late commit are exercised.
describeFeed('PostgreSQL', {
  concurrentConnections: true,
  async open() {
    const database = await freshPostgresDatabase();
    const provider = createStoreProvider({ postgresUrl: database.url, logger: createLogger({ level: 'silent' }) });
    return {
      store: await provider.sql('changefeed'),
      async close() {
        await provider.close();
        await database.drop();
      },
    };
  },
});
