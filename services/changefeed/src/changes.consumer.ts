// Records every change-bearing message. Delivery is at least once: the message id is unique in
// the log, so a redelivered message inserts nothing.
import { NonRetryableError, type Envelope, type MessageHandler } from '@sightline/kit';
import { changeFromEnvelope } from './change-record';
import type { ChangesRepo } from './changes.repo';
import type { ChangeType } from './change-types';

export function changeConsumers(repo: ChangesRepo, types: readonly ChangeType[], onRecorded?: (type: string) => void): Record<string, MessageHandler> {
  const record = async (envelope: Envelope): Promise<void> => {
    const change = changeFromEnvelope(envelope);
    // The feed is read per website; a change naming none could never be served. Dead-letter it
    // so it is seen, rather than dropping it silently.
    if (!change) throw new NonRetryableError(`${envelope.type} message ${envelope.id} names no website`);
    if (await repo.insert(change)) onRecorded?.(change.type);
  };
  return Object.fromEntries(types.map((type) => [type, record]));
}
