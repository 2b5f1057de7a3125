// The ad report rows counted at one level, shared by /ads/performance and /metrics spend.
//
// 1. The newest copy of each (platform, level, item, day): a restated row replaces the earlier
//    one (LIMIT 1 BY, so correctness never waits for a merge).
// 2. For the nesting levels (account > campaign > ad_set > ad), each account-day is counted from
//    one level only: the requested level when the platform reported it for that account and day,
//    else the nearest finer level it did report, summed up to the requested level's item (its
//    campaign_id, ad_set_id or the account). Nothing is counted twice across levels.
// 3. A day counts when it overlaps the window: report dates are calendar days, read in the
//    website timezone.
import { AD_LEVEL_HIERARCHY, type AdLevelName } from '@sightline/proto-schemas';

export interface AdRowsScope {
  websiteId: string;
  /** The window, [from, to). */
  from: Date;
  to: Date;
  /** IANA timezone the window's days are read in. */
  timezone: string;
  /** Only this ad platform; null for all. */
  platform: string | null;
}

/** The item a derived row is summed into: the column holding the level's id and name on finer rows. */
const PARENT_COLUMNS: Record<(typeof AD_LEVEL_HIERARCHY)[number], { id: string; name: string }> = {
  account: { id: 'account_id', name: 'account_name' },
  campaign: { id: 'campaign_id', name: 'campaign_name' },
  ad_set: { id: 'ad_set_id', name: 'ad_set_name' },
  ad: { id: 'ad_id', name: 'ad_name' },
};

function isNesting(level: AdLevelName): level is (typeof AD_LEVEL_HIERARCHY)[number] {
  return (AD_LEVEL_HIERARCHY as readonly string[]).includes(level);
}

/** The levels whose rows may be counted at `level`, the level itself first. */
export function sourceLevels(level: AdLevelName): AdLevelName[] {
  return isNesting(level) ? AD_LEVEL_HIERARCHY.slice(AD_LEVEL_HIERARCHY.indexOf(level)) : [level];
}

/**
 * SELECT of the rows counted at `level`: platform, account, currency, parents, date, the five
 * figures, and `id`/`name` of the level's item. Parameters: levelRowsParams.
 */
export function levelRowsSql(level: AdLevelName): string {
  // Column names from a fixed table, never from the request: nothing is spliced.
  const parent = isNesting(level) ? PARENT_COLUMNS[level] : { id: 'item_id', name: 'item_name' };
  const name = level === 'account' ? `if(item_name != '', item_name, account_name)` : 'item_name';
  return `
    SELECT platform, account_id, account_name, currency, campaign_id, campaign_name, campaign_type,
           ad_set_id, ad_set_name, date, spend, impressions, clicks, platform_conversions, platform_revenue,
           if(depth = 1, item_id, ${parent.id}) AS id,
           if(depth = 1, ${name}, ${parent.name}) AS name
      FROM (
        SELECT *, min(depth) OVER (PARTITION BY platform, account_id, date) AS counted_depth
          FROM (
            SELECT platform, level, item_id, date, account_id, account_name, currency, item_name,
                   campaign_id, campaign_name, campaign_type, ad_set_id, ad_set_name, ad_id, ad_name,
                   spend, impressions, clicks, platform_conversions, platform_revenue,
                   indexOf({levels:Array(String)}, level) AS depth
              FROM ad_report_rows
             WHERE website_id = {website:UUID}
               AND level IN {levels:Array(String)}
               AND date >= toDate({from:DateTime64(3, 'UTC')}, {timezone:String})
               AND date <= toDate({last:DateTime64(3, 'UTC')}, {timezone:String})
               AND ({platform:String} = '' OR platform = {platform:String})
             ORDER BY reported_at DESC, inserted_at DESC, row_index DESC
             LIMIT 1 BY platform, level, item_id, date
          )
      )
     WHERE depth = counted_depth`;
}

export function levelRowsParams(level: AdLevelName, scope: AdRowsScope): Record<string, unknown> {
  return {
    levels: sourceLevels(level),
    website: scope.websiteId,
    from: scope.from,
    // The window is [from, to): its last day is the one holding the last millisecond before `to`.
    last: new Date(scope.to.getTime() - 1),
    timezone: scope.timezone,
    platform: scope.platform ?? '',
  };
}
