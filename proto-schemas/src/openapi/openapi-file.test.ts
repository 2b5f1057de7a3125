import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument } from './index';

describe('committed openapi.json', () => {
  it('equals the document built from the registry', () => {
    const committed: unknown = JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8'));
    const built: unknown = JSON.parse(JSON.stringify(openApiDocument));
    // On failure regenerate with: npm run openapi -w @sightline/proto-schemas (it also regenerates packages/client/src/schema.ts)
    expect(committed).toEqual(built);
  });
});
