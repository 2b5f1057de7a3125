// Identifiers that leave Sightline for an ad platform: normalised exactly as each platform documents,
// then SHA-256 hashed and hex-encoded (lower case). Nothing here sends anything; callers decide.
//
// What each platform documents (read 2026-11):
//   - Google (Data Manager API, "Format user data"; same for enhanced conversions for leads):
//     email: remove all whitespace, lower-case; for gmail.com / googlemail.com also remove every "."
//     in the local part and drop a "+" and everything after it in the local part (other domains keep
//     dots and "+"). Example: "cloudy.sanfrancisco+shopping@gmail.com" → "cloudysanfrancisco@gmail.com",
//     "user.name+NYC@Example.com" → "user.name+nyc@example.com".
//     phone: E.164 with the "+" and the country code: "(800)555-0100" (US) → "+18005550100".
//   - Meta (Conversions API, customer information parameters `em`, `ph`): email trimmed and
//     lower-cased; phone digits only, with the country code, no "+", no leading zeros:
//     "+1 (616) 954-78 88" → "16169547888".
//   - LinkedIn (Conversions API, userIds `SHA256_EMAIL`): email trimmed and lower-cased. LinkedIn
//     takes no phone identifier; a phone is never sent there.
// A phone is parsed with libphonenumber-js (MIT) with the website's country as default region when
// known; a number that does not parse to a valid number is refused (null), never guessed.
import { createHash } from 'node:crypto';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';

export type IdentifierPlatform = 'google_ads' | 'meta_ads' | 'linkedin_ads';

const GOOGLE_MAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

/** SHA-256 of the UTF-8 text, hex-encoded in lower case (Google's encoding "HEX"; Meta's and LinkedIn's only form). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The email as the platform wants it before hashing, or null when it is not an address (one "@", both sides non-empty). */
export function normaliseEmail(email: string | null | undefined, platform: IdentifierPlatform): string | null {
  if (typeof email !== 'string') return null;
  const text = email.replace(/\s+/g, '').toLowerCase();
  const at = text.lastIndexOf('@');
  if (at <= 0 || at === text.length - 1 || text.indexOf('@') !== at) return null;
  let local = text.slice(0, at);
  const domain = text.slice(at + 1);
  if (platform === 'google_ads' && GOOGLE_MAIL_DOMAINS.has(domain)) {
    const plus = local.indexOf('+');
    if (plus >= 0) local = local.slice(0, plus);
    local = local.replace(/\./g, '');
    if (local === '') return null;
  }
  return `${local}@${domain}`;
}

/** A two-letter ISO 3166 country code libphonenumber knows, upper-cased; else undefined. */
function region(country: string | null | undefined): CountryCode | undefined {
  if (typeof country !== 'string' || !/^[A-Za-z]{2}$/.test(country.trim())) return undefined;
  return country.trim().toUpperCase() as CountryCode;
}

/**
 * The phone in E.164 ("+" then country code and number, digits only), or null when it does not parse
 * to a valid number. A number without "+" / international prefix needs `defaultCountry` (ISO 3166
 * alpha-2, e.g. the website's country); without it such a number is refused.
 */
export function normalisePhone(phone: string | null | undefined, defaultCountry?: string | null): string | null {
  if (typeof phone !== 'string' || phone.trim() === '') return null;
  let parsed;
  try {
    parsed = parsePhoneNumberFromString(phone.trim(), region(defaultCountry));
  } catch {
    return null;
  }
  if (!parsed || !parsed.isValid()) return null;
  return parsed.number;
}

/** The phone as the platform wants it before hashing: Google "+CCNNN…", Meta "CCNNN…"; LinkedIn none. */
export function platformPhone(phone: string | null | undefined, platform: IdentifierPlatform, defaultCountry?: string | null): string | null {
  if (platform === 'linkedin_ads') return null;
  const e164 = normalisePhone(phone, defaultCountry);
  if (e164 === null) return null;
  return platform === 'meta_ads' ? e164.slice(1) : e164;
}

export interface ContactIdentifiers {
  email?: string | null;
  phone?: string | null;
}

export interface HashedUserIds {
  /** SHA-256 hex of the normalised email, or null when there is none (or it is not an address). */
  email: string | null;
  /** SHA-256 hex of the normalised phone, or null (none, unparseable, or a platform without phone matching). */
  phone: string | null;
}

/** Normalised, then hashed identifiers for one platform; either may be null. */
export function hashedUserIds(platform: IdentifierPlatform, contact: ContactIdentifiers, defaultCountry?: string | null): HashedUserIds {
  const email = normaliseEmail(contact.email, platform);
  const phone = platformPhone(contact.phone, platform, defaultCountry);
  return { email: email === null ? null : sha256Hex(email), phone: phone === null ? null : sha256Hex(phone) };
}

/** True when the platform would get at least one identifier. */
export function hasUserIds(ids: HashedUserIds): boolean {
  return ids.email !== null || ids.phone !== null;
}
