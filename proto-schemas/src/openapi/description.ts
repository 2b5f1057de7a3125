// info.description: conventions and every decision taken where API-SPEC.md is silent.
import { ATTRIBUTION_MODELS } from '../registry/attribution';
import { JOURNEY_DAYS, MAX_WINDOW_DAYS } from '../registry/limits';
import { PLANS } from '../registry/plans';

const fmt = (n: number | null): string => (n === null ? 'unlimited' : n.toLocaleString('en-US'));

const planLines = PLANS.map((p) => `| ${p.name} | ${fmt(p.requests_per_minute)} | ${fmt(p.monthly_quota)} |`).join('\n');
const modelLines = ATTRIBUTION_MODELS.map((m) => `- \`${m.name}\`: ${m.description}`).join('\n');

export const API_DESCRIPTION = `Sightline: self-hostable attribution analytics. Every request carries \`Authorization: Bearer <API_KEY>\`.

## Paths
The \`/v1\` paths listed here are canonical. The same path without the \`/v1\` prefix is equivalent (\`/metrics\` = \`/v1/metrics\`). Legacy aliases \`/conversions\` → \`/contacts\` and \`/accounts\` → \`/companies\` return identical responses; they are listed as deprecated operations whose operationId ends in \`Legacy\`.

## Errors
Errors are \`application/problem+json\`; \`type\` ends in the kind and \`instance\` equals the \`Sightline-Request-Id\` header. A value outside a fixed set is rejected with \`allowed\`; each parameter's \`x-sightline-error-kind\` names the kind. 429 and 503 carry \`Retry-After\`; retry those and 5xx unchanged after the delay, never other 4xx. Each error response lists the kinds its status can carry in \`x-sightline-problem-kinds\`; a kind not listed there is a defect of the server.
- An operation answered by another service over the bus is 503 service-unavailable when that service does not reply in time, or at once when no instance of it is running (retry after \`Retry-After\`). Validation comes first, so a malformed request is 400 even while the service is down. Every service is part of every installation, so no operation answers 501; during a rolling upgrade an older instance may answer a method it does not serve yet with 501 not-implemented (retry once the upgrade has finished).

## Limits
Every response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`. Requests per minute and per calendar month (UTC), per workspace across all its keys:

| plan | per minute | per month |
|---|---|---|
${planLines}

At most 4 analytics queries (operations with \`x-sightline-analytics: true\`) run at once per workspace; one more is 429 too-many-concurrent. A \`limit\` above its maximum is answered with the maximum (\`x-sightline-clamp: true\`), not refused: apply the clamp before validating against \`maximum\`.

## Input
- Bodies are read as sent: no type is converted (\`{"notes": 12345}\` is 400 naming the field and its type; \`null\` clears a nullable field). Query strings become numbers or booleans only where a parameter is typed so; a number is written in JSON's syntax (\`50\`, \`1e3\`), and one above a clamped maximum is answered with the maximum however it is written.
- Every string (query, path, body, property names included) must be valid Unicode without NUL characters: a NUL or a lone UTF-16 surrogate is 400 (a path id that cannot exist is 404). Dates are RFC 3339 date-times with a zone, from 2000-01-01T00:00:00Z (where attribution history starts) up to 2099-12-31T23:59:59.999Z, seconds 00-59; a \`period\` may reach back to 1971 (there is no data before 2000). JSON bodies nest at most 32 levels, hold at most 100,000 values (objects, arrays, strings, numbers, booleans and nulls, each counted once) and are at most 2 MB decompressed (gzip, deflate and br are read): past a limit the request is 400 invalid-request (413 for the size) whose remediation names it. Inside POST /events an event is checked on its own: one nested too deep (properties at most 15 levels) is rejected with its index in \`errors\` and the rest are accepted. Header parameters are checked against their schema like the others (an \`Idempotency-Key\` over 255 characters is 400).
- A PATCH carries only the fields being changed: a field left out keeps its value. PATCH bodies therefore declare no \`default\`: the defaults of a create never apply to a PATCH.
- The key, the rate limit and the scope are checked before a body is read: a refused request costs no body. Refusals before routing (unknown path, bad percent-encoding, oversize headers: 431 headers-too-large) are problem documents with the RateLimit headers too.

## Decisions where the spec is silent
- Analytics windows span at most ${MAX_WINDOW_DAYS} days; longer is 400 window-too-large. Journey \`days\` above ${JOURNEY_DAYS.maximum} is also window-too-large. With no period and no from/to the window is the last 30 days.
- \`granularity\` other than \`day\` is 400 invalid-request with \`allowed: ["day"]\`.
- An invalid, edited or foreign cursor is 400 invalid-request; the remediation says to restart paging without a cursor.
- GET /deals, /pipelines and /companies with no CRM connected: 409 crm-not-connected.
- PATCH /contacts/{id} with a computed field in the body: 400 invalid-request listing the writable fields.
- Automations enforce automations:read for reads and automations:write for writes; new keys hold both.
- A new automation starts active. POST /events accepts an event with no email, phone or anonymous_id and credits it to Unattributed.
- The browser tracker's \`POST /collect\` (not part of this API; see the tracker README) times hits by the server clock and believes an identify only with the website backend's signature, bound to the website, the visitor's anonymous id and an expiry at most a day ahead. History is sent here, with POST /events and historical \`occurred_at\` values, or as a tracker replay with an API key.
- Idempotency keys are remembered for 24 hours, per API key: another key reusing the same Idempotency-Key makes its own request, and a replayed answer is masked for the replaying key's scopes.

## Attribution models
Lookback 90 days by default. A conversion with no touch is credited to \`Unattributed\`.
${modelLines}

## Vendor extensions (read by the gateway)
- \`x-sightline-service\`: the owning service; \`x-sightline-rpc\`: the bus RPC method (\`<service>.<operationId>\`), null when the gateway answers itself.
- \`x-sightline-scope\`: required scope, null for any valid key. On a parameter: a scope needed only when it is sent.
- \`x-sightline-website\`: the operation takes \`website\`. \`x-sightline-analytics\`: counts toward the concurrent-query cap.
- \`x-sightline-error-kind\`, \`x-sightline-clamp\`, \`x-sightline-filter\` on parameters; \`x-sightline-problem-kinds\` on error responses; \`x-sightline-canonical-operation\` on legacy aliases; \`x-sightline-checked-per-item\` on a body array whose items the owning service checks one by one (a bad item is reported in the answer, not refused with the request).
`;
