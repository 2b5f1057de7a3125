import { embeddedProfile } from './profiles';
import { describeFunnels } from './funnels.suite';

// Embedded profile: PGlite, chDB, in-memory KV, in-process bus.
describeFunnels('embedded drivers', embeddedProfile);
