import { embeddedProfile } from './profiles';
import { describeAutomations } from './automations.suite';

// Embedded profile: PGlite, chDB, in-memory KV, in-process bus.
describeAutomations('embedded drivers', embeddedProfile);
