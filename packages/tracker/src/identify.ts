// Identity verification for identify(): the website's backend, which knows who is signed in,
// signs the email with the website's identify secret; the collect endpoint believes an identify
// only with a matching signature. The same scheme as Intercom's identity verification (an HMAC of
// the user id): the secret never reaches the browser, so a page's visitor cannot claim someone else.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The email as it is signed and matched: trimmed and lower-cased. */
export function identifyEmailForm(email: string): string {
  return email.trim().toLowerCase();
}

/** Lower-case hex HMAC-SHA256 of the normalised email, keyed by the website's identify secret. */
export function identifySignature(secret: string, email: string): string {
  return createHmac('sha256', secret).update(identifyEmailForm(email), 'utf8').digest('hex');
}

/** True when `signature` is the signature of `email`; compared in constant time. */
export function identifySignatureMatches(secret: string, email: string, signature: unknown): boolean {
  if (typeof signature !== 'string' || !/^[0-9a-fA-F]{64}$/.test(signature)) return false;
  return timingSafeEqual(Buffer.from(identifySignature(secret, email), 'hex'), Buffer.from(signature, 'hex'));
}
