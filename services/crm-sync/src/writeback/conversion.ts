// When an outcome change is worth an offline conversion upload, and the settings both ad
// platforms share. Decided rule (the spec leaves it open):
//   - never for a contact marked spam;
//   - when the change sets sales_value to an amount above 0 (a realised sale), or sets status to
//     one of the account's conversion statuses (default: won, customer; compared case-insensitively);
//   - the value sent is the contact's sales_value when above 0, else none (the platform then uses
//     the conversion action's default value); the currency is the contact's, else the account's.
// Whether the platform's click id is present is checked per platform (google-ads.ts, meta-ads.ts).
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';

export const DEFAULT_CONVERSION_STATUSES = ['won', 'customer'] as const;

export interface SharedUploadSettings {
  conversion_statuses: string[];
  /** Currency for a value when the contact has none (ISO 4217), else null. */
  currency: string | null;
}

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
  };
}
