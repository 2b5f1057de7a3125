// Issue 24: the review's probes that froze the process, replayed over HTTP against `sightline start`
// in its own process (as a user sees it). A funnel pattern that backtracks exponentially on a
// regular-expression engine and an alert template whose nested sections expand as 3^depth must each
// be answered quickly with a 400 or a bounded result, and the process's event loop must stay free
// for everyone else meanwhile: its own event-loop delay histogram (scraped from /metrics before
// and after) keeps a p99 under 50 ms. The bounds are the issue's; each is asserted per request.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { adminClient } from './admin-client';
import { startSightline, type SightlineProcess } from './processes';

const ADMIN_TOKEN = 'hardening-probes-admin-token-0123';
const DOMAIN = 'probes.test';
/** The longest event type POST /events takes, shaped to make a backtracking matcher try every split. */
const LONG_TYPE = `${'a'.repeat(99)}b`;
const RESPONSE_BOUND_MS = 100;
const LOOP_P99_BOUND_S = 0.05;
const ROUNDS = 10;

type Json = Record<string, unknown>;

describe('issue 24: the ReDoS and template probes over HTTP', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-probes-'));
  let proc: SightlineProcess;
  let key: string;

  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json; ms: number }> => {
    const started = performance.now();
    const response = await fetch(`${proc.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    return { status: response.status, body: text ? (JSON.parse(text) as Json) : {}, ms };
  };

  /** The event-loop delay histogram's count at or under 50 ms, and in all. */
  const loopSamples = async (): Promise<{ fast: number; total: number }> => {
    const text = await (await fetch(`${proc.adminUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    const bucket = (le: string) => Number(text.split('\n').find((line) => line.startsWith(`sightline_event_loop_delay_seconds_bucket{le="${le}"} `))?.split(' ')[1]);
    return { fast: bucket(String(LOOP_P99_BOUND_S)), total: bucket('+Inf') };
  };

  beforeAll(async () => {
    proc = await startSightline(['start'], { SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_DEMO: 'off', SIGHTLINE_ADMIN_TOKEN: ADMIN_TOKEN });
    const admin = adminClient(proc.adminUrl, ADMIN_TOKEN);
    const ws = await admin('/workspaces', { name: 'Probes', plan: 'internal' });
    await admin(`/workspaces/${ws['id']}/websites`, { domain: DOMAIN });
    key = String((await admin('/keys', { workspace_id: ws['id'] }))['key']);
    // The website records the long custom event type, so a funnel pattern is checked against it.
    const sent = await call('POST', `/v1/events?website=${DOMAIN}`, { events: [{ event_type: LONG_TYPE, anonymous_id: 'probe-visitor', occurred_at: new Date(Date.now() - 60_000).toISOString() }] });
    expect(sent.status).toBe(200);
    // Until the pipeline has recorded the type, a funnel naming it is refused (it matches nothing).
    let recorded = false;
    for (let tries = 0; tries < 150 && !recorded; tries += 1) {
      const funnel = await call('POST', `/v1/funnels?website=${DOMAIN}`, { name: 'catalog check', steps: [{ name: 'a', conditions: { event_type: LONG_TYPE } }, { name: 'b', conditions: { event_type: 'pageview' } }] });
      recorded = funnel.status === 200;
      if (recorded) await call('DELETE', `/v1/funnels/${String((funnel.body['data'] as Json)['id'])}?website=${DOMAIN}`);
      else await new Promise((r) => setTimeout(r, 200));
    }
    expect(recorded).toBe(true);
    // Every path the probes take, once, so the figures below are the probes' and not a first call's.
    await call('GET', `/v1/automations?website=${DOMAIN}`);
    await call('GET', `/v1/funnels?website=${DOMAIN}`);
  }, 180_000);

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('answers every probe within 100 ms with a 400 or a bounded result, and the event loop stays free', async () => {
    const before = await loopSamples();
    const answers: { probe: string; status: number; ms: number; bytes: number }[] = [];
    const probe = async (name: string, method: string, path: string, body?: unknown) => {
      const answer = await call(method, path, body);
      answers.push({ probe: name, status: answer.status, ms: answer.ms, bytes: JSON.stringify(answer.body).length });
      return answer;
    };

    // Ten rounds, so the event-loop samples cover seconds of the probes and not a moment.
    for (let round = 0; round < ROUNDS; round += 1) {
      // Funnel patterns: each extra `*a` multiplied a backtracking matcher's time by ~10.
      for (const stars of [6, 12, 20]) {
        const pattern = '*a'.repeat(stars);
        const answer = await probe(`funnel event_type ${pattern}`, 'POST', `/v1/funnels?website=${DOMAIN}`, {
          name: `probe ${stars}`,
          steps: [{ name: 'long', conditions: { event_type: pattern } }, { name: 'view', conditions: { event_type: 'pageview' } }],
        });
        expect([200, 400]).toContain(answer.status);
        if (answer.status === 200) await call('DELETE', `/v1/funnels/${String((answer.body['data'] as Json)['id'])}?website=${DOMAIN}`);
      }
      // Every other matcher, too long to be a pattern anyone means.
      for (const field of ['path_matches', 'url_matches', 'event_name_matches', 'click_text_matches']) {
        const answer = await probe(`funnel ${field}`, 'POST', `/v1/funnels?website=${DOMAIN}`, {
          name: `probe ${field}`,
          steps: [{ name: 'long', conditions: { event_type: '*', [field]: `${'*a'.repeat(2_000)}b` } }, { name: 'view', conditions: { event_type: 'pageview' } }],
        });
        expect(answer.status).toBe(400);
      }

      // Templates: nested sections over a list repeat once per item at every level.
      const nested = (depth: number) => `${'{{#events}}'.repeat(depth)}x${'{{/events}}'.repeat(depth)}`;
      const alert = (template: string) => ({
        name: 'probe',
        template_id: 'conversion-to-chat',
        spec: { version: 1, trigger: { kind: 'schedule', cron: '0 8 * * *' }, compose: { template }, deliver: [{ channel: 'email', to: ['team@example.com'] }], pacing: { mode: 'each' } },
      });
      for (const depth of [11, 40, 400]) {
        const answer = await probe(`template depth ${depth}`, 'POST', `/v1/automations?website=${DOMAIN}`, alert(nested(depth)));
        expect(answer.status).toBe(400);
      }
      // The deepest nesting allowed, run now: its message is bounded (or the run fails readably).
      const allowed = await probe('template depth 4 (create)', 'POST', `/v1/automations?website=${DOMAIN}`, alert(nested(4)));
      expect(allowed.status).toBe(200);
      const id = String((allowed.body['data'] as Json)['id']);
      const run = await probe('template depth 4 (run)', 'POST', `/v1/automations/${id}/run?website=${DOMAIN}`, { test: true });
      expect(run.status).toBe(200);
      const shown = await probe('template depth 4 (read)', 'GET', `/v1/automations/${id}?website=${DOMAIN}`);
      expect(shown.status).toBe(200);
    }
    const after = await loopSamples();
    const fast = after.fast - before.fast;
    const total = after.total - before.total;
    for (const answer of answers) {
      expect({ probe: answer.probe, withinBound: answer.ms < RESPONSE_BOUND_MS, ms: Math.round(answer.ms) }).toEqual({ probe: answer.probe, withinBound: true, ms: expect.any(Number) });
      expect(answer.bytes).toBeLessThan(200_000);
    }
    const slowest = [...answers].sort((x, y) => y.ms - x.ms)[0];
    process.stdout.write(`probes: ${answers.length} answers, slowest ${slowest?.probe} ${Math.round(slowest?.ms ?? 0)} ms; event loop: ${fast}/${total} samples under 50 ms\n`);
    expect(total).toBeGreaterThan(0);
    // p99 under 50 ms: at least 99% of the samples taken while the probes ran were that quick.
    expect({ fastShare: fast / total, samples: total }).toEqual({ fastShare: expect.any(Number), samples: total });
    expect(fast / total).toBeGreaterThanOrEqual(0.99);
  }, 120_000);
});
