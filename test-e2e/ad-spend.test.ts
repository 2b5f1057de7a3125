import { describeAdSpend } from './ad-spend.suite';
import { embeddedProfile } from './profiles';

// Embedded profile: PGlite, chDB, in-memory KV, in-process bus.
describeAdSpend('embedded drivers', embeddedProfile);
