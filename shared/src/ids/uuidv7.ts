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

function randomBytes10(): Uint8Array {
  if (drawn + 10 > POOL.length) {
    randomFillSync(POOL);
    drawn = 0;
  }
  drawn += 10;
  return POOL.subarray(drawn - 10, drawn);
}

export function uuidv7(now: number = Date.now()): string {
  const random = randomBytes10();
  if (now > lastMs) {
    lastMs = now;
    counter = ((random[0]! & 0x07) << 8) | random[1]!; // a random start below 2^11 leaves room to count
  } else if (++counter > 0xfff) {
    lastMs += 1; // the clock went back or 4,096 ids came in one millisecond: borrow the next one
    counter = 0;
  }
  const ms = lastMs;
  const b = new Uint8Array(16);
  b[0] = Math.floor(ms / 2 ** 40) & 0xff;
  b[1] = Math.floor(ms / 2 ** 32) & 0xff;
  b[2] = (ms >>> 24) & 0xff;
  b[3] = (ms >>> 16) & 0xff;
  b[4] = (ms >>> 8) & 0xff;
  b[5] = ms & 0xff;
  b[6] = 0x70 | (counter >>> 8);
  b[7] = counter & 0xff;
  b[8] = 0x80 | (random[2]! & 0x3f);
  b.set(random.subarray(3, 10), 9);
  const hex = Buffer.from(b).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
