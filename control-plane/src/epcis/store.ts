import { randomUUID } from 'node:crypto';
import type { Db, EpcisEventEpcTable, EpcisEventTable, WriteSet } from '../store/index.js';
import { prepared, uuidv7 } from '../store/index.js';
import type { EpcisEvent } from './schemas.js';

/** The EPCIS 2.0 JSON-LD context (EPCIS 2.0 §8.2.1); every document we return names it first. */
export const EPCIS_CONTEXT = 'https://ref.gs1.org/standards/epcis/2.0.0/epcis-context.jsonld';

/** Contexts that are the EPCIS one (any published location of epcis-context.jsonld). */
const isEpcisContext = (c: unknown): boolean => typeof c === 'string' && c.endsWith('/epcis-context.jsonld');

export type JsonLdContext = string | Record<string, unknown> | (string | Record<string, unknown>)[];

/** The contexts beyond the EPCIS one, as a list (what extension fields need to be understood). */
export function extraContexts(context: JsonLdContext | undefined): (string | Record<string, unknown>)[] {
  if (context === undefined) return [];
  return (Array.isArray(context) ? context : [context]).filter((c) => !isEpcisContext(c));
}

/** JSON-LD context lists hold each context once (the EPCIS JSON Schema: uniqueItems). */
function uniqueContexts<T>(list: readonly T[]): T[] {
  const seen = new Set<string>();
  return list.filter((c) => {
    const key = JSON.stringify(c);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export interface RecordOptions {
  /** `capture` (POST /epcis/capture) or `print-loop` (commissioning on a confirmed print). */
  source: 'capture' | 'print-loop';
  captureId?: string | null;
  /** The capturing document's @context; an event's own @context is added to it. */
  context?: JsonLdContext;
  /** The repository's record time (EPCIS 2.0 §7.4.1: set on capture; a sent recordTime is replaced). */
  recordTime: string;
  /**
   * Add the INSERTs to this write set of the caller's transaction instead of running them, for events
   * whose eventIDs are new (the print loop's fresh `urn:uuid:` ones): every event counts as stored, and the
   * set's flush fails when one was not, so nothing is counted that was not written.
   */
  writes?: WriteSet;
}

export interface RecordResult {
  /** eventIDs stored by this call, in order. */
  stored: string[];
  /** The document each stored event was stored as (its JSON text), in the order of `stored`. */
  documents: string[];
  /** Events whose eventID the tenant already had (or that repeat one earlier in the same call). */
  duplicates: number;
}

const EVENT_CHUNK = 200;
const EPC_CHUNK = 1_000;

/** Every EPC an event names: the epc filter of a query matches any of them. */
function epcsOf(e: EpcisEvent): string[] {
  const fields = e as Record<string, unknown>;
  const all: string[] = [];
  for (const key of ['epcList', 'childEPCs', 'parentID', 'inputEPCList', 'outputEPCList']) {
    const v = fields[key];
    if (typeof v === 'string') all.push(v);
    else if (Array.isArray(v)) all.push(...(v as string[]));
  }
  return [...new Set(all)];
}

/** A set's events, each stored once per tenant (a twin's is not inserted, and the set's count falls short). */
const insertEventRows = prepared((db: Db, rows: readonly EpcisEventTable[]) =>
  db
    .insertInto('epcis_events')
    .values(rows)
    .onConflict((oc) => oc.columns(['tenant_id', 'event_id']).doNothing()),
);

const insertEpcRows = prepared((db: Db, rows: readonly EpcisEventEpcTable[]) =>
  db.insertInto('epcis_event_epcs').values(rows),
);

/**
 * Stores validated events for a tenant in the caller's transaction. An event without an eventID gets a
 * `urn:uuid:` one (a random UUID; not the CBV 2.0 event hash). An eventID the tenant already holds is
 * skipped, so capturing the same document twice stores its events once.
 */
export async function recordEpcisEvents(
  db: Db,
  tenantId: string,
  events: readonly EpcisEvent[],
  options: RecordOptions,
): Promise<RecordResult> {
  const baseContexts = extraContexts(options.context);
  const rows = events.map((event) => {
    const { '@context': own, ...rest } = event;
    const eventId = rest.eventID ?? `urn:uuid:${randomUUID()}`;
    const contexts = uniqueContexts([...baseContexts, ...extraContexts(own as JsonLdContext | undefined)]);
    const document = { ...rest, eventID: eventId, recordTime: options.recordTime };
    return {
      row: {
        id: uuidv7(),
        tenant_id: tenantId,
        event_id: eventId,
        event_type: event.type,
        event_time: new Date(event.eventTime).toISOString(),
        record_time: options.recordTime,
        action: (event as { action?: string }).action ?? null,
        biz_step: event.bizStep ?? null,
        disposition: event.disposition ?? null,
        source: options.source,
        capture_id: options.captureId ?? null,
        context: contexts.length > 0 ? JSON.stringify(contexts) : null,
        document: JSON.stringify(document),
      },
      epcs: epcsOf(event),
    };
  });

  const unique = new Map<string, (typeof rows)[number]>();
  for (const r of rows) if (!unique.has(r.row.event_id)) unique.set(r.row.event_id, r);
  const candidates = [...unique.values()];
  const inserted = new Set<string>();
  const { writes } = options;
  for (let i = 0; i < candidates.length; i += EVENT_CHUNK) {
    const chunk = candidates.slice(i, i + EVENT_CHUNK);
    if (writes) {
      writes.add(
        insertEventRows(
          db,
          chunk.map((c) => c.row),
        ),
        {
          rows: chunk.length,
          otherwise: 'an EPCIS event of the set was stored before',
        },
      );
      for (const c of chunk) inserted.add(c.row.id);
      continue;
    }
    const insert = db
      .insertInto('epcis_events')
      .values(chunk.map((c) => c.row))
      .onConflict((oc) => oc.columns(['tenant_id', 'event_id']).doNothing());
    for (const r of await insert.returning('id').execute()) inserted.add(r.id);
  }
  const storedRows = candidates.filter((c) => inserted.has(c.row.id));
  const epcRows = storedRows.flatMap((c) =>
    c.epcs.map((epc) => ({ tenant_id: tenantId, epc, event_row_id: c.row.id })),
  );
  for (let i = 0; i < epcRows.length; i += EPC_CHUNK) {
    const insert = insertEpcRows(db, epcRows.slice(i, i + EPC_CHUNK));
    if (writes) writes.add(insert);
    else await db.executeQuery(insert);
  }
  return {
    stored: storedRows.map((c) => c.row.event_id),
    documents: storedRows.map((c) => c.row.document),
    duplicates: events.length - storedRows.length,
  };
}

export interface EventFilter {
  eventTypes?: readonly string[];
  epc?: string;
  bizStep?: string;
  /** Inclusive, ISO UTC. */
  fromEventTime?: string;
  /** Exclusive, ISO UTC. */
  toEventTime?: string;
}

export interface EventCursor {
  eventTime: string;
  id: string;
}

export interface EventPage {
  events: Record<string, unknown>[];
  next: EventCursor | null;
}

/**
 * One page of a tenant's events in (eventTime, id) order, after the cursor. An event captured with
 * contexts beyond the EPCIS one carries them in its own `@context`.
 */
export async function queryEpcisEvents(
  db: Db,
  tenantId: string,
  filter: EventFilter,
  page: { limit: number; after: EventCursor | null },
): Promise<EventPage> {
  let q = db
    .selectFrom('epcis_events')
    .select(['id', 'event_time', 'context', 'document'])
    .where('tenant_id', '=', tenantId);
  if (filter.eventTypes && filter.eventTypes.length > 0)
    q = q.where('event_type', 'in', [...filter.eventTypes]);
  if (filter.bizStep !== undefined) q = q.where('biz_step', '=', filter.bizStep);
  if (filter.fromEventTime !== undefined) q = q.where('event_time', '>=', filter.fromEventTime);
  if (filter.toEventTime !== undefined) q = q.where('event_time', '<', filter.toEventTime);
  if (filter.epc !== undefined) {
    const epc = filter.epc;
    q = q.where('id', 'in', (eb) =>
      eb
        .selectFrom('epcis_event_epcs')
        .select('event_row_id')
        .where('tenant_id', '=', tenantId)
        .where('epc', '=', epc),
    );
  }
  const after = page.after;
  if (after) {
    q = q.where((eb) =>
      eb.or([
        eb('event_time', '>', after.eventTime),
        eb.and([eb('event_time', '=', after.eventTime), eb('id', '>', after.id)]),
      ]),
    );
  }
  const rows = await q
    .orderBy('event_time')
    .orderBy('id')
    .limit(page.limit + 1)
    .execute();
  const more = rows.length > page.limit;
  const shown = more ? rows.slice(0, page.limit) : rows;
  const last = shown[shown.length - 1];
  return {
    events: shown.map((r) => {
      const document = JSON.parse(r.document) as Record<string, unknown>;
      return r.context === null ? document : { '@context': JSON.parse(r.context) as unknown, ...document };
    }),
    next: more && last ? { eventTime: last.event_time, id: last.id } : null,
  };
}
