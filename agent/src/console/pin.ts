/**
 * Supervisor PINs (or badge codes) as they are kept in the agent's configuration: an scrypt hash
 * (RFC 7914) `scrypt$<N>$<r>$<p>$<salt>$<key>`, salt and key in base64url. A PIN is short, so the hash
 * only keeps it from being read off the file; what stops guessing is the console's attempt limit.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** What a PIN may be: 4 to 64 visible ASCII characters (digits on the PIN pad, or a badge code). */
export const PIN_PATTERN = /^[\x21-\x7e]{4,64}$/;

/** The stored form; the config schema checks it, {@link verifyPin} parses it. */
export const PIN_HASH_PATTERN =
  /^scrypt\$(\d{1,8})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{32,})$/;

export interface PinHashCost {
  /** CPU/memory cost, a power of two. */
  N: number;
  r: number;
  p: number;
}

/** About 50 ms and 16 MiB per check on a small PC: cheap enough to check every supervisor per sign-in. */
export const DEFAULT_PIN_COST: PinHashCost = { N: 16_384, r: 8, p: 1 };

const KEY_LENGTH = 32;

function derive(pin: string, salt: Buffer, cost: PinHashCost): Promise<Buffer> {
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) =>
    scrypt(pin.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Whether a cost read from a file is one this device will spend time on (a hostile N is a DoS). */
function sensibleCost({ N, r, p }: PinHashCost): boolean {
  return N >= 1024 && N <= 131_072 && (N & (N - 1)) === 0 && r >= 1 && r <= 16 && p >= 1 && p <= 4;
}

/**
 * The stored form of a PIN.
 *
 * @example await hashPin('2468') // 'scrypt$16384$8$1$<salt>$<key>'
 */
export async function hashPin(pin: string, cost: PinHashCost = DEFAULT_PIN_COST): Promise<string> {
  if (!PIN_PATTERN.test(pin)) throw new RangeError('a PIN is 4 to 64 visible ASCII characters');
  if (!sensibleCost(cost)) throw new RangeError('unsupported scrypt cost');
  const salt = randomBytes(16);
  const key = await derive(pin, salt, cost);
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** True when `pin` is the one `hash` was made from; false for any malformed input (never throws). */
export async function verifyPin(pin: string, hash: string): Promise<boolean> {
  const m = PIN_HASH_PATTERN.exec(hash);
  if (!m || !PIN_PATTERN.test(pin)) return false;
  const cost = { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  if (!sensibleCost(cost)) return false;
  const expected = Buffer.from(m[5]!, 'base64url');
  if (expected.length !== KEY_LENGTH) return false;
  const key = await derive(pin, Buffer.from(m[4]!, 'base64url'), cost);
  return timingSafeEqual(key, expected);
}
