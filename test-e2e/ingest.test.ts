import { embeddedProfile } from './profiles';
import { describeIngest } from './ingest.suite';

// Embedded profile: PGlite, chDB, in-memory KV, in-process bus.
describeIngest('embedded drivers', embeddedProfile);
