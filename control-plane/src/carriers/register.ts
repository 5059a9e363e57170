/**
 * Registered serials: POST /carriers/batch with `serials` instead of `count`. A factory whose serials come
 * from elsewhere (a line controller, a customer's scheme, alphanumeric serials) registers them so the print
 * loop, the export and the resolver treat them like allocated ones. The workspace's serials are one
 * namespace: a serial is unique in it, and the decimal form without a leading zero belongs to the counter.
 */
import {
  type EpcScheme,
  type EpcSchemePreference,
  GS1_SERIAL_MAX_LENGTH,
  epcSchemeFor,
  isSgtin96SafeSerial,
  isValidGs1Serial,
} from '@dpp/shared';
import { ApiError } from '../http/index.js';
import type { Db, ProductTable } from '../store/index.js';
import { registeredSerial } from './serial-rows.js';

/** Serials named in one error's details at most (the message gives the count). */
const NAMED_MAX = 100;
/** Serials per statement (lookups and inserts stay well below both databases' parameter limits). */
const CHUNK = 500;

/** The decimal form the counter hands out: it is the counter's, never registered. */
const COUNTER_FORM = /^[1-9][0-9]*$/;

function named(serials: readonly string[]): { serials: string[]; count: number } {
  return { serials: serials.slice(0, NAMED_MAX), count: serials.length };
}

/**
 * The serials of the tenant among these (in the order given), registered ones (none has the counter's form: see
 * checkRegisteredSerials), found in the unique index of registered serials.
 */
async function takenSerials(db: Db, tenantId: string, serials: readonly string[]): Promise<string[]> {
  const taken = new Set<string>();
  for (let i = 0; i < serials.length; i += CHUNK) {
    const rows = await db
      .selectFrom('carrier_serials as s')
      .select('s.serial')
      .where('s.tenant_id', '=', tenantId)
      .where('s.serial', 'in', serials.slice(i, i + CHUNK))
      .where(registeredSerial('s'))
      .execute();
    for (const r of rows) taken.add(r.serial);
  }
  return serials.filter((s) => taken.has(s));
}

/** 409 SERIAL_ALREADY_ALLOCATED naming the serials the tenant has, when there are any. */
export async function refuseTaken(db: Db, tenantId: string, serials: readonly string[]): Promise<void> {
  const taken = await takenSerials(db, tenantId, serials);
  if (taken.length > 0) {
    throw new ApiError(
      'SERIAL_ALREADY_ALLOCATED',
      `${taken.length} of the serials already exist in this workspace; none were registered`,
      { details: named(taken) },
    );
  }
}

/**
 * Checks registered serials all or nothing, in this order, each failure naming its serials: each an AI (21)
 * serial (400 INVALID_SERIAL), none twice in the request (400 VALIDATION_ERROR), none of the counter's form
 * (422 SERIAL_RESERVED_FOR_COUNTER), each encodable under the product's scheme (422 SERIAL_NOT_SGTIN96), none
 * already in the workspace (409 SERIAL_ALREADY_ALLOCATED). Returns each serial's EPC scheme.
 */
export async function checkRegisteredSerials(
  trx: Db,
  tenantId: string,
  product: Pick<ProductTable, 'id' | 'epc_scheme'>,
  serials: readonly string[],
): Promise<EpcScheme[]> {
  const invalid = serials.filter((s) => !isValidGs1Serial(s));
  if (invalid.length > 0) {
    throw new ApiError(
      'INVALID_SERIAL',
      `${invalid.length} serials are not AI (21) serials (1 to ${GS1_SERIAL_MAX_LENGTH} characters of GS1 character set 82)`,
      { details: { field: 'serials', ...named(invalid) } },
    );
  }
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const s of serials) (seen.has(s) ? repeated : seen).add(s);
  if (repeated.size > 0) {
    throw ApiError.validation('serials', `${repeated.size} serials appear more than once in the request`, {
      duplicates: [...repeated].slice(0, NAMED_MAX),
    });
  }
  const counter = serials.filter((s) => COUNTER_FORM.test(s));
  if (counter.length > 0) {
    throw new ApiError(
      'SERIAL_RESERVED_FOR_COUNTER',
      `${counter.length} serials have the form of the workspace's own serials (decimal without a leading zero), ` +
        'which only count allocates; register serials in another form (e.g. with a prefix or a leading zero)',
      { details: named(counter) },
    );
  }
  const preference = product.epc_scheme as EpcSchemePreference;
  if (preference === 'sgtin-96') {
    const unfit = serials.filter((s) => !isSgtin96SafeSerial(s));
    if (unfit.length > 0) {
      throw new ApiError(
        'SERIAL_NOT_SGTIN96',
        `The product's epcScheme is sgtin-96, and ${unfit.length} serials cannot be an SGTIN-96 ` +
          '(a decimal without leading zeros up to 2^38 - 1); set epcScheme to auto or sgtin-198',
        { details: { productId: product.id, ...named(unfit) } },
      );
    }
  }
  await refuseTaken(trx, tenantId, serials);
  return serials.map((s) => epcSchemeFor(s, preference));
}

/** Inserts registered serials with the numbers first, first + 1, ... in the order given. */
export async function insertRegisteredSerials(
  trx: Db,
  r: { tenantId: string; productId: string; gtin: string; batchId: string; at: string; first: number },
  serials: readonly string[],
  schemes: readonly EpcScheme[],
): Promise<void> {
  for (let i = 0; i < serials.length; i += CHUNK) {
    await trx
      .insertInto('carrier_serials')
      .values(
        serials.slice(i, i + CHUNK).map((serial, j) => ({
          tenant_id: r.tenantId,
          serial,
          seq: r.first + i + j,
          product_id: r.productId,
          gtin: r.gtin,
          batch_id: r.batchId,
          allocated_at: r.at,
          epc_scheme: schemes[i + j]!,
          print_status: null,
          print_reason: null,
          print_device_id: null,
          print_reported_at: null,
          print_source: null,
          print_report_ref: null,
        })),
      )
      .execute();
  }
}
