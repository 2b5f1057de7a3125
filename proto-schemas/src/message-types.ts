// Payload types of the message catalog, kept by hand beside their schemas. message-examples.ts
// holds one complete example per type (checked by tsc against these types) and the catalog test
// checks each example against its schema, field for field, so the two cannot drift apart.
import type { PlanName } from './registry/plans';
import type { ScopeName } from './registry/scopes';

export interface WorkspaceCreatedV1 {
  workspace_id: string;
  name: string;
  /** IANA time zone name. */
  timezone: string;
  /** ISO 4217 code. */
  currency: string;
  plan: PlanName;
}

export interface KeyCreatedV1 {
  key_id: string;
  workspace_id: string;
  name: string;
  scopes: ScopeName[];
  all_websites: boolean;
  /** Empty when all_websites is true. */
  website_ids: string[];
}

export interface KeyRevokedV1 {
  key_id: string;
  workspace_id: string;
  reason: string | null;
}

/** Message type to the payload of its current version. */
export interface MessagePayloads {
  'gateway.workspace_created': WorkspaceCreatedV1;
  'gateway.key_created': KeyCreatedV1;
  'gateway.key_revoked': KeyRevokedV1;
}

export type MessageType = keyof MessagePayloads;
