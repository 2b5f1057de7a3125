import { embeddedProfile } from './profiles';
import { describeSalesforce } from './salesforce.suite';

// Embedded profile: PGlite, chDB, in-memory KV, in-process bus.
describeSalesforce('embedded drivers', embeddedProfile);
