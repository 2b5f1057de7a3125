import { createLogger, createStoreProvider } from '@sightline/kit';
import { describeFeed } from './feed.suite';

// Embedded driver: PGlite in memory.
describeFeed('PGlite', {
  concurrentConnections: false,
  async open() {
    const provider = createStoreProvider({ logger: createLogger({ level: 'silent' }) });
    return { store: await provider.sql('changefeed'), close: () => provider.close() };
  },
});
