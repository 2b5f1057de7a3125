import { distributedProfile } from './profiles';
import { describeChangefeed } from './changefeed.suite';

describeChangefeed('PostgreSQL + Redis + RabbitMQ', distributedProfile(['gateway', 'ingest', 'changefeed']));
