/**
 * Tenant-less lookups of the public routes: by passport uid (the product id), and by GTIN + serial for
 * the GS1 resolver, which matches (a) a product whose gtin and serial_number are the key and (b) a
 * serial allocated by the print loop (carrier_serials), since printed labels carry allocated serials.
 */
import { expressionBuilder, sql } from 'kysely';
import { COUNTER_FORM, registeredSerial, serialIs } from '../carriers/index.js';
import { isServed, publicStatus, type PublicStatus } from '../passports/index.js';
import { preparedRead, type Database, type Db, type ProductTable } from '../store/index.js';

/** A product with its passport, as the resolver needs it (without its publisher). */
export interface ItemCandidate {
  productId: string;
  tenantId: string;
  gtin: string;
  serial: string;
  voidedAt: string | null;
  granularity: string;
  /** Null when no passport was generated. */
  state: string | null;
  disclosureTier: string | null;
  currentVersion: number;
  currentVersionId: string | null;
  successorId: string | null;
  /** The Digital Link was registered (publish-dpp): the item is resolvable. */
  registered: boolean;
  digitalLink: string | null;
  status: PublicStatus;
}

/** A product with its passport and its publisher (the tenant's name and issuer DID), as a read shows it. */
export interface Candidate extends ItemCandidate {
  tenantName: string;
  issuerDid: string | null;
  /** The market status recorded last, when the lookup read it (by uid); undefined when it did not. */
  marketStatus?: PublicMarketStatus | null;
}

/**
 * A product with its passport and Digital Link. Its tenant is not joined: products.tenant_id is a foreign
 * key of tenants (never a row less), and the publisher's tenant and issuer key rows are read only by an
 * answer that shows them (`selectCandidate`, `withPublisher`).
 */
function selectItem(db: Db) {
  return db
    .selectFrom('products as p')
    .leftJoin('passports as pp', 'pp.product_id', 'p.id')
    .leftJoin('dpp_identifiers as di', 'di.product_id', 'p.id')
    .select([
      'p.id as productId',
      'p.tenant_id as tenantId',
      'p.gtin as gtin',
      'p.serial_number as productSerial',
      'p.voided_at as voidedAt',
      'p.granularity as granularity',
      'pp.state as state',
      'pp.disclosure_tier as disclosureTier',
      'pp.current_version as currentVersion',
      'pp.current_version_id as currentVersionId',
      'pp.successor_id as successorId',
      'di.id as identifierId',
      'di.digital_link as digitalLink',
    ]);
}

/** `selectItem` with the publisher (one issuer key per tenant at most: its primary key is tenant_id). */
function selectCandidate(db: Db) {
  return selectItem(db)
    .innerJoin('tenants as t', 't.id', 'p.tenant_id')
    .leftJoin('passport_issuer_keys as k', 'k.tenant_id', 'p.tenant_id')
    .select(['t.name as tenantName', 'k.did as issuerDid']);
}

type Row = Awaited<ReturnType<ReturnType<typeof selectItem>['execute']>>[number];

/**
 * The product of a uid with its passport and the market status recorded last (as `latestMarketStatusOf`
 * reads it): the public read needs both, and one statement costs less than two.
 */
const byUid = preparedRead((db, uid: string) =>
  selectCandidate(db)
    .leftJoin('passport_market_status as ms', (j) =>
      j.on((eb) =>
        eb(
          'ms.id',
          '=',
          eb
            .selectFrom('passport_market_status as latest')
            .select('latest.id')
            .whereRef('latest.product_id', '=', 'p.id')
            .orderBy('latest.recorded_at', 'desc')
            .limit(1),
        ),
      ),
    )
    .select(['ms.status as marketStatus', 'ms.effective_at as marketSince', 'ms.reason as marketReason'])
    .where('p.id', '=', uid),
);

/**
 * The candidates of a GTIN + serial in one statement: products whose own gtin and serial are the key
 * (source 0), then products the key was allocated to by the print loop (source 1), each with whether the
 * label of the key was sealed in the product's tenant (the resolver's proof link). One round trip
 * instead of three on every scan that misses the public cache.
 */
const byKey = preparedRead((db, gtin: string, serial: string, counterSeq: string) => {
  const eb = expressionBuilder<Database & { p: ProductTable }, 'p'>();
  const sealed = eb
    .exists(
      eb
        .selectFrom('seal_receipts as sr')
        .select('sr.job_ref')
        .whereRef('sr.tenant_id', '=', 'p.tenant_id')
        .where('sr.gtin', '=', gtin)
        .where('sr.serial', '=', serial),
    )
    .as('sealed');
  const own = selectItem(db)
    .select([sql<number>`0`.as('source'), sealed])
    .where('p.gtin', '=', gtin)
    .where('p.serial_number', '=', serial);
  const allocated = () =>
    selectItem(db)
      .innerJoin('carrier_serials as cs', (j) =>
        j.onRef('cs.product_id', '=', 'p.id').onRef('cs.tenant_id', '=', 'p.tenant_id'),
      )
      .select([sql<number>`1`.as('source'), sealed])
      .where('cs.gtin', '=', gtin)
      .where('cs.serial', '=', serial);
  // A serial the counter gave, by GTIN and number (carrier_serials_gtin_seq); any other, by GTIN and text in the
  // index of those whose text is not their number (carrier_serials_gtin_registered, whose condition this repeats).
  const counted = allocated().where('cs.seq', '=', sql<number>`${counterSeq}`);
  const registered = allocated().where(registeredSerial('cs'));
  // Ordered by source in JavaScript (candidatesByKey): an ORDER BY over the union costs SQLite a temporary b-tree.
  return own.unionAll(counted).unionAll(registered);
});

/**
 * The number a serial of the counter's form is (its text is its number), as the lookup binds it; `-1`, which no
 * serial has, for any other text, so the counter's branch of the lookup finds nothing (and PostgreSQL is never
 * asked to read a bigint from letters or from 20 digits).
 */
function counterSeqOf(serial: string): string {
  return COUNTER_FORM.test(serial) ? serial : '-1';
}

/** Whether any product or allocated serial of any tenant carries the GTIN: one statement, first row wins. */
const gtinCarriers = preparedRead((db, gtin: string) =>
  db
    .selectFrom('products')
    .select('gtin')
    .where('gtin', '=', gtin)
    .unionAll(db.selectFrom('carrier_serials').select('gtin').where('gtin', '=', gtin))
    .limit(1),
);

function toCandidate(r: Row, serial: string): ItemCandidate {
  const currentVersion = r.currentVersion ?? 0;
  return {
    productId: r.productId,
    tenantId: r.tenantId,
    gtin: r.gtin,
    serial,
    voidedAt: r.voidedAt,
    granularity: r.granularity,
    state: r.state,
    disclosureTier: r.disclosureTier,
    currentVersion,
    currentVersionId: r.currentVersionId,
    successorId: r.successorId,
    registered: r.identifierId !== null,
    digitalLink: r.digitalLink,
    status: publicStatus({
      currentVersion,
      state: r.state ?? 'draft',
      disclosureTier: r.disclosureTier ?? 'public',
      productVoided: r.voidedAt !== null,
      granularity: r.granularity,
    }),
  };
}

/** The product of a uid (any tenant), with its passport and its market status, or undefined. */
export async function candidateByUid(db: Db, uid: string): Promise<Candidate | undefined> {
  const [row] = await byUid(db, uid);
  if (!row) return undefined;
  const marketStatus =
    row.marketStatus === null
      ? null
      : { status: row.marketStatus, since: row.marketSince!, reason: row.marketReason };
  return {
    ...toCandidate(row, row.productSerial),
    tenantName: row.tenantName,
    issuerDid: row.issuerDid,
    marketStatus,
  };
}

const publisherRow = preparedRead((db, tenantId: string) =>
  db
    .selectFrom('tenants as t')
    .leftJoin('passport_issuer_keys as k', 'k.tenant_id', 't.id')
    .select(['t.name as tenantName', 'k.did as issuerDid'])
    .where('t.id', '=', tenantId),
);

/** The publisher a read shows of a candidate the key lookup found: its tenant's name and issuer DID. */
export async function withPublisher(db: Db, c: ItemCandidate): Promise<Candidate> {
  const [row] = await publisherRow(db, c.tenantId);
  // The tenant is there: products.tenant_id is a foreign key of tenants.
  return { ...c, tenantName: row!.tenantName, issuerDid: row!.issuerDid };
}

interface KeyCandidate {
  candidate: ItemCandidate;
  /** The scanned label was sealed in the candidate's tenant. */
  sealed: boolean;
}

/** Every product a GTIN + serial names, in any tenant: by its own serial first, then by an allocated serial. */
async function candidatesByKey(db: Db, gtin: string, serial: string): Promise<KeyCandidate[]> {
  const byId = new Map<string, KeyCandidate>();
  const rows = (await byKey(db, gtin, serial, counterSeqOf(serial))).sort((a, b) => a.source - b.source);
  for (const r of rows)
    if (!byId.has(r.productId))
      // SQLite answers EXISTS as 0 or 1, PostgreSQL as a boolean.
      byId.set(r.productId, { candidate: toCandidate(r, serial), sealed: Boolean(r.sealed) });
  return [...byId.values()];
}

/** Whether any product or allocated serial of any tenant carries the GTIN. */
async function gtinKnown(db: Db, gtin: string): Promise<boolean> {
  return (await gtinCarriers(db, gtin)).length > 0;
}

export type KeyResolution =
  | { kind: 'one'; candidate: ItemCandidate; sealed: boolean }
  | { kind: 'ambiguous'; count: number }
  | { kind: 'voided'; candidate: ItemCandidate }
  | { kind: 'not_published' }
  | { kind: 'unknown_gtin' };

/**
 * What a GTIN + serial resolves to. A candidate counts when its passport is served or gone for a reason
 * other than a void (revoked, recycled: its page says so), and, for the resolver, when its Digital Link
 * was registered. Exactly one: that passport. More than one: ambiguous (nothing else is revealed).
 * None: a voided candidate gives the tombstone; any other match, or a known GTIN, is "not published";
 * an unknown GTIN is PRODUCT_NOT_FOUND.
 */
export async function resolveKey(
  db: Db,
  gtin: string,
  serial: string,
  opts: { requireRegistered: boolean },
): Promise<KeyResolution> {
  const found = await candidatesByKey(db, gtin, serial);
  const counted = found.filter(
    ({ candidate: c }) =>
      c.voidedAt === null &&
      (isServed(c.status) || c.status.kind === 'gone') &&
      (!opts.requireRegistered || c.registered),
  );
  if (counted.length === 1) return { kind: 'one', ...counted[0]! };
  if (counted.length > 1) return { kind: 'ambiguous', count: counted.length };
  const voided = found.find(({ candidate: c }) => c.voidedAt !== null);
  if (voided) return { kind: 'voided', candidate: voided.candidate };
  if (found.length > 0 || (await gtinKnown(db, gtin))) return { kind: 'not_published' };
  return { kind: 'unknown_gtin' };
}

const latestSealOf = preparedRead((db, tenantId: string, gtin: string, serial: string) =>
  db
    .selectFrom('seal_receipts')
    .select('sealed_at as sealedAt')
    .where('tenant_id', '=', tenantId)
    .where('gtin', '=', gtin)
    .where('serial', '=', serial)
    .orderBy('sealed_at', 'desc')
    .limit(1),
);

/**
 * When the label of a GTIN + serial was last sealed in a tenant (printed, encoded, scanned back and
 * countersigned by the control plane), or null when it never was: a label never sealed has no proof.
 * One lookup on the index seal_receipts (tenant_id, gtin, serial).
 */
export async function latestSeal(
  db: Db,
  tenantId: string,
  gtin: string,
  serial: string,
): Promise<string | null> {
  const [row] = await latestSealOf(db, tenantId, gtin, serial);
  return row?.sealedAt ?? null;
}

const latestMarketStatusOf = preparedRead((db, productId: string) =>
  db
    .selectFrom('passport_market_status')
    .select(['status', 'effective_at as since', 'reason'])
    .where('product_id', '=', productId)
    .orderBy('recorded_at', 'desc')
    .limit(1),
);

/** What the public is shown of a market status: the latest recorded, as currentMarketStatus reads it. */
export interface PublicMarketStatus {
  status: string;
  since: string;
  reason: string | null;
}

/**
 * The market status recorded last for a product (passports/market-status.ts, currentMarketStatus), in the
 * public shape, or null when none was: one prepared statement on the hot path of every public read.
 */
export async function publicMarketStatus(db: Db, productId: string): Promise<PublicMarketStatus | null> {
  const [row] = await latestMarketStatusOf(db, productId);
  return row ? { status: row.status, since: row.since, reason: row.reason } : null;
}

/** What the consumer page shows about the item in hand: the serial on the scanned label. */
export interface ItemInHand {
  serial: string;
  /** The GTIN the label carries: the allocated serial's, or the product's own. */
  gtin: string;
  /** When the item (its own product, or the product) was voided; null when it was not. */
  voidedAt: string | null;
  /** The market status recorded for the item's own product; null when none was. */
  marketStatus: PublicMarketStatus | null;
  /** The label's latest seal by an enrolled print device; null when it was never sealed. */
  label: { sealedAt: string } | null;
}

/**
 * The item a serial names, only when the serial belongs to the product: its own serial number, or a
 * serial the print loop allocated to it. A serial of another product, or of none, is undefined (the
 * serial comes from a URL anyone can type). An item product of the same tenant, GTIN and serial (an item
 * passport beside a model's allocated serial) says whether the item was voided and its market status.
 */
export async function itemInHand(db: Db, productId: string, serial: string): Promise<ItemInHand | undefined> {
  const product = await db
    .selectFrom('products')
    .select(['tenant_id', 'gtin', 'serial_number', 'voided_at'])
    .where('id', '=', productId)
    .executeTakeFirst();
  if (!product) return undefined;
  let gtin = product.gtin;
  if (product.serial_number !== serial) {
    const allocated = await db
      .selectFrom('carrier_serials as s')
      .select('s.gtin')
      .where('s.tenant_id', '=', product.tenant_id)
      .where(serialIs('s', serial))
      .where('s.product_id', '=', productId)
      .executeTakeFirst();
    if (!allocated) return undefined;
    gtin = allocated.gtin;
  }
  const item = await db
    .selectFrom('products')
    .select(['id', 'voided_at'])
    .where('tenant_id', '=', product.tenant_id)
    .where('gtin', '=', gtin)
    .where('serial_number', '=', serial)
    .where('granularity', '<>', 'model')
    .executeTakeFirst();
  const marketStatus = item ? await publicMarketStatus(db, item.id) : null;
  const sealedAt = await latestSeal(db, product.tenant_id, gtin, serial);
  return {
    serial,
    gtin,
    voidedAt: item?.voided_at ?? product.voided_at,
    marketStatus,
    label: sealedAt ? { sealedAt } : null,
  };
}
