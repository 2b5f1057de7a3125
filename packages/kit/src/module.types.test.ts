// Type tests of the module contract: each `@ts-expect-error` below must be an error, or `tsc`
// (npm run lint, part of npm test) fails. They show that the catalog holds services to it: a
// missing handler, a wrong payload, a type the service does not consume, an RPC method it does not
// serve and a publish it is not declared for are compile errors, not runtime 501s or dead letters.
import type { ApiRequest, ApiResponse } from '@sightline/proto-schemas';
import { defineModule, type ConsumerMap, type ModuleContext, type RpcMap } from './module';

const answer = async (): Promise<ApiResponse> => ({ status: 200, body: {} });
const ignore = async (): Promise<void> => undefined;

/** Every handler contacts needs, typed by the catalog. */
const contactsConsumers: ConsumerMap<'contacts'> = {
  'conversion.created': async ({ payload }) => void payload.conversion_id,
  'conversion.attributed': async ({ payload }) => void payload.first_touch,
  'identity.merged': async ({ payload }) => void payload.into_identity_id,
  'outcome.writeback_updated': async ({ payload }) => void payload.status,
  'milestone.reached': async ({ payload }) => void payload.stage,
};

export const typeTests = {
  missingHandler(): ConsumerMap<'contacts'> {
    // @ts-expect-error contacts consumes identity.merged: a map without its handler does not compile.
    return { 'conversion.created': ignore, 'conversion.attributed': ignore, 'outcome.writeback_updated': ignore, 'milestone.reached': ignore };
  },
  wrongPayload(): ConsumerMap<'contacts'> {
    return {
      ...contactsConsumers,
      // @ts-expect-error conversion.created carries no from_identity_id: the payload is the catalog's type.
      'conversion.created': async ({ payload }) => void payload.from_identity_id,
    };
  },
  handlerForATypeNotConsumed(): ConsumerMap<'contacts'> {
    // @ts-expect-error contacts does not consume deal.created (the catalog says changefeed and automations do).
    return { ...contactsConsumers, 'deal.created': ignore };
  },
  missingRpcMethod(): RpcMap<'contacts'> {
    // @ts-expect-error contacts serves contacts.patchContact too.
    return { 'contacts.listContacts': answer, 'contacts.getContact': answer };
  },
  rpcForAnotherService(): RpcMap<'contacts'> {
    // @ts-expect-error attribution.getMetrics is attribution's method, not contacts'.
    return { 'contacts.listContacts': answer, 'contacts.getContact': answer, 'contacts.patchContact': answer, 'attribution.getMetrics': answer };
  },
  wrongRpcRequest(): RpcMap<'attribution'>['attribution.getDealTouches'] {
    // @ts-expect-error getDealTouches takes a DealTouchesRequest, not an ApiRequest.
    return async (request: ApiRequest) => ({ deals: [], request });
  },
  moduleWithoutItsHandlers() {
    return defineModule({
      name: 'contacts',
      needs: {},
      // @ts-expect-error a contacts module must return its consumers and RPC handlers.
      async create() {
        return {};
      },
    });
  },
  publishNotDeclared(ctx: ModuleContext<'contacts'>) {
    // @ts-expect-error contacts is not a publisher of deal.created.
    return ctx.bus.publish({ type: 'deal.created', source: 'contacts', payload: {} });
  },
  publishWrongPayload(ctx: ModuleContext<'contacts'>) {
    // @ts-expect-error conversion.updated's payload needs conversion_id, changes and the rest.
    return ctx.bus.publish({ type: 'conversion.updated', source: 'contacts', payload: { n: 1 } });
  },
  storeNotDeclared(ctx: ModuleContext<'contacts', { kv: true }>) {
    // @ts-expect-error a module that declared only kv has no postgres on its context.
    return ctx.postgres;
  },
  storeDeclared(ctx: ModuleContext<'contacts', { postgres: { schema: 'contacts'; migrationsDir: '' } }>) {
    // Declared stores are not optional: no `!` needed.
    return ctx.postgres.query('SELECT 1');
  },
};

describe('module contract types', () => {
  it('are checked by tsc (npm run lint); this file only has to load', () => {
    expect(Object.keys(typeTests)).toHaveLength(11);
    expect(Object.keys(contactsConsumers).sort()).toEqual(['conversion.attributed', 'conversion.created', 'identity.merged', 'milestone.reached', 'outcome.writeback_updated']);
  });
});
