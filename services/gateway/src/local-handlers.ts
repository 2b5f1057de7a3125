// The three operations the gateway answers from its own data: /me, /websites, /schema.
import { schemaDocument } from '@sightline/proto-schemas';
import type { Website } from './accounts.repo';
import type { LocalHandlers } from './api.routes';
import { CONCURRENT_ANALYTICS_QUERIES, planLimits } from './limits';

export function localHandlers(): LocalHandlers {
  const schema = schemaDocument();
  return {
    'GET /v1/me': async ({ auth }) => {
      const limits = planLimits(auth.key.plan);
      return {
        status: 200,
        body: {
          key_id: auth.key.id,
          name: auth.key.name,
          scopes: auth.key.scopes,
          plan: auth.key.plan,
          workspace: { id: auth.workspace.id, name: auth.workspace.name, timezone: auth.workspace.timezone, currency: auth.workspace.currency },
          websites: auth.websites.map(publicWebsite),
          limits: {
            requests_per_minute: limits.requestsPerMinute,
            concurrent_analytics_queries: CONCURRENT_ANALYTICS_QUERIES,
            monthly_quota: limits.monthlyQuota,
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
