// The root README's "Where each endpoint lives" table stays true: every operation of the OpenAPI
// document is a row naming the service that answers it and the file whose handler does, and that
// file really holds the handler (the RPC method's key, or the gateway's local route key). When an
// endpoint is added or a handler moves, this test prints the table to paste.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { listOperations } from '@sightline/proto-schemas';

const ROOT = join(__dirname, '..');
const SECTION = '## Where each endpoint lives';

interface Row {
  method: string;
  path: string;
  service: string;
  file: string;
}

/** The key a handler map uses for an operation: `funnels.getFunnelSteps`, or `GET /v1/me` for the gateway's own. */
function handlerKey(method: string, path: string, rpc: string | null): string {
  return rpc ?? `${method.toUpperCase()} ${path}`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [full] : [];
  });
}

function expectedRows(): Row[] {
  const files = new Map<string, string[]>();
  const filesOf = (service: string) => files.get(service) ?? files.set(service, sourceFiles(join(ROOT, 'services', service, 'src'))).get(service)!;
  return listOperations().map(({ method, path, operation }) => {
    const service = operation['x-sightline-service'];
    const key = handlerKey(method, path, operation['x-sightline-rpc']);
    // The file whose handler map defines the key (`'contacts.listContacts': ...`); handlers live in
    // `*.rpc.ts` files, so those win over a wrapper (metrics) that repeats the key.
    const defining = filesOf(service).filter((f) => readFileSync(f, 'utf8').includes(`'${key}':`));
    const file = defining.find((f) => f.endsWith('.rpc.ts')) ?? defining[0];
    return { method: method.toUpperCase(), path, service, file: file ? relative(ROOT, file) : `(no file defines '${key}':)` };
  });
}

function readmeRows(): Row[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(SECTION);
  if (start < 0) return [];
  const section = readme.slice(start + SECTION.length).split(/\n## /)[0] ?? '';
  return section
    .split('\n')
    .filter((line) => /^\| (GET|POST|PATCH|DELETE|PUT) /.test(line))
    .map((line) => {
      const [method, path, service, file] = line.split('|').slice(1, 5).map((cell) => cell.trim().replace(/^`|`$/g, '').replace(/^\[([^\]]+)\]\([^)]*\)$/, '$1'));
      return { method: method ?? '', path: path ?? '', service: service ?? '', file: file ?? '' };
    });
}

const asTable = (rows: Row[]) => rows.map((r) => `| ${r.method} | \`${r.path}\` | ${r.service} | [${r.file}](${r.file}) |`).join('\n');

describe(`README "${SECTION.slice(3)}"`, () => {
  it('lists every operation with the service and the file of its handler', () => {
    const expected = expectedRows();
    expect(expected.filter((r) => r.file.startsWith('(no file')).map((r) => `${r.method} ${r.path}: ${r.file}`)).toEqual([]);
    const actual = readmeRows();
    if (asTable(actual) !== asTable(expected)) {
      process.stderr.write(`README table to paste under "${SECTION}":\n| method | path | service | handler |\n|---|---|---|---|\n${asTable(expected)}\n`);
    }
    expect(asTable(actual)).toBe(asTable(expected));
  });

  it('links files that exist', () => {
    for (const row of readmeRows()) expect({ file: row.file, exists: existsSync(join(ROOT, row.file)) }).toEqual({ file: row.file, exists: true });
  });
});
