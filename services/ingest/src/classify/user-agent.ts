// User agent → bot flag, browser, operating system and device type. ua-parser-js 1.x (MIT) parses;
// isbot (Unlicense) spots crawlers. Parses are memoised: real traffic repeats a few thousand UAs.
import { isbot } from 'isbot';
import UAParser from 'ua-parser-js';
import { LruCache } from './lru-cache';

export type DeviceType = 'desktop' | 'mobile' | 'tablet' | 'tv' | 'console' | 'other';

export interface UserAgentInfo {
  bot: boolean;
  browser: string | null;
  operating_system: string | null;
  device_type: DeviceType | null;
}

/** No user agent (a server-side event, say) is not a bot: we cannot tell, and dropping it loses data. */
const UNKNOWN: UserAgentInfo = Object.freeze({ bot: false, browser: null, operating_system: null, device_type: null });

/** Longer UAs are not cached: they are nearly always unique junk or attacks. */
const MAX_CACHED_LENGTH = 512;

const BROWSER_NAMES: Record<string, string> = {
  'Mobile Safari': 'Safari',
  'Mobile Firefox': 'Firefox',
  'Mobile Chrome': 'Chrome',
  'Chrome Headless': 'Chrome',
  'Opera Mobi': 'Opera',
  'Opera Touch': 'Opera',
  'Samsung Browser': 'Samsung Internet',
};

const OS_NAMES: Record<string, string> = {
  'Mac OS': 'macOS',
  'Chromium OS': 'Chrome OS',
  'Windows Phone': 'Windows Phone',
};

const DEVICE_TYPES: Record<string, DeviceType> = {
  mobile: 'mobile',
  tablet: 'tablet',
  smarttv: 'tv',
  console: 'console',
  wearable: 'other',
  embedded: 'other',
  xr: 'other',
};

/** Operating systems whose UAs without a device type are phones rather than desktops. */
const MOBILE_OS = new Set(['iOS', 'Android', 'Windows Phone', 'BlackBerry', 'KaiOS', 'HarmonyOS']);

export interface UserAgentParser {
  parse(userAgent: string | null): UserAgentInfo;
  /** Parses held in its cache (bounded in size and age). */
  cacheSize(): number;
}

export function createUserAgentParser(options: { cacheSize?: number } = {}): UserAgentParser {
  const cache = new LruCache<string, UserAgentInfo>(options.cacheSize ?? 5000);
  const parser = new UAParser();
  return {
    cacheSize: () => cache.size,
    parse(userAgent) {
      if (!userAgent) return UNKNOWN;
      const ua = userAgent.trim();
      if (ua === '') return UNKNOWN;
      const cacheable = ua.length <= MAX_CACHED_LENGTH;
      const cached = cacheable ? cache.get(ua) : undefined;
      if (cached) return cached;
      const info = Object.freeze(parseUncached(parser, ua));
      if (cacheable) cache.set(ua, info);
      return info;
    },
  };
}

function parseUncached(parser: UAParser.UAParserInstance, ua: string): UserAgentInfo {
  const result = parser.setUA(ua).getResult();
  const browserRaw = result.browser.name ?? null;
  const osRaw = result.os.name ?? null;
  const browser = browserRaw ? (BROWSER_NAMES[browserRaw] ?? browserRaw) : null;
  const operating_system = osRaw ? (OS_NAMES[osRaw] ?? osRaw) : null;
  return { bot: isbot(ua), browser, operating_system, device_type: deviceType(result.device.type, operating_system, browser) };
}

function deviceType(raw: string | undefined, os: string | null, browser: string | null): DeviceType | null {
  if (raw) return DEVICE_TYPES[raw] ?? 'other';
  // ua-parser leaves desktops untyped; a known mobile OS without a type is still a phone.
  if (os && MOBILE_OS.has(os)) return 'mobile';
  if (os || browser) return 'desktop';
  return 'other';
}
