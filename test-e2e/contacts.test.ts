import { embeddedProfile } from './profiles';
import { describeContacts } from './contacts.suite';

// Embedded profile: PGlite, chDB, in-memory KV, in-process bus.
describeContacts('embedded drivers', embeddedProfile);
