// Validation that understands the steps: each kind of matcher that can never match, each
// combination that would count nobody, and the edges of the numeric bounds (at and one past).
import { ProblemError } from '@sightline/kit';
import { FUNNEL_FILTER_DIMENSIONS, REVENUE_EVENTS } from '@sightline/proto-schemas';
import { performance } from 'node:perf_hooks';
import { checkDefinition, eventTypeCatalog, MAX_LISTED_EVENT_TYPES, readFields, withDefaults, type FunnelDefinition } from './definition';
import { canStartWith, globMatches, globToLike } from './glob';

const catalog = eventTypeCatalog(['signup']);
const visit = { name: 'Visit', conditions: { path_matches: '/pricing' } };
const trial = { name: 'Trial', conditions: { source: 'revenue', revenue_event: 'trial_started' } };

function refusal(body: unknown, partial = false): ProblemError {
  try {
    const fields = readFields(body, partial);
    checkDefinition(withDefaults(fields as FunnelDefinition), catalog);
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}
const accepted = (body: Record<string, unknown>): FunnelDefinition => {
  const d = withDefaults(readFields(body, false));
  checkDefinition(d, catalog);
  return d;
};
const step = (conditions: Record<string, unknown>) => ({ steps: [visit, { name: 'Next', conditions }] });

describe('funnel definitions', () => {
  it('fills defaults: name from the step names, visitor, sequential, 30 days, no filter', () => {
    expect(accepted({ steps: [visit, { name: 'Signup', conditions: { path_matches: '/signup' } }] })).toEqual({
      name: 'Visit → Signup', scope: 'visitor', step_order: 'sequential', window_days: 30, filters: {},
      steps: [visit, { name: 'Signup', conditions: { path_matches: '/signup' } }],
    });
  });

  it('takes 2 to 10 steps and refuses 1 and 11', () => {
    expect(accepted({ steps: [visit, visit] }).steps).toHaveLength(2);
    expect(accepted({ steps: Array(10).fill(visit) }).steps).toHaveLength(10);
    expect(refusal({ steps: [visit] }).kind).toBe('invalid-request');
    expect(refusal({ steps: Array(11).fill(visit) }).kind).toBe('invalid-request');
  });

  it('takes window_days 1 to 365 and refuses 0, 366 and fractions', () => {
    expect(accepted({ window_days: 1, steps: [visit, visit] }).window_days).toBe(1);
    expect(accepted({ window_days: 365, steps: [visit, visit] }).window_days).toBe(365);
    for (const bad of [0, 366, 1.5]) expect(refusal({ window_days: bad, steps: [visit, visit] }).kind).toBe('invalid-request');
  });

  it('refuses an event_type no website event can have, listing the catalog (known types and the website\'s own)', () => {
    const p = refusal(step({ event_type: 'pagevew' }));
    expect(p.kind).toBe('invalid-request');
    expect(p.allowed).toEqual(['pageview', 'outbound', 'form_submit', 'custom', 'identify', 'conversion', 'purchase', 'signup']);
    expect(p.message).toMatch(/Step 2/);
    expect(accepted(step({ event_type: 'signup' })).steps).toHaveLength(2);
    expect(accepted(step({ event_type: 'page*' })).steps).toHaveLength(2);
    expect(refusal(step({ event_type: 'x*' })).kind).toBe('invalid-request');
  });

  it('refuses a path pattern that cannot match a path (no leading slash, a query string or fragment)', () => {
    expect(refusal(step({ path_matches: 'pricing' })).remediation).toMatch(/"\/"/);
    expect(refusal(step({ path_matches: '/pricing?plan=pro' })).kind).toBe('invalid-request');
    expect(refusal(step({ path_matches: '/docs#install' })).kind).toBe('invalid-request');
    expect(accepted(step({ path_matches: '*/pricing' })).steps).toHaveLength(2);
  });

  it('refuses a URL pattern that cannot start with a scheme', () => {
    expect(refusal(step({ url_matches: 'www.example.com/*' })).kind).toBe('invalid-request');
    expect(refusal(step({ url_matches: 'ftp://example.com/*' })).kind).toBe('invalid-request');
    expect(accepted(step({ url_matches: 'https://example.com/*' })).steps).toHaveLength(2);
    expect(accepted(step({ url_matches: 'http*' })).steps).toHaveLength(2);
    expect(accepted(step({ url_matches: '*utm_source=news*' })).steps).toHaveLength(2);
  });

  it('refuses a name matcher on event types that carry no name, and one longer than any name', () => {
    const p = refusal(step({ event_type: 'pageview', event_name_matches: 'signup' }));
    expect(p.allowed).not.toContain('pageview');
    expect(p.allowed).toContain('custom');
    expect(refusal(step({ event_type: 'identify', event_name_matches: '*' })).kind).toBe('invalid-request');
    expect(accepted(step({ event_type: 'custom', event_name_matches: 'x'.repeat(200) })).steps).toHaveLength(2);
    expect(refusal(step({ event_type: 'custom', event_name_matches: 'x'.repeat(201) })).kind).toBe('invalid-request');
    // A type pattern covering a named type keeps the matcher possible.
    expect(accepted(step({ event_type: '*', event_name_matches: 'signup' })).steps).toHaveLength(2);
  });

  it('refuses a click-text matcher on event types that carry no click text', () => {
    for (const type of ['pageview', 'form_submit', 'identify', 'conversion', 'purchase']) {
      expect(refusal(step({ event_type: type, click_text_matches: 'Buy*' })).kind).toBe('invalid-request');
    }
    expect(accepted(step({ event_type: 'custom', click_text_matches: 'Buy*' })).steps).toHaveLength(2);
    expect(accepted(step({ click_text_matches: 'Buy*' })).steps).toHaveLength(2);
  });

  it('refuses a revenue_event outside the list, a revenue step without source, and one mixed with matchers', () => {
    const p = refusal(step({ source: 'revenue', revenue_event: 'subscription_paused' }));
    expect(p.allowed).toEqual(REVENUE_EVENTS);
    expect(refusal(step({ revenue_event: 'trial_started' })).allowed).toEqual(['revenue']);
    expect(refusal(step({ source: 'revenue', revenue_event: 'trial_started', path_matches: '/x' })).kind).toBe('invalid-request');
    expect(refusal(step({ source: 'stripe', revenue_event: 'trial_started' })).kind).toBe('invalid-request');
    expect(refusal(step({ colour: 'blue' })).kind).toBe('invalid-request');
    expect(refusal(step({})).kind).toBe('invalid-request');
  });

  it('refuses behavioural and revenue steps mixed under scope=user, and revenue steps under strict', () => {
    const mixed = refusal({ scope: 'user', steps: [visit, trial] });
    expect(mixed.kind).toBe('unsupported-combination');
    expect(mixed.allowed).toEqual(['visitor']);
    expect(mixed.remediation).toMatch(/scope=visitor/);
    expect(accepted({ scope: 'visitor', steps: [visit, trial] }).steps).toHaveLength(2);
    expect(accepted({ scope: 'user', steps: [trial, { name: 'Paid', conditions: { source: 'revenue', revenue_event: 'subscription_started' } }] }).scope).toBe('user');
    expect(accepted({ scope: 'user', steps: [visit, visit] }).scope).toBe('user');
    const strict = refusal({ step_order: 'strict', steps: [visit, trial] });
    expect(strict.kind).toBe('unsupported-combination');
    expect(strict.allowed).toEqual(['sequential', 'any_order']);
  });

  it('takes audience filters on the entering event and identified; refuses others and session filters on a revenue entry', () => {
    expect(accepted({ filters: { country: 'DE', identified: 'true', device_type: 'mobile' }, steps: [visit, visit] }).filters).toEqual({ country: 'DE', identified: true, device_type: 'mobile' });
    const unknown = refusal({ filters: { crm_stage: 'won' }, steps: [visit, visit] });
    expect(unknown.allowed).toEqual(FUNNEL_FILTER_DIMENSIONS);
    expect(refusal({ filters: { identified: 'maybe' }, steps: [visit, visit] }).allowed).toEqual(['true', 'false']);
    const revenueEntry = refusal({ filters: { channel: 'Email' }, steps: [trial, visit] });
    expect(revenueEntry.kind).toBe('unsupported-combination');
    expect(revenueEntry.allowed).toEqual(['identified']);
    expect(accepted({ filters: { identified: true }, steps: [trial, visit] }).filters).toEqual({ identified: true });
  });

  it('refuses an empty patch and unknown fields', () => {
    expect(refusal({}, true).allowed).toContain('steps');
    expect(refusal({ steps: [visit, visit], colour: 'red' }).kind).toBe('invalid-request');
  });
});

describe('patterns', () => {
  it('match the whole value with * for any run', () => {
    expect(globMatches('/blog/*', '/blog/a/b')).toBe(true);
    expect(globMatches('/blog/*', '/blog')).toBe(false);
    expect(globMatches('*', '')).toBe(true);
    expect(globMatches('a.b', 'axb')).toBe(false);
  });

  it('become LIKE patterns with %, _ and \\ escaped', () => {
    expect(globToLike('/a_b%c\\d*')).toBe('/a\\_b\\%c\\\\d%');
  });

  it('can start with a prefix when their literal start agrees with it', () => {
    expect(canStartWith('https://x/*', ['http://', 'https://'])).toBe(true);
    expect(canStartWith('htt*', ['https://'])).toBe(true);
    expect(canStartWith('htt', ['https://'])).toBe(false);
    expect(canStartWith('x*', ['https://'])).toBe(false);
  });
});

describe('matcher bounds (issue 24: a pattern cannot stall the process)', () => {
  it('takes matchers of up to 200 characters and 10 `*`, and refuses one more of either with a remediation', () => {
    for (const key of ['event_type', 'path_matches', 'event_name_matches', 'url_matches', 'click_text_matches']) {
      const long = refusal(step({ [key]: `*${'x'.repeat(200)}` }));
      expect(long.kind).toBe('invalid-request');
      expect(long.message).toMatch(/1 to 200 characters/);
      expect(long.remediation).toMatch(/at most 200/);
      const stars = refusal(step({ [key]: '*a'.repeat(11) }));
      expect(stars.kind).toBe('invalid-request');
      expect(stars.message).toMatch(/11 `\*`; a pattern takes at most 10/);
      expect(stars.remediation).toMatch(/at most 10/);
    }
    expect(accepted(step({ path_matches: `/${'x'.repeat(199)}` })).steps).toHaveLength(2);
    expect(accepted(step({ path_matches: `/${'*a'.repeat(10)}` })).steps).toHaveLength(2);
    expect(accepted(step({ event_type: '*'.repeat(10) })).steps).toHaveLength(2);
  });

  it('lists at most 100 event types in `allowed`, saying how many more there are', () => {
    const many = eventTypeCatalog(Array.from({ length: 1_000 }, (_, i) => `type_${String(i).padStart(4, '0')}`));
    let problem: ProblemError | undefined;
    try {
      checkDefinition(withDefaults(readFields(step({ event_type: 'nothing*' }), false)), many);
    } catch (error) {
      problem = error as ProblemError;
    }
    expect(problem?.allowed).toHaveLength(MAX_LISTED_EVENT_TYPES);
    expect(problem?.allowed?.slice(0, 8)).toEqual(['pageview', 'outbound', 'form_submit', 'custom', 'identify', 'conversion', 'purchase', 'type_0000']);
    expect(problem?.message).toMatch(/first 100 of the website's 1007 event types \(907 more not shown\)/);
    expect(JSON.stringify(problem?.allowed).length).toBeLessThan(2_000);
  });

  it('checks the worst patterns against a catalog of long near-miss types in well under 50 ms', () => {
    // 1,000 types of 5,000 characters (more than the catalog keeps: the matcher itself is measured).
    const types = eventTypeCatalog(Array.from({ length: 1_000 }, (_, i) => `${'a'.repeat(5_000)}${i % 2 ? 'b' : `b${i}`}`));
    const probes = [
      '*a*a*a*a*a*a*a*a*a*a*a*a', // 12 `*`: refused by readFields, checked here anyway
      '*a*a*a*a*a*a*a*a*a*a',
      `*${'a'.repeat(18)}c*${'a'.repeat(18)}c*`,
      `${'a'.repeat(99)}*${'a'.repeat(99)}c`,
    ];
    for (const pattern of probes) {
      const definition = withDefaults({ steps: [{ name: 'Long', conditions: { event_type: pattern, click_text_matches: pattern } }, visit] });
      const started = performance.now();
      try {
        checkDefinition(definition, types);
      } catch (error) {
        if (!(error instanceof ProblemError)) throw error;
      }
      expect(performance.now() - started).toBeLessThan(50);
    }
    // Through the whole write check: refused for its `*`, before any matching.
    const started = performance.now();
    expect(refusal(step({ event_type: '*a*a*a*a*a*a*a*a*a*a*a*a' })).kind).toBe('invalid-request');
    expect(performance.now() - started).toBeLessThan(50);
  });
});
