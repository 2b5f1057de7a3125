import { embeddedProfile } from './profiles';
import { describeAnalytics } from './analytics.suite';

// Embedded profile: PGlite, chDB, in-memory KV, in-process bus.
describeAnalytics('embedded drivers', embeddedProfile);
