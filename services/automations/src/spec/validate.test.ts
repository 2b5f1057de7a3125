// Spec rules that need no other system, each at its edge.
import { ProblemError } from '@sightline/kit';
import { validateSpec, type ValidationContext } from './validate';

const ctx: ValidationContext = { timezone: 'Europe/Berlin', now: new Date('2026-03-10T09:00:00Z'), aiConfigured: false };
const base = { version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, deliver: [{ channel: 'email', to: ['a@example.com'] }] };
const fault = (spec: unknown, c: ValidationContext = ctx): ProblemError => {
  try {
    validateSpec(spec, c);
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error('expected a problem');
};

describe('validateSpec', () => {
  it('refuses ai: true when no model is configured, and takes it when one is', () => {
    const spec = { ...base, compose: { ai: true } };
    expect(fault(spec)).toMatchObject({ kind: 'invalid-request', message: expect.stringContaining('no language model'), remediation: expect.stringContaining('SIGHTLINE_LLM_URL') });
    expect(validateSpec(spec, { ...ctx, aiConfigured: true }).compose).toEqual({ ai: true });
  });

  it('fills the defaults and merges recipients of one channel, case-folding addresses', () => {
    const spec = validateSpec({ ...base, deliver: [{ channel: 'email', to: ['A@Example.com'] }, { channel: 'email', to: ['a@example.com', 'b@example.com'] }] }, ctx);
    expect(spec).toEqual({ version: 1, trigger: { kind: 'event', events: ['conversion.created'] }, deliver: [{ channel: 'email', to: ['a@example.com', 'b@example.com'] }], pacing: { mode: 'each' } });
  });

  it('takes a cron of 5 or 6 fields and refuses 4 or 7, or one that never fires', () => {
    const schedule = (cron: string) => ({ ...base, trigger: { kind: 'schedule', cron } });
    expect(validateSpec(schedule('0 8 * * 1'), ctx).trigger).toEqual({ kind: 'schedule', cron: '0 8 * * 1' });
    expect(validateSpec(schedule('*/5 * * * * *'), ctx).trigger).toEqual({ kind: 'schedule', cron: '*/5 * * * * *' });
    expect(fault(schedule('0 8 * *')).message).toMatch(/has 4/);
    expect(fault(schedule('0 0 8 * * * *')).message).toMatch(/has 7/);
    expect(fault(schedule('0 0 31 4 *')).message).toMatch(/never fires/);
    expect(fault(schedule('61 * * * *')).message).toMatch(/does not parse/);
  });

  it('checks filter values: one value for eq (two refused), numbers for gt, the field on every listed event type', () => {
    const filtered = (filters: unknown[], events = ['conversion.created']) => ({ ...base, trigger: { kind: 'event', events }, filters });
    expect(validateSpec(filtered([{ field: 'event_name', op: 'eq', values: ['a'] }]), ctx).filters).toHaveLength(1);
    expect(fault(filtered([{ field: 'event_name', op: 'eq', values: ['a', 'b'] }])).message).toMatch(/exactly one value/);
    expect(fault(filtered([{ field: 'revenue', op: 'gt', values: ['ten'] }])).message).toMatch(/needs numbers/);
    expect(validateSpec(filtered([{ field: 'properties.plan', op: 'eq', values: ['pro'] }]), ctx).filters).toHaveLength(1);
    // revenue exists on conversion.created but not on deal.created.
    expect(fault(filtered([{ field: 'revenue', op: 'gt', values: ['1'] }], ['conversion.created', 'deal.created']))).toMatchObject({ kind: 'invalid-request', allowed: ['currency'] });
  });

  it('keeps condition and filters to the kinds they belong to', () => {
    expect(fault({ ...base, condition: { figure: 'x', op: 'lt', value: 1 } }).kind).toBe('unsupported-combination');
    expect(fault({ ...base, trigger: { kind: 'schedule', cron: '0 8 * * *' }, filters: [] }).kind).toBe('unsupported-combination');
    expect(fault({ ...base, trigger: { kind: 'event', events: ['conversion.created'], cron: '0 8 * * *' } }).kind).toBe('unsupported-combination');
    expect(fault({ ...base, version: 2 })).toMatchObject({ kind: 'invalid-request', allowed: ['1'] });
    expect(fault({ ...base, extra: true })).toMatchObject({ kind: 'invalid-request', allowed: expect.arrayContaining(['trigger']) });
  });

  it('refuses nested sections deeper than 4 at once, naming the limit (the 3^depth probe never renders)', () => {
    const probe = (depth: number) => `${'{{#a}}'.repeat(depth)}x${'{{/a}}'.repeat(depth)}`;
    expect(validateSpec({ ...base, compose: { template: probe(4) } }, ctx).compose).toEqual({ template: probe(4) });
    const started = Date.now();
    for (const depth of [5, 11, 330]) {
      expect(fault({ ...base, compose: { template: probe(depth) } })).toMatchObject({
        kind: 'invalid-request', message: expect.stringContaining(`nests sections ${depth} deep; at most 4 are allowed`), remediation: expect.stringContaining('at most 4'),
      });
    }
    expect(fault({ ...base, compose: { subject: probe(5) } }).message).toMatch(/^compose.subject nests sections 5 deep/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('takes max_age as minutes, hours or days on event alerts, and says how to write it otherwise', () => {
    expect(validateSpec({ ...base, max_age: '24h' }, ctx).max_age).toBe('24h');
    expect(validateSpec({ ...base, max_age: '1m' }, ctx).max_age).toBe('1m');
    expect(validateSpec({ ...base, max_age: '365d' }, ctx).max_age).toBe('365d');
    for (const bad of ['366d', '0m', '24', '1w', 'a day', 86400, '']) {
      expect(fault({ ...base, max_age: bad })).toMatchObject({ kind: 'invalid-request', remediation: expect.stringContaining('"90m", "24h" or "7d"') });
    }
    expect(fault({ ...base, trigger: { kind: 'schedule', cron: '0 8 * * *' }, max_age: '24h' })).toMatchObject({ kind: 'unsupported-combination', message: expect.stringContaining('a schedule alert has none') });
  });

  it('puts the article by the noun: "An event alert", "A schedule alert"', () => {
    expect(fault({ ...base, condition: { figure: 'x', op: 'lt', value: 1 } }).message).toMatch(/^An event alert has no condition/);
    expect(fault({ ...base, trigger: { kind: 'schedule', events: ['conversion.created'] } }).message).toMatch(/^A schedule alert runs on its cron/);
  });

  it('reads change against the previous period only with compare previous_period, per cent by default', () => {
    const threshold = (condition: unknown) => ({ ...base, trigger: { kind: 'threshold', cron: '0 * * * *' }, gather: { r: { metric: 'revenue' } }, condition });
    expect(validateSpec(threshold({ figure: 'r', op: 'lte', value: -20, compare: 'previous_period' }), ctx).condition).toEqual({ figure: 'r', op: 'lte', value: -20, compare: 'previous_period', change: 'percent' });
    expect(fault(threshold({ figure: 'r', op: 'lte', value: -20, change: 'percent' })).kind).toBe('unsupported-combination');
    expect(fault(threshold({ figure: 'r', op: 'lte', value: 'x' })).kind).toBe('invalid-request');
  });
});
