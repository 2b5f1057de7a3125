// crm.members_synced: who is on each CRM company and deal, as crm-sync last listed them. Each sync
// is stored whole; the newest synced_at per subject wins at read time (crm-members.repo.ts).
import { coalesce, groupToken, type ClickHouseStore, type ConsumerMap } from '@sightline/kit';
import { CrmMembersRepo } from './crm-members.repo';

export function crmJourneyConsumers(ch: ClickHouseStore): Pick<ConsumerMap<'attribution'>, 'crm.members_synced'> {
  const repo = new CrmMembersRepo(ch);
  return {
    // Each sync is stored whole; the newest synced_at per subject wins at read time, so
    // redelivered and out-of-order syncs need no care here.
    'crm.members_synced': coalesce({
      handle: (group) => repo.insertMany(groupToken(group), group.map((e) => e.payload)),
    }),
  };
}
