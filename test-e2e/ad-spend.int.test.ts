import { describeAdSpend } from './ad-spend.suite';
import { distributedProfile } from './profiles';

describeAdSpend('PostgreSQL + Redis + RabbitMQ', distributedProfile(['gateway', 'ingest', 'attribution', 'crm-sync']));
