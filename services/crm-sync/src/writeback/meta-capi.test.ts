// Meta Conversions API on the current Graph version, against the stand-in (test/ad-platforms-server.ts,
// whose Meta part checks the documented event shape): em / ph SHA-256 of the values normalised as
// Meta documents, fbc / fbp as set, one event per outcome with an event_id keyed on conversion and
// outcome, action_source and test_event_code from the settings, and Graph errors mapped with their
// code, subcode and fbtrace_id (throttling codes retried).
import { createHash } from 'node:crypto';
import { MESSAGE_EXAMPLES, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { metaError, startAdPlatformsServer, type AdPlatformsServer } from '../../test/ad-platforms-server';
import { API_VERSIONS, daysUntil } from '../api-versions';
import { SettingsError } from './conversion';
import { metaEventsBody, parseMetaAdsSettings, sendServerEvents, type MetaEventsBody } from './meta-ads';
import { providerError } from '../../test/provider-error';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const settings = parseMetaAdsSettings({ pixel_id: '555000' });

function request(overrides: Partial<OutcomeWritebackRequestedV1> = {}): OutcomeWritebackRequestedV1 {
  return {
    ...MESSAGE_EXAMPLES['outcome.writeback_requested'],
    conversion_id: '00000000-0000-4000-8000-00000000abcd',
    email: ' Ada.Lovelace@Example.COM',
    phone: '+1 (616) 954-7888',
    click_ids: { fbclid: 'IwAR-ada', fbp: 'fb.1.1764300000000.1234567890' },
    ...overrides,
  };
}

describe('Meta Conversions API (current Graph version) against the stand-in', () => {
  let server: AdPlatformsServer;
  const at = () => new Date(Date.now() - 3600_000);
  const send = (body: MetaEventsBody, s = settings, token = 'meta-token') => sendServerEvents(server.url, { access_token: token }, s, body, AbortSignal.timeout(5000), new Date());

  beforeAll(async () => {
    server = await startAdPlatformsServer({ metaAccessToken: 'meta-token' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('defaults to a Graph version with a published end date still ahead (not v21.0), and takes an override', () => {
    expect(settings.api_version).toBe(API_VERSIONS.meta_graph.version);
    expect(settings.api_version).not.toBe('v21.0');
    expect(daysUntil(API_VERSIONS.meta_graph.sunset, new Date())).toBeGreaterThan(0);
    expect(parseMetaAdsSettings({ pixel_id: '1', api_version: 'v26.0' }).api_version).toBe('v26.0');
    expect(() => parseMetaAdsSettings({ pixel_id: '1', action_source: 'website' })).toThrow(SettingsError);
  });

  it('hashes em and ph as Meta documents, leaves fbc and fbp unhashed, one event per outcome with its own event_id', async () => {
    const r = request();
    const body = metaEventsBody(r, [
      { key: 'stage:deal_won', value: 4200, currency: 'EUR', at: at() },
      { key: 'stage:mql', value: null, currency: null, at: at(), conversion_action: 'QualifiedLead' },
    ], settings)!;
    expect(body.data.map((e) => [e.event_id, e.event_name, e.custom_data])).toEqual([
      [`${r.conversion_id}:stage:deal_won`, 'Purchase', { value: 4200, currency: 'EUR' }],
      [`${r.conversion_id}:stage:mql`, 'QualifiedLead', undefined],
    ]);
    expect(body.data[0]!.user_data).toEqual({
      fbc: expect.stringMatching(/^fb\.1\.\d{13}\.IwAR-ada$/),
      fbp: 'fb.1.1764300000000.1234567890',
      em: [sha('ada.lovelace@example.com')],
      ph: [sha('16169547888')],
    });
    expect(body.data[0]!.action_source).toBe('system_generated');
    const result = await send(body);
    expect(result).toMatchObject({ detail: expect.stringContaining('as Purchase, QualifiedLead'), externalId: `${r.conversion_id}:stage:deal_won,${r.conversion_id}:stage:mql` });
    const recorded = server.meta.requests.at(-1)!;
    expect(recorded.path).toBe(`/${API_VERSIONS.meta_graph.version}/555000/events`);
    expect(JSON.stringify(recorded.body)).not.toMatch(/lovelace|616/i);
    // A tracked conversion keeps the bare conversion id as its event_id (what was sent before stages).
    expect(metaEventsBody(r, { value: null, currency: null, at: at() }, settings)!.data[0]!.event_id).toBe(r.conversion_id);
    // No Meta click id: nothing to send.
    expect(metaEventsBody(request({ click_ids: {} }), { value: null, currency: null, at: at() }, settings)).toBeNull();
  });

  it('sends action_source "other" and the test_event_code when the account sets them', async () => {
    const s = parseMetaAdsSettings({ pixel_id: '555000', action_source: 'other', test_event_code: 'TEST4242' });
    const body = metaEventsBody(request(), { key: 'stage:won', value: 10, currency: 'EUR', at: at() }, s)!;
    await send(body, s);
    expect(server.meta.requests.at(-1)!.body).toMatchObject({ test_event_code: 'TEST4242', data: [{ action_source: 'other' }] });
  });

  it('maps Graph errors with code, subcode and fbtrace_id; throttling codes 4, 17 and 80004 come back, a bad token does not', async () => {
    const body = metaEventsBody(request({ conversion_id: '00000000-0000-4000-8000-00000000beef' }), { value: 5, currency: 'EUR', at: at() }, settings)!;
    const bad = await providerError(send(body, settings, 'expired'));
    expect(bad).toMatchObject({ retryable: false, status: 400 });
    expect(bad.message).toMatch(/^Meta 400 code 190: Invalid OAuth access token.* \(fbtrace_id \S+\)$/);
    for (const code of [4, 17, 80004]) {
      server.failNext('meta_ads', metaError(400, code, 'There have been too many calls', { error_subcode: 2446079 }));
      const error = await providerError(send(body));
      expect(error).toMatchObject({ retryable: true, status: 400 });
      expect(error.message).toContain(`code ${code}/2446079`);
    }
    server.failNext('meta_ads', metaError(400, 100, 'Invalid parameter', { error_subcode: 2804003, error_user_msg: 'The event time is too old.' }));
    expect(await providerError(send(body))).toMatchObject({ retryable: false, message: expect.stringContaining('code 100/2804003: The event time is too old.') });
  });

  it('is refused by the stand-in when an identifier is sent unhashed', async () => {
    const body = metaEventsBody(request(), { value: 5, currency: 'EUR', at: at() }, settings)!;
    const plain = { data: [{ ...body.data[0]!, user_data: { ...body.data[0]!.user_data, ph: ['16169547888'] } }] };
    expect((await providerError(send(plain))).message).toContain('user_data.ph must be SHA-256');
  });
});
