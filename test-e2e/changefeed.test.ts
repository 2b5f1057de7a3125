import { embeddedProfile } from './profiles';
import { describeChangefeed } from './changefeed.suite';

// Embedded profile: PGlite, chDB, in-memory KV, in-process bus.
describeChangefeed('embedded drivers', embeddedProfile);
