/**
 * Bounds on what a JSON body may hold, checked on the raw bytes before they are parsed. A body within the
 * size limit can still be hostile: `[[[[...]]]]` ten thousand deep overflows the stack of every recursive
 * walk after the parse (canonicalisation for Idempotency-Key, validation), and `1e400` parses to Infinity,
 * which no JSON serialiser can write back (RFC 8785 §3.2.2.3 refuses it). Both are the client's mistake and
 * answer 400 VALIDATION_ERROR naming the bound; nothing else runs.
 */

/** Deepest nesting of arrays and objects a body may have; our deepest documented body has 6. */
export const MAX_JSON_DEPTH = 64;

/** Why a body is out of bounds, or null. */
export function jsonOutOfBounds(text: string): { bound: string; message: string } | null {
  let depth = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Skip the string, escapes included; an unterminated one is left for the parser to refuse.
      i++;
      while (i < n) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i += 2;
        else if (s === 0x22) break;
        else i++;
      }
      i++;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > MAX_JSON_DEPTH)
        return {
          bound: `nesting depth at most ${MAX_JSON_DEPTH}`,
          message: `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`,
        };
      i++;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
      i++;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      while (i < n && /[-+.eE0-9]/.test(text[i]!)) i++;
      const literal = text.slice(start, i);
      if (!Number.isFinite(Number(literal)))
        return {
          bound: 'numbers within the range of an IEEE 754 double',
          message: `The number ${literal.slice(0, 40)} in the request body is out of range`,
        };
    } else {
      i++;
    }
  }
  return null;
}

/** `verify` hook of express.json: refuses an out-of-bounds body before it is parsed. */
export function verifyJsonBounds(_req: unknown, _res: unknown, buf: Buffer, encoding: string): void {
  const problem = jsonOutOfBounds(buf.toString((encoding || 'utf8') as BufferEncoding));
  if (problem) throw Object.assign(new Error(problem.message), { type: 'entity.out.of.bounds', ...problem });
}

/** JSON.parse for client text outside the body parser (uploads, CSV cells): the same bounds, as a SyntaxError. */
export function parseBoundedJson(text: string): unknown {
  const problem = jsonOutOfBounds(text);
  if (problem) throw new SyntaxError(problem.message);
  return JSON.parse(text) as unknown;
}
