// Bus consumers that fill the ledger. Delivery is at least once: a conversion is filed once by its
// id, a merge, an attribution and a write-back status are upserts, and a CRM lifecycle stage the
// rows already hold changes nothing, so a redelivery changes nothing.
import type { ConsumerMap, Outbox, SqlStore } from '@sightline/kit';
import type { ContactsRepo } from './contacts.repo';
import { crmStageConsumer } from './crm-stage';
import { recordWritebackStatus } from './writeback-status';

export function contactsConsumers(repo: ContactsRepo, sql: SqlStore, outbox: Outbox<'contacts'>): ConsumerMap<'contacts'> {
  return {
    'conversion.created': async (envelope) => {
      // The envelope source (tracker, api:<key_id>, ingest) is who recorded the opening value.
      await repo.insertConversion(envelope.payload, envelope.source);
    },
    'conversion.attributed': async ({ payload }) => {
      await repo.upsertAttribution(payload.conversion_id, payload.first_touch, payload.last_touch, payload.touch_count);
    },
    'identity.merged': async ({ payload }) => {
      await repo.applyMerge(payload.workspace_id, payload.from_identity_id, payload.into_identity_id);
    },
    'outcome.writeback_updated': async ({ payload }) => {
      await recordWritebackStatus(sql, payload);
    },
    // A CRM contact's lifecycle stage (subject "contact"): lifecycle_stage_raw of the conversions with its email.
    'milestone.reached': crmStageConsumer(sql, repo, outbox),
  };
}
