// Builders shared by the /paths and /attribution/coverage suites: a visit is one session of one
// hit, a sale is one conversion.
import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiDocument, type ConversionCreatedV1 } from '@sightline/proto-schemas';
import { batch, conversion, hit, type AttributionFixture, type FixtureWebsite } from './fixture';

export const DAY = 86_400_000;

export interface VisitInput {
  identity: string;
  at: string;
  channel?: string;
  source?: string | null;
  medium?: string | null;
  campaign?: string | null;
}

/** Delivers one session per visit (each its own session id) in one batch. */
export async function visits(fx: AttributionFixture, website: FixtureWebsite, list: VisitInput[]): Promise<void> {
  const events = list.map((v) => hit({
    identity: v.identity,
    session: randomUUID(),
    startedAt: v.at,
    channel: v.channel ?? 'Organic Search',
    source: v.source === undefined ? 'google' : v.source,
    medium: v.medium === undefined ? 'organic' : v.medium,
    campaign: v.campaign === undefined ? null : v.campaign,
  }));
  await fx.deliver('events.classified', batch(website, events), website);
}

/** Delivers one conversion; identity null means no visitor at all. */
export async function sale(fx: AttributionFixture, website: FixtureWebsite, o: Partial<ConversionCreatedV1> & { occurred_at: string }): Promise<ConversionCreatedV1> {
  const c = conversion(website, { identity_id: null, anonymous_id: null, email: null, revenue: null, event_type: 'purchase', event_name: 'order_completed', origin: 'tracker', relationship_started_at: null, ...o });
  await fx.deliver('conversion.created', c, website);
  return c;
}

/** `iso` shifted by milliseconds. */
export function shift(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}

/** A validator for one component schema of the OpenAPI document. */
export function responseValidator(component: string): (body: unknown) => unknown[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...openApiDocument, $id: 'https://sightline.test/openapi.json' } as object);
  const validate = ajv.compile({ $ref: `https://sightline.test/openapi.json#/components/schemas/${component}` });
  return (body) => (validate(body) ? [] : [...(validate.errors ?? [])]);
}
