// The LinkedIn Conversions API client against the local stand-in: the body built from a write-back
// passes LinkedIn's documented checks (hashed email, li_fat_id, ms timestamps, value as a string,
// mandatory headers), and each documented error maps to done / retry / dead.
import { createHash } from 'node:crypto';
import { MESSAGE_EXAMPLES, type OutcomeWritebackRequestedV1 } from '@sightline/proto-schemas';
import { linkedinError, startLinkedinConversionsServer, type LinkedinConversionsServer } from '../../test/linkedin-conversions-server';
import { conversionSignal, SettingsError } from './conversion';
import { API_VERSIONS } from '../api-versions';
import { linkedinTooOld, linkedinVersion, linkedinUploadBody, parseLinkedinAdsSettings, sendConversionEvents, type LinkedinUploadBody } from './linkedin-ads';
import { providerError } from '../../test/provider-error';

const CREDENTIALS = { access_token: 'linkedin-token' };
const VERSION = API_VERSIONS.linkedin_marketing.version;
const settings = parseLinkedinAdsSettings({ conversion_rule_id: '104012' });

let counter = 0;
function request(overrides: Partial<OutcomeWritebackRequestedV1> = {}): OutcomeWritebackRequestedV1 {
  counter += 1;
  return {
    ...MESSAGE_EXAMPLES['outcome.writeback_requested'],
    conversion_id: `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`,
    email: '  Ada.Lovelace@Example.COM ',
    click_ids: { li_fat_id: 'df5gf5-gh6t7-ph4j7h-fgf6n1' },
    changes: [{ field: 'status', old_value: 'open', new_value: 'won' }],
    current: { ...MESSAGE_EXAMPLES['outcome.writeback_requested'].current, status: 'won', sales_value: 1500, currency: 'EUR', is_spam: false },
    ...overrides,
  };
}

const body = (r = request(), at = new Date()): LinkedinUploadBody => linkedinUploadBody(r, [{ ...conversionSignal(r, at, settings)!, key: 'stage:deal_won' }], settings)!;

describe('LinkedIn Conversions API against the stand-in', () => {
  let server: LinkedinConversionsServer;
  const send = (b: LinkedinUploadBody, credentials: Record<string, string> = CREDENTIALS, version = VERSION) =>
    sendConversionEvents(server.url, credentials, settings, version, b, AbortSignal.timeout(5000), new Date());

  beforeAll(async () => {
    server = await startLinkedinConversionsServer({ conversionRules: ['104012'], activeVersions: [VERSION, '202611'], revokedTokens: ['revoked-token'] });
  });
  afterAll(async () => {
    await server.close();
  });

  it('builds the documented event: rule URN, ms time, value as string, SHA-256 of the normalised email, li_fat_id', () => {
    const r = request();
    const at = new Date('2026-11-20T10:00:00Z');
    const event = body(r, at).elements[0]!;
    expect(event).toEqual({
      conversion: 'urn:lla:llaPartnerConversion:104012',
      conversionHappenedAt: at.getTime(),
      conversionValue: { currencyCode: 'EUR', amount: '1500' },
      eventId: `${r.conversion_id}:stage:deal_won`,
      user: {
        userIds: [
          { idType: 'SHA256_EMAIL', idValue: createHash('sha256').update('ada.lovelace@example.com').digest('hex') },
          { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: 'df5gf5-gh6t7-ph4j7h-fgf6n1' },
        ],
      },
    });
    expect(JSON.stringify(event)).not.toContain('example.com');
    expect(linkedinUploadBody({ ...r, email: null, click_ids: {} }, [conversionSignal(r, at, settings)!], settings)).toBeNull();
    // A tracked conversion keeps the bare conversion id; a rule of its own is used for its outcome.
    const two = linkedinUploadBody(r, [{ ...conversionSignal(r, at, settings)!, key: 'conversion' }, { value: null, currency: null, at, key: 'stage:mql', conversion_action: '555' }], settings)!;
    expect(two.elements.map((e) => [e.eventId, e.conversion, e.conversionValue])).toEqual([
      [r.conversion_id, 'urn:lla:llaPartnerConversion:104012', { currencyCode: 'EUR', amount: '1500' }],
      [`${r.conversion_id}:stage:mql`, 'urn:lla:llaPartnerConversion:555', undefined],
    ]);
  });

  it('reads the settings: a rule id or its URN, an optional version override', () => {
    const pinned = parseLinkedinAdsSettings({ conversion_rule_id: 'urn:lla:llaPartnerConversion:77', api_version: '202611' });
    expect(pinned).toMatchObject({ conversion: 'urn:lla:llaPartnerConversion:77', api_version: '202611' });
    expect(linkedinVersion(pinned)).toBe('202611');
    expect(linkedinVersion(settings)).toBe(API_VERSIONS.linkedin_marketing.version);
    expect(() => parseLinkedinAdsSettings({})).toThrow(SettingsError);
    expect(() => parseLinkedinAdsSettings({ conversion_rule_id: '1', api_version: 'v2' })).toThrow(SettingsError);
  });

  it('sends one event with the bearer token, Linkedin-Version and Rest.li 2.0.0; a resent copy counts once', async () => {
    const b = body();
    const result = await send(b);
    expect(result).toEqual({ detail: `sent to LinkedIn conversion rule 104012 (Linkedin-Version ${VERSION})`, externalId: b.elements[0]!.eventId });
    const recorded = server.requests.at(-1)!;
    expect(recorded).toMatchObject({ method: 'POST', path: '/rest/conversionEvents', status: 201 });
    expect(recorded.headers).toMatchObject({ authorization: 'Bearer linkedin-token', 'linkedin-version': VERSION, 'x-restli-protocol-version': '2.0.0' });
    expect(recorded.headers['x-restli-method']).toBeUndefined();
    expect(server.events.at(-1)).toEqual(b.elements[0]);
    const before = server.events.length;
    await send(b);
    expect(server.events.length).toBe(before);
    expect(server.deduplicated).toBe(1);
  });

  it('sends a batch with BATCH_CREATE and reports a partial failure with the element and reason', async () => {
    const ok = body().elements[0]!;
    const result = await send({ elements: [ok, body().elements[0]!] });
    expect(result.detail).toContain('2 events');
    expect(server.requests.at(-1)!.headers['x-restli-method']).toBe('BATCH_CREATE');
    const stale = { ...body().elements[0]!, conversionHappenedAt: Date.now() - 91 * 24 * 3600_000 };
    const error = await providerError(send({ elements: [body().elements[0]!, stale] }));
    expect(error).toMatchObject({ retryable: false, status: 200 });
    expect(error.message).toContain('1 of 2 events refused');
    expect(error.message).toContain('more than 90 days');
  });

  it('knows events over 90 days old before sending them', () => {
    const old = body(request(), new Date(Date.now() - 91 * 24 * 3600_000));
    expect(linkedinTooOld(old, new Date())).toContain('more than 90 days ago');
    expect(linkedinTooOld(body(), new Date())).toBeNull();
  });

  it('maps the documented errors: revoked token and inactive version are permanent, 429 and 5xx come back', async () => {
    const revoked = await providerError(send(body(), { access_token: 'revoked-token' }));
    expect(revoked).toMatchObject({ retryable: false, status: 401 });
    expect(revoked.message).toBe('LinkedIn 401 (REVOKED_ACCESS_TOKEN, serviceErrorCode 65601): The token used in the request has been revoked by the user');
    expect(await providerError(send(body(), CREDENTIALS, '202301'))).toMatchObject({ retryable: false, status: 426 });
    server.failNext(linkedinError(429, 'Resource level throttle APPLICATION DAY limit for calls to this resource is reached.', { serviceErrorCode: 101 }, { 'retry-after': '120' }));
    expect(await providerError(send(body()))).toMatchObject({ retryable: true, status: 429, retryAfterMs: 120_000 });
    server.failNext(linkedinError(503, 'Service Unavailable'));
    expect(await providerError(send(body()))).toMatchObject({ retryable: true, status: 503 });
  });

  it('refuses what LinkedIn does not accept (the stand-in checks the contract)', async () => {
    const event = body().elements[0]!;
    const post = (headers: Record<string, string>, payload: unknown) =>
      fetch(`${server.url}/rest/conversionEvents`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(payload) });
    const auth = { authorization: 'Bearer linkedin-token', 'x-restli-protocol-version': '2.0.0' };
    const noVersion = await post(auth, event);
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({ status: 400, code: 'VERSION_MISSING' });
    expect((await post({ ...auth, 'linkedin-version': VERSION }, { ...event, user: { userIds: [{ idType: 'SHA256_EMAIL', idValue: 'ada@example.com' }] } })).status).toBe(422);
    expect((await post({ ...auth, 'linkedin-version': VERSION }, { ...event, conversionValue: { currencyCode: 'EUR', amount: 10 } })).status).toBe(422);
    expect((await post({ 'linkedin-version': VERSION, 'x-restli-protocol-version': '2.0.0' }, event)).status).toBe(401);
    const tooMany = await post({ ...auth, 'linkedin-version': VERSION, 'x-restli-method': 'BATCH_CREATE' }, { elements: Array.from({ length: 5001 }, () => event) });
    expect(tooMany.status).toBe(400);
  });
});
