// The whole life of a funnel over HTTP through the gateway: events sent with POST /v1/events reach
// the funnels projection via ingest; a funnel is created, computed (steps, comparison window,
// breakdown), changed and deleted; each write appears in GET /v1/changes as funnel.* from
// api:<key_id>. Written once, run on both driver profiles.
import type { RunningProcess } from '@sightline/kit';
import { adminOf } from './admin-client';
import { sendVisit } from './collect-client';
import type { DriverProfile } from './ingest.suite';
import { startStack, type Stack } from './stack';

type Json = Record<string, unknown>;
interface Reply {
  status: number;
  body: Json & { data: Json & Json[]; meta: Json; previous?: { window: Json; data: Json[] }; totals?: Json };
}

const DAY_MS = 86_400_000;

export function describeFunnels(profileName: string, makeProfile: () => Promise<DriverProfile>): void {
  describe(`funnels (${profileName})`, () => {
    let proc: RunningProcess;
    let profile: DriverProfile;
    let stack: Stack;
    let base: string;
    let key: string;
    let keyId: string;
    let readOnly: string;
    // Two days ago at noon: inside "last 7 days" whatever the hour the suite runs.
    const day = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - 2 * DAY_MS + 12 * 3_600_000);
    const at = (minutes: number) => new Date(day.getTime() + minutes * 60_000).toISOString();

    const call = async (method: string, path: string, token: string, body?: unknown): Promise<Reply> => {
      const r = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: r.status, body: (await r.json()) as Reply['body'] };
    };
    const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await probe();
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };

    beforeAll(async () => {
      profile = await makeProfile();
      stack = await startStack({
        targets: ['gateway', 'ingest', 'funnels', 'changefeed'],
        env: { ...profile.env },
      });
      proc = stack.proc;
      base = `http://127.0.0.1:${proc.publicPort}`;
      const admin = adminOf(proc);
      const ws = await admin('/workspaces', { name: 'Funnels', plan: 'internal', timezone: 'UTC', currency: 'EUR' });
      const site = await admin(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' });
      const full = await admin('/keys', { workspace_id: ws['id'] });
      key = String(full['key']);
      keyId = String(full['key_id']);
      readOnly = String((await admin('/keys', { workspace_id: ws['id'], scopes: ['funnels:read'] }))['key']);

      // Browser visits (the tracker's /collect, replayed with the key): a landing page, then /pricing a
      // minute later. Ada arrives from the newsletter, clicks "Start free trial" and signs up (server-side
      // events); Grace arrives from Google and leaves; Linus visited a week earlier.
      const publicId = String(site['public_id']);
      expect(await sendVisit(base, publicId, { aid: 'ada', at: day.getTime(), url: 'https://shop.test/?utm_source=newsletter&utm_medium=email', referrer: null, key })).toBe(202);
      expect(await sendVisit(base, publicId, { aid: 'grace', at: day.getTime() + 5 * 60_000, url: 'https://shop.test/', referrer: 'https://www.google.com/', key })).toBe(202);
      expect(await sendVisit(base, publicId, { aid: 'linus', at: day.getTime() - 7 * DAY_MS, url: 'https://shop.test/', referrer: 'https://www.google.com/', key })).toBe(202);
      const events = [
        { event_type: 'custom', event_name: 'start_trial', anonymous_id: 'ada', occurred_at: at(2), properties: { url: 'https://shop.test/pricing', text: 'Start free trial' } },
        { event_type: 'conversion', event_name: 'signup', anonymous_id: 'ada', email: 'ada@shop.test', occurred_at: at(3), properties: { url: 'https://shop.test/signup' } },
      ];
      const sent = await call('POST', '/v1/events', key, { events });
      expect(sent.body['accepted']).toBe(events.length);
    }, 180_000);

    afterAll(async () => {
      await stack?.stop();
      await profile?.cleanup();
    }, 60_000);

    it('lives a funnel through create, steps, compare, breakdown, patch and delete; each write is in the change feed', async () => {
      const definition = {
        name: 'Pricing to signup',
        window_days: 7,
        steps: [
          { name: 'Pricing', conditions: { path_matches: '/pricing' } },
          { name: 'Trial click', conditions: { click_text_matches: 'Start*' } },
          { name: 'Signup', conditions: { event_type: 'conversion', event_name_matches: 'signup' } },
        ],
      };
      const created = await call('POST', '/v1/funnels', key, definition);
      expect(created.status).toBe(200);
      expect(created.body.data).toMatchObject({ name: 'Pricing to signup', scope: 'visitor', step_order: 'sequential', window_days: 7, filters: {} });
      const id = String(created.body.data['id']);

      expect((await call('GET', '/v1/funnels', readOnly)).body.data.map((f) => f['id'])).toEqual([id]);
      // The read model may finish building between the two answers: read_model moves building → ready, nothing else.
      const read = (await call('GET', `/funnels/${id}`, readOnly)).body.data;
      expect({ ...read, read_model: created.body.data['read_model'] }).toEqual(created.body.data);
      expect(['building', 'ready']).toContain(read['read_model']);

      // Reads answer from the events while the read model is built, and from the read model after;
      // a consumer stores events before it brings the read model up to date with them, so the events
      // path can be ahead for a moment. Waiting on the read model's answer keeps every read below on it.
      const steps = await waitFor('the events in the funnel read model', async () => {
        const r = await call('GET', `/v1/funnels/${id}/steps?period=last%207%20days&compare_days=previous`, readOnly);
        const current = r.status === 200 && r.body.meta['computed_from'] === 'read_model';
        return current && r.body.data[0]?.['reached'] === 2 && r.body.data[2]?.['reached'] === 1 ? r : undefined;
      });
      expect(steps.body.data.map((s) => [s['reached'], s['conv_vs_prev'], s['conv_vs_first']])).toEqual([[2, null, 1], [1, 0.5, 0.5], [1, 1, 0.5]]);
      expect(steps.body.data[1]?.['median_seconds_from_previous']).toBe(60);
      expect(steps.body.previous?.data.map((s) => s['reached'])).toEqual([1, 0, 0]);
      expect(steps.body.meta).toMatchObject({ timezone: 'UTC', currency: 'EUR', website: 'shop.test', window: { expression: 'last 7 days' } });

      const breakdown = await call('GET', `/v1/funnels/${id}/breakdown?period=last%207%20days&dimension=source&models=last_touch,linear`, readOnly);
      expect(breakdown.status).toBe(200);
      expect(breakdown.body.totals).toEqual({ entered: 2, completed: 1 });
      expect(breakdown.body.data).toEqual([
        { value: 'google', last_touch: { entered: 1, completed: 0, conversion_rate: 0 }, linear: { entered: 1, completed: 0, conversion_rate: 0 } },
        { value: 'newsletter', last_touch: { entered: 1, completed: 1, conversion_rate: 1 }, linear: { entered: 1, completed: 1, conversion_rate: 1 } },
      ]);
      // markov and shapley by channel: Ada (Email) completed, Grace (Organic Search) did not; entering
      // splits evenly (each channel is on one of the two entering journeys), completing is Email's.
      const dataDriven = await call('GET', `/v1/funnels/${id}/breakdown?period=last%207%20days&dimension=channel&models=markov,shapley&exclude_direct=true`, readOnly);
      expect(dataDriven.status).toBe(200);
      expect(dataDriven.body.data).toEqual([
        { value: 'Email', markov: { entered: 1, completed: 1, conversion_rate: 1 }, shapley: { entered: 1, completed: 1, conversion_rate: 1 } },
        { value: 'Organic Search', markov: { entered: 1, completed: 0, conversion_rate: 0 }, shapley: { entered: 1, completed: 0, conversion_rate: 0 } },
      ]);
      expect(Object.keys(dataDriven.body.meta['definitions'] as Json)).toEqual(expect.arrayContaining(['markov', 'shapley', 'exclude_direct']));
      const bySource = await call('GET', `/v1/funnels/${id}/breakdown?period=last%207%20days&dimension=source&models=markov`, readOnly);
      expect(bySource.status).toBe(400);
      expect(String(bySource.body['type'])).toMatch(/\/unsupported-combination$/);
      expect(bySource.body['allowed']).toEqual(['channel']);
      const badSwitch = await call('GET', `/v1/funnels/${id}/breakdown?period=last%207%20days&exclude_direct=maybe`, readOnly);
      expect(badSwitch.status).toBe(400);
      expect(String(badSwitch.body['type'])).toMatch(/\/invalid-request$/);

      expect((await call('PATCH', `/v1/funnels/${id}`, readOnly, { name: 'x' })).status).toBe(403);
      const patched = await call('PATCH', `/v1/funnels/${id}`, key, { steps: definition.steps.slice(0, 2), scope: 'user' });
      expect(patched.status).toBe(200);
      expect(patched.body.data).toMatchObject({ name: 'Pricing to signup', scope: 'user', steps: definition.steps.slice(0, 2) });
      // Ada identified with her signup: under user scope only she counts.
      const userSteps = await call('GET', `/v1/funnels/${id}/steps?period=last%207%20days`, readOnly);
      expect(userSteps.body.data.map((s) => s['reached'])).toEqual([1, 1]);

      expect((await call('DELETE', `/v1/funnels/${id}`, key)).body.data).toEqual({ id, deleted: true });
      expect((await call('GET', `/v1/funnels/${id}`, key)).status).toBe(404);

      const feed = await waitFor('the three funnel changes', async () => {
        const r = await fetch(`${base}/v1/changes?types=funnel.created,funnel.updated,funnel.deleted`, { headers: { authorization: `Bearer ${key}` } });
        const body = (await r.json()) as { changes: Json[] };
        return body.changes.length >= 3 ? body.changes : undefined;
      });
      expect(feed.map((c) => [c['type'], c['source'], c['object_type'], c['object_id']]).sort()).toEqual([
        ['funnel.created', `api:${keyId}`, 'funnel', id],
        ['funnel.deleted', `api:${keyId}`, 'funnel', id],
        ['funnel.updated', `api:${keyId}`, 'funnel', id],
      ]);
    });

    it('refuses what can never match or count, with the problem document the spec gives', async () => {
      const bad = await call('POST', '/v1/funnels', key, { steps: [{ name: 'A', conditions: { path_matches: 'pricing' } }, { name: 'B', conditions: { event_type: 'pageview' } }] });
      expect(bad.status).toBe(400);
      expect(String(bad.body['type'])).toMatch(/\/invalid-request$/);
      expect(String(bad.body['remediation'])).toMatch(/"\/"/);
      const mixed = await call('POST', '/v1/funnels', key, { scope: 'user', steps: [{ name: 'A', conditions: { path_matches: '/pricing' } }, { name: 'B', conditions: { source: 'revenue', revenue_event: 'trial_started' } }] });
      expect(mixed.status).toBe(400);
      expect(String(mixed.body['type'])).toMatch(/\/unsupported-combination$/);
      expect(mixed.body['allowed']).toEqual(['visitor']);
      const revenue = await call('POST', '/v1/funnels', key, { steps: [{ name: 'A', conditions: { path_matches: '/pricing' } }, { name: 'B', conditions: { source: 'revenue', revenue_event: 'trial_paused' } }] });
      expect(revenue.status).toBe(400);
      expect(revenue.body['allowed']).toEqual(expect.arrayContaining(['trial_started', 'subscription_started']));
      const one = await call('POST', '/v1/funnels', key, { steps: [{ name: 'A', conditions: { path_matches: '/pricing' } }] });
      expect(one.status).toBe(400);
      const noScope = await call('POST', '/v1/funnels', readOnly, { steps: [] });
      expect(noScope.status).toBe(403);
      expect(noScope.body['missing_scope'] ?? noScope.body['detail']).toBeDefined();
      expect((await call('GET', '/v1/funnels', key)).body.data).toEqual([]);
    });
  });
}
