/**
 * base58btc (the Bitcoin alphabet, IETF draft-msporny-base58) and its multibase form with the `z` prefix
 * (Multibase draft, base58btc entry). Small on purpose: keys and signatures are 32 to 64 bytes.
 */
import { CodecError } from '../errors/codec-error.js';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const INDEX: ReadonlyMap<string, number> = new Map([...ALPHABET].map((ch, i) => [ch, i]));

/**
 * Encodes bytes as base58btc (no multibase prefix). Each leading zero byte becomes a leading `1`.
 *
 * @example
 * base58btcEncode(new Uint8Array([0, 0, 1])); // '112'
 */
export function base58btcEncode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros += 1;
  // Base conversion 256 -> 58 on a little-endian digit array.
  const digits: number[] = [];
  for (let i = zeros; i < bytes.length; i += 1) {
    let carry = bytes[i] ?? 0;
    for (let j = 0; j < digits.length; j += 1) {
      carry += (digits[j] ?? 0) * 256;
      digits[j] = carry % 58;
      carry = Math.floor(carry / 58);
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = Math.floor(carry / 58);
    }
  }
  return (
    '1'.repeat(zeros) +
    digits
      .reverse()
      .map((d) => ALPHABET[d])
      .join('')
  );
}

/**
 * Decodes base58btc (no multibase prefix). Throws `CodecError` `INVALID_BASE58` on a character outside
 * the alphabet (0, O, I and l are not in it) or on empty input.
 *
 * @example
 * base58btcDecode('112'); // Uint8Array [0, 0, 1]
 */
export function base58btcDecode(text: string): Uint8Array {
  if (typeof text !== 'string' || text.length === 0) {
    throw new CodecError('INVALID_BASE58', 'base58btc input is empty');
  }
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros += 1;
  const bytes: number[] = [];
  for (const ch of text.slice(zeros)) {
    let carry = INDEX.get(ch);
    if (carry === undefined) {
      throw new CodecError('INVALID_BASE58', `character ${JSON.stringify(ch)} is not base58btc`);
    }
    for (let j = 0; j < bytes.length; j += 1) {
      carry += (bytes[j] ?? 0) * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  return Uint8Array.from([...new Array<number>(zeros).fill(0), ...bytes.reverse()]);
}

/**
 * Multibase base58btc: `z` followed by base58btc.
 *
 * @example
 * multibaseBase58btcEncode(new Uint8Array([1, 2])); // 'z5T'
 */
export function multibaseBase58btcEncode(bytes: Uint8Array): string {
  return `z${base58btcEncode(bytes)}`;
}

/**
 * Decodes a multibase base58btc string; any other multibase prefix is refused with `INVALID_BASE58`.
 *
 * @example
 * multibaseBase58btcDecode('z5T'); // Uint8Array [1, 2]
 */
export function multibaseBase58btcDecode(text: string): Uint8Array {
  if (typeof text !== 'string' || !text.startsWith('z')) {
    throw new CodecError('INVALID_BASE58', 'expected multibase base58btc (prefix "z")');
  }
  return base58btcDecode(text.slice(1));
}
