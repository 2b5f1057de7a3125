// Checks every answer the e2e suites receive from the public API against the document that
// server serves, by wrapping the global fetch: a request to an origin that serves
// /v1/openapi.json is answered as usual, and the answer is checked before the suite sees it; a
// broken contract fails the request (and so the test that made it) with every violation named.
// Enabled for all of test-e2e by setup.ts; a suite may also call installContractCheck() itself.
import { ContractChecker, type ServedDocument } from './checker';

export class ContractViolation extends Error {
  constructor(readonly violations: string[]) {
    super(`the answer breaks the OpenAPI contract:\n  ${violations.join('\n  ')}`);
    this.name = 'ContractViolation';
  }
}

const INSTALLED = Symbol.for('sightline.contractCheck');

interface Installed {
  original: typeof fetch;
  checkers: Map<string, Promise<ContractChecker | null>>;
  checked: number;
}

/** Wraps globalThis.fetch once per test file; returns how many answers it has checked so far. */
export function installContractCheck(): { checked: () => number } {
  const holder = globalThis as unknown as Record<symbol, Installed | undefined>;
  let state = holder[INSTALLED];
  if (!state) {
    const created: Installed = { original: globalThis.fetch, checkers: new Map(), checked: 0 };
    state = created;
    holder[INSTALLED] = created;
    globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const response = await created.original(input, init);
      const url = input instanceof Request ? input.url : String(input);
      const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
      const checker = await checkerFor(created, url);
      if (!checker) return response;
      const text = await response.clone().text();
      created.checked++;
      const violations = checker.check({ method, url, status: response.status, headers: response.headers, text });
      // SIGHTLINE_CONTRACT_LOG=1 lists every answer checked (on stderr), to see what a suite covers.
      if (process.env['SIGHTLINE_CONTRACT_LOG']) process.stderr.write(`contract: ${method.toUpperCase()} ${new URL(url).pathname} → ${response.status}${violations.length ? ' VIOLATION' : ''}\n`);
      if (violations.length > 0) throw new ContractViolation(violations);
      return response;
    }) as typeof fetch;
  }
  const installed = state;
  return { checked: () => installed.checked };
}

/** The fetch from before the hook: for requests whose answers a test checks itself. */
export function uncheckedFetch(): typeof fetch {
  return (globalThis as unknown as Record<symbol, Installed | undefined>)[INSTALLED]?.original ?? globalThis.fetch;
}

/** The checker of an origin's served document; null for an origin that serves none (admin port, fakes). */
function checkerFor(state: Installed, url: string): Promise<ContractChecker | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return Promise.resolve(null);
  }
  if (/^\/(v1\/)?openapi\.json$/.test(parsed.pathname)) return Promise.resolve(null);
  let checker = state.checkers.get(parsed.origin);
  if (!checker) {
    checker = loadChecker(state.original, parsed.origin);
    state.checkers.set(parsed.origin, checker);
  }
  return checker;
}

async function loadChecker(original: typeof fetch, origin: string): Promise<ContractChecker | null> {
  try {
    const response = await original(`${origin}/v1/openapi.json`);
    if (!response.ok || !(response.headers.get('content-type') ?? '').includes('json')) return null;
    const document = (await response.json()) as Partial<ServedDocument> & { openapi?: string };
    if (typeof document.openapi !== 'string' || !document.paths || !document.components) return null;
    return new ContractChecker(document as ServedDocument);
  } catch {
    return null;
  }
}
