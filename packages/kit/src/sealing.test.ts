// Sealed secrets open only with the same key, for the same purpose and on the same row, and the
// stored bytes never hold the secret in the clear.
import { SealError, sealingBox, type SealingPurpose } from './sealing';

const PURPOSE: SealingPurpose = { salt: 'sightline/test', info: 'tokens v1', remedy: 'add it again', setting: 'SIGHTLINE_CREDENTIALS_KEY' };
const ROW = '3f1c9a52-5b7e-4d2a-9c1e-0a7b6c5d4e3f';

describe('sealing box', () => {
  it('seals and opens; a fresh IV each time', () => {
    const box = sealingBox<{ token: string }>('a key of some length', PURPOSE);
    const sealed = box.seal(ROW, { token: 'xoxb-secret-token' });
    expect(sealed.toString('latin1')).not.toContain('xoxb-secret-token');
    expect(box.open(ROW, sealed)).toEqual({ token: 'xoxb-secret-token' });
    expect(box.seal(ROW, { token: 'xoxb-secret-token' }).equals(sealed)).toBe(false);
  });

  it('refuses another key, another purpose, another row, tampering and an empty key', () => {
    const sealed = sealingBox('key one', PURPOSE).seal(ROW, 'v');
    expect(() => sealingBox('key two', PURPOSE).open(ROW, sealed)).toThrow(/cannot be opened.*SIGHTLINE_CREDENTIALS_KEY.*add it again/);
    expect(() => sealingBox('key one', { ...PURPOSE, info: 'tokens v2' }).open(ROW, sealed)).toThrow(SealError);
    expect(() => sealingBox('key one', PURPOSE).open('other-row', sealed)).toThrow(SealError);
    const tampered = Buffer.from(sealed);
    tampered.writeUInt8(tampered.readUInt8(tampered.length - 1) ^ 1, tampered.length - 1);
    expect(() => sealingBox('key one', PURPOSE).open(ROW, tampered)).toThrow(SealError);
    expect(() => sealingBox('key one', PURPOSE).open(ROW, Buffer.alloc(0))).toThrow(/unknown format; add it again/);
    expect(() => sealingBox('', PURPOSE)).toThrow(/empty/);
  });
});
