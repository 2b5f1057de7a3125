// The Google Ads and Meta clients against the local stand-in servers: payloads built by plan.ts
// pass the documented checks, and each documented error shape maps to done / retry / dead.
import { MESSAGE_EXAMPLES, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { googleError, googlePartialFailure, metaError, startAdPlatformsServer, type AdPlatformsServer } from '../../test/ad-platforms-server';
import { conversionSignal } from './conversion';
import { GOOGLE_ADS_API_VERSION, googleUploadBody, parseGoogleAdsSettings, uploadClickConversions, type GoogleUploadBody } from './google-ads';
import { META_GRAPH_VERSION, metaEventsBody, parseMetaAdsSettings, sendServerEvents, type MetaEventsBody } from './meta-ads';
import { providerError } from '../../test/provider-error';

const GOOGLE_CREDENTIALS = { access_token: 'google-token', developer_token: 'google-developer-token' };
const META_CREDENTIALS = { access_token: 'meta-token' };
const googleSettings = parseGoogleAdsSettings({ customer_id: '1234567890', conversion_action_id: '42', login_customer_id: '111-222-3333' });
const metaSettings = parseMetaAdsSettings({ pixel_id: '555000', test_event_code: 'TEST123' });

let conversionCounter = 0;
function request(overrides: Partial<OutcomeWritebackRequestedV1> = {}): OutcomeWritebackRequestedV1 {
  conversionCounter += 1;
  return {
    ...MESSAGE_EXAMPLES['outcome.writeback_requested'],
    conversion_id: `00000000-0000-4000-8000-${String(conversionCounter).padStart(12, '0')}`,
    click_ids: { gclid: 'Cj0KCQ-good', fbclid: 'IwAR-good' },
    ...overrides,
  };
}

function googleBody(r = request()): GoogleUploadBody {
  return googleUploadBody(r, conversionSignal(r, new Date(), googleSettings)!, googleSettings)!;
}
function metaBody(r = request()): MetaEventsBody {
  return metaEventsBody(r, conversionSignal(r, new Date(), metaSettings)!, metaSettings)!;
}

describe('ad-platform uploads against the stand-in servers', () => {
  let server: AdPlatformsServer;
  const signal = () => AbortSignal.timeout(5000);

  beforeAll(async () => {
    server = await startAdPlatformsServer({ googleConversionActions: ['42'] });
  });
  afterAll(async () => {
    await server.close();
  });

  describe('Google Ads uploadClickConversions', () => {
    const upload = (body: GoogleUploadBody, credentials = GOOGLE_CREDENTIALS) => uploadClickConversions(server.url, credentials, googleSettings, body, signal(), new Date());

    it('uploads a click conversion the server accepts as documented, with the auth headers', async () => {
      const body = googleBody();
      const result = await upload(body);
      expect(result.detail).toContain('uploaded to Google Ads customer 1234567890');
      const recorded = server.google.requests.at(-1)!;
      expect(recorded.path).toBe(`/${GOOGLE_ADS_API_VERSION}/customers/1234567890:uploadClickConversions`);
      expect(recorded.headers).toMatchObject({ authorization: 'Bearer google-token', 'developer-token': 'google-developer-token', 'login-customer-id': '1112223333' });
      expect(server.google.accepted.at(-1)).toEqual(body.conversions[0]);
    });

    it('treats a second copy of the same conversion (ORDER_ID_ALREADY_IN_USE) as already done', async () => {
      const body = googleBody();
      await upload(body);
      const again = await upload(body);
      expect(again.detail).toContain('ORDER_ID_ALREADY_IN_USE');
      expect(server.google.requests.at(-1)!.status).toBe(200);
    });

    it('reports a refused conversion from a partial failure as permanent', async () => {
      const error = await providerError(upload(googleBody(request({ click_ids: { gclid: 'bad-click' } }))));
      expect(error).toMatchObject({ retryable: false, status: 200 });
      expect(error.message).toContain('UNPARSEABLE_GCLID');
    });

    it('retries a too-recent click after six hours', async () => {
      server.failNext('google_ads', googlePartialFailure({ conversionUploadError: 'TOO_RECENT_EVENT' }, 'The click occurred less than 6 hours ago.'));
      expect(await providerError(upload(googleBody()))).toMatchObject({ retryable: true, retryAfterMs: 6 * 3600_000 });
    });

    it('retries quota errors after the retry delay Google names, and server errors', async () => {
      server.failNext('google_ads', googleError(429, 'RESOURCE_EXHAUSTED', { quotaError: 'RESOURCE_TEMPORARILY_EXHAUSTED' }, 'Too many requests.', 45));
      expect(await providerError(upload(googleBody()))).toMatchObject({ retryable: true, status: 429, retryAfterMs: 45_000 });
      server.failNext('google_ads', googleError(503, 'UNAVAILABLE', { internalError: 'TRANSIENT_ERROR' }, 'The service is currently unavailable.'));
      expect(await providerError(upload(googleBody()))).toMatchObject({ retryable: true, status: 503 });
    });

    it('does not retry a refused token', async () => {
      const error = await providerError(upload(googleBody(), { ...GOOGLE_CREDENTIALS, access_token: 'expired' }));
      expect(error).toMatchObject({ retryable: false, status: 401 });
      expect(error.message).toContain('OAUTH_TOKEN_INVALID');
    });

    it('refuses what the documentation does not allow (the stand-in checks the shape)', async () => {
      const post = (body: unknown) => fetch(`${server.url}/v22/customers/1234567890:uploadClickConversions`, {
        method: 'POST',
        headers: { authorization: 'Bearer google-token', 'developer-token': 'google-developer-token', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const conversion = googleBody().conversions[0]!;
      const unknownField = await post({ conversions: [{ ...conversion, conversion_value: 1 }], partialFailure: true });
      expect(unknownField.status).toBe(400);
      expect(JSON.stringify(await unknownField.json())).toContain('Unknown name');
      expect((await post({ conversions: [conversion] })).status).toBe(400);
      const badDate = await (await post({ conversions: [{ ...conversion, orderId: 'x1', conversionDateTime: '2026-03-20T15:00:00Z' }], partialFailure: true })).json() as Record<string, unknown>;
      expect(JSON.stringify(badDate['partialFailureError'])).toContain('INVALID_FIELD_VALUES_IN_DATE_TIME');
      const twoIds = await (await post({ conversions: [{ ...conversion, orderId: 'x2', gbraid: 'b' }], partialFailure: true })).json() as Record<string, unknown>;
      expect(twoIds['results']).toEqual([{}]);
    });
  });

  describe('Meta Conversions API', () => {
    const send = (body: MetaEventsBody, credentials = META_CREDENTIALS) => sendServerEvents(server.url, credentials, metaSettings, body, signal(), new Date());

    it('sends a server event the stand-in accepts, with the token in the body', async () => {
      const body = metaBody();
      const result = await send(body);
      expect(result.detail).toContain('sent to Meta pixel 555000 as Purchase');
      const recorded = server.meta.requests.at(-1)!;
      expect(recorded.path).toBe(`/${META_GRAPH_VERSION}/555000/events`);
      expect(recorded.body).toMatchObject({ access_token: 'meta-token', test_event_code: 'TEST123' });
      expect(server.meta.events.at(-1)).toEqual(body.data[0]);
    });

    it('counts a resent event once (event_id deduplication)', async () => {
      const body = metaBody();
      await send(body);
      const before = server.meta.events.length;
      await send(body);
      expect(server.meta.events.length).toBe(before);
      expect(server.meta.deduplicated).toBeGreaterThan(0);
    });

    it('does not retry an invalid token, and retries throttling after the advertised wait', async () => {
      expect(await providerError(send(metaBody(), { access_token: 'wrong' }))).toMatchObject({ retryable: false, status: 400 });
      server.failNext('meta_ads', metaError(400, 4, 'Application request limit reached', { is_transient: true }, { 'x-business-use-case-usage': JSON.stringify({ '1': [{ estimated_time_to_regain_access: 3 }] }) }));
      expect(await providerError(send(metaBody()))).toMatchObject({ retryable: true, retryAfterMs: 180_000 });
      server.failNext('meta_ads', { status: 500, body: { error: { message: 'An unknown error occurred', type: 'OAuthException', code: 1, is_transient: true } } });
      expect(await providerError(send(metaBody()))).toMatchObject({ retryable: true, status: 500 });
    });

    it('refuses what the documentation does not allow (the stand-in checks the shape)', async () => {
      const event = metaBody().data[0]!;
      const old = { ...event, event_time: Math.floor(Date.now() / 1000) - 8 * 24 * 3600 };
      expect((await providerError(send({ data: [old] }))).message).toContain('7 days');
      const { custom_data: _, ...unvalued } = event;
      expect((await providerError(send({ data: [unvalued] }))).message).toContain('Purchase');
      expect((await providerError(send({ data: [{ ...event, user_data: { ...event.user_data, em: ['ada@example.com'] } }] }))).message).toContain('SHA-256');
    });
  });
});
