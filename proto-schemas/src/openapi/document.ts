// Assembles the OpenAPI 3.1 document from the path files and the registry.
import { analyticsPaths } from './paths-analytics';
import { automationPaths } from './paths-automations';
import { contactPaths, eventPaths } from './paths-contacts';
import { crmPaths } from './paths-crm';
import { funnelPaths } from './paths-funnels';
import { gatewayPaths } from './paths-gateway';
import { API_DESCRIPTION } from './description';
import { legacyAlias } from './operation';
import { withoutPatchDefaults } from './patch-bodies';
import { analyticsSchemas } from './schemas-analytics';
import { automationSchemas } from './schemas-automations';
import { commonSchemas } from './schemas-common';
import { contactSchemas } from './schemas-contacts';
import { crmSchemas } from './schemas-crm';
import { funnelSchemas } from './schemas-funnels';
import type { HttpMethod, OpenApiDocument, PathItemObject } from './types';

export const API_PREFIX = '/v1';

/** Legacy path prefix to the current one (API-SPEC "Versioning" 5). */
export const LEGACY_PATH_ALIASES: Readonly<Record<string, string>> = {
  '/conversions': '/contacts',
  '/accounts': '/companies',
};

const canonical: Record<string, PathItemObject> = {
  ...gatewayPaths,
  ...analyticsPaths,
  ...contactPaths,
  ...eventPaths,
  ...crmPaths,
  ...funnelPaths,
  ...automationPaths,
};

function legacyPaths(): Record<string, PathItemObject> {
  const out: Record<string, PathItemObject> = {};
  for (const [legacyPrefix, currentPrefix] of Object.entries(LEGACY_PATH_ALIASES)) {
    for (const [path, item] of Object.entries(canonical)) {
      if (path !== currentPrefix && !path.startsWith(`${currentPrefix}/`)) continue;
      const aliased: PathItemObject = {};
      for (const [method, op] of Object.entries(item) as [HttpMethod, NonNullable<PathItemObject[HttpMethod]>][]) {
        aliased[method] = legacyAlias(op, API_PREFIX + path);
      }
      out[legacyPrefix + path.slice(currentPrefix.length)] = aliased;
    }
  }
  return out;
}

function prefixed(paths: Record<string, PathItemObject>): Record<string, PathItemObject> {
  return Object.fromEntries(Object.entries(paths).map(([path, item]) => [API_PREFIX + path, item]));
}

const integer = (description: string) => ({ description, schema: { type: 'integer', minimum: 0 } });

export const openApiDocument: OpenApiDocument = {
  openapi: '3.1.0',
  jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
  info: {
    title: 'Sightline API',
    version: '1.0.0',
    description: API_DESCRIPTION,
    license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
  },
  servers: [{ url: '/', description: 'The Sightline gateway this document is served from.' }],
  security: [{ bearerAuth: [] }],
  tags: [
    { name: 'Key and schema', description: 'What a key can do and what the API accepts.' },
    { name: 'Analytics', description: 'Aggregate reads; subject to the concurrent-query cap.' },
    { name: 'Contacts', description: 'One row per conversion, and outcome write-back.' },
    { name: 'Journeys', description: 'Session timelines of a contact, a company or a deal.' },
    { name: 'Events', description: 'Server-side events.' },
    { name: 'CRM', description: 'Deals, pipelines and companies mirrored from a connected CRM.' },
    { name: 'Changes', description: 'The change feed clients poll instead of webhooks.' },
    { name: 'Funnels', description: 'Funnel definitions and their computed steps.' },
    { name: 'Automations', description: 'Alerts built from data and delivered by email or chat.' },
  ],
  paths: { ...prefixed(canonical), ...prefixed(legacyPaths()) },
  components: {
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key from the app\'s developer settings. Never sent in a query string.' },
    },
    headers: {
      'RateLimit-Limit': integer('Requests allowed in the current one-minute window.'),
      'RateLimit-Remaining': integer('Requests left in the current window.'),
      'RateLimit-Reset': integer('Seconds until the window rolls over.'),
      'Retry-After': integer('Seconds to wait before retrying unchanged.'),
      'Sightline-Request-Id': { description: 'Request id; equals `instance` of a problem document.', schema: { type: 'string' } },
    },
    // A PATCH carries only the fields being changed: its body states no defaults (patch-bodies.ts).
    schemas: withoutPatchDefaults(canonical, {
      ...commonSchemas,
      ...analyticsSchemas,
      ...contactSchemas,
      ...crmSchemas,
      ...funnelSchemas,
      ...automationSchemas,
    }),
  },
};
