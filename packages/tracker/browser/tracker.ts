// t.js: the browser tracker. Built by esbuild into dist/t.js as a minified IIFE; it runs in every
// visitor's browser, so it stays tiny, dependency-free and never throws into the host page.
import type { CollectEvent, CollectEventType, CollectPayload, CollectProps } from '../src/protocol';

/** `window.sightline`: the real API once loaded; before that, the snippet's stub collecting `q`. */
interface SightlineApi {
  /** `sightline('visitor')` answers the anonymous id; every other command answers nothing. */
  (command: string, ...args: unknown[]): string | void;
  /** Calls queued by the stub before the script loaded. */
  q?: ArrayLike<unknown>[];
  /** Set once the real tracker is installed, so a second copy of the script stays inert. */
  l?: 1;
}

type TrackerWindow = Window & { sightline?: SightlineApi; doNotTrack?: string };

/** Sends a hit may have (the first included) before it is dropped. */
const MAX_ATTEMPTS = 5;
/** Hits that may wait in the page; beyond it the oldest are dropped. */
const MAX_QUEUED = 100;
/** The collect endpoint's bound on hits per request. */
const MAX_PER_REQUEST = 50;

((w: TrackerWindow, d: Document, nav: Navigator, loc: Location) => {
  const stub = w.sightline;
  if (stub && stub.l) return;
  // Deferred classic scripts still get currentScript; the selector is for odd loaders that clear it.
  const script = (d.currentScript || d.querySelector('script[data-site]')) as HTMLScriptElement | null;
  const site = script && script.getAttribute('data-site');
  if (!script || !site) return;
  const attr = (name: string) => script.getAttribute('data-' + name);

  // Do Not Track is honoured only when the site owner opts in with data-respect-dnt: calls become no-ops.
  if (attr('respect-dnt') != null && (nav.doNotTrack == '1' || w.doNotTrack == '1')) {
    const inert: SightlineApi = function () {};
    inert.l = 1;
    w.sightline = inert;
    return;
  }

  const endpoint = (attr('api') || new URL(script.src).origin).replace(/\/+$/, '') + '/collect';
  const crypto = w.crypto;
  const randomByte = () =>
    crypto && crypto.getRandomValues ? crypto.getRandomValues(new Uint8Array(1))[0]! : (Math.random() * 256) | 0;
  // randomUUID exists only in secure contexts; the fallback writes the same v4 layout from random bytes.
  const uuid = (): string =>
    crypto && crypto.randomUUID
      ? crypto.randomUUID()
      : '10000000-1000-4000-8000-100000000000'.replace(/[018]/g, (c) =>
          (+c ^ (randomByte() & (15 >> (+c / 4)))).toString(16),
        );

  // First-party anonymous id: reuse the visitor's cookie, and rewrite it so the year restarts each visit.
  const found = /(?:^|;\s*)_sl_aid=([\w-]{8,64})(?:;|$)/.exec(d.cookie);
  const aid = found ? found[1]! : uuid();
  const domain = attr('cookie-domain');
  d.cookie =
    '_sl_aid=' +
    aid +
    '; path=/; max-age=31536000; SameSite=Lax' +
    (loc.protocol == 'https:' ? '; Secure' : '') +
    (domain ? '; domain=' + domain : '');

  // Hits waiting to be sent, each with the attempts it has had. Sends go by fetch so the answer can be read:
  // a 429, a 5xx or a network failure puts the hits back (at most MAX_ATTEMPTS tries and MAX_QUEUED hits,
  // the oldest dropped first) and the next send waits for Retry-After, or 1, 2, 4, 8 s, plus up to half
  // again of jitter. On unload whatever waits goes by sendBeacon, which cannot see the answer: the last try.
  let queue: [CollectEvent, number][] = [];
  let timer: ReturnType<typeof setTimeout> | 0 = 0;
  /** Set while a retry is scheduled: new hits wait for it rather than meet the same refusal. */
  let backoff: 0 | 1 = 0;
  let referrer: string | null = d.referrer || null;
  let pageUrl = loc.href;
  let pageKey = loc.pathname + loc.search;

  const post = (batch: [CollectEvent, number][], unload?: 1) => {
    const payload: CollectPayload = { site, aid, events: batch.map((item) => item[0]) };
    // A string body goes out as text/plain;charset=UTF-8: a "simple" request, so no CORS preflight.
    const body = JSON.stringify(payload);
    try {
      if (unload && nav.sendBeacon && nav.sendBeacon(endpoint, body)) return;
    } catch (_) {
      // sendBeacon can throw on a bad URL or a body over its quota: fall through to fetch.
    }
    const retry = (seconds?: number) => {
      for (const item of batch) item[1]++;
      queue = batch.filter((item) => item[1] < MAX_ATTEMPTS).concat(queue).slice(-MAX_QUEUED);
      clearTimeout(timer);
      backoff = 1;
      timer = setTimeout(flush, (seconds! * 1e3 || 500 * 2 ** batch[0]![1]) * (1 + Math.random() / 2));
    };
    // keepalive lets a send outlive the page; CORS mode (the collect endpoint allows the page's origin) lets
    // the status and the exposed Retry-After be read.
    fetch(endpoint, { method: 'POST', body, keepalive: true }).then(
      (res) => (res.status == 429 || res.status > 499) && retry(+res.headers.get('retry-after')!),
      () => retry(),
    );
  };

  const flush = (unload?: 1) => {
    clearTimeout(timer);
    timer = backoff = 0;
    // Routers often set the title just after pushState: a pageview still on the current URL takes it now.
    for (const [event] of queue) if (event.type == 'pageview' && event.url == loc.href) event.title = d.title;
    while (queue.length) post(queue.splice(0, MAX_PER_REQUEST), unload);
  };

  // Only flat primitive values leave the page; anything nested is dropped rather than guessed at.
  const flat = (input: unknown): CollectProps => {
    const out: CollectProps = {};
    if (input && typeof input == 'object') {
      for (const key of Object.keys(input)) {
        const value = (input as Record<string, unknown>)[key];
        const kind = typeof value;
        if (value === null || kind == 'string' || kind == 'number' || kind == 'boolean') {
          out[key] = value as CollectProps[string];
        }
      }
    }
    return out;
  };

  /** Queues an event; events of one tick share a request, and `now` sends before a navigation can start. */
  const send = (type: CollectEventType, name: string | null, props?: unknown, email?: string, now?: 1, sig?: string) => {
    const event: CollectEvent = {
      id: uuid(),
      type,
      name,
      ts: Date.now(),
      url: loc.href,
      referrer,
      title: d.title,
      screen: screen.width + 'x' + screen.height,
      props: flat(props),
    };
    if (email) event.email = email;
    if (sig) event.sig = sig;
    if (queue.push([event, 0]) > MAX_QUEUED) queue.shift();
    if (now && !backoff) flush();
    else if (!timer) timer = setTimeout(flush, 0);
  };

  // Single-page-app navigation: a pageview when path or query changes (hash-only changes are not pages).
  const onNavigate = () => {
    const key = loc.pathname + loc.search;
    if (key == pageKey) return;
    pageKey = key;
    referrer = pageUrl;
    pageUrl = loc.href;
    send('pageview', null);
  };
  const history = w.history;
  for (const method of ['pushState', 'replaceState'] as const) {
    const original = history[method];
    history[method] = function (this: History, ...args: Parameters<History['pushState']>) {
      original.apply(this, args);
      onNavigate();
    };
  }
  w.addEventListener('popstate', onNavigate);

  // Outbound links: any primary or middle click on an http(s) link to another hostname.
  const onClick = (e: MouseEvent) => {
    const target = e.target as Element | null;
    const link = target && target.closest ? (target.closest('a[href]') as HTMLAnchorElement | null) : null;
    if (e.button < 2 && link && /^https?:$/.test(link.protocol) && link.hostname != loc.hostname) {
      send('outbound', null, { href: link.href }, undefined, 1);
    }
  };
  d.addEventListener('click', onClick, true);
  d.addEventListener('auxclick', onClick, true);

  // Form submits: only the form's identity. Attributes, not properties, because a field named "id" or
  // "action" shadows the form's own property; field values are never read.
  d.addEventListener(
    'submit',
    (e) => {
      const form = e.target as HTMLFormElement;
      const get = (name: string) => form.getAttribute(name);
      send('form_submit', null, { id: get('id'), name: get('name'), action: new URL(get('action') || '', loc.href).href }, undefined, 1);
    },
    true,
  );

  // The last moment a page is guaranteed to run: whatever still waits, retries included, goes by beacon.
  w.addEventListener('pagehide', () => flush(1));
  d.addEventListener('visibilitychange', () => {
    if (d.visibilityState == 'hidden') flush(1);
  });

  const run = (command: unknown, ...args: unknown[]) => {
    if (command == 'event') {
      if (typeof args[0] == 'string' && args[0]) send('custom', args[0], args[1]);
    } else if (command == 'identify') {
      // The signature comes from the site's backend (bound to this site, this visitor and an expiry);
      // without it the server ignores the claim.
      const email = typeof args[0] == 'string' ? args[0].trim() : '';
      if (email.indexOf('@') > 0) send('identify', null, undefined, email, undefined, typeof args[1] == 'string' ? args[1] : undefined);
    } else if (command == 'pageview') {
      send('pageview', null, args[0]);
    } else if (command == 'visitor') {
      // The id an identify signature must bind; a callback also works through the stub queue, before load.
      if (typeof args[0] == 'function') args[0](aid);
      return aid;
    }
  };
  const live: SightlineApi = function (command: string, ...args: unknown[]) {
    try {
      return run(command, ...args);
    } catch (_) {
      // Analytics must never break the page that hosts it.
    }
  };
  live.l = 1;
  w.sightline = live;

  send('pageview', null);
  const pending = stub && stub.q;
  if (pending) for (let i = 0; i < pending.length; i++) live.apply(null, Array.prototype.slice.call(pending[i]) as [string]);
})(window, document, navigator, location);
