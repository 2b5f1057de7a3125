// Connection credentials at rest: sealed with the kit's sealing box (AES-256-GCM, bound to the
// connection's id). The key comes from options.credentialsKey, or from the runtime's cursor secret
// when no key is configured (README "Credentials"). The salt and info are crm-sync's own, so
// credentials sealed before the box moved to the kit still open.
import { SealError, sealingBox } from '@sightline/kit';
import type { Credentials } from '../connectors/connector';

export { SealError as CredentialsError };

export interface CredentialsBox {
  seal(connectionId: string, credentials: Credentials): Buffer;
  open(connectionId: string, sealed: Buffer): Credentials;
}

/** A box keyed by `secret` (any non-empty string; its entropy is what protects the credentials). */
export function credentialsBox(secret: string): CredentialsBox {
  return sealingBox<Credentials>(secret, {
    salt: 'sightline/crm-sync',
    info: 'connection credentials v1',
    remedy: 'add the connection again',
    setting: 'SIGHTLINE_CREDENTIALS_KEY',
  });
}

/** The module's box: keyed by options.credentialsKey, else by the runtime's cursor secret. */
export function moduleCredentialsBox(options: { credentialsKey?: string }, cursorSecret: string): CredentialsBox {
  return credentialsBox(options.credentialsKey ?? cursorSecret);
}
