/**
 * zod schemas of an EPCIS 2.0 JSON-LD capture document and its five event types (GS1 EPCIS 2.0 §7.4,
 * and the rules of the EPCIS 2.0 JSON Schema: required fields, `action`, `eventTimeZoneOffset`, which
 * lists an event must carry). Fields beyond the standard ones must be namespaced (`prefix:name`, a
 * JSON-LD compact IRI), as the JSON Schema's `propertyNames` demand. Sensor reports are checked for
 * their shape only.
 */
import { isCodecError, parseSgtinPureIdentityUri } from '@dpp/shared';
import { z } from 'zod';
import {
  BizStep,
  BizTransactionType,
  Disposition,
  ErrorReason,
  SourceDestType,
  Uri,
  isUri,
} from './vocabulary.js';

/** Most events one capture call accepts. */
export const CAPTURE_MAX_EVENTS = 10_000;

/** ISO 8601 date-time with `Z` or an offset (EPCIS 2.0 §7.3.2: eventTime carries its zone). */
const Time = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with Z or an offset' });

/** EPCIS 2.0 §7.4.1: `+hh:mm` or `-hh:mm`, from -14:00 to +14:00. */
const TimeZoneOffset = z
  .string()
  .regex(/^[+-]((0[0-9]|1[0-3]):[0-5][0-9]|14:00)$/, 'must be an offset such as +01:00 (-14:00 to +14:00)');

/**
 * An instance-level EPC: an EPC pure identity URN (`urn:epc:id:<scheme>:...`; an SGTIN one must parse,
 * TDS §6.3.1) or a GS1 Digital Link URI (EPCIS 2.0 §6.2 accepts both).
 */
const Epc = z.string().superRefine((value, ctx) => {
  const message = (m: string) => ctx.addIssue({ code: 'custom', message: m });
  if (value.startsWith('urn:epc:id:sgtin:')) {
    try {
      parseSgtinPureIdentityUri(value);
    } catch (err) {
      if (!isCodecError(err)) throw err;
      message(`is not a valid SGTIN URI: ${err.message}`);
    }
    return;
  }
  if (/^urn:epc:id:[a-z0-9-]+:[^\s]+$/.test(value) && isUri(value)) return;
  if (/^https?:\/\/[^\s/]+\/[^\s]*$/.test(value) && isUri(value)) return;
  message('must be an EPC URI (urn:epc:id:...) or a GS1 Digital Link URI');
});

function uniqueList<T extends z.ZodType<string>>(item: T, min = 0) {
  return z
    .array(item)
    .min(min)
    .superRefine((list, ctx) => {
      const seen = new Set<string>();
      list.forEach((v, i) => {
        if (seen.has(v)) ctx.addIssue({ code: 'custom', path: [i], message: `duplicates ${v}` });
        seen.add(v);
      });
    });
}

/** A name the standard does not define is an extension: a namespaced key such as `example:batch`. */
const isExtensionKey = (key: string): boolean => isUri(key);

/** An object with the given fields and namespaced extension fields, nothing else. */
function extensible<S extends z.core.$ZodShape>(shape: S) {
  return z
    .object(shape)
    .catchall(z.unknown())
    .superRefine((value, ctx) => {
      for (const key of Object.keys(value)) {
        if (!(key in shape) && !isExtensionKey(key)) {
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: 'is not a field of this object; extension fields are namespaced (prefix:name)',
          });
        }
      }
    });
}

const JsonLdContext = z.union([
  Uri,
  z.record(z.string(), z.unknown()),
  z.array(z.union([Uri, z.record(z.string(), z.unknown())])).min(1),
]);

const QuantityElement = z
  .object({
    epcClass: Uri,
    quantity: z.number().optional(),
    uom: z
      .string()
      .regex(/^[A-Z0-9]{2,3}$/, 'must be a UN/CEFACT Rec 20 unit code such as KGM')
      .optional(),
  })
  .strict();

const Location = extensible({ id: Uri });
const BizTransaction = z.object({ type: BizTransactionType.optional(), bizTransaction: Uri }).strict();
const Source = z.object({ type: SourceDestType, source: Uri }).strict();
const Destination = z.object({ type: SourceDestType, destination: Uri }).strict();
const SensorElement = extensible({
  sensorMetadata: z.record(z.string(), z.unknown()).optional(),
  sensorReport: z.array(z.record(z.string(), z.unknown())).min(1),
});
const PersistentDisposition = z
  .object({ set: uniqueList(Disposition, 1).optional(), unset: uniqueList(Disposition, 1).optional() })
  .strict()
  .refine((v) => v.set !== undefined || v.unset !== undefined, 'needs set or unset');
const Ilmd = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  for (const key of Object.keys(value)) {
    if (!isExtensionKey(key)) {
      ctx.addIssue({ code: 'custom', path: [key], message: 'ilmd fields are namespaced (prefix:name)' });
    }
  }
});
const ErrorDeclaration = extensible({
  declarationTime: Time,
  reason: ErrorReason.optional(),
  correctiveEventIDs: z.array(Uri).optional(),
});

const Action = z.enum(['ADD', 'OBSERVE', 'DELETE']);

/** Fields every event type has (EPCIS 2.0 §7.4.1 EPCISEvent). */
const common = {
  '@context': JsonLdContext.optional(),
  eventTime: Time,
  recordTime: Time.optional(),
  eventTimeZoneOffset: TimeZoneOffset,
  eventID: Uri.optional(),
  certificationInfo: z.union([Uri, z.array(Uri)]).optional(),
  errorDeclaration: ErrorDeclaration.optional(),
};

/** Fields of the "why/where" dimensions most event types share. */
const whyWhere = {
  bizStep: BizStep.optional(),
  disposition: Disposition.optional(),
  readPoint: Location.optional(),
  bizLocation: Location.optional(),
  bizTransactionList: z.array(BizTransaction).optional(),
  sourceList: z.array(Source).optional(),
  destinationList: z.array(Destination).optional(),
  sensorElementList: z.array(SensorElement).optional(),
};

type Check = z.core.$RefinementCtx;
const need = (ctx: Check, message: string) => ctx.addIssue({ code: 'custom', message });
const nonEmpty = (list: readonly unknown[] | undefined) => list !== undefined && list.length > 0;

/** EPCIS 2.0 §7.4.2: what happened to objects; epcList, quantityList or sensor data with a readPoint. */
const ObjectEvent = extensible({
  type: z.literal('ObjectEvent'),
  ...common,
  action: Action,
  epcList: uniqueList(Epc).optional(),
  quantityList: z.array(QuantityElement).min(1).optional(),
  persistentDisposition: PersistentDisposition.optional(),
  ilmd: Ilmd.optional(),
  ...whyWhere,
}).superRefine((e, ctx) => {
  const sensor = nonEmpty(e.sensorElementList) && e.readPoint !== undefined;
  if (e.epcList === undefined && e.quantityList === undefined && !sensor) {
    need(ctx, 'an ObjectEvent needs epcList, quantityList, or sensorElementList with a readPoint');
  }
  if (e.ilmd !== undefined && e.action !== 'ADD') need(ctx, 'ilmd is only allowed when action is ADD');
});

/** EPCIS 2.0 §7.4.3: objects physically aggregated to a parent. */
const AggregationEvent = extensible({
  type: z.literal('AggregationEvent'),
  ...common,
  action: Action,
  parentID: Uri.optional(),
  childEPCs: uniqueList(Epc).optional(),
  childQuantityList: z.array(QuantityElement).optional(),
  ...whyWhere,
}).superRefine((e, ctx) => {
  if (!nonEmpty(e.childEPCs) && !nonEmpty(e.childQuantityList) && e.action !== 'DELETE') {
    need(ctx, 'an AggregationEvent needs childEPCs or childQuantityList (unless action is DELETE)');
  }
});

/** EPCIS 2.0 §7.4.5: objects associated with business transactions. */
const TransactionEvent = extensible({
  type: z.literal('TransactionEvent'),
  ...common,
  action: Action,
  parentID: Uri.optional(),
  epcList: uniqueList(Epc).optional(),
  quantityList: z.array(QuantityElement).optional(),
  ...whyWhere,
  bizTransactionList: z.array(BizTransaction).min(1),
}).superRefine((e, ctx) => {
  if (e.epcList === undefined && !nonEmpty(e.quantityList) && e.action !== 'DELETE') {
    need(ctx, 'a TransactionEvent needs epcList or quantityList (unless action is DELETE)');
  }
});

/** EPCIS 2.0 §7.4.6: inputs consumed, outputs produced; no action. */
const TransformationEvent = extensible({
  type: z.literal('TransformationEvent'),
  ...common,
  inputEPCList: uniqueList(Epc).optional(),
  inputQuantityList: z.array(QuantityElement).optional(),
  outputEPCList: uniqueList(Epc).optional(),
  outputQuantityList: z.array(QuantityElement).optional(),
  transformationID: Uri.optional(),
  persistentDisposition: PersistentDisposition.optional(),
  ilmd: Ilmd.optional(),
  ...whyWhere,
}).superRefine((e, ctx) => {
  const inputs = nonEmpty(e.inputEPCList) || nonEmpty(e.inputQuantityList);
  const outputs = nonEmpty(e.outputEPCList) || nonEmpty(e.outputQuantityList);
  if (!(inputs && outputs) && !((inputs || outputs) && e.transformationID !== undefined)) {
    need(ctx, 'a TransformationEvent needs inputs and outputs, or either with a transformationID');
  }
});

/** EPCIS 2.0 §7.4.4: objects associated with a parent (e.g. sensors with an asset). */
const AssociationEvent = extensible({
  type: z.literal('AssociationEvent'),
  ...common,
  action: Action,
  parentID: Uri,
  childEPCs: uniqueList(Epc).optional(),
  childQuantityList: z.array(QuantityElement).optional(),
  ...whyWhere,
}).superRefine((e, ctx) => {
  if (!nonEmpty(e.childEPCs) && !nonEmpty(e.childQuantityList) && e.action !== 'DELETE') {
    need(ctx, 'an AssociationEvent needs childEPCs or childQuantityList (unless action is DELETE)');
  }
});

export const EPCIS_EVENT_TYPES = [
  'ObjectEvent',
  'AggregationEvent',
  'TransactionEvent',
  'TransformationEvent',
  'AssociationEvent',
] as const;
export type EpcisEventType = (typeof EPCIS_EVENT_TYPES)[number];

export const EpcisEventSchema = z.discriminatedUnion('type', [
  ObjectEvent,
  AggregationEvent,
  TransactionEvent,
  TransformationEvent,
  AssociationEvent,
]);

/** A validated event: the standard fields, CBV terms as short names, and any extension fields. */
export type EpcisEvent = z.output<typeof EpcisEventSchema>;

/** POST /epcis/capture: an EPCISDocument (EPCIS 2.0 §8.2.2, JSON-LD binding). */
export const EpcisDocumentSchema = extensible({
  '@context': JsonLdContext,
  type: z.literal('EPCISDocument'),
  schemaVersion: z.string().regex(/^2(\.\d+)*$/, 'must be 2.0 (EPCIS 2.0)'),
  creationDate: Time,
  id: Uri.optional(),
  instanceIdentifier: z.string().optional(),
  sender: z.string().optional(),
  receiver: z.string().optional(),
  epcisHeader: z.record(z.string(), z.unknown()).optional(),
  epcisBody: z.looseObject({
    eventList: z
      .array(EpcisEventSchema)
      .min(1, 'must hold at least one event')
      .max(CAPTURE_MAX_EVENTS, `must hold at most ${CAPTURE_MAX_EVENTS} events per capture`),
  }),
}).meta({ id: 'EPCISDocument', description: 'An EPCIS 2.0 JSON-LD document of events to capture' });

export type EpcisDocument = z.output<typeof EpcisDocumentSchema>;
