// API key format: `sl_<key id>_<secret>`. The prefix makes a leaked key recognisable to secret
// scanners; the key id is public (it appears in change-feed sources as `api:<key_id>`); only a
// SHA-256 of the 192-bit secret is stored. A fast hash is enough for a random secret of that size.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const KEY_PATTERN = /^sl_([a-z0-9]{12})_([a-f0-9]{48})$/;
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface NewApiKey {
  keyId: string;
  plaintext: string;
  secretSha256: Buffer;
}

export function generateApiKey(): NewApiKey {
  const idBytes = randomBytes(12);
  const keyId = Array.from(idBytes, (b) => ID_ALPHABET[b % ID_ALPHABET.length]).join('');
  const secret = randomBytes(24).toString('hex');
  return { keyId, plaintext: `sl_${keyId}_${secret}`, secretSha256: sha256(secret) };
}

export function parseApiKey(value: string): { keyId: string; secret: string } | null {
  const match = KEY_PATTERN.exec(value);
  return match ? { keyId: match[1] as string, secret: match[2] as string } : null;
}

export function secretMatches(secret: string, storedSha256: Buffer): boolean {
  const given = sha256(secret);
  return given.length === storedSha256.length && timingSafeEqual(given, storedSha256);
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
