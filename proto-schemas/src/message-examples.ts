// One complete example payload per message type. `Required` makes tsc demand every field of the
// type; the catalog test demands every field of the schema. Useful as fixtures elsewhere too.
import type { MessagePayloads, MessageType } from './message-types';

export const MESSAGE_EXAMPLES: { [T in MessageType]: Required<MessagePayloads[T]> } = {
  'gateway.workspace_created': {
    workspace_id: '2f1d6c1e-8a55-4a53-9a3b-0b7f8e2f4d11',
    name: 'Acme',
    timezone: 'Europe/Berlin',
    currency: 'EUR',
    plan: 'pro',
  },
  'gateway.key_created': {
    key_id: 'k3v9q2m8x1ab',
    workspace_id: '2f1d6c1e-8a55-4a53-9a3b-0b7f8e2f4d11',
    name: 'CRM sync',
    scopes: ['conversions:read', 'conversions:write', 'pii:read'],
    all_websites: false,
    website_ids: ['6a0c2b8e-1f3d-4e5a-8b9c-0d1e2f3a4b5c'],
  },
  'gateway.key_revoked': {
    key_id: 'k3v9q2m8x1ab',
    workspace_id: '2f1d6c1e-8a55-4a53-9a3b-0b7f8e2f4d11',
    reason: 'rotated',
  },
};
