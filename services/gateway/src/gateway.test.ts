import { describeGateway } from './gateway.suite';

// Embedded profile: PGlite, in-memory KV, in-process bus (no server URLs set).
describeGateway('embedded drivers', async () => ({ env: {}, cleanup: async () => undefined }));
