// Endpoints the gateway answers itself: key identity, websites, registry.
import { operation } from './operation';
import { listOf, one, ref } from './refs';
import type { PathItemObject } from './types';

export const gatewayPaths: Record<string, PathItemObject> = {
  '/me': {
    get: operation({
      operationId: 'getMe', tag: 'Key and schema', service: 'gateway', scope: null, website: false,
      summary: 'What this key can do',
      description: 'The key (id, name, scopes), its workspace, the plan it is limited by (requests per minute, per month, concurrent analytics queries) and the websites it reaches, as `{data: {key, workspace, plan, websites}}`. Any valid key may call it.',
      ok: { description: 'Key identity.', schema: one(ref('Identity')) },
    }),
  },
  '/websites': {
    get: operation({
      operationId: 'listWebsites', tag: 'Key and schema', service: 'gateway', scope: null, website: false,
      summary: 'Websites this key reaches',
      description: 'Each reachable website with its timezone and currency, in which every other response for it is expressed.',
      ok: { description: 'Reachable websites.', schema: listOf(ref('Website'), false) },
    }),
  },
  '/schema': {
    get: operation({
      operationId: 'getSchema', tag: 'Key and schema', service: 'gateway', scope: null, website: false,
      summary: 'Metrics, dimensions and operators',
      description: 'Every metric (with its definition), dimension (with where it can be used and which filter operators it takes), filter operator, attribution model, ad level and metric, path step label, scope and plan. Generated from the same registry as query compilation, so it is always what the API accepts.',
      ok: { description: 'The registry.', schema: ref('SchemaDocument') },
    }),
  },
};
