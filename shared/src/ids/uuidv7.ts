/**
 * Ids that sort by creation time: UUID version 7 (RFC 9562), a 48-bit Unix time in milliseconds, then
 * random bits. Rows of the control plane's append-heavy tables (events, outbox, audit log, evidence,
 * deliveries) get them, so do print attempts (an attempt id is a fencing token: it must be unique, not
 * secret, and the claim time it shows is in the job's own record), and so do the agent's Idempotency-Keys:
 * either lands at the right edge of its B-tree (the table's primary key, the key index) instead of on a
 * random page, which keeps inserts cheap on SQLite and PostgreSQL alike. Within one millisecond, ids from
 * this process still increase: the 12 bits after the version count up from a random start (RFC 9562, 6.2,
 * method 1), and a full count moves on to the next millisecond.
 *
 * For ids that must not reveal when they were made (API keys, tokens), use `randomUUID`.
 */
import { randomFillSync } from 'node:crypto';

let lastMs = -1;
let counter = 0;

/**
 * Random bytes drawn ahead, 10 an id: one call into the CSPRNG per 409 ids instead of one each (a sealed batch
 * of print results makes dozens of ids, and the calls were a measurable share of the control plane's thread).
 * Each id takes bytes no other id took.
 */
const POOL = new Uint8Array(4096);
let drawn = POOL.length;

/** The offset in POOL of 10 random bytes no id took before. */
function randomBytes10(): number {
  if (drawn + 10 > POOL.length) {
    randomFillSync(POOL);
    drawn = 0;
  }
  drawn += 10;
  return drawn - 10;
}

/** The id's text is written here, one ASCII byte a character, and read out as one string. */
const TEXT = Buffer.alloc(36, '-');
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
/** Where each of the 16 bytes goes in the text (8-4-4-4-12 hex digits, dashes between). */
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

function put(i: number, byte: number): void {
  TEXT[AT[i]!] = HEX_DIGITS[byte >>> 4]!;
  TEXT[AT[i]! + 1] = HEX_DIGITS[byte & 0x0f]!;
}

export function uuidv7(now: number = Date.now()): string {
  const r = randomBytes10();
  if (now > lastMs) {
    lastMs = now;
    counter = ((POOL[r]! & 0x07) << 8) | POOL[r + 1]!; // a random start below 2^11 leaves room to count
  } else if (++counter > 0xfff) {
    lastMs += 1; // the clock went back or 4,096 ids came in one millisecond: borrow the next one
    counter = 0;
  }
  const ms = lastMs;
  put(0, Math.floor(ms / 2 ** 40) & 0xff);
  put(1, Math.floor(ms / 2 ** 32) & 0xff);
  put(2, (ms >>> 24) & 0xff);
  put(3, (ms >>> 16) & 0xff);
  put(4, (ms >>> 8) & 0xff);
  put(5, ms & 0xff);
  put(6, 0x70 | (counter >>> 8));
  put(7, counter & 0xff);
  put(8, 0x80 | (POOL[r + 2]! & 0x3f));
  for (let i = 9; i < 16; i++) put(i, POOL[r + i - 6]!);
  // One string read off the text: an id takes no buffer, copy or slice of its own.
  return TEXT.toString('latin1', 0, 36);
}
