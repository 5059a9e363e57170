/**
 * `^FH` field hexadecimal indicator (ZPL II Programming Guide, ^FH): inside a field that carries
 * `^FH`, the indicator character (default `_`) followed by two hex digits stands for that byte.
 * This is how control characters (`_0D_0A`) and the prefixes `^`/`~` (`_5E`, `_7E`) travel inside
 * field data and `^HV` headers without being read as commands.
 */

/** The default `^FH` indicator. */
export const DEFAULT_HEX_INDICATOR = '_';

/**
 * Decodes `^FH` escapes; an indicator not followed by two hex digits is kept as is.
 *
 * @example
 * decodeFieldHex('EPC:_0D_0A'); // 'EPC:\r\n'
 */
export function decodeFieldHex(data: string, indicator: string = DEFAULT_HEX_INDICATOR): string {
  let out = '';
  for (let i = 0; i < data.length; i++) {
    const ch = data[i] as string;
    const hex = data.slice(i + 1, i + 3);
    if (ch === indicator && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      out += String.fromCharCode(parseInt(hex, 16));
      i += 2;
    } else {
      out += ch;
    }
  }
  return out;
}

/**
 * Encodes every character that cannot travel literally in `^FH` field data (control characters,
 * `^`, `~`, `,` and the indicator itself) as indicator + two hex digits. Only characters up to
 * U+00FF can be encoded.
 *
 * @example
 * encodeFieldHex('\r\n'); // '_0D_0A'
 */
export function encodeFieldHex(text: string, indicator: string = DEFAULT_HEX_INDICATOR): string {
  let out = '';
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    const escape = code < 0x20 || code === 0x7f || ch === '^' || ch === '~' || ch === ',' || ch === indicator;
    out += escape ? indicator + code.toString(16).toUpperCase().padStart(2, '0') : ch;
  }
  return out;
}
