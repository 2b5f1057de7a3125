// The three operations the gateway answers from its own data: /me, /websites, /schema. Their shapes
// are the OpenAPI document's (Identity, Website, SchemaDocument); the contract test holds them to it.
import { PLANS, schemaDocument } from '@sightline/proto-schemas';
import type { Website } from './accounts.repo';
import type { LocalHandlers } from './api.routes';
import { CONCURRENT_ANALYTICS_QUERIES, planLimits } from './limits';

export function localHandlers(): LocalHandlers {
  const schema = schemaDocument();
  return {
    'GET /v1/me': async ({ auth }) => {
      const limits = planLimits(auth.key.plan);
      const plan = PLANS.find((p) => p.name === auth.key.plan);
      return {
        status: 200,
        body: {
          data: {
            key: { id: auth.key.id, name: auth.key.name, scopes: auth.key.scopes, created_at: isoTime(auth.key.created_at) },
            workspace: { id: auth.workspace.id, name: auth.workspace.name, timezone: auth.workspace.timezone, currency: auth.workspace.currency },
            plan: {
              name: auth.key.plan,
              requests_per_minute: limits.requestsPerMinute,
              monthly_quota: limits.monthlyQuota,
              concurrent_analytics_queries: plan?.concurrent_analytics_queries ?? CONCURRENT_ANALYTICS_QUERIES,
            },
            websites: auth.websites.map(publicWebsite),
          },
        },
      };
    },
    'GET /v1/websites': async ({ auth }) => ({
      status: 200,
      body: { data: auth.websites.map(publicWebsite), meta: { row_count: auth.websites.length } },
    }),
    'GET /v1/schema': async () => ({ status: 200, body: schema }),
  };
}

function publicWebsite(website: Website) {
  return { id: website.id, domain: website.domain, timezone: website.timezone, currency: website.currency, public_id: website.public_id };
}

/** The stores hand back a Date or a string depending on the driver; the API speaks RFC 3339. */
function isoTime(value: string | Date): string {
  return new Date(value).toISOString();
}
