// Secrets at rest (connection credentials, bot tokens): a JSON value sealed with AES-256-GCM and
// bound to the id of the row that holds it (additional authenticated data), so a sealed value
// copied onto another row does not open. The 32-byte key comes from HKDF-SHA256 over the configured
// secret, with a salt and info naming the purpose, so one operator secret gives each purpose its
// own key. Layout: version (1) | iv (12) | tag (16) | ciphertext.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value that cannot be opened (wrong key, another row, damaged bytes), or an empty key. */
export class SealError extends Error {
  override name = 'SealError';
}

export interface SealingBox<T> {
  seal(boundTo: string, value: T): Buffer;
  open(boundTo: string, sealed: Buffer): T;
}

export interface SealingPurpose {
  /** HKDF salt: names the owner, e.g. "sightline/crm-sync". */
  salt: string;
  /** HKDF info: names what is sealed, e.g. "connection credentials v1". */
  info: string;
  /** What an operator does when a value cannot be opened, e.g. "add the connection again". */
  remedy: string;
  /** The setting that holds the secret, named when the key seems to have changed. */
  setting: string;
}

/** A box keyed by `secret` (any non-empty string; its entropy is what protects the values). */
export function sealingBox<T>(secret: string, purpose: SealingPurpose): SealingBox<T> {
  if (secret.length === 0) throw new SealError('the sealing key is empty');
  const key = Buffer.from(hkdfSync('sha256', secret, purpose.salt, purpose.info, 32));
  return {
    seal(boundTo, value) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(boundTo));
      const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
      return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
    },
    open(boundTo, sealed) {
      if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== VERSION) {
        throw new SealError(`the stored secret is missing or in an unknown format; ${purpose.remedy}`);
      }
      const iv = sealed.subarray(1, 1 + IV_BYTES);
      const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAAD(Buffer.from(boundTo));
      decipher.setAuthTag(tag);
      let text: string;
      try {
        text = Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new SealError(`the stored secret cannot be opened with the configured key (was ${purpose.setting} changed?); ${purpose.remedy}`);
      }
      return JSON.parse(text) as T;
    },
  };
}
