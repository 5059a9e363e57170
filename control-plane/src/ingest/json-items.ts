/**
 * Streaming readers of JSON uploads. Feed text chunks of any size; get back the items completed so far,
 * each parsed on its own, so memory holds one item at a time however long the document.
 *
 * - {@link JsonItemsParser}: a JSON array of items `[{...}, ...]`, or an object whose `items` member is
 *   that array (`{"items": [...]}`); the object's other members are kept in `members` (small values only).
 * - {@link NdjsonParser}: one JSON value per line (NDJSON / JSON Lines); a bad line is a bad row only.
 */
import { parseBoundedJson } from '../http/index.js';

/** The document is not JSON, or not one of the accepted shapes. */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`JSON at character ${position}: ${message}`);
    this.name = 'JsonSyntaxError';
  }
}

/** Largest single item (or NDJSON line) accepted. */
export const JSON_MAX_ITEM_CHARS = 1024 * 1024;
/** Largest value of a top-level member other than items. */
const JSON_MAX_MEMBER_CHARS = 64 * 1024;

const isWs = (c: string) => c === ' ' || c === '\n' || c === '\r' || c === '\t';

type Fed = 'more' | 'consumed' | 'unconsumed';

/** Collects the text of one JSON value and tells where it ends (brackets and strings tracked). */
class ValueCapture {
  text = '';
  private depth = 0;
  private inString = false;
  private escape = false;
  private kind: 'container' | 'string' | 'primitive' | null = null;

  constructor(private readonly max: number) {}

  feed(c: string, position: number): Fed {
    if (this.kind === null) {
      this.text = c;
      if (c === '{' || c === '[') {
        this.kind = 'container';
        this.depth = 1;
      } else if (c === '"') {
        this.kind = 'string';
        this.inString = true;
      } else this.kind = 'primitive';
      return 'more';
    }
    if (this.kind === 'primitive' && (c === ',' || c === ']' || c === '}' || isWs(c))) return 'unconsumed';
    this.text += c;
    if (this.text.length > this.max) {
      throw new JsonSyntaxError(`a value is longer than ${this.max} characters`, position);
    }
    if (this.kind === 'primitive') return 'more';
    if (this.inString) {
      if (this.escape) this.escape = false;
      else if (c === '\\') this.escape = true;
      else if (c === '"') {
        this.inString = false;
        if (this.kind === 'string') return 'consumed';
      }
      return 'more';
    }
    if (c === '"') this.inString = true;
    else if (c === '{' || c === '[') this.depth++;
    else if (c === '}' || c === ']') {
      this.depth--;
      if (this.depth === 0) return 'consumed';
    }
    return 'more';
  }
}

type Phase =
  | 'start'
  | 'arrItemOrClose'
  | 'arrItemAfterComma'
  | 'arrItem'
  | 'arrCommaOrClose'
  | 'objKeyOrClose'
  | 'objKeyAfterComma'
  | 'objKey'
  | 'objColon'
  | 'objValueStart'
  | 'objValue'
  | 'objCommaOrClose'
  | 'trailing';

/** Reads `[item, ...]` or `{"items": [item, ...], ...}` incrementally. */
export class JsonItemsParser {
  /** Top-level members of an object document, other than `items`. */
  readonly members = new Map<string, unknown>();
  private phase: Phase = 'start';
  private capture: ValueCapture | undefined;
  private key = '';
  private itemsAtRoot = true;
  private sawItems = false;
  private position = 0;

  push(chunk: string): unknown[] {
    const out: unknown[] = [];
    for (let i = 0; i < chunk.length; i++) {
      this.position++;
      this.step(chunk[i]!, out);
    }
    return out;
  }

  end(): unknown[] {
    if (this.phase !== 'trailing') throw new JsonSyntaxError('the document ends too early', this.position);
    if (!this.itemsAtRoot && !this.sawItems) {
      throw new JsonSyntaxError('an object upload needs an "items" array', this.position);
    }
    return [];
  }

  private parse(text: string): unknown {
    try {
      return parseBoundedJson(text);
    } catch (err) {
      throw new JsonSyntaxError((err as Error).message, this.position);
    }
  }

  private fail(c: string, expected: string): never {
    throw new JsonSyntaxError(`expected ${expected}, found ${JSON.stringify(c)}`, this.position);
  }

  private startCapture(c: string, max: number): void {
    this.capture = new ValueCapture(max);
    this.capture.feed(c, this.position);
  }

  private closeArray(): void {
    this.phase = this.itemsAtRoot ? 'trailing' : 'objCommaOrClose';
  }

  private step(c: string, out: unknown[]): void {
    switch (this.phase) {
      case 'start':
        if (isWs(c) || c === '\ufeff') return;
        if (c === '[') this.phase = 'arrItemOrClose';
        else if (c === '{') {
          this.itemsAtRoot = false;
          this.phase = 'objKeyOrClose';
        } else this.fail(c, 'a JSON array of items or an object with an items array');
        return;
      case 'arrItemOrClose':
      case 'arrItemAfterComma':
        if (isWs(c)) return;
        if (c === ']' && this.phase === 'arrItemOrClose') return this.closeArray();
        if (c === ']' || c === ',') this.fail(c, 'an item');
        this.startCapture(c, JSON_MAX_ITEM_CHARS);
        this.phase = 'arrItem';
        return;
      case 'arrItem': {
        const fed = this.capture!.feed(c, this.position);
        if (fed === 'more') return;
        out.push(this.parse(this.capture!.text));
        this.phase = 'arrCommaOrClose';
        if (fed === 'unconsumed') this.step(c, out);
        return;
      }
      case 'arrCommaOrClose':
        if (isWs(c)) return;
        if (c === ',') this.phase = 'arrItemAfterComma';
        else if (c === ']') this.closeArray();
        else this.fail(c, '"," or "]"');
        return;
      case 'objKeyOrClose':
      case 'objKeyAfterComma':
        if (isWs(c)) return;
        if (c === '}' && this.phase === 'objKeyOrClose') {
          this.phase = 'trailing';
          return;
        }
        if (c !== '"') this.fail(c, 'a member name');
        this.startCapture(c, 1024);
        this.phase = 'objKey';
        return;
      case 'objKey':
        if (this.capture!.feed(c, this.position) === 'consumed') {
          this.key = this.parse(this.capture!.text) as string;
          if (this.key === 'items' ? this.sawItems : this.members.has(this.key)) {
            throw new JsonSyntaxError(`the member "${this.key}" appears twice`, this.position);
          }
          this.phase = 'objColon';
        }
        return;
      case 'objColon':
        if (isWs(c)) return;
        if (c !== ':') this.fail(c, '":"');
        this.phase = 'objValueStart';
        return;
      case 'objValueStart':
        if (isWs(c)) return;
        if (this.key === 'items') {
          if (c !== '[') this.fail(c, 'items to be an array');
          this.sawItems = true;
          this.phase = 'arrItemOrClose';
          return;
        }
        this.startCapture(c, JSON_MAX_MEMBER_CHARS);
        this.phase = 'objValue';
        return;
      case 'objValue': {
        const fed = this.capture!.feed(c, this.position);
        if (fed === 'more') return;
        this.members.set(this.key, this.parse(this.capture!.text));
        this.phase = 'objCommaOrClose';
        if (fed === 'unconsumed') this.step(c, out);
        return;
      }
      case 'objCommaOrClose':
        if (isWs(c)) return;
        if (c === ',') this.phase = 'objKeyAfterComma';
        else if (c === '}') this.phase = 'trailing';
        else this.fail(c, '"," or "}"');
        return;
      case 'trailing':
        if (!isWs(c)) this.fail(c, 'the end of the document');
        return;
    }
  }
}

/** One NDJSON line: its parsed value, or why it is not JSON. */
export type NdjsonLine = { value: unknown } | { error: string };

/** Reads NDJSON (one JSON value per line; blank lines skipped) incrementally. */
export class NdjsonParser {
  private pending = '';
  private started = false;

  push(chunk: string): NdjsonLine[] {
    let text = chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const out: NdjsonLine[] = [];
    let from = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      this.line(this.pending + text.slice(from, nl), out);
      this.pending = '';
      from = nl + 1;
    }
    this.pending += text.slice(from);
    if (this.pending.length > JSON_MAX_ITEM_CHARS) {
      throw new JsonSyntaxError(`a line is longer than ${JSON_MAX_ITEM_CHARS} characters`, 0);
    }
    return out;
  }

  end(): NdjsonLine[] {
    const out: NdjsonLine[] = [];
    this.line(this.pending, out);
    this.pending = '';
    return out;
  }

  private line(raw: string, out: NdjsonLine[]): void {
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (text.trim() === '') return;
    try {
      out.push({ value: parseBoundedJson(text) });
    } catch (err) {
      out.push({ error: `the line is not JSON: ${(err as Error).message}` });
    }
  }
}
