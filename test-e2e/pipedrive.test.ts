import { describePipedrive } from './pipedrive.suite';
import { embeddedProfile } from './profiles';

// Embedded profile: PGlite, chDB, in-memory KV, in-process bus.
describePipedrive('embedded drivers', embeddedProfile);
