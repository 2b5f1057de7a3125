// When an outcome change is worth an offline conversion upload, and the settings both ad
// platforms share. Decided rule (the spec leaves it open):
//   - never for a contact marked spam;
//   - when the change sets sales_value to an amount above 0 (a realised sale), or sets status to
//     one of the account's conversion statuses (default: won, customer; compared case-insensitively);
//   - the value sent is the contact's sales_value when above 0, else none (the platform then uses
//     the conversion action's default value); the currency is the contact's, else the account's.
// Whether the platform's click id is present is checked per platform (google-ads.ts, meta-ads.ts).
// Stage rules ("send" setting, parseSendRules) extend this per account: which of tracked
// conversions and stage milestones go to it, each with its value source and currency.
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';

export const DEFAULT_CONVERSION_STATUSES = ['won', 'customer'] as const;

export interface SharedUploadSettings {
  conversion_statuses: string[];
  /** Currency for a value when the contact has none (ISO 4217), else null. */
  currency: string | null;
  /** Which outcomes go to this account (setting "send"); default: tracked conversions only. */
  send: SendRule[];
}

/**
 * Where a sent value comes from: the contact's sales_value or quote_value (sent when above 0), a
 * fixed amount, or null (no value: the platform uses its own default for the conversion action).
 */
export type ValueSource = 'sales_value' | 'quote_value' | number | null;

/**
 * One line of an account's "send" setting. `conversion` is a tracked conversion as
 * conversionSignal() decides; `stage` is a stage milestone: a change that sets the contact's
 * status or CRM lifecycle stage to `stage` (compared as a key: lower case, runs of other characters
 * as "_", so "Deal Won" matches "deal_won"). `conversion_action` names the platform's own target for
 * this rule (Google: a conversion action id; Meta and LinkedIn: their event / rule name), else
 * the account's default.
 */
export interface SendRule {
  outcome: 'conversion' | 'stage';
  stage: string | null;
  value: ValueSource;
  currency: string | null;
  conversion_action: string | null;
}

/** One outcome to send to one platform: idempotent per (platform, conversion, key). */
export interface PlannedSend extends ConversionSignal {
  /** "conversion" or "stage:<stage>". */
  key: string;
  outcome: 'conversion' | 'stage';
  stage: string | null;
  conversion_action: string | null;
}

export const DEFAULT_SEND_RULES: readonly SendRule[] = [{ outcome: 'conversion', stage: null, value: 'sales_value', currency: null, conversion_action: null }];

export interface ConversionSignal {
  value: number | null;
  currency: string | null;
  /** When the outcome changed: the conversion's time as the ad platform sees it. */
  at: Date;
}

/** What was written where, for the write-back status. */
export interface UploadResult {
  detail: string;
  externalId: string | null;
}

/** A settings value that does not fit; the admin route answers 400 with its message. */
export class SettingsError extends Error {
  override name = 'SettingsError';
}

export function conversionSignal(request: OutcomeWritebackRequestedV1, changedAt: Date, settings: SharedUploadSettings): ConversionSignal | null {
  if (request.current.is_spam) return null;
  const statuses = new Set(settings.conversion_statuses.map((s) => s.toLowerCase()));
  const sold = request.changes.some((c) => c.field === 'sales_value' && typeof c.new_value === 'number' && c.new_value > 0);
  const converted = request.changes.some((c) => c.field === 'status' && typeof c.new_value === 'string' && statuses.has(c.new_value.toLowerCase()));
  if (!sold && !converted) return null;
  const value = request.current.sales_value !== null && request.current.sales_value > 0 ? request.current.sales_value : null;
  return { value, currency: request.current.currency ?? settings.currency, at: changedAt };
}

/** A stage or status as a comparable key: "Deal Won" → "deal_won". */
export const stageKey = (text: string): string => text.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');

function sentValue(request: OutcomeWritebackRequestedV1, source: ValueSource): number | null {
  if (source === null) return null;
  if (typeof source === 'number') return source;
  const value = request.current[source];
  return value !== null && value > 0 ? value : null;
}

/**
 * The outcomes of one request the account's rules send, in rule order, one per key. A contact
 * marked spam sends nothing. A stage matches a change that sets `status` or `lifecycle_stage_raw`,
 * or the CRM deal milestone the request carries (`milestone`: its "sales_value" is the deal amount).
 */
export function plannedSends(request: OutcomeWritebackRequestedV1, changedAt: Date, settings: SharedUploadSettings): PlannedSend[] {
  if (request.current.is_spam) return [];
  const reached = new Set(
    request.changes
      .filter((c) => (c.field === 'status' || c.field === 'lifecycle_stage_raw') && typeof c.new_value === 'string' && c.new_value !== '')
      .map((c) => stageKey(c.new_value as string)),
  );
  // A CRM deal milestone (deal_won...) carried by the request reaches its stage too.
  const milestone = request.milestone ?? null;
  if (milestone) reached.add(stageKey(milestone.stage));
  const sends: PlannedSend[] = [];
  const seen = new Set<string>();
  for (const rule of settings.send) {
    let key: string;
    if (rule.outcome === 'conversion') {
      if (conversionSignal(request, changedAt, settings) === null) continue;
      key = 'conversion';
    } else {
      if (rule.stage === null || !reached.has(rule.stage)) continue;
      key = `stage:${rule.stage}`;
    }
    if (seen.has(key)) continue;
    seen.add(key);
    // For a deal milestone, "sales_value" is the deal's amount, in the deal's currency.
    const dealValue = milestone !== null && rule.stage === stageKey(milestone.stage) && rule.value === 'sales_value';
    const value = dealValue ? (milestone.amount !== null && milestone.amount > 0 ? milestone.amount : null) : sentValue(request, rule.value);
    sends.push({
      key,
      outcome: rule.outcome,
      stage: rule.stage,
      conversion_action: rule.conversion_action,
      value,
      currency: value === null ? null : (dealValue ? milestone.currency : null) ?? rule.currency ?? request.current.currency ?? settings.currency,
      at: changedAt,
    });
  }
  return sends;
}

/** The request's consent for ad personalisation (optional field `ad_consent`); null when unknown. */
export function adConsent(request: OutcomeWritebackRequestedV1): 'granted' | 'denied' | null {
  const consent = request.ad_consent;
  return consent === 'granted' || consent === 'denied' ? consent : null;
}

type Raw = Record<string, unknown>;

export function settingsObject(raw: unknown, platform: string): Raw {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new SettingsError(`${platform} settings must be an object`);
  return raw as Raw;
}

export function textSetting(raw: Raw, key: string, pattern: RegExp, hint: string): string;
export function textSetting(raw: Raw, key: string, pattern: RegExp, hint: string, optional: true): string | null;
export function textSetting(raw: Raw, key: string, pattern: RegExp, hint: string, optional = false): string | null {
  const value = raw[key];
  if (value === undefined || value === null) {
    if (optional) return null;
    throw new SettingsError(`setting "${key}" is required (${hint})`);
  }
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !pattern.test(text)) throw new SettingsError(`setting "${key}" must be ${hint}`);
  return text;
}

export function sharedSettings(raw: Raw): SharedUploadSettings {
  const statuses = raw['conversion_statuses'];
  if (statuses !== undefined && !(Array.isArray(statuses) && statuses.every((s) => typeof s === 'string' && s.length > 0))) {
    throw new SettingsError('setting "conversion_statuses" must be a list of status names');
  }
  return {
    conversion_statuses: statuses === undefined ? [...DEFAULT_CONVERSION_STATUSES] : (statuses as string[]),
    currency: textSetting(raw, 'currency', /^[A-Z]{3}$/, 'an ISO 4217 code such as EUR', true),
    send: parseSendRules(raw['send']),
  };
}

const RULE_KEYS = new Set(['outcome', 'stage', 'value', 'currency', 'conversion_action']);

/**
 * The "send" setting: {"send": [{"outcome": "conversion"}, {"outcome": "stage", "stage": "deal_won",
 * "value": "sales_value"}, {"outcome": "stage", "stage": "mql", "value": null}]}. Absent: tracked
 * conversions only. `value` defaults to "sales_value"; `currency` (ISO 4217) and
 * `conversion_action` are optional.
 */
export function parseSendRules(input: unknown): SendRule[] {
  if (input === undefined || input === null) return DEFAULT_SEND_RULES.map((r) => ({ ...r }));
  if (!Array.isArray(input) || input.length === 0) throw new SettingsError('setting "send" must be a non-empty list of rules such as {"outcome": "stage", "stage": "deal_won"}');
  const keys = new Set<string>();
  return input.map((entry, i) => {
    const at = `setting "send"[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new SettingsError(`${at} must be an object such as {"outcome": "conversion"}`);
    const rule = entry as Raw;
    const unknown = Object.keys(rule).filter((k) => !RULE_KEYS.has(k));
    if (unknown.length > 0) throw new SettingsError(`${at} has unknown key(s) ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: ${[...RULE_KEYS].join(', ')})`);
    const outcome = rule['outcome'];
    if (outcome !== 'conversion' && outcome !== 'stage') throw new SettingsError(`${at}.outcome must be "conversion" or "stage"`);
    let stage: string | null = null;
    if (outcome === 'stage') {
      if (typeof rule['stage'] !== 'string' || stageKey(rule['stage']) === '') throw new SettingsError(`${at}.stage is required for a stage rule (a stage name such as "deal_won" or "mql")`);
      stage = stageKey(rule['stage']);
    } else if (rule['stage'] !== undefined) {
      throw new SettingsError(`${at}.stage only belongs to a rule with "outcome": "stage"`);
    }
    const key = stage === null ? 'conversion' : `stage:${stage}`;
    if (keys.has(key)) throw new SettingsError(`${at} repeats ${stage === null ? 'the conversion rule' : `stage "${stage}"`}`);
    keys.add(key);
    const rawValue = rule['value'];
    let value: ValueSource;
    if (rawValue === undefined) value = 'sales_value';
    else if (rawValue === null || rawValue === 'sales_value' || rawValue === 'quote_value') value = rawValue;
    else if (typeof rawValue === 'number' && Number.isFinite(rawValue) && rawValue >= 0) value = rawValue;
    else throw new SettingsError(`${at}.value must be "sales_value", "quote_value", an amount (a number ≥ 0) or null (no value)`);
    const currency = rule['currency'];
    if (currency !== undefined && currency !== null && !(typeof currency === 'string' && /^[A-Z]{3}$/.test(currency))) {
      throw new SettingsError(`${at}.currency must be an ISO 4217 code such as EUR`);
    }
    const action = rule['conversion_action'];
    if (action !== undefined && action !== null && !(typeof action === 'string' || typeof action === 'number') ) {
      throw new SettingsError(`${at}.conversion_action must be the platform's id or name for this outcome`);
    }
    return {
      outcome,
      stage,
      value,
      currency: typeof currency === 'string' ? currency : null,
      conversion_action: action === undefined || action === null ? null : String(action),
    };
  });
}

/**
 * The setting that makes an ad account send conversions, per platform (any of `keys`; LinkedIn also
 * takes "conversion"). An account without it is spend only: its spend is pulled, no conversion is
 * sent, and the planner records why (spendOnlyNote). A value that is given is validated as ever.
 */
export const CONVERSION_SETTINGS = {
  google_ads: { keys: ['conversion_action_id'], what: 'conversion action', name: 'Google Ads', kind: 'google-ads', flag: '--conversion-action-id' },
  meta_ads: { keys: ['pixel_id'], what: 'pixel', name: 'Meta', kind: 'meta-ads', flag: '--pixel-id' },
  linkedin_ads: { keys: ['conversion_rule_id', 'conversion'], what: 'conversion rule', name: 'LinkedIn', kind: 'linkedin-ads', flag: '--conversion-rule-id' },
} as const;
export type ConversionPlatform = keyof typeof CONVERSION_SETTINGS;

/** Whether an account's settings name where its conversions go (else it is spend only). */
export function conversionsConfigured(platform: ConversionPlatform, raw: unknown): boolean {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return false;
  return CONVERSION_SETTINGS[platform].keys.some((k) => (raw as Raw)[k] !== undefined && (raw as Raw)[k] !== null);
}

/** The skip a spend-only account records for a conversion its rules would send. */
export function spendOnlyNote(platform: ConversionPlatform): string {
  const c = CONVERSION_SETTINGS[platform];
  return `no ${c.what} configured for ${c.name}: conversions are not sent; add one with \`sightline connections add ${c.kind} ... ${c.flag}\``;
}

/**
 * The platform's dedup key of one outcome of one conversion: the same on every retry, restart and
 * redelivery. A tracked conversion ("conversion") keeps the bare conversion id (what Meta got before
 * stages existed, so an event sent then still deduplicates); a stage adds its key ("<id>:stage:deal_won").
 */
export function outcomeEventId(conversionId: string, key: string): string {
  return key === 'conversion' ? conversionId : `${conversionId}:${key}`;
}
