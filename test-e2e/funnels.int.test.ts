import { distributedProfile } from './profiles';
import { describeFunnels } from './funnels.suite';

describeFunnels('PostgreSQL + Redis + RabbitMQ', distributedProfile(['gateway', 'ingest', 'funnels', 'changefeed']));
