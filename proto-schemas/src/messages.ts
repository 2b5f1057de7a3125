// The message catalog: every bus message type, its current version and schema. `satisfies` makes a
// type in MessagePayloads without a catalog entry (or the reverse) a compile error.
import keyCreatedV1 from './schemas/gateway/key_created.v1.schema.json';
import keyRevokedV1 from './schemas/gateway/key_revoked.v1.schema.json';
import workspaceCreatedV1 from './schemas/gateway/workspace_created.v1.schema.json';
import envelopeV1 from './schemas/envelope.v1.schema.json';
import batchReceivedV1 from './schemas/ingest/batch_received.v1.schema.json';
import conversionCreatedV1 from './schemas/conversion/created.v1.schema.json';
import classifiedEventV1 from './schemas/ingest/event.v1.schema.json';
import eventsClassifiedV1 from './schemas/events/classified.v1.schema.json';
import identityMergedV1 from './schemas/identity/merged.v1.schema.json';
import conversionAttributedV1 from './schemas/conversion/attributed.v1.schema.json';
import conversionValueChangedV1 from './schemas/conversion/value_changed.v1.schema.json';
import conversionUpdatedV1 from './schemas/conversion/updated.v1.schema.json';
import stageChangedV1 from './schemas/stage/changed.v1.schema.json';
import outcomeWritebackRequestedV1 from './schemas/outcome/writeback_requested.v1.schema.json';
import outcomeWritebackUpdatedV1 from './schemas/outcome/writeback_updated.v1.schema.json';
import adsReportImportedV1 from './schemas/ads/report_imported.v1.schema.json';
import storeOrdersImportedV1 from './schemas/store/orders_imported.v1.schema.json';
import milestoneReachedV1 from './schemas/milestone/reached.v1.schema.json';
import crmMembersSyncedV1 from './schemas/crm/members_synced.v1.schema.json';
import dealCreatedV1 from './schemas/deal/created.v1.schema.json';
import dealStageChangedV1 from './schemas/deal/stage_changed.v1.schema.json';
import type { MessageType } from './message-types';

/** A JSON Schema document as loaded from its file. */
export type JsonSchema = { $id: string } & Record<string, unknown>;

export interface MessageCatalogEntry {
  version: number;
  schema: JsonSchema;
  description: string;
}

export const envelopeSchema: JsonSchema = envelopeV1;

/** Schemas that message schemas reference but that are not messages themselves. */
export const sharedSchemas: JsonSchema[] = [classifiedEventV1];

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
  'ingest.batch_received': {
    version: 1,
    schema: batchReceivedV1,
    description: batchReceivedV1.description,
  },
  'events.classified': {
    version: 1,
    schema: eventsClassifiedV1,
    description: eventsClassifiedV1.description,
  },
  'conversion.created': {
    version: 1,
    schema: conversionCreatedV1,
    description: conversionCreatedV1.description,
  },
  'identity.merged': {
    version: 1,
    schema: identityMergedV1,
    description: identityMergedV1.description,
  },
  'conversion.attributed': {
    version: 1,
    schema: conversionAttributedV1,
    description: conversionAttributedV1.description,
  },
  'conversion.value_changed': {
    version: 1,
    schema: conversionValueChangedV1,
    description: conversionValueChangedV1.description,
  },
  'conversion.updated': {
    version: 1,
    schema: conversionUpdatedV1,
    description: conversionUpdatedV1.description,
  },
  'stage.changed': {
    version: 1,
    schema: stageChangedV1,
    description: stageChangedV1.description,
  },
  'outcome.writeback_requested': {
    version: 1,
    schema: outcomeWritebackRequestedV1,
    description: outcomeWritebackRequestedV1.description,
  },
  'outcome.writeback_updated': {
    version: 1,
    schema: outcomeWritebackUpdatedV1,
    description: outcomeWritebackUpdatedV1.description,
  },
  'ads.report_imported': {
    version: 1,
    schema: adsReportImportedV1,
    description: adsReportImportedV1.description,
  },
  'store.orders_imported': {
    version: 1,
    schema: storeOrdersImportedV1,
    description: storeOrdersImportedV1.description,
  },
  'milestone.reached': {
    version: 1,
    schema: milestoneReachedV1,
    description: milestoneReachedV1.description,
  },
  'crm.members_synced': {
    version: 1,
    schema: crmMembersSyncedV1,
    description: crmMembersSyncedV1.description,
  },
  'deal.created': {
    version: 1,
    schema: dealCreatedV1,
    description: dealCreatedV1.description,
  },
  'deal.stage_changed': {
    version: 1,
    schema: dealStageChangedV1,
    description: dealStageChangedV1.description,
  },
} as const satisfies Record<MessageType, MessageCatalogEntry>;

export const MESSAGE_TYPES = Object.keys(messageCatalog) as MessageType[];

export function isMessageType(value: string): value is MessageType {
  return Object.prototype.hasOwnProperty.call(messageCatalog, value);
}
