import { distributedProfile } from './profiles';
import { describeCrm } from './crm.suite';

describeCrm('PostgreSQL + Redis + RabbitMQ', distributedProfile(['gateway', 'ingest', 'attribution', 'crm-sync', 'changefeed']));
