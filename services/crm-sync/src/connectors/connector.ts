// What a CRM connector is: a provider's API behind two calls. pull yields pages of provider-neutral
// records, each with the cursor to resume after it; push writes one outcome back to the provider's
// record. Connectors know nothing of the mirror, the bus or the schedule.
import type { OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import type { CrmRecords } from '../records';

/** Decrypted connection credentials, as the provider needs them (e.g. { access_token }). */
export type Credentials = Record<string, string>;

/**
 * The connection's settings (operator-editable, not secret): a provider's field and stage mapping,
 * its share of an API allocation... Each connector reads and checks its own keys; {} when none.
 */
export type ConnectionSettings = Record<string, unknown>;

export interface PullContext {
  credentials: Credentials;
  settings: ConnectionSettings;
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
  /**
   * The provider asks the sync to stop here and come back later (an API allocation used up to its
   * configured share, REQUEST_LIMIT_EXCEEDED): the page is applied, its cursor kept, and the next
   * scheduled run resumes from it after `until`. Not a failure. The connector yields nothing after it.
   */
  pause?: { until: string; reason: string };
  /** The provider's API usage after this page, when it reports one (Salesforce's Sforce-Limit-Info). */
  usage?: { used: number; limit: number };
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

/** One outcome of a batch write-back, with the record the caller knows for it. */
export interface PushItem {
  request: OutcomeWritebackRequestedV1;
  target?: PushTarget;
}

/** What became of one item of a batch write-back, in the items' order. */
export type PushOutcome = { ok: true; result: PushResult } | { ok: false; error: ProviderError };

export interface Connector {
  readonly provider: string;
  pull(ctx: PullContext): AsyncIterable<PullPage>;
  /** Writes the outcome onto the provider's record of the contact; throws ProviderError on failure. */
  push(credentials: Credentials, request: OutcomeWritebackRequestedV1, signal: AbortSignal, target?: PushTarget, settings?: ConnectionSettings): Promise<PushResult>;
  /**
   * Writes many outcomes with the provider's batch call (Salesforce: sObject Collections), one
   * outcome per item in order; a throw (login refused, provider down) fails every item alike.
   * Without it, outcomes are pushed one by one.
   */
  pushMany?(credentials: Credentials, items: PushItem[], signal: AbortSignal, settings?: ConnectionSettings): Promise<PushOutcome[]>;
  /** Checks credentials before they are stored: a description of what is wrong, or null when usable. */
  validateCredentials?(credentials: Credentials): string | null;
  /** Checks settings before they are stored: a description of what is wrong, or null when usable. */
  validateSettings?(settings: ConnectionSettings): string | null;
}

/** A provider call that failed; retryable ones (429, 5xx, network) carry the delay the provider asked for. */
export class ProviderError extends Error {
  override name = 'ProviderError';
  constructor(message: string, readonly status: number | null, readonly retryable: boolean, readonly retryAfterMs: number | null = null) {
    super(message);
  }
}
