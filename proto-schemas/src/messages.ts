// The message catalog: every bus message type, its current version and schema. `satisfies` makes a
// type in MessagePayloads without a catalog entry (or the reverse) a compile error.
import keyCreatedV1 from './schemas/gateway/key_created.v1.schema.json';
import keyRevokedV1 from './schemas/gateway/key_revoked.v1.schema.json';
import workspaceCreatedV1 from './schemas/gateway/workspace_created.v1.schema.json';
import envelopeV1 from './schemas/envelope.v1.schema.json';
import type { MessageType } from './message-types';

/** A JSON Schema document as loaded from its file. */
export type JsonSchema = { $id: string } & Record<string, unknown>;

export interface MessageCatalogEntry {
  version: number;
  schema: JsonSchema;
  description: string;
}

export const envelopeSchema: JsonSchema = envelopeV1;

export const messageCatalog = {
  'gateway.workspace_created': {
    version: 1,
    schema: workspaceCreatedV1,
    description: workspaceCreatedV1.description,
  },
  'gateway.key_created': {
    version: 1,
    schema: keyCreatedV1,
    description: keyCreatedV1.description,
  },
  'gateway.key_revoked': {
    version: 1,
    schema: keyRevokedV1,
    description: keyRevokedV1.description,
  },
} as const satisfies Record<MessageType, MessageCatalogEntry>;

export const MESSAGE_TYPES = Object.keys(messageCatalog) as MessageType[];

export function isMessageType(value: string): value is MessageType {
  return Object.prototype.hasOwnProperty.call(messageCatalog, value);
}
