// Test fixtures for driving t.js in real Chromium: a collect recorder (serves t.js, records POST /collect,
// answers CORS as the gateway does, and can be told to refuse requests),
// a small website with the script tag and a pushState SPA, and a Chromium launcher. Exported so the
// gateway's end-to-end test can reuse the site and launcher against the real collect endpoint.
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { bundleTracker } from '../src/bundle';
import { COLLECT_PATH, TRACKER_SCRIPT_PATH, type CollectEvent, type CollectPayload } from '../src/protocol';

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches Debian's Chromium headless; fails naming Chromium and the install command when it is absent. */
export async function launchChromium(executablePath: string = CHROMIUM_PATH): Promise<Browser> {
  if (!existsSync(executablePath)) {
    throw new Error(
      `Chromium is not installed at ${executablePath}; install it with \`bash scripts/ensure-browser.sh\` ` +
        '(or `apt-get update && apt-get install -y chromium`)',
    );
  }
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS, timeout: 30_000 });
}

async function listen(server: http.Server, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Polls `find` every 25 ms until it returns a value; throws naming `what` after `timeoutMs`. */
export async function waitUntil<T>(find: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** One POST /collect as received. */
export interface RecordedHit {
  raw: string;
  contentType: string | undefined;
  payload: CollectPayload;
  /** The request's Sec-Fetch-Mode: `cors` for the tracker's fetch, `no-cors` for a beacon. */
  mode: string | undefined;
  /** When it arrived (ms since the epoch). */
  at: number;
  /** The status it was answered with. */
  status: number;
}

/** How the recorder answers a POST /collect; the default is 202. */
export interface CollectAnswer {
  /** 0 drops the connection without an answer: a network failure for the browser. */
  status: number;
  headers?: Record<string, string>;
}

/** Decides the answer to each POST /collect, given the request and how many came before it. */
export type CollectResponder = (hit: Omit<RecordedHit, 'status'>, index: number) => CollectAnswer | undefined;

/** An event with the site and anonymous id of the hit that carried it. */
export type RecordedEvent = CollectEvent & { site: string; aid: string };

export interface CollectRecorder {
  /** e.g. http://127.0.0.1:40123 */
  origin: string;
  /** Where the recorder serves t.js. */
  scriptUrl: string;
  /** A page on this (other) hostname, the target of the test site's outbound link. */
  outboundUrl: string;
  /** The requests answered 2xx: what was collected. */
  hits: RecordedHit[];
  /** The requests answered otherwise (the `respond` option's refusals). */
  refused: RecordedHit[];
  /** CORS preflights seen; the protocol is built so there are none. */
  preflights: number;
  events(filter?: (event: RecordedEvent) => boolean): RecordedEvent[];
  waitForEvent(filter: (event: RecordedEvent) => boolean, what: string, timeoutMs?: number): Promise<RecordedEvent>;
  close(): Promise<void>;
}

/**
 * Serves t.js (a fresh bundle of the source unless `script` is given) and records POST /collect. Like the
 * gateway, a collect answer lets the page's origin read it (Access-Control-Allow-Origin, and Retry-After
 * exposed); `respond` may refuse requests (e.g. 503 with Retry-After), which are kept in `refused`.
 */
export async function startCollectRecorder(
  options: { script?: string; host?: string; respond?: CollectResponder } = {},
): Promise<CollectRecorder> {
  const script = options.script ?? (await bundleTracker());
  const host = options.host ?? '127.0.0.1';
  const hits: RecordedHit[] = [];
  const refused: RecordedHit[] = [];
  const state = { preflights: 0 };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'OPTIONS') {
      state.preflights += 1;
      res.writeHead(204, { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*' }).end();
    } else if (req.method === 'GET' && path === TRACKER_SCRIPT_PATH) {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' }).end(script);
    } else if (req.method === 'POST' && path === COLLECT_PATH) {
      const cors: Record<string, string> = req.headers.origin
        ? { 'access-control-allow-origin': req.headers.origin, vary: 'Origin', 'access-control-expose-headers': 'Retry-After' }
        : {};
      const at = Date.now();
      readBody(req).then(
        (raw) => {
          let payload: CollectPayload;
          try {
            payload = JSON.parse(raw) as CollectPayload;
          } catch {
            res.writeHead(400, cors).end();
            return;
          }
          const hit = { raw, contentType: req.headers['content-type'], payload, mode: req.headers['sec-fetch-mode'] as string | undefined, at };
          const answer = options.respond?.(hit, hits.length + refused.length) ?? { status: 202 };
          (answer.status > 0 && answer.status < 300 ? hits : refused).push({ ...hit, status: answer.status });
          if (answer.status === 0) req.socket.destroy();
          else res.writeHead(answer.status, { ...cors, ...answer.headers }).end();
        },
        () => res.writeHead(400).end(),
      );
    } else if (req.method === 'GET' && path === '/elsewhere') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Elsewhere</title><p>elsewhere</p>');
    } else {
      res.writeHead(404).end();
    }
  });
  const port = await listen(server, host);
  const origin = `http://${host}:${port}`;
  const events = (filter?: (event: RecordedEvent) => boolean): RecordedEvent[] => {
    const all = hits.flatMap((hit) =>
      hit.payload.events.map((event) => ({ ...event, site: hit.payload.site, aid: hit.payload.aid })),
    );
    return filter ? all.filter(filter) : all;
  };
  return {
    origin,
    scriptUrl: origin + TRACKER_SCRIPT_PATH,
    outboundUrl: `${origin}/elsewhere`,
    hits,
    refused,
    get preflights() {
      return state.preflights;
    },
    events,
    waitForEvent: (filter, what, timeoutMs = 10_000) => waitUntil(() => events(filter)[0], what, timeoutMs),
    close: () => closeServer(server),
  };
}

export interface TestSiteOptions {
  /** The tracker's script URL (the recorder's or the gateway's /t.js). */
  scriptSrc: string;
  /** Website public id for data-site. */
  site: string;
  /** Optional data-api override. */
  api?: string;
  /** Adds data-respect-dnt. */
  respectDnt?: boolean;
  /** The outbound link's href; must be on another hostname and on loopback. */
  outboundUrl: string;
  /** Hostname in the site's URLs; it listens on 127.0.0.1, and Chromium resolves localhost there itself. */
  hostname?: string;
}

export interface TestSite {
  origin: string;
  url(pathAndQuery: string): string;
  /** Bodies of the site's own form posts (they carry the field values that must never reach collect). */
  formPosts: string[];
  close(): Promise<void>;
}

const escapeAttr = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** Every page of the test website: queue stub with a call made before load, the script tag, an SPA
 *  link handled with pushState, an outbound link and a form whose fields must never be sent. */
function page(options: TestSiteOptions, title: string): string {
  const attrs = [
    `src="${escapeAttr(options.scriptSrc)}"`,
    `data-site="${escapeAttr(options.site)}"`,
    options.api ? `data-api="${escapeAttr(options.api)}"` : '',
    options.respectDnt ? 'data-respect-dnt' : '',
  ].join(' ');
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${title}</title>
<script>window.sightline=window.sightline||function(){(window.sightline.q=window.sightline.q||[]).push(arguments)};
sightline('event','queued_before_load',{early:true});</script>
<script defer ${attrs}></script>
</head><body>
<a id="spa-link" href="/app/pricing?tab=annual">Pricing</a>
<a id="outbound-link" href="${escapeAttr(options.outboundUrl)}">Elsewhere</a>
<form id="signup-form" name="signup" action="/thanks?src=form" method="post">
  <input id="email-field" name="email"><input name="action" value="shadowing-the-form-action">
  <button id="submit-button" type="submit">Sign up</button>
</form>
<script>
document.getElementById('spa-link').addEventListener('click', function (e) {
  e.preventDefault();
  history.pushState({}, '', this.getAttribute('href'));
  document.title = 'Pricing';
});
</script>
</body></html>`;
}

/** Starts the website: every GET path serves the page; POST /thanks records the form body. */
export async function startTestSite(options: TestSiteOptions): Promise<TestSite> {
  const formPosts: string[] = [];
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'POST' && path === '/thanks') {
      readBody(req).then((body) => {
        formPosts.push(body);
        res.writeHead(200, { 'content-type': 'text/html' }).end(page(options, 'Thanks'));
      }, () => res.writeHead(400).end());
    } else if (req.method === 'GET' && path !== '/favicon.ico') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(options, 'Landing'));
    } else {
      res.writeHead(404).end();
    }
  });
  const port = await listen(server, '127.0.0.1');
  const origin = `http://${options.hostname ?? 'localhost'}:${port}`;
  return {
    origin,
    url: (pathAndQuery) => origin + pathAndQuery,
    formPosts,
    close: () => closeServer(server),
  };
}
