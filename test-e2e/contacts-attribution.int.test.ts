import { distributedProfile } from './profiles';
import { describeContactsAttribution } from './contacts-attribution.suite';

describeContactsAttribution('PostgreSQL + Redis + RabbitMQ', distributedProfile(['gateway', 'ingest', 'attribution', 'contacts']));
