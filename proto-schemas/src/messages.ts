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
import funnelCreatedV1 from './schemas/funnel/created.v1.schema.json';
import funnelUpdatedV1 from './schemas/funnel/updated.v1.schema.json';
import funnelDeletedV1 from './schemas/funnel/deleted.v1.schema.json';
import automationCreatedV1 from './schemas/automation/created.v1.schema.json';
import automationUpdatedV1 from './schemas/automation/updated.v1.schema.json';
import automationDeletedV1 from './schemas/automation/deleted.v1.schema.json';
import automationRanV1 from './schemas/automation/ran.v1.schema.json';
import type { MessageType } from './message-types';
import type { ServiceName } from './openapi/types';

/** A JSON Schema document as loaded from its file. */
export type JsonSchema = { $id: string } & Record<string, unknown>;

export interface MessageCatalogEntry {
  version: number;
  schema: JsonSchema;
  description: string;
  /** The services that publish it (the topology: DESIGN.md "The topology is data"). */
  publishedBy: readonly ServiceName[];
  /** The services with a durable queue bound to it; each must hold a handler for it. */
  consumedBy: readonly ServiceName[];
  /** Why a published type may have no consumer yet; without it, a type nobody consumes fails the topology test. */
  keptForLater?: string;
  /**
   * The key that orders the type, when its consumers need per-key order: every message names a
   * partition (the bus's partitionOf of the key), each consumer reads it from per-partition queues
   * with one active reader per partition, so messages of one key are handled in publish order
   * while the partitions spread over the consumer's replicas.
   */
  partitionedBy?: string;
}

export const envelopeSchema: JsonSchema = envelopeV1;

/** Schemas that message schemas reference but that are not messages themselves. */
export const sharedSchemas: JsonSchema[] = [classifiedEventV1];

export const messageCatalog = {
  'gateway.workspace_created': {
    version: 1,
    schema: workspaceCreatedV1,
    description: workspaceCreatedV1.description,
    publishedBy: ['gateway'],
    consumedBy: [],
    keptForLater: 'audit trail of operator actions; no service reacts to it yet',
  },
  'gateway.key_created': {
    version: 1,
    schema: keyCreatedV1,
    description: keyCreatedV1.description,
    publishedBy: ['gateway'],
    consumedBy: [],
    keptForLater: 'audit trail of operator actions; no service reacts to it yet',
  },
  'gateway.key_revoked': {
    version: 1,
    schema: keyRevokedV1,
    description: keyRevokedV1.description,
    publishedBy: ['gateway'],
    consumedBy: [],
    keptForLater: 'audit trail of operator actions; no service reacts to it yet',
  },
  'ingest.batch_received': {
    version: 1,
    schema: batchReceivedV1,
    description: batchReceivedV1.description,
    publishedBy: ['ingest'],
    consumedBy: ['ingest'],
    // Sessions are read-modify-write per visitor: one reader per visitor at a time, in order.
    partitionedBy: 'website id and visitor (anonymous id, else email hash, phone or event id)',
  },
  'events.classified': {
    version: 1,
    schema: eventsClassifiedV1,
    description: eventsClassifiedV1.description,
    publishedBy: ['ingest'],
    consumedBy: ['attribution', 'funnels'],
  },
  'conversion.created': {
    version: 1,
    schema: conversionCreatedV1,
    description: conversionCreatedV1.description,
    publishedBy: ['ingest'],
    consumedBy: ['attribution', 'contacts', 'changefeed', 'automations'],
  },
  'identity.merged': {
    version: 1,
    schema: identityMergedV1,
    description: identityMergedV1.description,
    publishedBy: ['ingest'],
    consumedBy: ['attribution', 'contacts', 'funnels'],
  },
  'conversion.attributed': {
    version: 1,
    schema: conversionAttributedV1,
    description: conversionAttributedV1.description,
    publishedBy: ['attribution'],
    consumedBy: ['contacts'],
  },
  'conversion.value_changed': {
    version: 1,
    schema: conversionValueChangedV1,
    description: conversionValueChangedV1.description,
    publishedBy: ['contacts'],
    consumedBy: ['attribution', 'changefeed', 'automations'],
  },
  'conversion.updated': {
    version: 1,
    schema: conversionUpdatedV1,
    description: conversionUpdatedV1.description,
    publishedBy: ['contacts'],
    consumedBy: ['changefeed'],
  },
  'stage.changed': {
    version: 1,
    schema: stageChangedV1,
    description: stageChangedV1.description,
    publishedBy: ['contacts'],
    consumedBy: ['attribution', 'changefeed', 'automations'],
  },
  'outcome.writeback_requested': {
    version: 1,
    schema: outcomeWritebackRequestedV1,
    description: outcomeWritebackRequestedV1.description,
    publishedBy: ['contacts'],
    consumedBy: ['crm-sync'],
  },
  'outcome.writeback_updated': {
    version: 1,
    schema: outcomeWritebackUpdatedV1,
    description: outcomeWritebackUpdatedV1.description,
    publishedBy: ['crm-sync'],
    consumedBy: ['contacts'],
  },
  'ads.report_imported': {
    version: 1,
    schema: adsReportImportedV1,
    description: adsReportImportedV1.description,
    publishedBy: ['crm-sync'],
    consumedBy: ['attribution'],
  },
  'store.orders_imported': {
    version: 1,
    schema: storeOrdersImportedV1,
    description: storeOrdersImportedV1.description,
    publishedBy: ['crm-sync'],
    consumedBy: ['attribution'],
  },
  'milestone.reached': {
    version: 1,
    schema: milestoneReachedV1,
    description: milestoneReachedV1.description,
    publishedBy: ['crm-sync'],
    consumedBy: ['attribution', 'contacts', 'funnels', 'automations'],
  },
  'crm.members_synced': {
    version: 1,
    schema: crmMembersSyncedV1,
    description: crmMembersSyncedV1.description,
    publishedBy: ['crm-sync'],
    consumedBy: ['attribution'],
  },
  'deal.created': {
    version: 1,
    schema: dealCreatedV1,
    description: dealCreatedV1.description,
    publishedBy: ['crm-sync'],
    consumedBy: ['changefeed', 'automations'],
  },
  'deal.stage_changed': {
    version: 1,
    schema: dealStageChangedV1,
    description: dealStageChangedV1.description,
    publishedBy: ['crm-sync'],
    consumedBy: ['changefeed', 'automations'],
  },
  'funnel.created': {
    version: 1,
    schema: funnelCreatedV1,
    description: funnelCreatedV1.description,
    publishedBy: ['funnels'],
    consumedBy: ['changefeed'],
  },
  'funnel.updated': {
    version: 1,
    schema: funnelUpdatedV1,
    description: funnelUpdatedV1.description,
    publishedBy: ['funnels'],
    consumedBy: ['changefeed'],
  },
  'funnel.deleted': {
    version: 1,
    schema: funnelDeletedV1,
    description: funnelDeletedV1.description,
    publishedBy: ['funnels'],
    // automations pauses the alerts that gather from the deleted funnel.
    consumedBy: ['changefeed', 'automations'],
  },
  'automation.created': {
    version: 1,
    schema: automationCreatedV1,
    description: automationCreatedV1.description,
    publishedBy: ['automations'],
    consumedBy: ['changefeed'],
  },
  'automation.updated': {
    version: 1,
    schema: automationUpdatedV1,
    description: automationUpdatedV1.description,
    publishedBy: ['automations'],
    consumedBy: ['changefeed'],
  },
  'automation.deleted': {
    version: 1,
    schema: automationDeletedV1,
    description: automationDeletedV1.description,
    publishedBy: ['automations'],
    consumedBy: ['changefeed'],
  },
  'automation.ran': {
    version: 1,
    schema: automationRanV1,
    description: automationRanV1.description,
    publishedBy: ['automations'],
    consumedBy: ['changefeed'],
  },
} as const satisfies Record<MessageType, MessageCatalogEntry>;

export const MESSAGE_TYPES = Object.keys(messageCatalog) as MessageType[];

export function isMessageType(value: string): value is MessageType {
  return Object.prototype.hasOwnProperty.call(messageCatalog, value);
}

type Catalog = typeof messageCatalog;

/** The message types service S consumes: its handler map must hold exactly these. */
export type ConsumedBy<S extends ServiceName> = {
  [T in MessageType]: S extends Catalog[T]['consumedBy'][number] ? T : never;
}[MessageType];

/** The message types service S may publish. */
export type PublishedBy<S extends ServiceName> = {
  [T in MessageType]: S extends Catalog[T]['publishedBy'][number] ? T : never;
}[MessageType];

/** The types each service consumes, from the catalog: the runner declares one durable queue per service. */
export function consumedTypesByService(): Map<ServiceName, MessageType[]> {
  const out = new Map<ServiceName, MessageType[]>();
  for (const type of MESSAGE_TYPES) {
    for (const service of messageCatalog[type].consumedBy as readonly ServiceName[]) out.set(service, [...(out.get(service) ?? []), type]);
  }
  return out;
}

/** Types whose consumers read them by partition (catalog `partitionedBy`). */
export function partitionedTypes(): MessageType[] {
  return MESSAGE_TYPES.filter((type) => (messageCatalog[type] as MessageCatalogEntry).partitionedBy !== undefined);
}

export function consumedTypesOf(service: ServiceName): MessageType[] {
  return consumedTypesByService().get(service) ?? [];
}

export function publishedTypesOf(service: ServiceName): MessageType[] {
  return MESSAGE_TYPES.filter((type) => (messageCatalog[type].publishedBy as readonly ServiceName[]).includes(service));
}
