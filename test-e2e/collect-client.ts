// A browser visit as the tracker sends it: two page views a minute apart on shop.test, the first
// landing on `url` from `referrer`, posted to /collect of the instance under test. Visits in the
// past are replays: sent with an API key (events:write), whose times and visitor address
// (X-Forwarded-For) the gateway believes; a browser's own hits are timed by the server.
import { randomUUID } from 'node:crypto';

const CHROME = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const MINUTE = 60_000;

export interface Visit {
  /** The visitor's _sl_aid. */
  aid: string;
  /** When the visit starts, epoch ms. */
  at: number;
  url: string;
  referrer: string | null;
  /** API key the replay is sent with; without one the hits are timed by the server (now). */
  key?: string;
}

/** Posts the visit; resolves to the HTTP status (202 when accepted). */
export async function sendVisit(base: string, publicId: string, visit: Visit): Promise<number> {
  const response = await fetch(`${base}/collect`, {
    method: 'POST',
    headers: {
      'content-type': 'text/plain', origin: 'https://shop.test', 'user-agent': CHROME, 'x-forwarded-for': '81.2.69.160',
      ...(visit.key ? { authorization: `Bearer ${visit.key}` } : {}),
    },
    body: JSON.stringify({
      site: publicId,
      aid: visit.aid,
      events: [0, 1].map((i) => ({
        id: randomUUID(), type: 'pageview', name: null, ts: visit.at + i * MINUTE,
        url: i === 0 ? visit.url : 'https://shop.test/pricing', referrer: i === 0 ? visit.referrer : visit.url, title: 'Shop', screen: '1440x900', props: {},
      })),
    }),
  });
  return response.status;
}
