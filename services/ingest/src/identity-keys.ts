// Normalising and hashing the identity keys an event carries.
import { createHash } from 'node:crypto';
import { parsePhoneNumberFromString } from 'libphonenumber-js';

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** SHA-256 hex of the normalised value: the lookup key, and the form ad platforms match on. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** E.164, or null when the number cannot be read as an international number. */
export function normalisePhone(phone: string): string | null {
  const parsed = parsePhoneNumberFromString(phone.trim());
  return parsed && parsed.isValid() ? parsed.number : null;
}

/** A UUID derived from its parts: the same parts always give the same id (retries deduplicate). */
export function derivedUuid(...parts: string[]): string {
  const hex = createHash('sha256').update(parts.join('\u001f')).digest('hex');
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
