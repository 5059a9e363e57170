/**
 * A streaming RFC 4180 CSV parser: feed text in chunks of any size (a chunk may end inside a field, a
 * quoted line break or a CRLF), get back the records completed so far.
 *
 * RFC 4180 §2: records end with CRLF (we also accept a bare LF, and a bare CR as old Mac files have);
 * the last record may lack one; fields are separated by commas; a field containing a comma, a quote or a
 * line break is enclosed in double quotes, and a quote inside it is doubled. A quote anywhere else is a
 * syntax error, as is text after a closing quote, because guessing there silently shifts columns. Blank
 * lines are skipped. A leading byte order mark is dropped.
 */

/** Malformed CSV: `line` is the 1-based physical line where the problem was seen. */
export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`CSV line ${line}: ${message}`);
    this.name = 'CsvSyntaxError';
  }
}

/** Longest record accepted; bounds memory when a quote is never closed. */
export const CSV_MAX_RECORD_CHARS = 1024 * 1024;

type State = 'fieldStart' | 'unquoted' | 'quoted' | 'quoteInQuoted' | 'afterCr';

/** The characters that end a run of an unquoted field. */
const SPECIAL = /[,\r\n"]/g;

export interface CsvRecord {
  fields: string[];
  /** Physical line the record starts on (1-based). */
  line: number;
}

export class CsvParser {
  private state: State = 'fieldStart';
  private field = '';
  private fields: string[] = [];
  private recordChars = 0;
  private line = 1;
  private recordLine = 1;
  private started = false;
  private ended = false;

  /** Parses the next chunk; returns every record it completes. */
  push(chunk: string): CsvRecord[] {
    if (this.ended) throw new Error('CsvParser: push after end');
    let text = chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const out: CsvRecord[] = [];
    let i = 0;
    // Runs of ordinary characters are copied with one slice; only separators, quotes and line breaks
    // are looked at one by one.
    while (i < text.length) i = this.scan(text, i, out);
    return out;
  }

  /** Ends the input; returns the last record if the text did not end with a line break. */
  end(): CsvRecord[] {
    if (this.ended) return [];
    this.ended = true;
    if (this.state === 'quoted') throw new CsvSyntaxError('a quoted field is never closed', this.recordLine);
    const out: CsvRecord[] = [];
    if (
      this.state !== 'afterCr' &&
      (this.fields.length > 0 || this.field.length > 0 || this.state !== 'fieldStart')
    ) {
      this.endRecord(out);
    }
    return out;
  }

  private grow(n: number): void {
    this.recordChars += n;
    if (this.recordChars > CSV_MAX_RECORD_CHARS) {
      throw new CsvSyntaxError(
        `a record is longer than ${CSV_MAX_RECORD_CHARS} characters (is a quote never closed?)`,
        this.recordLine,
      );
    }
  }

  private endField(): void {
    this.fields.push(this.field);
    this.field = '';
  }

  private endRecord(out: CsvRecord[]): void {
    this.endField();
    const blank = this.fields.length === 1 && this.fields[0] === '';
    if (!blank) out.push({ fields: this.fields, line: this.recordLine });
    this.fields = [];
    this.recordChars = 0;
    this.state = 'fieldStart';
  }

  private newline(out: CsvRecord[], c: string): void {
    this.endRecord(out);
    this.state = c === '\r' ? 'afterCr' : 'fieldStart';
    this.line++;
    this.recordLine = this.line;
  }

  /** Consumes text from `i` in the current state; returns where to continue. */
  private scan(text: string, i: number, out: CsvRecord[]): number {
    switch (this.state) {
      case 'afterCr':
        this.state = 'fieldStart';
        return text[i] === '\n' ? i + 1 : i; // CRLF: the record already ended at CR
      case 'fieldStart':
        if (text[i] !== '"') {
          this.state = 'unquoted';
          return i;
        }
        this.grow(1);
        this.state = 'quoted';
        return i + 1;
      case 'unquoted': {
        SPECIAL.lastIndex = i;
        const m = SPECIAL.exec(text);
        const j = m ? m.index : text.length;
        if (j > i) {
          this.grow(j - i);
          this.field += text.slice(i, j);
        }
        if (!m) return text.length;
        const c = text[j]!;
        if (c === '"') {
          throw new CsvSyntaxError(
            'a quote inside an unquoted field (enclose the field in quotes)',
            this.line,
          );
        }
        this.grow(1);
        if (c === ',') {
          this.endField();
          this.state = 'fieldStart';
        } else this.newline(out, c);
        return j + 1;
      }
      case 'quoted': {
        const j = text.indexOf('"', i);
        const end = j === -1 ? text.length : j;
        if (end > i) {
          const part = text.slice(i, end);
          this.grow(part.length);
          this.field += part;
          for (let nl = part.indexOf('\n'); nl !== -1; nl = part.indexOf('\n', nl + 1)) this.line++;
        }
        if (j === -1) return text.length;
        this.grow(1);
        this.state = 'quoteInQuoted';
        return j + 1;
      }
      case 'quoteInQuoted': {
        const c = text[i]!;
        this.grow(1);
        if (c === '"') {
          this.field += '"';
          this.state = 'quoted';
        } else if (c === ',') {
          this.endField();
          this.state = 'fieldStart';
        } else if (c === '\r' || c === '\n') this.newline(out, c);
        else throw new CsvSyntaxError('text after a closing quote', this.line);
        return i + 1;
      }
    }
  }
}
