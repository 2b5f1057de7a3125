// A true/false query switch (exclude_direct, only_paid, ...): the gateway passes query values as
// strings, RPC callers may pass booleans; anything else is the caller's mistake, said plainly.
import { ProblemError } from '../errors';

/** true or false from a switch's value (absent is false); invalid-request with `allowed` otherwise. */
export function readSwitch(name: string, value: boolean | string | undefined): boolean {
  if (value === undefined || value === false || value === 'false') return false;
  if (value === true || value === 'true') return true;
  throw new ProblemError('invalid-request', {
    detail: `${name}=${JSON.stringify(value)} is neither true nor false.`,
    remediation: `Pass ${name}=true or ${name}=false.`,
    allowed: ['true', 'false'],
  });
}
