import { ProblemError } from '@sightline/kit';
import { CONTACT_WRITABLE_FIELDS } from '@sightline/proto-schemas';
import { diffPatch, groupChanges, parsePatch, type OutcomeFields } from './patch';

const CURRENT: OutcomeFields = {
  status: 'open', sales_value: 100, quote_value: null, currency: 'EUR', notes: null, lead_status_raw: null, lifecycle_stage_raw: 'lead', is_spam: false,
};

function problemOf(fn: () => unknown): ProblemError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error('expected a problem');
}

describe('PATCH body', () => {
  it('accepts every writable field', () => {
    const body = { status: 'won', sales_value: 12000, quote_value: null, currency: 'USD', notes: 'n', lead_status_raw: 'x', lifecycle_stage_raw: null, is_spam: true };
    expect(parsePatch(body)).toEqual(body);
  });

  it('refuses a computed field, listing the writable ones', () => {
    const problem = problemOf(() => parsePatch({ status: 'won', first_touch: { channel: 'Direct' } }));
    expect(problem.kind).toBe('invalid-request');
    expect(problem.message).toMatch(/first_touch/);
    expect(problem.allowed).toEqual([...CONTACT_WRITABLE_FIELDS]);
  });

  it.each([
    [{ sales_value: '12' }, /number/],
    [{ sales_value: -1 }, /number/],
    [{ currency: 'eur' }, /ISO 4217/],
    [{ currency: 'XYZ' }, /ISO 4217/],
    [{ currency: null }, /null/],
    [{ is_spam: 'yes' }, /true or false/],
    [{ status: 5 }, /string/],
    [{ notes: 'x'.repeat(10_001) }, /longer/],
  ])('refuses %j', (body, message) => {
    expect(problemOf(() => parsePatch(body)).message).toMatch(message);
  });

  it('diffs only what really changes and groups it by message', () => {
    const changes = diffPatch(CURRENT, { status: 'open', sales_value: 100.0, quote_value: 5, lifecycle_stage_raw: 'customer', is_spam: true });
    expect(changes).toEqual([
      { field: 'quote_value', old_value: null, new_value: 5 },
      { field: 'lifecycle_stage_raw', old_value: 'lead', new_value: 'customer' },
      { field: 'is_spam', old_value: false, new_value: true },
    ]);
    const groups = groupChanges(changes);
    expect(groups.value.map((c) => c.field)).toEqual(['quote_value']);
    expect(groups.stage.map((c) => c.field)).toEqual(['lifecycle_stage_raw']);
    expect(groups.descriptive.map((c) => c.field)).toEqual(['is_spam']);
    expect(diffPatch(CURRENT, {})).toEqual([]);
    expect(diffPatch(CURRENT, { status: 'open', currency: 'EUR' })).toEqual([]);
  });
});
