import { distributedProfile } from './profiles';
import { describeAnalytics } from './analytics.suite';

describeAnalytics('PostgreSQL + Redis + RabbitMQ', distributedProfile(['gateway', 'ingest', 'attribution', 'crm-sync']));
