// The stand-in's public types (what tests pass in and get back), kept apart so every module
// can name them without pulling in the org or the server.
import type { SalesforceOrg } from './org';

export type SObjectName =
  | 'Lead'
  | 'Contact'
  | 'Account'
  | 'Opportunity'
  | 'OpportunityContactRole'
  | 'OpportunityHistory'
  | 'OpportunityStage'
  | 'RecordType';

/** Kinds a test may give a custom field (declareField / options.customFields). */
export type CustomFieldKind = 'string' | 'textarea' | 'email' | 'url' | 'picklist' | 'boolean' | 'double' | 'number' | 'currency' | 'percent' | 'int' | 'date' | 'datetime' | 'reference';

/** A value as a test passes it in: datetimes may be Date, ISO string or epoch ms; dates 'YYYY-MM-DD'. */
export type FieldInput = string | number | boolean | Date | null;

/** A record as the org hands it back to tests: datetimes as Salesforce's JSON form (…000+0000). */
export type SalesforceRecord = Record<string, string | number | boolean | null>;

export interface SalesforceOrgOptions {
  /** The org clock; every write without an explicit `at` is stamped with it. */
  now?: () => Date;
  /** 18-character org id (00D…), used in token ids and access tokens. */
  orgId?: string;
}

export interface SalesforceReply {
  status: number;
  /** JSON-encoded unless a string (sent as is). */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface SalesforceCall {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
  /** A label for counting by endpoint: token, query, queryMore, queryAll, getDeleted, patchRecord, collectionsUpdate, limits, bulkCreate, bulkStatus, bulkResults, versions, unknown. */
  endpoint: string;
  /** Org clock at arrival (ms). */
  at: number;
}

export interface RefreshTokenGrant {
  token: string;
  clientId: string;
  username: string;
}

export interface SalesforceServerOptions {
  /** Public key (PEM, SPKI or certificate) of the connected app's certificate; JWT grants fail without it. */
  jwtPublicKeyPem?: string;
  /** Consumer keys (the JWT `iss`, the refresh grant's client_id) the org knows. */
  clientIds?: string[];
  /** Consumer secrets by client id; when set, a refresh grant naming a different secret fails. */
  clientSecrets?: Record<string, string>;
  /** Usernames pre-authorized for the app (the JWT `sub`). */
  usernames?: string[];
  /** The JWT audience the org expects (login URL); defaults to this server's URL. */
  loginUrl?: string;
  /** A token accepted on data calls without a grant. */
  staticToken?: string;
  /** Refresh tokens the org has issued. */
  refreshTokens?: RefreshTokenGrant[];
  /** Daily API request allocation (Sforce-Limit-Info's max); Salesforce's Enterprise base is 15,000 (plus per-licence). */
  dailyAllocation?: number;
  /** Query batch size; Salesforce's default (and max) is 2,000. */
  batchSize?: number;
  /** GET jobs/query/<id> answers InProgress this many times before JobComplete. */
  bulkPollsBeforeDone?: number;
  /** Access-token lifetime (Salesforce's session timeout); default 2 hours. */
  sessionSeconds?: number;
  /** How far back sObject Get Deleted may start; default 30 days (see README for the documented 15-day note). */
  deletedRetentionDays?: number;
  /** Query cursors idle longer than this answer INVALID_QUERY_LOCATOR; default 15 minutes. */
  cursorIdleSeconds?: number;
  /** The clock (also the org's unless `org` is given). */
  now?: () => Date;
  /** Use this org instead of a fresh empty one. */
  org?: SalesforceOrg;
  customFields?: { type: SObjectName; name: string; kind: CustomFieldKind }[];
}

export interface SalesforceServer {
  url: string;
  org: SalesforceOrg;
  calls: SalesforceCall[];
  /** API usage as Sforce-Limit-Info reports it. */
  usage(): { used: number; max: number };
  /** Starts a new 24-hour period (used = 0), optionally with a new allocation. */
  resetAllocation(max?: number): void;
  /** The next requests (any endpoint) get these answers instead, in order; 'reset' drops the connection. */
  failNext(...answers: (SalesforceReply | 'reset')[]): void;
  revokeToken(token: string): void;
  revokeRefreshToken(token: string): void;
  /** A valid access token for tests (as if a JWT grant had happened for the first username). */
  issueToken(username?: string): string;
  /** Access tokens this server issued that are still live (not revoked, not expired). */
  issuedTokens(): string[];
  /** Registers a refresh token (as if the web-server flow had issued one); returns it. */
  issueRefreshToken(clientId?: string, username?: string): string;
  close(): Promise<void>;
}
