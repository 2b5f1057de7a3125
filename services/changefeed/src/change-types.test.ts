import { consumedTypesOf, openApiDocument } from '@sightline/proto-schemas';
import { CHANGE_TYPES } from './change-types';

describe('change types', () => {
  it('are the `types` vocabulary of GET /v1/changes in the OpenAPI document', () => {
    const doc = openApiDocument as unknown as { paths: Record<string, { get: { parameters: { name: string; schema: { items: { enum: string[] } } }[] } }> };
    const param = doc.paths['/v1/changes']?.get.parameters.find((p) => p.name === 'types');
    expect([...CHANGE_TYPES].sort()).toEqual([...(param?.schema.items.enum ?? [])].sort());
  });

  it('are exactly the types the catalog says the feed consumes', () => {
    expect([...CHANGE_TYPES].sort()).toEqual(consumedTypesOf('changefeed').sort());
  });
});
