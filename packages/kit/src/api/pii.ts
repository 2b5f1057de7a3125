// Personal data shown to keys without `pii:read`: enough shape to recognise a record (email domain,
// phone country prefix and last digits, name initials), never the value itself. Every read that
// returns emails, phones or names masks them with these, so the rule is one rule.

export const PII_SCOPE = 'pii:read';

/** meta.pii_note of a masked answer; `what` names the fields, e.g. "Email, phone and name". */
export function piiNote(what: string, alsoFor?: string): string {
  return `${what} are masked because this API key lacks the pii:read scope; the email domain is kept. Use a key with pii:read to see them in full${alsoFor ? ` or ${alsoFor}` : ''}.`;
}

export function hasPii(scopes: readonly string[]): boolean {
  return scopes.includes(PII_SCOPE);
}

/** `ada@example.com` → `a***@example.com`; anything without a local part → `***`. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${email.charAt(0)}***${email.slice(at)}`;
}

/** `+441234567858` → `+44*******58`: country prefix and the last two digits stay. */
export function maskPhone(phone: string): string {
  const compact = phone.replace(/[\s().-]/g, '');
  if (compact.length < 7) return '***';
  const head = compact.startsWith('+') ? compact.slice(0, 3) : compact.slice(0, 2);
  return `${head}${'*'.repeat(compact.length - head.length - 2)}${compact.slice(-2)}`;
}

/** `Ada Lovelace` → `A. L.` */
export function maskName(name: string): string {
  const initials = name
    .trim()
    .split(/\s+/)
    .filter((part) => part !== '')
    .map((part) => `${Array.from(part)[0]?.toUpperCase() ?? ''}.`);
  return initials.length > 0 ? initials.join(' ') : '***';
}

export interface PersonalFields {
  email: string | null;
  phone: string | null;
  name: string | null;
}

export function maskPersonal<T extends PersonalFields>(row: T): T {
  return {
    ...row,
    email: row.email === null ? null : maskEmail(row.email),
    phone: row.phone === null ? null : maskPhone(row.phone),
    name: row.name === null ? null : maskName(row.name),
  };
}
