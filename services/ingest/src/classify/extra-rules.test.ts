import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChannelRulesError, CHANNEL_RULES_VERSION } from './channel-rules';
import { createClassifier, exampleHit, type Classifier } from './classify';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sightline-rules-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileNo = 0;
function writeExtra(doc: unknown): string {
  const path = join(dir, `extra-${++fileNo}.json`);
  writeFileSync(path, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return path;
}

const partnersRow = {
  id: 'partners',
  channel: 'Partners',
  description: 'Our reseller network tags links with utm_medium=partner.',
  any: [{ mediumIn: ['partner'] }],
  examples: [{ url: 'https://example.com/?utm_source=acme&utm_medium=partner' }],
};

async function failure(doc: unknown): Promise<ChannelRulesError> {
  const err: unknown = await createClassifier({ extraRulesFile: writeExtra(doc), geoDatabasePath: null }).then(
    () => new Error('expected the extra file to be refused'),
    (e: unknown) => e,
  );
  if (!(err instanceof ChannelRulesError)) throw err;
  return err;
}

describe('operator extra rules file', () => {
  let classifier: Classifier;
  beforeAll(async () => {
    const path = writeExtra({
      version: 'acme-2',
      prepend: [partnersRow],
      insertBefore: {
        referral: [
          {
            id: 'community',
            channel: 'Community',
            description: 'Our forum and docs site are another registrable domain.',
            any: [{ sourceIn: ['forum.acme.dev'] }],
            examples: [{ url: 'https://example.com/', referrer: 'https://forum.acme.dev/t/1', expect: { source: 'forum.acme.dev' } }],
          },
        ],
      },
      append: [
        {
          id: 'qr-codes',
          channel: 'Offline',
          description: 'Printed QR codes.',
          any: [{ mediumMatches: '^qr' }],
          examples: [{ url: 'https://example.com/?utm_source=flyer&utm_medium=qr-code' }],
        },
      ],
      sources: [{ name: 'kagi assistant', category: 'ai_assistant', domains: ['assistant.kagi.com'] }],
    });
    classifier = await createClassifier({ extraRulesFile: path, geoDatabasePath: null });
  });

  it('prepends, inserts and appends rows and reports the combined version', () => {
    expect(classifier.rulesVersion).toBe(`${CHANNEL_RULES_VERSION}+acme-2`);
    expect(classifier.classify(exampleHit({ url: 'https://example.com/?utm_source=acme&utm_medium=partner' }))).toMatchObject({
      channel: 'Partners',
      channel_rule: 'partners',
    });
    expect(classifier.classify(exampleHit({ referrer: 'https://forum.acme.dev/x' })).channel).toBe('Community');
    expect(classifier.classify(exampleHit({ url: 'https://example.com/?utm_source=flyer&utm_medium=qr' })).channel).toBe('Offline');
  });

  it('keeps the built-in rows working around the additions', () => {
    expect(classifier.classify(exampleHit({ referrer: 'https://blog.other.org/' })).channel).toBe('Referral');
    expect(classifier.classify(exampleHit({})).channel).toBe('Direct');
  });

  it('adds sources that take precedence over the built-in list', () => {
    // kagi.com is search in the built-in list; the more specific extra domain wins.
    expect(classifier.classify(exampleHit({ referrer: 'https://assistant.kagi.com/' }))).toMatchObject({
      source: 'kagi assistant',
      channel: 'AI Assistants',
    });
  });
});

describe('operator extra rules file: refusals name the problem', () => {
  it('a row without examples', async () => {
    const err = await failure({ version: 'x', append: [{ ...partnersRow, examples: [] }] });
    expect(err.rowId).toBe('partners');
    expect(err.message).toMatch(/row 1 of "append" \(id "partners"\), at \/examples, must NOT have fewer than 1 items/);
  });

  it('a row with an unknown condition field', async () => {
    const err = await failure({ version: 'x', prepend: [{ ...partnersRow, any: [{ mediumEquals: 'partner' }] }] });
    expect(err.rowId).toBe('partners');
    expect(err.message).toMatch(/unknown field "mediumEquals"/);
  });

  it('a row with an unknown source category', async () => {
    const err = await failure({ version: 'x', insertBefore: { referral: [{ ...partnersRow, any: [{ sourceCategoryIn: ['forum'] }] }] } });
    expect(err.rowId).toBe('partners');
    expect(err.message).toMatch(/row 1 of "insertBefore.referral" \(id "partners"\)/);
  });

  it('a row with an invalid regex', async () => {
    const err = await failure({ version: 'x', append: [{ ...partnersRow, any: [{ mediumMatches: '(unclosed' }] }] });
    expect(err.rowId).toBe('partners');
    expect(err.message).toMatch(/row "partners" has an invalid mediumMatches regex/);
  });

  it('a row whose example lands on another row', async () => {
    const err = await failure({
      version: 'x',
      append: [{ ...partnersRow, any: [{ mediumIn: ['email'] }], examples: [{ url: 'https://example.com/?utm_source=a&utm_medium=email' }] }],
    });
    expect(err.rowId).toBe('partners');
    expect(err.message).toMatch(/extra-\d+\.json: row "partners" example 1 .* lands on row "email" \(Email\), not on its own row/);
  });

  it('a row whose example contradicts its expect', async () => {
    const err = await failure({ version: 'x', prepend: [{ ...partnersRow, examples: [{ ...partnersRow.examples[0], expect: { source: 'other' } }] }] });
    expect(err.message).toMatch(/gives source "acme", expected "other"/);
  });

  it('a duplicate row id', async () => {
    const err = await failure({ version: 'x', prepend: [{ ...partnersRow, id: 'referral' }] });
    expect(err.rowId).toBe('referral');
    expect(err.message).toMatch(/extra-\d+\.json: row id "referral" is used twice/);
  });

  it('insertBefore a row that does not exist', async () => {
    const err = await failure({ version: 'x', insertBefore: { 'no-such-row': [partnersRow] } });
    expect(err.message).toMatch(/insertBefore names row "no-such-row", which does not exist/);
  });

  it('a missing version, invalid JSON, a missing file', async () => {
    expect((await failure({ append: [partnersRow] })).message).toMatch(/must have required property 'version'/);
    expect((await failure('{ "version": ')).message).toMatch(/is not valid JSON/);
    await expect(createClassifier({ extraRulesFile: join(dir, 'missing.json'), geoDatabasePath: null })).rejects.toThrow(/cannot read extra channel rules file/);
  });
});
