// A local Salesforce for tests: one node:http server playing both the login host
// (/services/oauth2/token: JWT bearer and refresh-token grants) and the org's instance
// (/services/data/vNN.0/...: query / queryMore / queryAll, sObject Get Deleted, sObject Rows
// PATCH, sObject Collections PATCH, limits, Bulk API 2.0 query jobs), answering in the shapes the
// REST API Developer Guide and Bulk API 2.0 guide document: error bodies are arrays of
// {message, errorCode[, fields]}, every data answer carries Sforce-Limit-Info, and each data call
// counts against a daily allocation until REQUEST_LIMIT_EXCEEDED. The org is held in memory
// (SalesforceOrg) with Salesforce-style 18-character ids and an explicit clock, so the connector
// under test cannot tell it from a real org and the test controls every timestamp.
//
// SOQL is parsed by a small tokenizer + recursive-descent parser (a subset: SELECT fields /
// relationship paths / COUNT(), FROM, WHERE with AND/OR/NOT/parentheses, comparison, IN, NOT IN,
// LIKE, ORDER BY, LIMIT, OFFSET). Filters compile to closures once per query and run in one pass
// over the object's rows; a query's matched rows become a cursor, so later pages are slices.
//
// The implementation lives in ./salesforce/ (one module per concern); this file re-exports its
// public names so importers (tests, e2e, the bench) keep one stable path.
export type { CustomFieldKind, FieldInput, RefreshTokenGrant, SObjectName, SalesforceCall, SalesforceOrgOptions, SalesforceRecord, SalesforceReply, SalesforceServer, SalesforceServerOptions } from './salesforce/types';
export { SalesforceApiError } from './salesforce/errors';
export { KEY_PREFIX, idChecksum } from './salesforce/ids';
export { sfDateTime } from './salesforce/values';
export { SalesforceOrg, type OpportunityStageInfo } from './salesforce/org';
export { tokenize } from './salesforce/soql-lexer';
export { parseSoql, type SoqlAst } from './salesforce/soql-parser';
export { compileQuery, type CompiledQuery } from './salesforce/soql-eval';
export { signJwtAssertion } from './salesforce/oauth';
export { MAX_URI_CHARS, startSalesforceServer } from './salesforce/server';
export { seedOrg, type SeedOptions, type SeedResult } from './salesforce/seed';
