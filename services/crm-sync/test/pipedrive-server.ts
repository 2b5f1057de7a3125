// A local Pipedrive for tests: an HTTP server answering the calls the connector makes, in the
// shapes Pipedrive documents for API v2 (and v1 for a deal's changelog): `{success, data,
// additional_data: {next_cursor}}` lists paged by an opaque `cursor` and `limit` (at most 500),
// `updated_since`/`sort_by`/`sort_direction`, auth by the `x-api-token` header or `Authorization:
// Bearer`, error bodies `{success: false, error, error_info, data, additional_data}` (401 in v1's
// `{success, error, errorCode}` form plus error_info), and the rate-limit headers on every answer
// (x-ratelimit-limit / -remaining / -reset for the per-token burst window, x-daily-requests-left
// on writes made with an API token). Each request spends its documented token cost from a daily
// budget; a spent budget answers 429 until the next UTC midnight. It holds one company's data in
// memory, records every stage and status change of a deal (so the changelog answers), logs every
// request, and injects faults. Times come from a clock the test can freeze and move.
//
// The implementation lives in ./pipedrive/ (one module per concern: types, json, params, company,
// limits, routes-v2, changelog, server, seed); this file re-exports its public names so importers
// (tests, e2e) keep one stable path.
export type { DealInput, DealPatch, FakePipedriveOptions, LoggedRequest, StoredDeal, StoredOrg, StoredPerson, StoredPipeline, StoredStage } from './pipedrive/types';
export { v1Time, v2Time } from './pipedrive/json';
export { FakePipedrive } from './pipedrive/server';
export { seedExampleCompany, seedGeneratedCompany, seededRandom, type ExampleCompany } from './pipedrive/seed';
