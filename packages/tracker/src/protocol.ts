// The collect protocol between t.js and the gateway's public collect endpoint. Types only plus a few
// constants: the browser bundle imports these types too, so this file must stay free of Node APIs.

/** Public path the gateway serves the tracker script from. */
export const TRACKER_SCRIPT_PATH = '/t.js';
/** Path, relative to the tracker's origin (or `data-api`), that hits are POSTed to. */
export const COLLECT_PATH = '/collect';
/** First-party cookie holding the anonymous visitor id. */
export const ANONYMOUS_ID_COOKIE = '_sl_aid';
/** Cookie lifetime in seconds (one year); renewed on every visit. */
export const ANONYMOUS_ID_MAX_AGE_SECONDS = 31_536_000;

export type CollectEventType = 'pageview' | 'outbound' | 'form_submit' | 'custom' | 'identify';

/** Flat properties: no nesting, so they map onto columns and filters without guessing. */
export type CollectProps = Record<string, string | number | boolean | null>;

export interface CollectEvent {
  /** UUID v4 made in the browser, so a resent hit deduplicates. */
  id: string;
  type: CollectEventType;
  /** The custom event's name; null for every other type. */
  name: string | null;
  /** Epoch milliseconds, browser clock. */
  ts: number;
  /** Full page URL including the query (UTM parameters and ad click ids are read from it server-side). */
  url: string;
  /** document.referrer on a page load; the previous URL after a single-page-app navigation. */
  referrer: string | null;
  title: string;
  /** `<width>x<height>` of the screen. */
  screen: string;
  props: CollectProps;
  /** Only on `identify`. */
  email?: string;
  /**
   * Only on `identify`: the website backend's signature, `v2.<expires>.<hex HMAC-SHA256>` binding the
   * payload's `site` and `aid`, the email and the expiry (identify.ts, README). Without a believed one
   * the hit is refused.
   */
  sig?: string;
}

/** A browser's clock only orders the hits of one request, within this many milliseconds (see README). */
export const CLIENT_CLOCK_BOUND_MS = 30_000;

/** Body of `POST /collect`, sent as text/plain JSON so sendBeacon needs no CORS preflight. */
export interface CollectPayload {
  site: string;
  aid: string;
  events: CollectEvent[];
}
