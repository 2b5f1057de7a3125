// Records every change-bearing message. Delivery is at least once: the message id is unique in
// the log, so a redelivered message inserts nothing.
import { NonRetryableError, type ConsumerMap, type Envelope } from '@sightline/kit';
import { changeFromEnvelope } from './change-record';
import type { ChangesRepo } from './changes.repo';

export function changeConsumers(repo: ChangesRepo, onRecorded?: (type: string) => void): ConsumerMap<'changefeed'> {
  const record = async (envelope: Envelope): Promise<void> => {
    const change = changeFromEnvelope(envelope);
    // The feed is read per website; a change naming none could never be served. Dead-letter it
    // so it is seen, rather than dropping it silently.
    if (!change) throw new NonRetryableError(`${envelope.type} message ${envelope.id} names no website`);
    if (await repo.insert(change)) onRecorded?.(change.type);
  };
  // Every change is recorded the same way; listed one by one so a new change type is a tsc error here.
  return {
    'conversion.created': record,
    'conversion.updated': record,
    'conversion.value_changed': record,
    'stage.changed': record,
    'deal.created': record,
    'deal.stage_changed': record,
    'funnel.created': record,
    'funnel.updated': record,
    'funnel.deleted': record,
    'automation.created': record,
    'automation.updated': record,
    'automation.deleted': record,
    'automation.ran': record,
  };
}
