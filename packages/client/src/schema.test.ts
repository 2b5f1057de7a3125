// src/schema.ts is generated from proto-schemas/openapi.json and checked in: it must be exactly what
// the generator writes today, or the client's types have drifted from the document. The generator
// runs in its own node process (openapi-typescript is an ES module jest's CommonJS runtime cannot load).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

describe('generated types', () => {
  it('equal what openapi-typescript generates from the committed document', () => {
    const generated = execFileSync(process.execPath, [join(__dirname, '..', 'scripts', 'generate-types.js'), '--print'], { encoding: 'utf8' });
    // On failure regenerate with: npm run openapi -w @sightline/proto-schemas (it regenerates both).
    expect(readFileSync(join(__dirname, 'schema.ts'), 'utf8')).toBe(generated);
  }, 30_000);
});
