// Builders the ads and products suites share: import messages, envelopes for calling a consumer
// directly (to redeliver one message or set when it was published), and a validator of an
// OpenAPI component schema.
import { randomUUID } from 'node:crypto';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Envelope, MessageHandler } from '@sightline/kit';
import { openApiDocument, type AdReportRowV1, type AdsReportImportedV1, type StoreOrderV1, type StoreOrdersImportedV1 } from '@sightline/proto-schemas';
import type { AttributionFixture, FixtureWebsite } from './fixture';

export function adRow(o: Partial<AdReportRowV1> & Pick<AdReportRowV1, 'level' | 'item_id'>): AdReportRowV1 {
  return { date: '2026-03-05', spend: 10, impressions: 1000, clicks: 20, ...o };
}

export function adReport(website: FixtureWebsite, rows: AdReportRowV1[], o: Partial<Omit<AdsReportImportedV1, 'rows'>> = {}): AdsReportImportedV1 {
  return { website_id: website.id, workspace_id: website.workspace_id, platform: 'google_ads', account_id: 'acc-1', account_name: 'Main account', currency: 'USD', ...o, rows };
}

export function storeOrder(o: Partial<StoreOrderV1> & Pick<StoreOrderV1, 'order_id'>): StoreOrderV1 {
  return { ordered_at: '2026-03-05T09:00:00.000Z', customer_email: null, currency: 'EUR', lines: [], refunds: [], ...o };
}

export function ordersImport(website: FixtureWebsite, orders: StoreOrderV1[], platform = 'shopify'): StoreOrdersImportedV1 {
  return { website_id: website.id, workspace_id: website.workspace_id, platform, orders };
}

export function envelopeOf(type: string, payload: unknown, website: FixtureWebsite, occurredAt = new Date().toISOString()): Envelope {
  return { id: randomUUID(), type, version: 1, occurred_at: occurredAt, workspace_id: website.workspace_id, website_id: website.id, source: 'test', payload };
}

/** The fixture's consumer of `type`, to hand it envelopes built by the test (dispatched by name, as the runner does). */
export function consumerOf(fx: AttributionFixture, type: string): MessageHandler {
  const handler = (fx.handlers.consumers as unknown as Record<string, MessageHandler>)[type];
  if (!handler) throw new Error(`attribution does not consume ${type}`);
  return handler;
}

/** Validates a body against a component schema of the OpenAPI document (as the gateway's clients read it). */
export function responseValidator(component: string): ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...openApiDocument, $id: 'https://sightline.test/openapi.json' } as object);
  return ajv.compile({ $ref: `https://sightline.test/openapi.json#/components/schemas/${component}` });
}
