// Which destinations one write-back request goes to, decided once when it arrives (pure: the
// consumer loads the facts, this decides). Each destination becomes a queued row (pending) or a
// recorded skip with its reason; a destination with nothing to do gets no row at all.
//
// CRM:
//   - a change made by the CRM itself (requested_by "crm:<provider>") is never written back to it:
//     skipped, and its values are remembered as what the CRM holds (crm_known_values);
//   - no connection for the website: skipped "no CRM connected" (not an error, never retried);
//   - every changed field already holds that value in the CRM (we wrote it, or the CRM told us):
//     skipped as an echo. This is what stops a loop when a sync brings back a value we wrote.
// Ad platforms (per configured account): only when conversionSignal says the change is a
// conversion, only with the platform's click id, and once per conversion and platform.
import type { OutcomeWritebackRequestedV1, WritebackTarget } from '@sightline/proto-schemas';
import type { AdDestinationRow, AdPlatform } from './connection';
import { conversionSignal, SettingsError } from './conversion';
import { googleUploadBody, parseGoogleAdsSettings } from './google-ads';
import { metaEventsBody, parseMetaAdsSettings } from './meta-ads';

export type ChangeValue = string | number | boolean | null;

export interface PlanFacts {
  /** Provider of the website's active CRM connection, or null. */
  crmProvider: string | null;
  /** Field → value the CRM is known to hold for this conversion. */
  crmKnown: Map<string, unknown>;
  destinations: AdDestinationRow[];
  /** Platforms this conversion was already uploaded to (or is queued for). */
  adAlreadyHandled: Set<AdPlatform>;
}

export interface PlannedRow {
  target: WritebackTarget;
  provider: string | null;
  status: 'pending' | 'skipped';
  detail: string | null;
  payload: unknown;
}

export interface Plan {
  rows: PlannedRow[];
  /** Values the CRM holds after this request (when it came from the CRM). */
  crmHolds: { field: string; value: ChangeValue }[];
}

export const CRM_SOURCE_PREFIX = 'crm:';
const PLATFORM_NAMES: Record<AdPlatform, string> = { google_ads: 'Google Ads', meta_ads: 'Meta' };
const CLICK_ID_NAMES: Record<AdPlatform, string> = { google_ads: 'gclid, gbraid or wbraid', meta_ads: 'fbclid (or fbc)' };

export function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) < 1e-9;
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

export function planWriteback(request: OutcomeWritebackRequestedV1, changedAt: Date, facts: PlanFacts): Plan {
  const rows: PlannedRow[] = [];
  const fromCrm = request.requested_by.startsWith(CRM_SOURCE_PREFIX);
  const crmHolds = fromCrm ? request.changes.map((c) => ({ field: c.field, value: c.new_value })) : [];

  rows.push(planCrm(request, facts, fromCrm));
  for (const destination of facts.destinations) {
    const row = planAd(request, changedAt, destination, facts.adAlreadyHandled);
    if (row) rows.push(row);
  }
  return { rows, crmHolds };
}

function planCrm(request: OutcomeWritebackRequestedV1, facts: PlanFacts, fromCrm: boolean): PlannedRow {
  const skip = (detail: string): PlannedRow => ({ target: 'crm', provider: facts.crmProvider, status: 'skipped', detail, payload: request });
  if (fromCrm) return skip(`change came from the CRM itself (${request.requested_by}): not written back`);
  if (facts.crmProvider === null) return skip('no CRM connected');
  const echo = request.changes.every((c) => facts.crmKnown.has(c.field) && sameValue(facts.crmKnown.get(c.field), c.new_value));
  if (echo) return skip(`${facts.crmProvider} already holds these values: not written again`);
  return { target: 'crm', provider: facts.crmProvider, status: 'pending', detail: null, payload: request };
}

function planAd(request: OutcomeWritebackRequestedV1, changedAt: Date, destination: AdDestinationRow, handled: Set<AdPlatform>): PlannedRow | null {
  const platform = destination.platform;
  const skip = (detail: string): PlannedRow => ({ target: platform, provider: platform, status: 'skipped', detail, payload: {} });
  let built: { signal: boolean; body: unknown };
  try {
    built = platform === 'google_ads' ? buildGoogle(request, changedAt, destination.settings) : buildMeta(request, changedAt, destination.settings);
  } catch (error) {
    if (error instanceof SettingsError) return skip(`${PLATFORM_NAMES[platform]} account settings are invalid: ${error.message}`);
    throw error;
  }
  // Not a conversion-worthy change: nothing to say for this platform.
  if (!built.signal) return null;
  if (built.body === null) return skip(`no ${CLICK_ID_NAMES[platform]} on this conversion: nothing to upload`);
  if (handled.has(platform)) return skip(`this conversion was already uploaded to ${PLATFORM_NAMES[platform]}`);
  return { target: platform, provider: platform, status: 'pending', detail: null, payload: built.body };
}

function buildGoogle(request: OutcomeWritebackRequestedV1, changedAt: Date, raw: unknown): { signal: boolean; body: unknown } {
  const settings = parseGoogleAdsSettings(raw);
  const signal = conversionSignal(request, changedAt, settings);
  return { signal: signal !== null, body: signal === null ? null : googleUploadBody(request, signal, settings) };
}

function buildMeta(request: OutcomeWritebackRequestedV1, changedAt: Date, raw: unknown): { signal: boolean; body: unknown } {
  const settings = parseMetaAdsSettings(raw);
  const signal = conversionSignal(request, changedAt, settings);
  return { signal: signal !== null, body: signal === null ? null : metaEventsBody(request, signal, settings) };
}
