/**
 * A streaming ZPL command tokenizer: bytes in, commands out, across arbitrary chunk boundaries.
 *
 * ZPL II has two command prefixes: `^` (format commands, acted on inside `^XA`...`^XZ`) and `~`
 * (control commands, acted on as soon as they arrive). A command is the prefix, a two-character name
 * (`^A`, the scalable font command, has a one-character name whose parameters start with the font
 * letter, and `^A@` is its own command) and parameters that run until the next prefix. Field data
 * (`^FD`...`^FS`) is such a parameter and may contain commas. Carriage returns and line feeds are not
 * part of ZPL and are dropped. Changing the prefixes with `^CC`/`~CC`/`^CT`/`~CT` is not supported.
 *
 * A command whose parameters have a fixed length is emitted as soon as they are complete, so a host
 * that sends a bare `~HS` gets its answer without having to send anything after it. Anything outside
 * a command that is not a prefix or white space is garbage: it is reported as a `garbage` token and
 * the tokenizer resynchronises on the next `^` or `~`.
 *
 * The tokenizer works on strings; feed it bytes decoded as `latin1` so every byte maps to one char.
 */

/** The two ZPL command prefixes. */
export type ZplPrefix = '^' | '~';

/** One ZPL command as it arrived. */
export interface ZplCommand {
  prefix: ZplPrefix;
  /** Upper-case name without the prefix: `XA`, `FD`, `A`, `A@`, `HQ`, ... */
  name: string;
  /** Parameter text verbatim (for `^FD` the field data, commas included); CR and LF removed. */
  params: string;
  /** The command as it appeared (prefix, name as sent, params), CR and LF removed. */
  raw: string;
}

/** What the tokenizer emits. */
export type ZplToken = { kind: 'command'; command: ZplCommand } | { kind: 'garbage'; text: string };

/** Options of a {@link ZplTokenizer}. */
export interface ZplTokenizerOptions {
  /** Longest command (or run of garbage) kept before it is reported as garbage. Default 1 MiB. */
  maxCommandLength?: number;
}

/**
 * Commands whose parameters have a fixed length, by prefix and name. Everything else is delimited
 * by the next prefix. `~HQ` takes a two-letter query type (`~HQES`).
 */
const FIXED_PARAM_LENGTH: Readonly<Record<string, number>> = {
  '^XA': 0,
  '^XZ': 0,
  '^FS': 0,
  '^FR': 0,
  '~HS': 0,
  '~HI': 0,
  '~HM': 0,
  '~PS': 0,
  '~PP': 0,
  '~JA': 0,
  '~JR': 0,
  '~HQ': 2,
};

const NAME_CHAR = /^[A-Za-z0-9@]$/;

type State =
  | { at: 'idle' }
  | { at: 'name'; prefix: ZplPrefix; name: string }
  | { at: 'params'; prefix: ZplPrefix; name: string; rawName: string; params: string; fixed: number | null };

/**
 * Streaming tokenizer. Call {@link push} with each chunk as it arrives and {@link flush} at the end of
 * the stream to get a command still waiting for its delimiter.
 *
 * @example
 * const tokenizer = new ZplTokenizer();
 * tokenizer.push('^XA^FO20,20^FDHello, wor'); // [^XA, ^FO20,20]
 * tokenizer.push('ld^FS^XZ');                 // [^FDHello, world, ^FS, ^XZ]
 */
export class ZplTokenizer {
  private state: State = { at: 'idle' };
  private garbage = '';
  private readonly maxLength: number;

  constructor(options: ZplTokenizerOptions = {}) {
    this.maxLength = options.maxCommandLength ?? 1024 * 1024;
  }

  /** True while a command has started but is not complete yet. */
  get pending(): boolean {
    return this.state.at !== 'idle';
  }

  /** Feeds one chunk and returns the tokens it completed. */
  push(chunk: string): ZplToken[] {
    const out: ZplToken[] = [];
    for (const ch of chunk) this.step(ch, out);
    if (this.garbage.length > this.maxLength) this.flushGarbage(out);
    if (this.state.at === 'params' && this.state.params.length > this.maxLength) {
      out.push({ kind: 'garbage', text: this.state.prefix + this.state.rawName + this.state.params });
      this.state = { at: 'idle' };
    }
    return out;
  }

  /** Ends the stream: emits a delimited command still open and any garbage, then resets. */
  flush(): ZplToken[] {
    const out: ZplToken[] = [];
    const s = this.state;
    if (s.at === 'params') out.push(command(s.prefix, s.name, s.rawName, s.params));
    else if (s.at === 'name') this.garbage += s.prefix + s.name;
    this.state = { at: 'idle' };
    this.flushGarbage(out);
    return out;
  }

  /** Drops everything buffered (used when the line drops mid-job). */
  reset(): void {
    this.state = { at: 'idle' };
    this.garbage = '';
  }

  private step(ch: string, out: ZplToken[]): void {
    const s = this.state;
    if (ch === '\r' || ch === '\n') return;
    if (ch === '^' || ch === '~') {
      if (s.at === 'params') out.push(command(s.prefix, s.name, s.rawName, s.params));
      else if (s.at === 'name') this.garbage += s.prefix + s.name;
      this.flushGarbage(out);
      this.state = { at: 'name', prefix: ch, name: '' };
      return;
    }
    if (s.at === 'idle') {
      if (ch !== ' ' && ch !== '\t') this.garbage += ch;
      return;
    }
    if (s.at === 'name') {
      this.stepName(s, ch, out);
      return;
    }
    s.params += ch;
    if (s.fixed !== null && s.params.length >= s.fixed) this.emit(out);
  }

  private stepName(s: Extract<State, { at: 'name' }>, ch: string, out: ZplToken[]): void {
    if (!NAME_CHAR.test(ch) || (ch === '@' && s.name.toUpperCase() !== 'A')) {
      this.garbage += s.prefix + s.name + ch;
      this.state = { at: 'idle' };
      return;
    }
    const sofar = s.name + ch;
    const upper = sofar.toUpperCase();
    if (upper === 'A' && s.prefix === '^') {
      this.state = { ...s, name: sofar };
      return;
    }
    if (upper.length === 2 && upper.startsWith('A') && s.prefix === '^' && ch !== '@') {
      // `^A` followed by its font letter: the letter is the first parameter.
      this.state = { at: 'params', prefix: '^', name: 'A', rawName: s.name, params: ch, fixed: null };
      return;
    }
    if (sofar.length < 2) {
      this.state = { ...s, name: sofar };
      return;
    }
    const fixed = FIXED_PARAM_LENGTH[s.prefix + upper];
    this.state = {
      at: 'params',
      prefix: s.prefix,
      name: upper,
      rawName: sofar,
      params: '',
      fixed: fixed ?? null,
    };
    if (fixed === 0) this.emit(out);
  }

  private emit(out: ZplToken[]): void {
    const s = this.state;
    if (s.at !== 'params') return;
    out.push(command(s.prefix, s.name, s.rawName, s.params));
    this.state = { at: 'idle' };
  }

  private flushGarbage(out: ZplToken[]): void {
    if (this.garbage.length > 0) out.push({ kind: 'garbage', text: this.garbage });
    this.garbage = '';
  }
}

function command(prefix: ZplPrefix, name: string, rawName: string, params: string): ZplToken {
  return { kind: 'command', command: { prefix, name, params, raw: prefix + rawName + params } };
}

/**
 * Tokenizes a complete ZPL document in one go (the end of the string ends the last command).
 *
 * @example
 * tokenizeZpl('^XA^FO10,10^FDa,b^FS^XZ').map((c) => c.name); // ['XA', 'FO', 'FD', 'FS', 'XZ']
 */
export function tokenizeZpl(zpl: string): ZplCommand[] {
  const tokenizer = new ZplTokenizer();
  return [...tokenizer.push(zpl), ...tokenizer.flush()].flatMap((t) =>
    t.kind === 'command' ? [t.command] : [],
  );
}

/**
 * Splits a command's parameter text on commas, keeping empty parameters. Not for field data, whose
 * commas are data.
 *
 * @example
 * splitZplParams('8,,,3,E'); // ['8', '', '', '3', 'E'] (the parameters of ^RS8,,,3,E)
 */
export function splitZplParams(params: string): string[] {
  return params.split(',');
}
