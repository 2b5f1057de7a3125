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
// A request carrying only a CRM deal milestone (contacts' crm-stage.ts; changes empty) gets no CRM
// row at all: the deal is the CRM's own.
// Ad platforms (per configured account): the account's "send" rules (conversion.ts,
// parseSendRules; default: tracked conversions only) decide which outcomes of the request go to it
// — a tracked conversion and/or stage milestones, each with its value source and currency. Then:
//   - consent for ad personalisation denied (request.ad_consent): skipped, nothing leaves;
//   - each outcome goes once per (platform, conversion, outcome key): one already sent (or queued)
//     is left out; one whose value changed since is refused with the reason, as no platform wired
//     here restates a sent value (Google's Data Manager API has no adjustment of a sent event);
//   - the platform's builder (one small function per platform below) makes the upload body from
//     the outcomes left, or null when the contact cannot be matched (no click id, no identifier).
import type { OutcomeWritebackRequestedV1, WritebackTarget } from '@sightline/proto-schemas';
import type { AdDestinationRow, AdPlatform } from './connection';
import { adConsent, CONVERSION_SETTINGS, conversionsConfigured, plannedSends, settingsObject, sharedSettings, SettingsError, spendOnlyNote, type PlannedSend } from './conversion';
import { googleUploadBody, parseGoogleAdsSettings } from './google-ads';
import { dataManagerBody, parseDataManagerSettings } from './google-data-manager';
import { linkedinUploadBody, parseLinkedinAdsSettings } from './linkedin-ads';
import { metaEventsBody, parseMetaAdsSettings } from './meta-ads';

export type ChangeValue = string | number | boolean | null;

export interface PlanFacts {
  /** Provider of the website's active CRM connection, or null. */
  crmProvider: string | null;
  /** Field → value the CRM is known to hold for this conversion. */
  crmKnown: Map<string, unknown>;
  destinations: AdDestinationRow[];
  /** Outcomes of this conversion already sent (or queued) per platform: sentKey(platform, key) → what was sent. */
  adSent: Map<string, SentOutcome>;
}

/** One outcome in a queued ad upload (recorded with the row; the next plans read it back). */
export interface SentOutcome {
  key: string;
  /** The value sent; null for none, or unknown (rows queued before stage rules). */
  value: number | null;
  currency: string | null;
}

export const sentKey = (platform: string, key: string): string => `${platform}|${key}`;

export interface PlannedRow {
  target: WritebackTarget;
  provider: string | null;
  status: 'pending' | 'skipped';
  detail: string | null;
  payload: unknown;
  /** Ad platforms: the outcomes this row sends. */
  sends?: SentOutcome[];
}

/**
 * How one platform turns the outcomes of a request into its upload body (null: the contact cannot
 * be matched on this platform). Throws SettingsError for settings that do not fit.
 */
export interface AdBuilder {
  name: string;
  /** What the platform matches a contact by, for the "nothing to upload" detail. */
  matchedBy: string;
  /** The shared settings (send rules included) after the platform's own validation. */
  settings(raw: unknown): ReturnType<typeof sharedSettings>;
  build(request: OutcomeWritebackRequestedV1, sends: PlannedSend[], raw: unknown): unknown;
}

export interface Plan {
  rows: PlannedRow[];
  /** Values the CRM holds after this request (when it came from the CRM). */
  crmHolds: { field: string; value: ChangeValue }[];
}

export const CRM_SOURCE_PREFIX = 'crm:';

export function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) < 1e-9;
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

export function planWriteback(request: OutcomeWritebackRequestedV1, changedAt: Date, facts: PlanFacts): Plan {
  const rows: PlannedRow[] = [];
  const fromCrm = request.requested_by.startsWith(CRM_SOURCE_PREFIX);
  const crmHolds = fromCrm ? request.changes.map((c) => ({ field: c.field, value: c.new_value })) : [];

  // A request that only carries a CRM deal milestone (no field changed) has nothing for the CRM.
  if (request.changes.length > 0) rows.push(planCrm(request, facts, fromCrm));
  for (const destination of facts.destinations) {
    const row = planAd(request, changedAt, destination, facts.adSent);
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

function planAd(request: OutcomeWritebackRequestedV1, changedAt: Date, destination: AdDestinationRow, sent: Map<string, SentOutcome>): PlannedRow | null {
  const platform = destination.platform;
  const builder = AD_BUILDERS[platform];
  const skip = (detail: string): PlannedRow => ({ target: platform, provider: platform, status: 'skipped', detail, payload: {} });
  try {
    const account = adAccountSettings(platform, destination.settings);
    const sends = plannedSends(request, changedAt, account.settings);
    // Nothing the account's rules send: nothing to say for this platform.
    if (sends.length === 0) return null;
    // A spend-only account (no conversion setting): one readable skip for this request, never a failure.
    if (account.spendOnly) return skip(spendOnlyNote(platform));
    if (adConsent(request) === 'denied') return skip('consent for ad personalisation denied: not sent');
    const fresh: PlannedSend[] = [];
    const notes: string[] = [];
    for (const send of sends) {
      const before = sent.get(sentKey(platform, send.key));
      if (!before) fresh.push(send);
      else if (before.value !== null && !sameValue(before.value, send.value)) {
        notes.push(`${send.key}: value changed from ${before.value} to ${send.value ?? 'none'} after it was sent; ${builder.name} cannot restate a sent conversion, so the new value is not sent`);
      } else notes.push(`${send.key}: already uploaded to ${builder.name}`);
    }
    if (fresh.length === 0) return skip(notes.length === 1 && notes[0]!.endsWith(`already uploaded to ${builder.name}`) ? `this conversion was already uploaded to ${builder.name}` : notes.join('; '));
    const body = builder.build(request, fresh, destination.settings);
    if (body === null) return skip(`no ${builder.matchedBy} on this conversion: nothing to upload`);
    return {
      target: platform,
      provider: platform,
      status: 'pending',
      detail: notes.length > 0 ? notes.join('; ') : null,
      payload: body,
      sends: fresh.map((s) => ({ key: s.key, value: s.value, currency: s.currency })),
    };
  } catch (error) {
    if (error instanceof SettingsError) return skip(`${builder.name} account settings are invalid: ${error.message}`);
    throw error;
  }
}

/**
 * An ad account's settings as the planner and the admin route read them: with its platform's
 * conversion setting (conversion.ts CONVERSION_SETTINGS) the builder checks them all; without it the
 * account is spend only, and every other setting given is checked the same way (the missing one set
 * aside), except "send", which needs somewhere to send to. Throws SettingsError.
 */
export function adAccountSettings(platform: AdPlatform, raw: unknown): { spendOnly: boolean; settings: ReturnType<typeof sharedSettings> } {
  const builder = AD_BUILDERS[platform];
  if (conversionsConfigured(platform, raw)) return { spendOnly: false, settings: builder.settings(raw) };
  const given = settingsObject(raw, platform);
  const needed = CONVERSION_SETTINGS[platform].keys[0];
  if (given['send'] !== undefined && given['send'] !== null) {
    throw new SettingsError(`setting "send" needs "${needed}" (where ${builder.name} conversions go); leave "send" out for a spend-only account`);
  }
  return { spendOnly: true, settings: builder.settings({ ...given, [needed]: '0' }) };
}

/** Google: the Data Manager API (default), or uploadClickConversions when the account opts in with "api": "google_ads_api" (one outcome per upload: its orderId is the conversion id). */
const googleBuilder: AdBuilder = {
  name: 'Google Ads',
  matchedBy: 'gclid, gbraid, wbraid, email or phone',
  settings: (raw) => parseGoogleAdsSettings(raw),
  build(request, sends, raw) {
    const settings = parseGoogleAdsSettings(raw);
    if (settings.api === 'google_ads_api') return sends[0] ? googleUploadBody(request, sends[0], settings) : null;
    return dataManagerBody(request, sends, parseDataManagerSettings(settingsObject(raw, 'google_ads')));
  },
};

/** Meta: one server event per outcome in one request, each event_id keyed on the conversion and outcome (meta-ads.ts). */
const metaBuilder: AdBuilder = {
  name: 'Meta',
  matchedBy: 'fbclid (or fbc)',
  settings: (raw) => parseMetaAdsSettings(raw),
  build: (request, sends, raw) => metaEventsBody(request, sends, parseMetaAdsSettings(raw)),
};

/** LinkedIn: one conversion event per outcome, its event id keyed on the outcome (linkedin-ads.ts). */
const linkedinBuilder: AdBuilder = {
  name: 'LinkedIn',
  matchedBy: 'li_fat_id or email',
  settings: (raw) => parseLinkedinAdsSettings(raw),
  build: (request, sends, raw) => linkedinUploadBody(request, sends, parseLinkedinAdsSettings(raw)),
};

/** One builder per platform the queue uploads to; a platform joins AdPlatform and this table together. */
export const AD_BUILDERS: Record<AdPlatform, AdBuilder> = { google_ads: googleBuilder, meta_ads: metaBuilder, linkedin_ads: linkedinBuilder };

