// Sealed credentials: they open only with the same key and on the same connection, and the
// stored bytes never hold the secret in the clear.
import { credentialsBox } from './credentials';

describe('credentials box', () => {
  const id = '3f1c9a52-5b7e-4d2a-9c1e-0a7b6c5d4e3f';
  const secret = { access_token: 'pat-na1-11111111-2222-3333-4444-555555555555' };

  it('seals and opens', () => {
    const box = credentialsBox('a key of some length');
    const sealed = box.seal(id, secret);
    expect(sealed.toString('latin1')).not.toContain(secret.access_token);
    expect(box.open(id, sealed)).toEqual(secret);
    // A fresh IV each time: the same credentials never seal to the same bytes.
    expect(box.seal(id, secret).equals(sealed)).toBe(false);
  });

  it('refuses another key, another connection, tampering and empty values', () => {
    const sealed = credentialsBox('key one').seal(id, secret);
    expect(() => credentialsBox('key two').open(id, sealed)).toThrow(/cannot be opened/);
    expect(() => credentialsBox('key one').open('00000000-0000-4000-8000-000000000000', sealed)).toThrow(/cannot be opened/);
    const tampered = Buffer.from(sealed);
    const last = tampered.length - 1;
    tampered.writeUInt8(tampered.readUInt8(last) ^ 1, last);
    expect(() => credentialsBox('key one').open(id, tampered)).toThrow(/cannot be opened/);
    expect(() => credentialsBox('key one').open(id, Buffer.alloc(0))).toThrow(/add the connection again/);
    expect(() => credentialsBox('')).toThrow(/empty/);
  });
});
