// Per-server state the route modules (oauth, rest, bulk, server) share: what used to be the
// locals of one startSalesforceServer closure, held in one object so the modules can be split.
import type { IncomingMessage } from 'node:http';
import type { SalesforceOrg } from './org';
import type { CompiledQuery, Projection } from './soql-eval';
import type { RefreshTokenGrant, SObjectName, SalesforceServerOptions } from './types';
import type { Row } from './values';

export interface Session {
  username: string;
  issuedAt: number;
  revoked: boolean;
}

export interface Cursor {
  rows: Row[];
  pageSize: number;
  projection: Projection;
  resource: string;
  lastUsed: number;
}

export interface BulkJob {
  id: string;
  operation: 'query' | 'queryAll';
  object: SObjectName;
  query: CompiledQuery;
  createdDate: number;
  systemModstamp: number;
  polls: number;
  state: 'UploadComplete' | 'InProgress' | 'JobComplete' | 'Aborted';
  rows?: Row[];
  apiVersion: number;
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A routed data call's answer: [status, body, extra headers]. */
export type RouteAnswer = [number, unknown, Record<string, string>?];

export interface ServerContext {
  options: SalesforceServerOptions;
  org: SalesforceOrg;
  clientIds: Set<string>;
  usernames: Set<string>;
  sessions: Map<string, Session>;
  refresh: Map<string, RefreshTokenGrant & { revoked: boolean }>;
  cursors: Map<string, Cursor>;
  jobs: Map<string, BulkJob>;
  batchSize: number;
  sessionMs: number;
  retentionMs: number;
  cursorIdleMs: number;
  /** Set once the server listens; token answers name it. */
  url: string;
  /** Sforce-Limit-Info's used/max, mutable (resetAllocation, each counted call). */
  used: number;
  max: number;
  now(): number;
  userId(username: string): string;
  opaque(prefix: string): string;
}
