// Comparing the service's answers with the oracle's: numbers within a relative 1e-6, and every
// difference written as one line naming the seed, window and row, so a failure lists them all.

export const TOLERANCE = 1e-6;

export function close(a: number, b: number): boolean {
  return Math.abs(a - b) <= TOLERANCE * Math.max(1, Math.abs(a), Math.abs(b));
}

export class Differences {
  readonly lines: string[] = [];

  constructor(private readonly context: string) {}

  number(what: string, service: unknown, oracle: number): void {
    if (typeof service !== 'number' || !close(service, oracle)) this.lines.push(`${this.context} ${what}: service ${JSON.stringify(service)}, oracle ${oracle}`);
  }

  same(what: string, service: unknown, oracle: unknown): void {
    if (JSON.stringify(service) !== JSON.stringify(oracle)) this.lines.push(`${this.context} ${what}: service ${JSON.stringify(service)}, oracle ${JSON.stringify(oracle)}`);
  }

  note(line: string): void {
    this.lines.push(`${this.context} ${line}`);
  }
}

/** Row values keyed by label; a label missing on one side counts as zero there. */
export function compareKeyed(
  diff: Differences,
  what: string,
  service: Map<string, Record<string, number>>,
  oracle: Map<string, Record<string, number>>,
  fields: readonly string[],
): void {
  for (const label of new Set([...service.keys(), ...oracle.keys()])) {
    for (const field of fields) {
      const s = service.get(label)?.[field] ?? 0;
      const o = oracle.get(label)?.[field] ?? 0;
      diff.number(`${what}[${label}].${field}`, s, o);
    }
  }
}
