// A streaming CSV reader (RFC 4180) that knows on which line each record starts. Quoted fields may
// hold the delimiter, doubled quotes and line breaks; lines end with LF or CRLF; blank lines are
// skipped; spaces around a quoted field are ignored. A malformed record is reported with its line
// and reading resumes on the next line. (csv-parse counted a CRLF inside a quoted field as two
// lines and lost records after a stray quote, and was most of the CLI's time on large files.)

export type CsvItem = { line: number; fields: string[] } | { line: number; error: string };

type State = 'start' | 'plain' | 'quoted' | 'after-quote' | 'skip';

const QUOTE = 34;
const LF = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;

export class CsvReader {
  private readonly delimiter: number;
  private state: State = 'start';
  private fields: string[] = [];
  private field = '';
  private quoted = false;
  /** Physical line being read, and the line the current record started on. */
  private line = 1;
  private recordLine = 1;
  private problem = '';
  private first = true;

  constructor(delimiter = ',') {
    if (delimiter.length !== 1 || delimiter === '"' || delimiter === '\n' || delimiter === '\r') throw new Error(`invalid CSV delimiter ${JSON.stringify(delimiter)}`);
    this.delimiter = delimiter.charCodeAt(0);
  }

  /** Reads a chunk; complete records (and broken ones) are appended to `out`. */
  push(chunk: string, out: CsvItem[]): void {
    let text = chunk;
    if (this.first) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const n = text.length;
    let i = 0;
    while (i < n) {
      const c = text.charCodeAt(i);
      switch (this.state) {
        case 'start':
          if (c === QUOTE) {
            this.state = 'quoted';
            this.quoted = true;
            i += 1;
          } else if (c === this.delimiter) {
            this.fields.push(this.field);
            this.field = '';
            i += 1;
          } else if (c === LF) {
            this.fields.push(this.field);
            this.field = '';
            this.endRecord(out);
            i += 1;
          } else if (c === CR || ((c === SPACE || c === TAB) && c !== this.delimiter)) {
            i += 1; // spaces before a field, or the CR of CRLF
          } else {
            this.state = 'plain';
          }
          break;
        case 'plain': {
          let j = i;
          while (j < n) {
            const d = text.charCodeAt(j);
            if (d === this.delimiter || d === LF || d === QUOTE) break;
            j += 1;
          }
          this.field += text.slice(i, j);
          i = j;
          if (j === n) break;
          const d = text.charCodeAt(j);
          if (d === QUOTE) {
            this.fail('a quote inside an unquoted field (quote the whole field and write the quote as "")');
          } else {
            this.fields.push(this.field.trimEnd());
            this.field = '';
            this.state = 'start';
            i += 1;
            if (d === LF) this.endRecord(out);
          }
          break;
        }
        case 'quoted': {
          const q = text.indexOf('"', i);
          const end = q === -1 ? n : q;
          for (let k = text.indexOf('\n', i); k !== -1 && k < end; k = text.indexOf('\n', k + 1)) this.line += 1;
          this.field += text.slice(i, end);
          i = end;
          if (q !== -1) {
            this.state = 'after-quote';
            i += 1;
          }
          break;
        }
        case 'after-quote':
          if (c === QUOTE) {
            this.field += '"';
            this.state = 'quoted';
            i += 1;
          } else if (c === this.delimiter || c === LF) {
            this.fields.push(this.field);
            this.field = '';
            this.state = 'start';
            i += 1;
            if (c === LF) this.endRecord(out);
          } else if (c === CR || c === SPACE || c === TAB) {
            i += 1;
          } else {
            this.fail('text follows the closing quote of a field (inside a quoted field, write a quote as "")');
          }
          break;
        case 'skip': {
          // Resume on the next line: a broken record's quoting cannot be trusted.
          const k = text.indexOf('\n', i);
          if (k === -1) {
            i = n;
          } else {
            out.push({ line: this.recordLine, error: this.problem });
            this.line += 1;
            this.reset();
            i = k + 1;
          }
          break;
        }
      }
    }
  }

  /** Ends the input: a last record without a line break, or a quote never closed. */
  end(out: CsvItem[]): void {
    if (this.state === 'quoted') {
      out.push({ line: this.recordLine, error: 'a quoted field is never closed (the rest of the file was read into it)' });
    } else if (this.state === 'skip') {
      out.push({ line: this.recordLine, error: this.problem });
    } else if (this.state !== 'start' || this.fields.length > 0 || this.field !== '') {
      this.fields.push(this.state === 'plain' ? this.field.trimEnd() : this.field);
      this.field = '';
      this.emit(out);
    }
    this.reset();
  }

  private fail(reason: string): void {
    this.problem = reason;
    this.state = 'skip';
  }

  private endRecord(out: CsvItem[]): void {
    this.line += 1;
    this.emit(out);
    this.reset();
  }

  private emit(out: CsvItem[]): void {
    const blank = this.fields.length === 1 && this.fields[0] === '' && !this.quoted;
    if (!blank) out.push({ line: this.recordLine, fields: this.fields });
  }

  private reset(): void {
    this.fields = [];
    this.field = '';
    this.quoted = false;
    this.state = 'start';
    this.recordLine = this.line;
  }
}
