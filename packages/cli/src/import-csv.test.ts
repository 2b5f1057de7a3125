// CsvReader: RFC 4180 records with the line each starts on, whatever the chunking.
import fc from 'fast-check';
import { CsvReader, type CsvItem } from './import-csv';

function read(text: string, chunkSizes: readonly number[] = [text.length || 1], delimiter = ','): CsvItem[] {
  const reader = new CsvReader(delimiter);
  const out: CsvItem[] = [];
  let at = 0;
  for (let i = 0; at < text.length; i += 1) {
    const size = Math.max(1, chunkSizes[i % chunkSizes.length] ?? 1);
    reader.push(text.slice(at, at + size), out);
    at += size;
  }
  reader.end(out);
  return out;
}

/** A field as a careful writer quotes it: when it holds a delimiter, quote, line break or edge space. */
function quote(field: string): string {
  return /[",\r\n]|^\s|\s$/.test(field) || field === '' ? `"${field.replace(/"/g, '""')}"` : field;
}

describe('CsvReader', () => {
  it('reads quoted delimiters, doubled quotes and line breaks, and names the start line of each record', () => {
    const text = 'a,b\n"x, y","say ""hi"""\n\n"two\nlines",z\r\nlast,"" \n';
    expect(read(text)).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['x, y', 'say "hi"'] },
      { line: 4, fields: ['two\nlines', 'z'] },
      { line: 6, fields: ['last', ''] },
    ]);
  });

  it('keeps empty fields, strips a BOM and the CR of CRLF, and reads a last line without a line break', () => {
    expect(read('\uFEFFa,,c\r\n,\r\nend')).toEqual([
      { line: 1, fields: ['a', '', 'c'] },
      { line: 2, fields: ['', ''] },
      { line: 3, fields: ['end'] },
    ]);
  });

  it('reports a broken record with its line and goes on with the next line', () => {
    expect(read('ok,1\n"a"b,2\nc"d,3\nfine,4\n"open,5\nrest,6\n')).toEqual([
      { line: 1, fields: ['ok', '1'] },
      { line: 2, error: expect.stringMatching(/^text follows the closing quote/) },
      { line: 3, error: expect.stringMatching(/^a quote inside an unquoted field/) },
      { line: 4, fields: ['fine', '4'] },
      { line: 5, error: expect.stringMatching(/^a quoted field is never closed/) },
    ]);
  });

  it('takes another delimiter', () => {
    expect(read('a\tb c\n1\t"2\t3"\n', undefined, '\t')).toEqual([{ line: 1, fields: ['a', 'b c'] }, { line: 2, fields: ['1', '2\t3'] }]);
  });

  it('reads back any table written as RFC 4180, in any chunking, with the right start lines', () => {
    const cell = fc.string({ unit: fc.constantFrom('a', 'b', ' ', ',', '"', '\n', '\r\n', 'é', '😀'), maxLength: 6 });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }).chain((width) => fc.array(fc.array(cell, { minLength: width, maxLength: width }), { minLength: 1, maxLength: 8 })),
        fc.constantFrom('\n', '\r\n'),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 5 }),
        (rows, newline, chunks) => {
          const lines = rows.map((row) => row.map(quote).join(','));
          let line = 1;
          const expected = rows.map((fields, i) => {
            const item = { line, fields };
            line += (lines[i]!.match(/\n/g) ?? []).length + 1;
            return item;
          });
          expect(read(lines.join(newline) + newline, chunks)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
