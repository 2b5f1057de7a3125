// A third-party linter (Redocly CLI with proto-schemas/redocly.yaml, also run as
// scripts/lint-openapi.sh) reports no error on the committed document, which is the one the
// gateway serves; and it does report a document broken on purpose, so this test can fail.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const COMMITTED = join(ROOT, 'proto-schemas', 'openapi.json');

interface Report { totals: { errors: number }; problems: { ruleId: string; message: string; severity: string }[] }

function lint(file: string): { status: number | null; errors: string[] } {
  const run = spawnSync('bash', [join(ROOT, 'scripts', 'lint-openapi.sh'), file, '--format=json'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  // With no problem at all Redocly prints no JSON.
  const text = run.stdout.trim();
  const report: Report = text ? (JSON.parse(text.slice(text.indexOf('{'))) as Report) : { totals: { errors: 0 }, problems: [] };
  return { status: run.status, errors: report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message}`) };
}

describe('Redocly lint', () => {
  it('finds no error in the committed openapi.json', () => {
    expect(lint(COMMITTED)).toEqual({ status: 0, errors: [] });
  }, 60_000);

  it('fails a document whose example breaks its schema and whose 4xx is not a problem document', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sightline-lint-'));
    try {
      const document = JSON.parse(readFileSync(COMMITTED, 'utf8')) as {
        components: { schemas: Record<string, { examples?: unknown[] }> };
        paths: Record<string, Record<string, { responses: Record<string, { content?: unknown }> }>>;
      };
      (document.components.schemas['ContactPatch'] ?? {}).examples = [{ sales_value: 'lots' }];
      const unauthorized = document.paths['/v1/me']?.['get']?.responses['401'];
      if (unauthorized) unauthorized.content = { 'application/json': { schema: { type: 'object' } } };
      const broken = join(dir, 'openapi.json');
      writeFileSync(broken, JSON.stringify(document));
      const result = lint(broken);
      expect(result.status).not.toBe(0);
      expect(result.errors).toEqual(expect.arrayContaining([expect.stringMatching(/^no-invalid-schema-examples:/), expect.stringMatching(/^operation-4xx-problem-details-rfc7807:/)]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
