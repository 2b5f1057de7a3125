import { distributedProfile } from './profiles';
import { AUTOMATIONS_E2E_SERVICES, describeAutomations } from './automations.suite';

describeAutomations('PostgreSQL + Redis + RabbitMQ', distributedProfile([...AUTOMATIONS_E2E_SERVICES, 'contacts', 'crm-sync', 'funnels']));
