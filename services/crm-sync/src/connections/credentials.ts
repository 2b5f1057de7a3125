// Connection credentials at rest: JSON sealed with AES-256-GCM, bound to the connection's id (as
// additional authenticated data, so a sealed value copied onto another row does not open). The
// 32-byte key comes from HKDF-SHA256 over options.credentialsKey, or over the runtime's cursor
// secret when no key is configured (README "Credentials"). Layout: version (1) | iv (12) | tag (16) | ciphertext.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Credentials } from '../connectors/connector';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class CredentialsError extends Error {
  override name = 'CredentialsError';
}

export interface CredentialsBox {
  seal(connectionId: string, credentials: Credentials): Buffer;
  open(connectionId: string, sealed: Buffer): Credentials;
}

/** A box keyed by `secret` (any non-empty string; its entropy is what protects the credentials). */
export function credentialsBox(secret: string): CredentialsBox {
  if (secret.length === 0) throw new CredentialsError('the credentials key is empty');
  const key = Buffer.from(hkdfSync('sha256', secret, 'sightline/crm-sync', 'connection credentials v1', 32));
  return {
    seal(connectionId, credentials) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(connectionId));
      const body = Buffer.concat([cipher.update(JSON.stringify(credentials), 'utf8'), cipher.final()]);
      return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
    },
    open(connectionId, sealed) {
      if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== VERSION) {
        throw new CredentialsError('the stored credentials are missing or in an unknown format; add the connection again');
      }
      const iv = sealed.subarray(1, 1 + IV_BYTES);
      const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAAD(Buffer.from(connectionId));
      decipher.setAuthTag(tag);
      let text: string;
      try {
        text = Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new CredentialsError('the stored credentials cannot be opened with the configured key (was SIGHTLINE_CREDENTIALS_KEY changed?); add the connection again');
      }
      return JSON.parse(text) as Credentials;
    },
  };
}

/** The module's box: keyed by options.credentialsKey, else by the runtime's cursor secret. */
export function moduleCredentialsBox(options: { credentialsKey?: string }, cursorSecret: string): CredentialsBox {
  return credentialsBox(options.credentialsKey ?? cursorSecret);
}
