import { embeddedProfile } from './profiles';
import { describeContactsAttribution } from './contacts-attribution.suite';

// Embedded profile: PGlite, chDB, in-memory KV, in-process bus.
describeContactsAttribution('embedded drivers', embeddedProfile);
