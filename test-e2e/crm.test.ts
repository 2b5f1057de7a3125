import { embeddedProfile } from './profiles';
import { describeCrm } from './crm.suite';

// Embedded profile: PGlite, chDB, in-memory KV, in-process bus.
describeCrm('embedded drivers', embeddedProfile);
