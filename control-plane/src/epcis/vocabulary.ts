/**
 * Core Business Vocabulary (GS1 CBV 2.0) terms an EPCIS 2.0 JSON-LD event may carry. In JSON-LD a CBV
 * value is written as its bare short name (`commissioning`); the EPCIS 2.0 JSON Schema refuses the URI
 * forms of CBV terms and accepts any other (user vocabulary) URI. We also accept the two CBV URI forms
 * (`urn:epcglobal:cbv:bizstep:commissioning`, `https://ns.gs1.org/cbv/BizStep-commissioning`, the habit
 * of EPCIS 1.2 XML) and store the short name, so what we return always validates.
 */
import { z } from 'zod';

/** An absolute URI: a scheme, then RFC 3986 characters only (what JSON Schema `format: uri` accepts). */
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})+$/;

export const isUri = (value: string): boolean => URI.test(value);

export const Uri = z.string().regex(URI, 'must be an absolute URI (scheme:...)');

/** CBV 2.0 §7.1 business steps. */
export const BIZ_STEPS = [
  'accepting',
  'arriving',
  'assembling',
  'collecting',
  'commissioning',
  'consigning',
  'creating_class_instance',
  'cycle_counting',
  'decommissioning',
  'departing',
  'destroying',
  'disassembling',
  'dispensing',
  'encoding',
  'entering_exiting',
  'holding',
  'inspecting',
  'installing',
  'killing',
  'loading',
  'other',
  'packing',
  'picking',
  'receiving',
  'removing',
  'repackaging',
  'repairing',
  'replacing',
  'reserving',
  'retail_selling',
  'shipping',
  'staging_outbound',
  'stock_taking',
  'stocking',
  'storing',
  'transporting',
  'unloading',
  'unpacking',
  'void_shipping',
  'sensor_reporting',
  'sampling',
] as const;

/** CBV 2.0 §7.2 dispositions. */
export const DISPOSITIONS = [
  'active',
  'container_closed',
  'damaged',
  'destroyed',
  'dispensed',
  'disposed',
  'encoded',
  'expired',
  'in_progress',
  'in_transit',
  'inactive',
  'no_pedigree_match',
  'non_sellable_other',
  'partially_dispensed',
  'recalled',
  'reserved',
  'retail_sold',
  'returned',
  'sellable_accessible',
  'sellable_not_accessible',
  'stolen',
  'unknown',
  'available',
  'completeness_verified',
  'completeness_inferred',
  'conformant',
  'container_open',
  'mismatch_instance',
  'mismatch_class',
  'mismatch_quantity',
  'needs_replacement',
  'non_conformant',
  'unavailable',
] as const;

/** CBV 2.0 §7.3 business transaction types. */
const BIZ_TRANSACTION_TYPES = [
  'bol',
  'cert',
  'desadv',
  'inv',
  'pedigree',
  'po',
  'poc',
  'prodorder',
  'recadv',
  'rma',
  'testprd',
  'testres',
  'upevt',
] as const;

/** CBV 2.0 §7.4 source/destination types. */
const SOURCE_DEST_TYPES = ['owning_party', 'possessing_party', 'location'] as const;

/** CBV 2.0 §7.5 error reasons. */
const ERROR_REASONS = ['did_not_occur', 'incorrect_data'] as const;

/** The two URI forms of one CBV vocabulary: `urn:epcglobal:cbv:<urn>:x` and `https://ns.gs1.org/cbv/<web>-x`. */
interface CbvVocabulary {
  name: string;
  urn: string;
  web: string;
  values: readonly string[];
}

const CBV_URI = /^(?:urn:epcglobal:cbv|https?:\/\/ns\.gs1\.org\/cbv\/)/;

/**
 * Normalises a CBV term: the short name stays, a CBV URI of a known term becomes its short name, any
 * other URI (user vocabulary) stays. Returns undefined for anything else (an unknown short name or CBV
 * term, or not a URI).
 */
export function normaliseCbvTerm(vocabulary: CbvVocabulary, value: string): string | undefined {
  if (vocabulary.values.includes(value)) return value;
  const prefixes = [
    `urn:epcglobal:cbv:${vocabulary.urn}:`,
    `https://ns.gs1.org/cbv/${vocabulary.web}-`,
    `http://ns.gs1.org/cbv/${vocabulary.web}-`,
  ];
  const prefix = prefixes.find((p) => value.startsWith(p));
  if (prefix) {
    const short = value.slice(prefix.length);
    return vocabulary.values.includes(short) ? short : undefined;
  }
  if (CBV_URI.test(value) || !isUri(value)) return undefined;
  return value;
}

function cbvTerm(vocabulary: CbvVocabulary) {
  return z.string().transform((value, ctx) => {
    const term = normaliseCbvTerm(vocabulary, value);
    if (term === undefined) {
      ctx.issues.push({
        code: 'custom',
        input: value,
        message: `must be a CBV ${vocabulary.name} (e.g. ${vocabulary.values[0]}) or a non-CBV URI`,
      });
      return z.NEVER;
    }
    return term;
  });
}

export const BIZ_STEP: CbvVocabulary = {
  name: 'business step',
  urn: 'bizstep',
  web: 'BizStep',
  values: BIZ_STEPS,
};
export const DISPOSITION: CbvVocabulary = {
  name: 'disposition',
  urn: 'disp',
  web: 'Disp',
  values: DISPOSITIONS,
};

export const BizStep = cbvTerm(BIZ_STEP);
export const Disposition = cbvTerm(DISPOSITION);
export const BizTransactionType = cbvTerm({
  name: 'business transaction type',
  urn: 'btt',
  web: 'BTT',
  values: BIZ_TRANSACTION_TYPES,
});
export const SourceDestType = cbvTerm({
  name: 'source/destination type',
  urn: 'sdt',
  web: 'SDT',
  values: SOURCE_DEST_TYPES,
});
export const ErrorReason = cbvTerm({ name: 'error reason', urn: 'er', web: 'ER', values: ERROR_REASONS });
