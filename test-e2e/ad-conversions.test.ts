import { describeAdConversions } from './ad-conversions.suite';
import { embeddedProfile } from './profiles';

// Embedded profile: PGlite, chDB, in-memory KV, in-process bus.
describeAdConversions('embedded drivers', embeddedProfile);
