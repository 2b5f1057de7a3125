// The identify signature helpers (issue 24): the bound form's layout, and its check at the edges.
import { createHmac } from 'node:crypto';
import { checkIdentifySignature, identifySignature, unboundIdentifySignature } from './identify';

const secret = 'f0'.repeat(32);
const binding = { site: 'site_0123456789abcdef', visitor: '3f1c9a52-5b7e-4d2a-9c1e-0a7b6c5d4e3f', email: ' Ada@Example.com ' };
const EXPIRES = 1_767_229_200;
const sig = identifySignature({ secret, ...binding, expiresAt: new Date(EXPIRES * 1000 + 999) });
const check = (over: Partial<typeof binding> & { signature?: unknown; now?: number } = {}) =>
  checkIdentifySignature({ secret, ...binding, signature: sig, now: (EXPIRES - 600) * 1000, ...over });

describe('identify signatures', () => {
  it('signs v2.<expires>.<hex HMAC of "v2\\n<site>\\n<visitor>\\n<normalised email>\\n<expires>">', () => {
    const mac = createHmac('sha256', secret).update(`v2\n${binding.site}\n${binding.visitor}\nada@example.com\n${EXPIRES}`).digest('hex');
    expect(sig).toBe(`v2.${EXPIRES}.${mac}`);
  });

  it('checks out bound for its own website, visitor and email, whatever the email\'s case and spaces', () => {
    expect(check()).toBe('bound');
    expect(check({ email: 'ADA@example.COM' })).toBe('bound');
    expect(check({ signature: sig.toUpperCase().replace('V2', 'v2') })).toBe('bound');
  });

  it('refuses another visitor, website or email', () => {
    expect(check({ visitor: '00000000-5b7e-4d2a-9c1e-0a7b6c5d4e3f' })).toBe('mismatch');
    expect(check({ site: 'site_fedcba9876543210' })).toBe('mismatch');
    expect(check({ email: 'eve@example.com' })).toBe('mismatch');
  });

  it('holds the expiry edges: believed through expiry + 60 s, expired a millisecond later; at most 24 h + 60 s ahead', () => {
    expect(check({ now: (EXPIRES + 60) * 1000 })).toBe('bound');
    expect(check({ now: (EXPIRES + 60) * 1000 + 1 })).toBe('expired');
    expect(check({ now: (EXPIRES + 61) * 1000 })).toBe('expired');
    expect(check({ now: (EXPIRES - 86_460) * 1000 })).toBe('bound');
    expect(check({ now: (EXPIRES - 86_461) * 1000 })).toBe('too-far-ahead');
  });

  it('tells missing, malformed and unbound signatures apart', () => {
    expect(check({ signature: undefined })).toBe('missing');
    expect(check({ signature: '' })).toBe('missing');
    expect(check({ signature: 7 })).toBe('malformed');
    expect(check({ signature: sig.replace('v2.', 'v1.') })).toBe('malformed');
    expect(check({ visitor: 'a\nb' })).toBe('malformed');
    expect(check({ signature: unboundIdentifySignature(secret, 'ada@example.com') })).toBe('unbound');
    expect(check({ signature: unboundIdentifySignature(secret, 'eve@example.com') })).toBe('mismatch');
  });

  it('will not sign a field holding a newline (it could pose as two fields), an empty one, or a bad date', () => {
    expect(() => identifySignature({ secret, ...binding, visitor: 'a\nb', expiresAt: new Date() })).toThrow(/visitor/);
    expect(() => identifySignature({ secret, ...binding, site: '', expiresAt: new Date() })).toThrow(/site/);
    expect(() => identifySignature({ secret, ...binding, expiresAt: new Date(Number.NaN) })).toThrow(/expiresAt/);
  });
});
