// Bus consumers that fill the ledger. Delivery is at least once: a conversion is filed once by its
// id, a merge, an attribution and a write-back status are upserts, and a CRM lifecycle stage the
// rows already hold changes nothing, so a redelivery changes nothing.
import type { Envelope, MessageHandler, Outbox, SqlStore } from '@sightline/kit';
import type { ConversionAttributedV1, ConversionCreatedV1, IdentityMergedV1, OutcomeWritebackUpdatedV1 } from '@sightline/proto-schemas';
import type { ContactsRepo } from './contacts.repo';
import { crmStageConsumer } from './crm-stage';
import { recordWritebackStatus } from './writeback-status';

export const CONSUMED_TYPES = ['conversion.created', 'conversion.attributed', 'identity.merged', 'outcome.writeback_updated', 'milestone.reached'] as const;

export function contactsConsumers(repo: ContactsRepo, sql: SqlStore, outbox: Outbox): Record<(typeof CONSUMED_TYPES)[number], MessageHandler> {
  return {
    'conversion.created': async (envelope: Envelope): Promise<void> => {
      // The envelope source (tracker, api:<key_id>, ingest) is who recorded the opening value.
      await repo.insertConversion(envelope.payload as ConversionCreatedV1, envelope.source);
    },
    'conversion.attributed': async (envelope: Envelope): Promise<void> => {
      const attributed = envelope.payload as ConversionAttributedV1;
      await repo.upsertAttribution(attributed.conversion_id, attributed.first_touch, attributed.last_touch);
    },
    'identity.merged': async (envelope: Envelope): Promise<void> => {
      const merge = envelope.payload as IdentityMergedV1;
      await repo.applyMerge(merge.workspace_id, merge.from_identity_id, merge.into_identity_id);
    },
    'outcome.writeback_updated': async (envelope: Envelope): Promise<void> => {
      await recordWritebackStatus(sql, envelope.payload as OutcomeWritebackUpdatedV1);
    },
    // A CRM contact's lifecycle stage (subject "contact"): lifecycle_stage_raw of the conversions with its email.
    'milestone.reached': crmStageConsumer(sql, repo, outbox),
  };
}
