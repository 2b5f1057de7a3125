// What a CRM connector is: a provider's API behind two calls. pull yields pages of provider-neutral
// records, each with the cursor to resume after it; push writes one outcome back to the provider's
// record. Connectors know nothing of the mirror, the bus or the schedule.
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import type { CrmRecords } from '../records';

/** Decrypted connection credentials, as the provider needs them (e.g. { access_token }). */
export type Credentials = Record<string, string>;

export interface PullContext {
  credentials: Credentials;
  /** Resume point of an interrupted sync (the cursor of the last applied page), or null to start over. */
  cursor: string | null;
  /** Incremental: only records modified at or after this instant; null for a full sync. */
  since: string | null;
  signal: AbortSignal;
}

export interface PullPage {
  records: CrmRecords;
  /** Resume point after this page; null once the pull is complete. */
  cursor: string | null;
}

export interface PushResult {
  /** The provider's id of the record written. */
  crm_id: string;
  /** What was written, for the write-back status. */
  fields: Record<string, string | number | boolean | null>;
}

/** Which provider record a push writes, when the caller already knows it (e.g. from the mirror). */
export interface PushTarget {
  /** The provider's contact id; when absent the connector finds the contact by the request's email. */
  crm_id?: string | null;
}

export interface Connector {
  readonly provider: string;
  pull(ctx: PullContext): AsyncIterable<PullPage>;
  /** Writes the outcome onto the provider's record of the contact; throws ProviderError on failure. */
  push(credentials: Credentials, request: OutcomeWritebackRequestedV1, signal: AbortSignal, target?: PushTarget): Promise<PushResult>;
  /** Checks credentials before they are stored: a description of what is wrong, or null when usable. */
  validateCredentials?(credentials: Credentials): string | null;
}

/** A provider call that failed; retryable ones (429, 5xx, network) carry the delay the provider asked for. */
export class ProviderError extends Error {
  override name = 'ProviderError';
  constructor(message: string, readonly status: number | null, readonly retryable: boolean, readonly retryAfterMs: number | null = null) {
    super(message);
  }
}
