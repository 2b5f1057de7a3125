// A contact's first and last touch, end to end: a visit sent to /collect and a purchase sent to
// POST /v1/events go through ingest to attribution, whose read model publishes
// conversion.attributed to contacts; GET /v1/contacts then carries the touches, and keeps them
// current when a second device of the same person is merged in. Finally the operator rebuild
// (`sightline attribution rebuild`) recomputes the website and has nothing new to tell contacts.
// Written once, run on both driver profiles.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { rebuildWebsite } from '@sightline/cli';
import { adminOf } from './admin-client';
import { sendVisit } from './collect-client';
import type { DriverProfile } from './ingest.suite';
import { startStack, type Stack } from './stack';

type Json = Record<string, unknown>;
const MINUTE = 60_000;

export function describeContactsAttribution(profileName: string, makeProfile: () => Promise<DriverProfile>): void {
  describe(`contacts carry attribution's touches (${profileName})`, () => {
    let profile: DriverProfile;
    let stack: Stack;
    let key: string;
    let publicId: string;
    const now = Date.now();
    const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
    const period = `period=${day(now - 24 * 60 * MINUTE)}..${day(now)}`;

    const post = async (path: string, body: unknown): Promise<Json> => {
      const r = await fetch(`${stack.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return (await r.json()) as Json;
    };
    const contactWith = async (what: string, accept: (row: Json) => boolean): Promise<Json> => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const r = await fetch(`${stack.base}/v1/contacts?${period}`, { headers: { authorization: `Bearer ${key}` } });
        const row = ((await r.json()) as { data: Json[] }).data.find((c) => c['email'] === 'ada@shop.test');
        if (row && accept(row)) return row;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last row: ${JSON.stringify(row)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };

    beforeAll(async () => {
      profile = await makeProfile();
      stack = await startStack({ targets: ['gateway', 'ingest', 'attribution', 'contacts'], env: profile.env });
      const admin = adminOf(stack.proc);
      const ws = await admin('/workspaces', { name: 'Touches', plan: 'internal', timezone: 'UTC', currency: 'EUR' });
      publicId = String((await admin(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' }))['public_id']);
      key = String((await admin('/keys', { workspace_id: ws['id'] }))['key']);
    }, 120_000);

    afterAll(async () => {
      await stack?.stop();
      await profile?.cleanup();
    }, 60_000);

    it('GET /v1/contacts carries the computed first and last touch, kept current after an identity merge', async () => {
      const phone = randomUUID();
      const laptop = randomUUID();
      // The phone arrives from a Google ad; the laptop, not yet known to be the same person, from a referral.
      expect(await sendVisit(stack.base, publicId, { aid: phone, at: now - 180 * MINUTE, url: 'https://shop.test/?utm_source=google&utm_medium=cpc&utm_campaign=spring&gclid=e2e', referrer: 'https://www.google.com/', key })).toBe(202);
      expect(await sendVisit(stack.base, publicId, { aid: laptop, at: now - 60 * MINUTE, url: 'https://shop.test/blog', referrer: 'https://news.example/post', key })).toBe(202);
      const bought = await post('/v1/events', { events: [{ event_type: 'purchase', event_name: 'order', anonymous_id: phone, email: 'ada@shop.test', revenue: 90, currency: 'EUR', occurred_at: new Date(now - 30 * MINUTE).toISOString() }] });
      expect(bought['accepted']).toBe(1);

      const before = await contactWith('the phone\'s touch', (row) => row['first_touch'] !== null);
      expect(before['first_touch']).toMatchObject({ channel: 'Paid Search', source: 'google', medium: 'cpc', campaign: 'spring', occurred_at: new Date(now - 180 * MINUTE).toISOString() });
      expect(before['last_touch']).toEqual(before['first_touch']);

      // Signing in on the laptop with the same email merges it into the person: its visit becomes the last touch.
      const signedIn = await post('/v1/events', { events: [{ event_type: 'custom', event_name: 'signed_in', anonymous_id: laptop, email: 'ada@shop.test' }] });
      expect(signedIn['accepted']).toBe(1);
      const after = await contactWith('the laptop\'s touch after the merge', (row) => (row['last_touch'] as Json | null)?.['channel'] === 'Referral');
      expect(after['first_touch']).toEqual(before['first_touch']);
      expect(after['last_touch']).toMatchObject({ channel: 'Referral', occurred_at: new Date(now - 60 * MINUTE).toISOString() });

      // The operator rebuild recomputes the same answer: nothing new is published.
      let output = '';
      const stream = new Writable({ write(chunk, _encoding, done) { output += String(chunk); done(); } });
      const job = await rebuildWebsite({ url: `http://127.0.0.1:${stack.proc.adminPort}`, token: stack.proc.settings.adminToken }, { website: 'shop.test', tty: false, stream, pollMs: 50 });
      expect(job).toMatchObject({ status: 'done', outcomes: 1, published: 0 });
      expect(job.sessions).toBeGreaterThanOrEqual(2);
      expect(output).toMatch(/^rebuilt in \d+\.\d s: \d+ sessions, 1 outcomes, 0 conversion\.attributed published$/m);
      expect((await contactWith('the same touches', () => true))['last_touch']).toEqual(after['last_touch']);
    }, 90_000);
  });
}
