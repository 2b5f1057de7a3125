import { distributedProfile } from './profiles';
import { describeContacts } from './contacts.suite';

describeContacts('PostgreSQL + Redis + RabbitMQ', distributedProfile(['gateway', 'ingest', 'contacts', 'changefeed', 'crm-sync']));
