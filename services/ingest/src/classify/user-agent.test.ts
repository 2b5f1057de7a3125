import { createUserAgentParser } from './user-agent';

const parser = createUserAgentParser();

// Real user agent strings as sent by the named clients.
const cases: [string, string, { bot: boolean; browser: string | null; operating_system: string | null; device_type: string | null }][] = [
  [
    'Chrome on Windows',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    { bot: false, browser: 'Chrome', operating_system: 'Windows', device_type: 'desktop' },
  ],
  [
    'Safari on macOS',
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
    { bot: false, browser: 'Safari', operating_system: 'macOS', device_type: 'desktop' },
  ],
  [
    'Safari on iPhone',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
    { bot: false, browser: 'Safari', operating_system: 'iOS', device_type: 'mobile' },
  ],
  [
    'Safari on iPad',
    'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
    { bot: false, browser: 'Safari', operating_system: 'iOS', device_type: 'tablet' },
  ],
  [
    'Chrome on Android phone',
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
    { bot: false, browser: 'Chrome', operating_system: 'Android', device_type: 'mobile' },
  ],
  [
    'Samsung Internet on Galaxy Tab',
    'Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Safari/537.36',
    { bot: false, browser: 'Samsung Internet', operating_system: 'Android', device_type: 'tablet' },
  ],
  [
    'Firefox on Linux',
    'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
    { bot: false, browser: 'Firefox', operating_system: 'Ubuntu', device_type: 'desktop' },
  ],
  [
    'Edge on Windows',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.67',
    { bot: false, browser: 'Edge', operating_system: 'Windows', device_type: 'desktop' },
  ],
  [
    'PlayStation 5',
    'Mozilla/5.0 (PlayStation; PlayStation 5/2.26) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.0 Safari/605.1.15',
    { bot: false, browser: 'Safari', operating_system: 'PlayStation', device_type: 'console' },
  ],
  [
    'Samsung smart TV',
    'Mozilla/5.0 (SMART-TV; LINUX; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) 76.0.3809.146/6.0 TV Safari/537.36',
    { bot: false, browser: 'Safari', operating_system: 'Tizen', device_type: 'tv' },
  ],
  [
    'Googlebot',
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    { bot: true, browser: null, operating_system: null, device_type: 'other' },
  ],
  ['curl', 'curl/8.5.0', { bot: true, browser: null, operating_system: null, device_type: 'other' }],
  [
    'Headless Chrome',
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36',
    { bot: true, browser: 'Chrome', operating_system: 'Linux', device_type: 'desktop' },
  ],
];

describe('user agent parsing', () => {
  it.each(cases)('%s', (_name, ua, expected) => {
    expect(parser.parse(ua)).toEqual(expected);
  });

  it('answers nulls and bot=false when there is no user agent (server-side events)', () => {
    for (const ua of [null, '', '   ']) {
      expect(parser.parse(ua)).toEqual({ bot: false, browser: null, operating_system: null, device_type: null });
    }
  });

  it('memoises parses: the same object comes back for the same string', () => {
    const ua = cases[0]?.[1] ?? '';
    expect(parser.parse(ua)).toBe(parser.parse(ua));
  });

  it('still answers correctly for uncacheably long strings', () => {
    const long = `${cases[0]?.[1] ?? ''} ${'x'.repeat(600)}`;
    expect(parser.parse(long)).toMatchObject({ browser: 'Chrome', operating_system: 'Windows' });
  });
});
