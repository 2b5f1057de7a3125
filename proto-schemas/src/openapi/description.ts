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
Errors are \`application/problem+json\`; \`type\` ends in the kind and \`instance\` equals the \`Sightline-Request-Id\` header. A value outside a fixed set is rejected with \`allowed\`; each parameter's \`x-sightline-error-kind\` names the kind. 429 and 503 carry \`Retry-After\`; retry those and 5xx unchanged after the delay, never other 4xx.

## Limits
Every response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`. Requests per minute and per calendar month (UTC), per workspace across all its keys:

| plan | per minute | per month |
|---|---|---|
${planLines}

At most 4 analytics queries (operations with \`x-sightline-analytics: true\`) run at once per workspace; one more is 429 too-many-concurrent. A \`limit\` above its maximum is answered with the maximum (\`x-sightline-clamp: true\`), not refused: apply the clamp before validating against \`maximum\`.

## Decisions where the spec is silent
- Analytics windows span at most ${MAX_WINDOW_DAYS} days; longer is 400 window-too-large. Journey \`days\` above ${JOURNEY_DAYS.maximum} is also window-too-large. With no period and no from/to the window is the last 30 days.
- \`granularity\` other than \`day\` is 400 invalid-request with \`allowed: ["day"]\`.
- An invalid, edited or foreign cursor is 400 invalid-request; the remediation says to restart paging without a cursor.
- GET /deals, /pipelines and /companies with no CRM connected: 409 crm-not-connected.
- PATCH /contacts/{id} with a computed field in the body: 400 invalid-request listing the writable fields.
- Automations enforce automations:read for reads and automations:write for writes; new keys hold both.
- A new automation starts active. POST /events accepts an event with no email, phone or anonymous_id and credits it to Unattributed.
- Idempotency keys are remembered for 24 hours.

## Attribution models
Lookback 90 days by default. A conversion with no touch is credited to \`Unattributed\`.
${modelLines}

## Vendor extensions (read by the gateway)
- \`x-sightline-service\`: the owning service; \`x-sightline-rpc\`: the bus RPC method (\`<service>.<operationId>\`), null when the gateway answers itself.
- \`x-sightline-scope\`: required scope, null for any valid key. On a parameter: a scope needed only when it is sent.
- \`x-sightline-website\`: the operation takes \`website\`. \`x-sightline-analytics\`: counts toward the concurrent-query cap.
- \`x-sightline-error-kind\`, \`x-sightline-clamp\`, \`x-sightline-filter\` on parameters; \`x-sightline-problem-kinds\` on error responses; \`x-sightline-canonical-operation\` on legacy aliases.
`;
