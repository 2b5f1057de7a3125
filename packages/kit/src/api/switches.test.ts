import { ProblemError } from '../errors';
import { readSwitch } from './switches';

describe('readSwitch', () => {
  it('reads true and false as strings or booleans; absent is false', () => {
    expect(readSwitch('x', 'true')).toBe(true);
    expect(readSwitch('x', true)).toBe(true);
    expect(readSwitch('x', 'false')).toBe(false);
    expect(readSwitch('x', false)).toBe(false);
    expect(readSwitch('x', undefined)).toBe(false);
  });

  it.each(['1', 'yes', 'TRUE', ''])('refuses %p with the two allowed values', (value) => {
    let thrown: unknown;
    try { readSwitch('exclude_direct', value); } catch (e) { thrown = e; }
    expect(thrown).toBeInstanceOf(ProblemError);
    expect(thrown).toMatchObject({ kind: 'invalid-request', allowed: ['true', 'false'] });
  });
});
