/**
 * GS1 element strings: the AIs and values a GS1 DataMatrix or GS1-128 carries, in the two forms they take.
 *
 * - Raw, as a symbol encodes it and a scanner transmits it (after the symbology identifier `]d2`/`]C1`
 *   that stands for the leading FNC1): values one after the other, a GS (0x1D, the FNC1 separator) after
 *   every value whose length is not predefined, unless it is the last (GS1 General Specifications §7.8.4).
 * - Human-readable (HRI), as printed under the symbol and as the evidence records it: each AI in
 *   parentheses, then its value (§4.15): `(01)10950600830521(21)ABC-123`.
 *
 * Whether an AI's length is predefined comes from the table of AIs with predefined length by their first
 * two digits (§7.8.5, Figure 7.8.5-2); how many digits the AI itself has from the AI tables (§3.2).
 */
import { CodecError } from '../errors/codec-error.js';

/** The GS character that separates a variable-length value from the next AI (FNC1 in the symbol). */
export const GS1_GROUP_SEPARATOR = '\x1d';

/** One AI and its value. */
export interface Gs1Element {
  /** The AI, 2 to 4 digits: `01`, `21`, `3103`. */
  ai: string;
  value: string;
}

/**
 * GS1 General Specifications Figure 7.8.5-2: element strings with a predefined length, by the first two
 * digits of the AI, as the length of AI and value together.
 */
const PREDEFINED_LENGTH: Readonly<Record<string, number>> = {
  '00': 20,
  '01': 16,
  '02': 16,
  '03': 16,
  '04': 18,
  '11': 8,
  '12': 8,
  '13': 8,
  '14': 8,
  '15': 8,
  '16': 8,
  '17': 8,
  '18': 8,
  '19': 8,
  '20': 4,
  '31': 10,
  '32': 10,
  '33': 10,
  '34': 10,
  '35': 10,
  '36': 10,
  '41': 16,
};

/** GS1 AI encodable character set 82 (§7.11, Figure 7.11-1). */
const CHARSET_82 = /^[!"%&'()*+,\-./0-9:;<=>?A-Z_a-z]+$/;

/**
 * How many digits an AI starting with `prefix` (its first two digits) has (GS1 General Specifications §3.2):
 * two for 00-22, 30, 37 and 90-99; three for 23-29, 40-49 and 71; four for 31-36, 39, 70, 72-89.
 */
export function gs1AiLength(prefix: string): number {
  if (!/^\d{2}$/.test(prefix))
    throw new CodecError('INVALID_AI', 'an AI starts with two digits', { details: { prefix } });
  const p = Number(prefix);
  if (p <= 22 || p === 30 || p === 37 || p >= 90) return 2;
  if ((p >= 23 && p <= 29) || (p >= 40 && p <= 49) || p === 71) return 3;
  return 4;
}

/** The predefined value length of `ai` (without the AI), or null when its value is variable-length. */
export function gs1PredefinedValueLength(ai: string): number | null {
  const total = PREDEFINED_LENGTH[ai.slice(0, 2)];
  return total === undefined ? null : total - ai.length;
}

function checkElement(e: Gs1Element): Gs1Element {
  if (!/^\d{2,4}$/.test(e.ai) || gs1AiLength(e.ai.slice(0, 2)) !== e.ai.length) {
    throw new CodecError('INVALID_AI', `(${e.ai}) is not an AI`, { details: { ai: e.ai } });
  }
  if (!CHARSET_82.test(e.value)) {
    throw new CodecError('INVALID_AI_VALUE', `the value of (${e.ai}) is empty or not GS1 character set 82`, {
      details: { ai: e.ai, value: e.value },
    });
  }
  const fixed = gs1PredefinedValueLength(e.ai);
  if (fixed !== null && (e.value.length !== fixed || !/^\d+$/.test(e.value))) {
    throw new CodecError('INVALID_AI_VALUE', `the value of (${e.ai}) is ${fixed} digits`, {
      details: { ai: e.ai, value: e.value },
    });
  }
  return e;
}

/**
 * The human-readable form of element strings.
 *
 * @example
 * gs1ElementsToHri([{ ai: '01', value: '10950600830521' }, { ai: '21', value: 'A1' }]); // '(01)10950600830521(21)A1'
 */
export function gs1ElementsToHri(elements: readonly Gs1Element[]): string {
  return elements
    .map((e) => checkElement(e))
    .map((e) => `(${e.ai})${e.value}`)
    .join('');
}

/**
 * The raw form of element strings (without the leading FNC1): a GS after each variable-length value but
 * the last.
 *
 * @example
 * gs1ElementsToRaw([{ ai: '21', value: 'A1' }, { ai: '01', value: '10950600830521' }]); // '21A1\x1d0110950600830521'
 */
export function gs1ElementsToRaw(elements: readonly Gs1Element[]): string {
  if (elements.length === 0)
    throw new CodecError('INVALID_ELEMENT_STRING', 'an element string has at least one AI');
  return elements
    .map((e, i) => {
      checkElement(e);
      const last = i === elements.length - 1;
      return e.ai + e.value + (last || gs1PredefinedValueLength(e.ai) !== null ? '' : GS1_GROUP_SEPARATOR);
    })
    .join('');
}

/**
 * Parses the raw form (as a scanner transmits it after `]d2` or `]C1`, GS between fields). A GS after a
 * predefined-length value is tolerated (§7.8.4 allows it); anything else that does not parse throws
 * `CodecError` `INVALID_ELEMENT_STRING`.
 *
 * @example
 * gs1ElementsFromRaw('0110950600830521\x1d21A1'); // [{ ai: '01', value: '10950600830521' }, { ai: '21', value: 'A1' }]
 */
export function gs1ElementsFromRaw(raw: string): Gs1Element[] {
  const out: Gs1Element[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new CodecError('INVALID_ELEMENT_STRING', `not a GS1 element string: ${why}`, { details: { raw } });
  };
  while (i < raw.length) {
    if (raw[i] === GS1_GROUP_SEPARATOR && out.length > 0) {
      i++;
      continue;
    }
    const prefix = raw.slice(i, i + 2);
    if (!/^\d{2}$/.test(prefix)) fail(`no AI at position ${i}`);
    const ai = raw.slice(i, i + gs1AiLength(prefix));
    if (!/^\d+$/.test(ai) || ai.length !== gs1AiLength(prefix)) fail(`a cut-off AI at position ${i}`);
    i += ai.length;
    const fixed = gs1PredefinedValueLength(ai);
    let end: number;
    if (fixed !== null) end = i + fixed;
    else {
      const gs = raw.indexOf(GS1_GROUP_SEPARATOR, i);
      end = gs < 0 ? raw.length : gs;
    }
    if (end > raw.length) fail(`the value of (${ai}) is cut off`);
    const value = raw.slice(i, end);
    if (value.includes(GS1_GROUP_SEPARATOR)) fail(`a GS inside the value of (${ai})`);
    try {
      out.push(checkElement({ ai, value }));
    } catch (err) {
      fail(err instanceof Error ? err.message : String(err));
    }
    i = end;
  }
  if (out.length === 0) fail('it is empty');
  return out;
}

/**
 * Parses the human-readable form. A value runs until the next `(` that opens an AI of the right number
 * of digits followed by `)`; a value that itself contains such a text is ambiguous in this form and is
 * read as two elements (use the raw form for those).
 *
 * @example
 * gs1ElementsFromHri('(01)10950600830521(21)A(1)'); // [{ ai: '01', ... }, { ai: '21', value: 'A(1)' }]
 */
export function gs1ElementsFromHri(hri: string): Gs1Element[] {
  const opener = /\((\d{2,4})\)/g;
  const starts: { at: number; ai: string }[] = [];
  for (let m = opener.exec(hri); m; m = opener.exec(hri)) {
    const ai = m[1]!;
    if (gs1AiLength(ai.slice(0, 2)) !== ai.length) continue;
    // An AI opens only where the previous value may end: at the start, or after a whole predefined value.
    const prev = starts[starts.length - 1];
    if (prev) {
      const fixed = gs1PredefinedValueLength(prev.ai);
      const valueStart = prev.at + prev.ai.length + 2;
      if (fixed !== null && m.index !== valueStart + fixed) continue;
      if (m.index === valueStart) continue; // an empty value is no value
    } else if (m.index !== 0) break;
    starts.push({ at: m.index, ai });
    opener.lastIndex = m.index + ai.length + 2;
  }
  if (starts.length === 0 || starts[0]!.at !== 0) {
    throw new CodecError('INVALID_ELEMENT_STRING', 'a GS1 element string starts with an AI in parentheses', {
      details: { hri },
    });
  }
  return starts.map((s, k) => {
    const next = starts[k + 1];
    const value = hri.slice(s.at + s.ai.length + 2, next ? next.at : hri.length);
    try {
      return checkElement({ ai: s.ai, value });
    } catch (err) {
      throw new CodecError('INVALID_ELEMENT_STRING', err instanceof Error ? err.message : String(err), {
        details: { hri },
        cause: err,
      });
    }
  });
}

/**
 * Raw data (GS-separated) to the human-readable form.
 *
 * @example
 * gs1RawToHri('0110950600830521211234'); // '(01)10950600830521(21)1234'
 */
export function gs1RawToHri(raw: string): string {
  return gs1ElementsToHri(gs1ElementsFromRaw(raw));
}

/**
 * The human-readable form to raw data (GS-separated, without the leading FNC1).
 *
 * @example
 * gs1HriToRaw('(21)A1(01)10950600830521'); // '21A1\x1d0110950600830521'
 */
export function gs1HriToRaw(hri: string): string {
  return gs1ElementsToRaw(gs1ElementsFromHri(hri));
}
