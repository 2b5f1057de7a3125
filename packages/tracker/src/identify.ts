// Identity verification for identify(): the website's backend, which knows who is signed in, signs
// the website, the visitor's anonymous id, the email and an expiry with the website's identify secret;
// the collect endpoint believes an identify only with a matching, unexpired signature for that website
// and that visitor. As Intercom's identity verification, the secret never reaches the browser; binding
// the visitor and an expiry (issue 24) means a signature seen once (in a page, a log, a shared link)
// cannot glue another browser to the person, nor be replayed forever.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Allowed difference between the website backend's clock and the gateway's, either way. */
export const IDENTIFY_CLOCK_SKEW_SECONDS = 60;
/** Furthest ahead of the gateway's clock (plus the skew) an expiry may be: a signature's longest life. */
export const IDENTIFY_MAX_LIFETIME_SECONDS = 86_400;

/** What a signature binds. */
export interface IdentifyBinding {
  /** The website's public id: the script tag's `data-site`, sent as `site` on /collect. */
  site: string;
  /** The visitor's anonymous id: the `_sl_aid` cookie, or `sightline('visitor')` in the page. */
  visitor: string;
  /** The email as identify() is called with it; signed in its normalised form. */
  email: string;
}

export interface IdentifySignatureInput extends IdentifyBinding {
  /** The website's identify secret. */
  secret: string;
  /** When the signature stops being believed (whole seconds); at most 24 h ahead. */
  expiresAt: Date;
}

/**
 * How a signature checks out: `bound` (v2, believed), `unbound` (the old v1 form, right for the email;
 * believed only where the operator allows it), or why it is refused.
 */
export type IdentifySignatureCheck = 'bound' | 'unbound' | 'missing' | 'malformed' | 'expired' | 'too-far-ahead' | 'mismatch';

const BOUND = /^v2\.(\d{1,12})\.([0-9a-fA-F]{64})$/;
const UNBOUND = /^[0-9a-fA-F]{64}$/;
// The signed fields are joined by newlines, so a field holding one could pose as two.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The email as it is signed and matched: trimmed and lower-cased. */
export function identifyEmailForm(email: string): string {
  return email.trim().toLowerCase();
}

function boundMac(secret: string, binding: IdentifyBinding, expires: number): Buffer {
  const message = `v2\n${binding.site}\n${binding.visitor}\n${identifyEmailForm(binding.email)}\n${expires}`;
  return createHmac('sha256', secret).update(message, 'utf8').digest();
}

/**
 * The identify signature, `v2.<expires unix seconds>.<hex HMAC-SHA256(secret,
 * "v2\n<site>\n<visitor>\n<normalised email>\n<expires>")>`, for the website's backend to hand its page.
 */
export function identifySignature(input: IdentifySignatureInput): string {
  const expires = Math.floor(input.expiresAt.getTime() / 1000);
  if (!Number.isSafeInteger(expires) || expires < 0) throw new RangeError('identifySignature: expiresAt is not a valid date');
  for (const field of ['site', 'visitor', 'email'] as const) {
    if (typeof input[field] !== 'string' || input[field] === '' || CONTROL.test(input[field])) throw new RangeError(`identifySignature: ${field} must be non-empty text without control characters`);
  }
  return `v2.${expires}.${boundMac(input.secret, input, expires).toString('hex')}`;
}

/** The old v1 form, hex HMAC-SHA256 of the normalised email alone: for migrations and tests only. */
export function unboundIdentifySignature(secret: string, email: string): string {
  return createHmac('sha256', secret).update(identifyEmailForm(email), 'utf8').digest('hex');
}

/** Checks `signature` for an identify of `email` by `visitor` on `site`, at `now` (epoch ms); MACs compared in constant time. */
export function checkIdentifySignature(input: IdentifyBinding & { secret: string; signature: unknown; now: number }): IdentifySignatureCheck {
  const { signature, secret, now } = input;
  if (signature === undefined || signature === null || signature === '') return 'missing';
  if (typeof signature !== 'string') return 'malformed';
  if (UNBOUND.test(signature)) {
    return equal(unboundIdentifySignature(secret, input.email), signature) ? 'unbound' : 'mismatch';
  }
  const parts = BOUND.exec(signature);
  if (!parts || [input.site, input.visitor, input.email].some((field) => typeof field !== 'string' || field === '' || CONTROL.test(field))) return 'malformed';
  const expires = Number(parts[1]);
  if (now > (expires + IDENTIFY_CLOCK_SKEW_SECONDS) * 1000) return 'expired';
  if (expires * 1000 > now + (IDENTIFY_MAX_LIFETIME_SECONDS + IDENTIFY_CLOCK_SKEW_SECONDS) * 1000) return 'too-far-ahead';
  return timingSafeEqual(boundMac(secret, input, expires), Buffer.from(parts[2]!, 'hex')) ? 'bound' : 'mismatch';
}

function equal(expectedHex: string, givenHex: string): boolean {
  return timingSafeEqual(Buffer.from(expectedHex, 'hex'), Buffer.from(givenHex, 'hex'));
}
