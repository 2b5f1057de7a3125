import { distributedProfile } from './profiles';
import { describeIngest } from './ingest.suite';

describeIngest('PostgreSQL + Redis + RabbitMQ', distributedProfile(['gateway', 'ingest', 'attribution']));
