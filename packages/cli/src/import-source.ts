// Reads an import file as a stream of rows, each with the line it starts on, so a 100k-row file
// never sits in memory and every rejection can name its line. CSV is read by CsvReader
// (import-csv.ts: RFC 4180, the header naming the fields); NDJSON is one JSON object per line. A row the parser cannot read is an `error` item, in file order, and reading
// goes on with the next row.
import { createReadStream, statSync, type ReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { CsvReader, type CsvItem } from './import-csv';

export type ImportFormat = 'csv' | 'ndjson';

export type SourceItem =
  | { kind: 'header'; line: number; columns: string[] }
  | { kind: 'row'; line: number; value: unknown }
  | { kind: 'error'; line: number; reason: string };

export interface RowSource {
  items: AsyncIterable<SourceItem>;
  totalBytes: number;
  bytesRead(): number;
}

/** The format a file name implies, or null. */
export function formatOf(file: string): { format: ImportFormat; delimiter?: string } | null {
  const name = file.toLowerCase();
  if (name.endsWith('.csv')) return { format: 'csv' };
  if (name.endsWith('.tsv')) return { format: 'csv', delimiter: '\t' };
  if (name.endsWith('.ndjson') || name.endsWith('.jsonl') || name.endsWith('.json')) return { format: 'ndjson' };
  return null;
}

/** "Deal Name" and "deal-name" are the column deal_name. */
export function columnName(header: string): string {
  return header.trim().toLowerCase().replace(/[\s-]+/g, '_');
}

export function openRowSource(file: string, format: ImportFormat, options: { delimiter?: string } = {}): RowSource {
  const totalBytes = statSync(file).size;
  const stream = createReadStream(file, { highWaterMark: 256 * 1024 });
  return {
    totalBytes,
    bytesRead: () => stream.bytesRead,
    items: format === 'csv' ? csvItems(stream, options.delimiter ?? ',') : ndjsonItems(stream),
  };
}

async function* ndjsonItems(stream: ReadStream): AsyncGenerator<SourceItem> {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  for await (const text of lines) {
    line += 1;
    const trimmed = line === 1 ? text.replace(/^\uFEFF/, '').trim() : text.trim();
    if (trimmed === '') continue;
    try {
      yield { kind: 'row', line, value: JSON.parse(trimmed) as unknown };
    } catch (error) {
      yield { kind: 'error', line, reason: `not valid JSON (${(error as Error).message})` };
    }
  }
}

async function* csvItems(stream: ReadStream, delimiter: string): AsyncGenerator<SourceItem> {
  stream.setEncoding('utf8'); // a character split across chunks is decoded whole
  const reader = new CsvReader(delimiter);
  let columns: string[] | null = null;
  const out: CsvItem[] = [];
  const toItems = function* (): Generator<SourceItem> {
    for (const item of out) {
      if ('error' in item) {
        yield { kind: 'error', line: item.line, reason: item.error };
      } else if (!columns) {
        columns = item.fields.map(columnName);
        yield { kind: 'header', line: item.line, columns };
      } else if (item.fields.length !== columns.length) {
        yield { kind: 'error', line: item.line, reason: `has ${item.fields.length} fields; the header has ${columns.length}` };
      } else {
        const value: Record<string, string> = {};
        for (let i = 0; i < columns.length; i += 1) value[columns[i] as string] = item.fields[i] as string;
        yield { kind: 'row', line: item.line, value };
      }
    }
    out.length = 0;
  };
  for await (const chunk of stream) {
    reader.push(chunk as string, out);
    yield* toItems();
  }
  reader.end(out);
  yield* toItems();
}
