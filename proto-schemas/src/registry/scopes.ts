// API key scopes. New keys get every scope, pii:read included (API-SPEC "Authentication" 4).

export const SCOPE_NAMES = [
  'analytics:read', 'conversions:read', 'conversions:write', 'deals:read', 'events:write',
  'funnels:read', 'funnels:write', 'automations:read', 'automations:write', 'pii:read',
] as const;

export type ScopeName = (typeof SCOPE_NAMES)[number];

export interface ScopeDefinition { name: ScopeName; description: string }

export const SCOPES: readonly ScopeDefinition[] = [
  { name: 'analytics:read', description: 'Read aggregate analytics: /metrics, /paths, /products, /attribution/coverage, /ads/performance.' },
  { name: 'conversions:read', description: 'Read contacts (one row per conversion), contact journeys and the change feed.' },
  { name: 'conversions:write', description: 'Update the outcome fields of a contact (PATCH /contacts/{id}).' },
  { name: 'deals:read', description: 'Read CRM-mirrored deals, pipelines and companies, and company and deal journeys.' },
  { name: 'events:write', description: 'Send server-side events (POST /events).' },
  { name: 'funnels:read', description: 'Read funnel definitions and compute their steps and breakdowns.' },
  { name: 'funnels:write', description: 'Create, update and delete funnel definitions.' },
  { name: 'automations:read', description: 'Read alerts (automations) with their runs and deliveries.' },
  { name: 'automations:write', description: 'Create, update, delete and run alerts (automations).' },
  { name: 'pii:read', description: 'See email, phone and name unmasked in contact rows and search contacts by email. Without it they are masked (the email domain is kept).' },
];

/** What a newly created key is granted unless its creator narrows it. */
export const DEFAULT_KEY_SCOPES: readonly ScopeName[] = SCOPE_NAMES;
