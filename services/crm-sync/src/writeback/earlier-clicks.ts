// The click ids of a person's earlier visits, for the ad-platform uploads of one write-back
// request. The conversion row contacts keeps carries only the click ids of its own event, while a
// CRM stage (an MQL, a won deal) is usually reached weeks after the visit that came from an ad.
// Before planning, crm-sync asks attribution (attribution.getAdClicks) for the click ids the
// person carried in the CLICK_LOOKBACK_DAYS before the change, and fills in each platform whose
// click id the request lacks. The request's own ids always win (they belong to that conversion).
//
// It asks only when it matters: some active ad account would send an outcome of this request,
// the request has an identity, consent for ad personalisation is not denied, and a platform's
// click id is missing. Attribution out of reach (no reply, nobody serving, a 5xx problem) pauses
// the delivery until it answers (StoreUnavailableError: no attempt spent), so an outcome is
// never planned without the clicks while the service that knows them is merely restarting.
import { RpcNoConsumerError, RpcRemoteError, RpcTimeoutError, StoreUnavailableError, type ServiceBus } from '@sightline/kit';
import type { AdClick, OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import type { AdDestinationRow, AdPlatform } from './connection';
import { adConsent, conversionsConfigured, plannedSends, SettingsError } from './conversion';
import { adAccountSettings } from './plan';

/**
 * How far back a click still counts: 90 days is the longest click-through window Google Ads
 * offers, the LinkedIn Conversions API's limit on event age, and the lifetime of Meta's _fbc cookie.
 */
export const CLICK_LOOKBACK_DAYS = 90;
const DAY_MS = 86_400_000;

/** Each platform's click id names, in the order its builder prefers them. */
export const CLICK_ID_NAMES: Record<AdPlatform, readonly string[]> = {
  google_ads: ['gclid', 'gbraid', 'wbraid'],
  meta_ads: ['fbc', 'fbclid'],
  linkedin_ads: ['li_fat_id'],
};

export interface EarlierClicksDeps {
  bus: Pick<ServiceBus<'crm-sync'>, 'call'>;
  timeoutMs: number;
}

/** The platforms of `destinations` that would send an outcome of this request and lack their click id. */
export function platformsMissingClicks(request: OutcomeWritebackRequestedV1, changedAt: Date, destinations: readonly AdDestinationRow[]): AdPlatform[] {
  if (!request.identity_id || adConsent(request) === 'denied') return [];
  return destinations
    .filter((d) => conversionsConfigured(d.platform, d.settings) && sends(request, changedAt, d))
    .map((d) => d.platform)
    .filter((platform) => !CLICK_ID_NAMES[platform].some((name) => (request.click_ids[name] ?? '').trim() !== ''));
}

function sends(request: OutcomeWritebackRequestedV1, changedAt: Date, destination: AdDestinationRow): boolean {
  try {
    return plannedSends(request, changedAt, adAccountSettings(destination.platform, destination.settings).settings).length > 0;
  } catch (error) {
    // Settings that do not fit are the planner's to report (a skip with the reason).
    if (error instanceof SettingsError) return false;
    throw error;
  }
}

/**
 * The click ids to add for `platforms`: per platform, the click id of the person's newest click
 * (clicks come newest first). A Meta click becomes `fbc` dated by the click itself, as Meta
 * documents (fb.1.<click time in ms>.<fbclid>).
 */
export function clickIdsFor(platforms: readonly AdPlatform[], clicks: readonly AdClick[]): Record<string, string> {
  const added: Record<string, string> = {};
  for (const platform of platforms) {
    const click = clicks.find((c) => CLICK_ID_NAMES[platform].includes(c.name) && c.value.trim() !== '');
    if (!click) continue;
    if (click.name === 'fbclid') added['fbc'] = `fb.1.${Date.parse(click.occurred_at)}.${click.value.trim()}`;
    else added[click.name] = click.value.trim();
  }
  return added;
}

/** The request with the click ids of the person's earlier visits filled in where its platforms lack them. */
export async function withEarlierClicks(
  deps: EarlierClicksDeps,
  request: OutcomeWritebackRequestedV1,
  changedAt: Date,
  destinations: readonly AdDestinationRow[],
): Promise<OutcomeWritebackRequestedV1> {
  const missing = platformsMissingClicks(request, changedAt, destinations);
  if (missing.length === 0 || !request.identity_id) return request;
  const ask = {
    workspace_id: request.workspace_id,
    website_id: request.website_id,
    identity_id: request.identity_id,
    since: new Date(changedAt.getTime() - CLICK_LOOKBACK_DAYS * DAY_MS).toISOString(),
    until: changedAt.toISOString(),
  };
  let clicks: AdClick[];
  try {
    clicks = (await deps.bus.call('attribution.getAdClicks', ask, { timeoutMs: deps.timeoutMs })).clicks;
  } catch (error) {
    const unreachable = error instanceof RpcTimeoutError || error instanceof RpcNoConsumerError || (error instanceof RpcRemoteError && error.problem.status >= 500);
    if (unreachable) throw new StoreUnavailableError(`attribution cannot say which ads the person clicked (${(error as Error).message}); the write-back waits for it`, { cause: error });
    throw error;
  }
  const added = clickIdsFor(missing, clicks);
  return Object.keys(added).length === 0 ? request : { ...request, click_ids: { ...request.click_ids, ...added } };
}
