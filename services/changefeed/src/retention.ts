// The 90-day retention of the change log. The API refuses positions older than 90 days; rows are
// deleted a day later, so a position the API still accepts never points past deleted rows (the
// day also absorbs clock differences between the database and the services).
import type { ChangesRepo } from './changes.repo';
import { RETENTION_DAYS } from './changes.rpc';

const DAY_MS = 86_400_000;
export const DELETE_GRACE_DAYS = 1;
export const RETENTION_CRON = '17 3 * * *';

/** Deletes changes past retention (plus the grace day) as of `now`; returns how many. */
export function purgeExpiredChanges(repo: ChangesRepo, now: Date, batchSize?: number): Promise<number> {
  const cutoff = new Date(now.getTime() - (RETENTION_DAYS + DELETE_GRACE_DAYS) * DAY_MS);
  return repo.deleteRecordedBefore(cutoff, batchSize);
}
