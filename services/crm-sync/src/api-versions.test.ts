// The table of provider API versions: no default may be past its sunset when the tests run (bump the
// row before the provider turns the version off), overrides win, and the warning window is exact.
import { PROVIDER_APIS, API_VERSIONS, apiVersion, daysUntil, sunsetWarnings, SUNSET_WARNING_DAYS } from './api-versions';

const DAY_MS = 86_400_000;

describe('API versions', () => {
  it('has no default version already past its sunset', () => {
    const now = new Date();
    const past = PROVIDER_APIS.filter((api) => daysUntil(API_VERSIONS[api].sunset, now) <= 0).map((api) => `${api} ${API_VERSIONS[api].version} (sunset ${API_VERSIONS[api].sunset})`);
    expect(past).toEqual([]);
  });

  it('states every row as a version, a calendar day and a source', () => {
    for (const api of PROVIDER_APIS) {
      const row = API_VERSIONS[api];
      expect(row.version).not.toBe('');
      expect(row.sunset).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(new Date(`${row.sunset}T00:00:00Z`).toISOString().slice(0, 10)).toBe(row.sunset);
      expect(row.source).toMatch(/^https:\/\//);
    }
    expect(API_VERSIONS.linkedin_marketing.version).toMatch(/^\d{6}$/);
    expect(API_VERSIONS.meta_graph.version).toMatch(/^v\d+\.\d+$/);
    expect(API_VERSIONS.google_ads.version).toMatch(/^v\d+$/);
  });

  it('lets a connection override the default, and ignores a blank override', () => {
    expect(apiVersion('meta_graph')).toBe(API_VERSIONS.meta_graph.version);
    expect(apiVersion('meta_graph', 'v99.0')).toBe('v99.0');
    expect(apiVersion('linkedin_marketing', ' 202612 ')).toBe('202612');
    expect(apiVersion('google_ads', null)).toBe(API_VERSIONS.google_ads.version);
    expect(apiVersion('google_ads', '  ')).toBe(API_VERSIONS.google_ads.version);
  });

  it('warns exactly 60 days before a sunset, not 61', () => {
    const sunset = Date.parse(`${API_VERSIONS.linkedin_marketing.sunset}T00:00:00Z`);
    const at60 = sunsetWarnings(new Date(sunset - 60 * DAY_MS + 13 * 3_600_000));
    expect(at60).toContainEqual({ api: 'linkedin_marketing', version: API_VERSIONS.linkedin_marketing.version, sunset: API_VERSIONS.linkedin_marketing.sunset, daysLeft: 60 });
    const at61 = sunsetWarnings(new Date(sunset - 61 * DAY_MS + 23 * 3_600_000));
    expect(at61.map((w) => w.api)).not.toContain('linkedin_marketing');
    expect(SUNSET_WARNING_DAYS).toBe(60);
  });

  it('keeps warning once a sunset has passed, soonest first, and honours a narrower window', () => {
    const warnings = sunsetWarnings(new Date('2099-12-31T12:00:00Z'));
    expect(warnings.map((w) => w.api).sort()).toEqual([...PROVIDER_APIS].sort());
    expect(warnings.map((w) => w.daysLeft)).toEqual([...warnings.map((w) => w.daysLeft)].sort((a, b) => a - b));
    expect(warnings.every((w) => w.daysLeft <= 0)).toBe(true);
    const sunset = Date.parse(`${API_VERSIONS.meta_graph.sunset}T00:00:00Z`);
    expect(sunsetWarnings(new Date(sunset - 10 * DAY_MS), 5).map((w) => w.api)).not.toContain('meta_graph');
    expect(sunsetWarnings(new Date(sunset - 10 * DAY_MS), 10).map((w) => w.api)).toContain('meta_graph');
  });
});
