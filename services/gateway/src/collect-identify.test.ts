// Issue 24: an identify signature binds the website, the visitor and an expiry, so a signature seen
// once cannot glue another browser to the person, nor be replayed forever. The signatures here are
// made by a local signer written from the README's format (not by the package's helper), so the test
// also holds the documented wire format. `believable` is checked at fixed times for the edges; the
// endpoint end to end (embedded gateway, stand-in ingest on the real bus) for the setting and metric.
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, defineStandIn, loadConfig, startModules, type RunningProcess } from '@sightline/kit';
import type { CollectRequest } from '@sightline/proto-schemas';
import { believable } from './collect.routes';
import { createGatewayModule } from './index';

const SECRET = 'a1'.repeat(32);
const SITE = 'site_00000000000000aa';
const OTHER_SITE = 'site_00000000000000bb';
const website = { identify_secret: SECRET, public_id: SITE };

/** The documented v2 form: v2.<expires>.<hex HMAC-SHA256(secret, "v2\n<site>\n<visitor>\n<email>\n<expires>")>. */
const sign = (o: { secret?: string; site?: string; visitor: string; email: string; expires: number }) =>
  `v2.${o.expires}.${createHmac('sha256', o.secret ?? SECRET).update(`v2\n${o.site ?? SITE}\n${o.visitor}\n${o.email.trim().toLowerCase()}\n${o.expires}`).digest('hex')}`;
/** The old unbound form: hex HMAC-SHA256 of the normalised email alone. */
const unbound = (email: string, secret = SECRET) => createHmac('sha256', secret).update(email.trim().toLowerCase()).digest('hex');

const NOW_S = 1_767_225_600; // 2026-01-01T00:00:00Z
const identify = (email: string, sig?: string) => ({ id: randomUUID(), type: 'identify', name: null, ts: NOW_S * 1000, url: 'https://shop.test/', referrer: null, title: 'Shop', screen: '1x1', props: {}, email, ...(sig === undefined ? {} : { sig }) });
/** Whether `believable` forwards the identify, for `visitor` at `atSeconds` (ms precision allowed). */
const believed = (sig: string | undefined, o: { visitor?: unknown; email?: string; atSeconds?: number; acceptUnbound?: boolean; site?: typeof website } = {}) => {
  const result = believable([identify(o.email ?? 'ada@example.com', sig)], o.site ?? website, (o.atSeconds ?? NOW_S) * 1000, { visitor: 'visitor' in o ? o.visitor : 'aid-A-0001', acceptUnbound: o.acceptUnbound ?? false });
  expect(result.forwarded.length + result.refused).toBe(1);
  return result.forwarded.length === 1;
};

describe('identify signatures bound to website, visitor and expiry (issue 24)', () => {
  const good = sign({ visitor: 'aid-A-0001', email: 'ada@example.com', expires: NOW_S + 3600 });

  it('believes a signature for this website, this visitor and this email, and forwards no signature', () => {
    expect(believed(good)).toBe(true);
    // The page may pass the email as the user typed it: it is signed and checked normalised.
    expect(believed(good, { email: '  Ada@Example.COM ' })).toBe(true);
    const { forwarded } = believable([identify('ada@example.com', good)], website, NOW_S * 1000, { visitor: 'aid-A-0001', acceptUnbound: false });
    expect(forwarded[0]).not.toHaveProperty('sig');
  });

  it('refuses a signature made for visitor A when visitor B replays it', () => {
    expect(believed(good, { visitor: 'aid-A-0001' })).toBe(true);
    expect(believed(good, { visitor: 'aid-B-0002' })).toBe(false);
    expect(believed(good, { visitor: '' })).toBe(false);
    expect(believed(good, { visitor: undefined })).toBe(false);
  });

  it('refuses a signature made for website X on website Y, even under the same secret', () => {
    const forOther = sign({ site: OTHER_SITE, visitor: 'aid-A-0001', email: 'ada@example.com', expires: NOW_S + 3600 });
    expect(believed(forOther, { site: { identify_secret: SECRET, public_id: OTHER_SITE } })).toBe(true);
    expect(believed(forOther)).toBe(false);
  });

  it('believes a signature up to its expiry plus 60 s of clock skew, and not one second later', () => {
    const expires = NOW_S;
    const sig = sign({ visitor: 'aid-A-0001', email: 'ada@example.com', expires });
    expect(believed(sig, { atSeconds: expires - 3600 })).toBe(true);
    expect(believed(sig, { atSeconds: expires + 60 })).toBe(true);
    expect(believed(sig, { atSeconds: expires + 60.001 })).toBe(false);
    expect(believed(sig, { atSeconds: expires + 61 })).toBe(false);
  });

  it('refuses an expiry more than 24 h (plus the skew) ahead: a signature\'s lifetime is bounded', () => {
    const at = (ahead: number) => sign({ visitor: 'aid-A-0001', email: 'ada@example.com', expires: NOW_S + ahead });
    expect(believed(at(86_400 + 60))).toBe(true);
    expect(believed(at(86_400 + 61))).toBe(false);
    expect(believed(at(10 * 365 * 86_400))).toBe(false);
  });

  it('refuses a tampered email, expiry or version, another secret, and malformed signatures', () => {
    expect(believed(good)).toBe(true);
    expect(believed(good, { email: 'eve@example.com' })).toBe(false);
    const [, expires, mac] = good.split('.');
    expect(believed(`v2.${Number(expires) + 1}.${mac}`)).toBe(false);
    expect(believed(`v3.${expires}.${mac}`)).toBe(false);
    expect(believed(sign({ secret: 'not-the-secret', visitor: 'aid-A-0001', email: 'ada@example.com', expires: NOW_S + 60 }))).toBe(false);
    for (const junk of [undefined, '', 'v2', `v2.${expires}`, `v2.${expires}.${mac}.x`, `v2.-1.${mac}`, `v2.1e9.${mac}`, `v2.${expires}.${mac!.slice(2)}`, 42]) {
      expect(believed(junk as string | undefined)).toBe(false);
    }
  });

  it('refuses the unbound form (bare 64 hex) by default, believes it only with the setting, and never a wrong one', () => {
    expect(believed(unbound('ada@example.com'))).toBe(false);
    expect(believed(unbound('ada@example.com'), { acceptUnbound: true })).toBe(true);
    expect(believed(unbound('ada@example.com'), { acceptUnbound: true, visitor: 'anyone' })).toBe(true);
    expect(believed(unbound('eve@example.com'), { acceptUnbound: true })).toBe(false);
    expect(believed(unbound('ada@example.com', 'not-the-secret'), { acceptUnbound: true })).toBe(false);
    // The bound form is believed whatever the setting.
    expect(believed(good, { acceptUnbound: true })).toBe(true);
  });
});

describe('POST /collect identify, end to end (embedded gateway)', () => {
  const collected: CollectRequest[] = [];
  const ingest = defineStandIn({
    name: 'ingest',
    needs: {},
    async create() {
      return {
        rpc: {
          'ingest.collect': async (request: CollectRequest) => {
            collected.push(request);
            return { accepted: (request.body as { events: unknown[] }).events.length, rejected: 0 };
          },
        },
      };
    },
  });

  interface Gateway { proc: RunningProcess; dataDir: string; publicId: string; secret: string }
  const gateways: Gateway[] = [];
  const start = async (acceptUnbound: boolean | undefined): Promise<Gateway> => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sightline-gw-identify-'));
    const proc = await startModules({
      config: loadConfig({ SIGHTLINE_PORT: '0', SIGHTLINE_ADMIN_PORT: '0', SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_LOG_LEVEL: 'silent' }),
      logger: createLogger({ level: 'silent' }),
      modules: [createGatewayModule({ demo: false, ...(acceptUnbound === undefined ? {} : { identifyAcceptUnbound: acceptUnbound }) }), ingest],
    });
    const admin = async (path: string, body: unknown) =>
      (await (await fetch(`http://127.0.0.1:${proc.adminPort}/admin${path}`, { method: 'POST', headers: { authorization: `Bearer ${proc.settings.adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as Record<string, string>;
    const ws = await admin('/workspaces', { name: 'Shop', plan: 'business' });
    const site = await admin(`/workspaces/${ws['id']}/websites`, { domain: 'shop.test' });
    const gateway = { proc, dataDir, publicId: String(site['public_id']), secret: String(site['identify_secret']) };
    gateways.push(gateway);
    return gateway;
  };
  const collect = async (gw: Gateway, aid: string, hits: unknown[]) => {
    const r = await fetch(`http://127.0.0.1:${gw.proc.publicPort}/collect`, { method: 'POST', headers: { 'content-type': 'text/plain', origin: 'https://shop.test' }, body: JSON.stringify({ site: gw.publicId, aid, events: hits }) });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  const metric = async (gw: Gateway, series: string) => {
    const text = await (await fetch(`http://127.0.0.1:${gw.proc.adminPort}/metrics`, { headers: { authorization: `Bearer ${gw.proc.settings.metricsToken}` } })).text();
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? 0 : Number(line.split(' ')[1]);
  };
  const hit = (email: string, sig: string) => ({ ...identify(email, sig), ts: Date.now() });
  const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

  afterAll(async () => {
    for (const gw of gateways) {
      await gw.proc.stop();
      rmSync(gw.dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('believes the visitor a signature names and refuses its replay by another visitor; refuses the unbound form by default, counted', async () => {
    const gw = await start(undefined);
    const sig = sign({ secret: gw.secret, site: gw.publicId, visitor: 'visitor-A', email: 'ada@example.com', expires: inAnHour() });
    collected.length = 0;
    expect((await collect(gw, 'visitor-A', [hit('ada@example.com', sig)])).body).toEqual({ accepted: 1, rejected: 0 });
    expect((await collect(gw, 'visitor-B', [hit('ada@example.com', sig)])).body).toEqual({ accepted: 0, rejected: 1 });
    expect((await collect(gw, 'visitor-B', [hit('ada@example.com', unbound('ada@example.com', gw.secret))])).body).toEqual({ accepted: 0, rejected: 1 });
    expect(collected.flatMap((r) => (r.body as { events: { type: string }[] }).events.map((e) => e.type))).toEqual(['identify']);
    expect(collected[0]?.body).toMatchObject({ aid: 'visitor-A' });
    expect(await metric(gw, 'sightline_gateway_collect_events_total{outcome="rejected"}')).toBe(2);
    expect(await metric(gw, 'sightline_gateway_collect_identifies_total{signature="bound",outcome="believed"}')).toBe(1);
    expect(await metric(gw, 'sightline_gateway_collect_identifies_total{signature="mismatch",outcome="refused"}')).toBe(1);
    expect(await metric(gw, 'sightline_gateway_collect_identifies_total{signature="unbound",outcome="refused"}')).toBe(1);
  }, 120_000);

  it('believes the unbound form with identifyAcceptUnbound (SIGHTLINE_IDENTIFY_ACCEPT_UNBOUND=true), counted apart', async () => {
    const gw = await start(true);
    expect((await collect(gw, 'visitor-B', [hit('ada@example.com', unbound('ada@example.com', gw.secret))])).body).toEqual({ accepted: 1, rejected: 0 });
    expect((await collect(gw, 'visitor-B', [hit('eve@example.com', unbound('ada@example.com', gw.secret))])).body).toEqual({ accepted: 0, rejected: 1 });
    expect(await metric(gw, 'sightline_gateway_collect_identifies_total{signature="unbound",outcome="believed"}')).toBe(1);
  }, 120_000);
});
