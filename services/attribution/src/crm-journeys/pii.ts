// Email masking for keys without `pii:read`, by the same rule the contacts service applies to
// contact rows: the first character and the domain stay, so a member stays recognisable.

export const PII_SCOPE = 'pii:read';

export const PII_NOTE =
  'Member emails are masked because this API key lacks the pii:read scope; the email domain is kept. Use a key with pii:read to see them in full.';

/** `ada@example.com` → `a***@example.com`; anything without a local part → `***`. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${email.charAt(0)}***${email.slice(at)}`;
}
