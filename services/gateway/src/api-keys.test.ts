import { generateApiKey, parseApiKey, secretMatches } from './api-keys';

describe('api keys', () => {
  it('round-trips: a generated key parses and its secret matches the stored hash', () => {
    const key = generateApiKey();
    expect(key.plaintext.startsWith('sl_')).toBe(true);
    const parsed = parseApiKey(key.plaintext);
    expect(parsed?.keyId).toBe(key.keyId);
    expect(secretMatches(parsed!.secret, key.secretSha256)).toBe(true);
  });

  it('never stores the plaintext: the hash differs from the secret', () => {
    const key = generateApiKey();
    expect(key.secretSha256.toString('hex')).not.toContain(parseApiKey(key.plaintext)!.secret);
  });

  it('rejects malformed keys and wrong secrets', () => {
    expect(parseApiKey('sl_short_abc')).toBeNull();
    expect(parseApiKey('Bearer sl_x')).toBeNull();
    const a = generateApiKey();
    const b = generateApiKey();
    expect(secretMatches(parseApiKey(b.plaintext)!.secret, a.secretSha256)).toBe(false);
  });
});
