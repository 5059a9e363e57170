/**
 * What the evidence must say of a label's carriers beyond the QR code (issue 20): the render manifest lists
 * every carrier the template puts on the label with the content the job names, the scan reads every symbol
 * back, and an NFC tag is read back with the Digital Link. Pure functions of the job and one piece of
 * evidence, so the single result and the batch of results apply exactly the same rules.
 */
import {
  type Attestation,
  type LabelCarrier,
  type LabelTemplate,
  type RenderManifest,
  type ScanResult,
  SYMBOL_CARRIERS,
  canonicalJson,
  expectedCarriers,
} from '@dpp/shared';
import type { PrintJobTable } from '../store/index.js';
import { jobEpc } from './model.js';

/** A contradiction between the evidence and the job, as an EVIDENCE_REJECTED names it. */
export interface CarrierProblem {
  message: string;
  field: string;
  expected: unknown;
  got: unknown;
}

/** The template of a job, as stored. */
export function jobTemplate(job: Pick<PrintJobTable, 'label_template'>): LabelTemplate {
  return JSON.parse(job.label_template) as LabelTemplate;
}

/** Whether the template puts a carrier on the label beyond the QR code and the RFID tag. */
function hasMoreCarriers(t: LabelTemplate): boolean {
  return Boolean(t.dataMatrix) || Boolean(t.gs1128) || Boolean(t.nfc);
}

/** Every carrier the job's label carries, with the content the evidence must show. */
export function jobCarriers(job: PrintJobTable, template: LabelTemplate = jobTemplate(job)): LabelCarrier[] {
  return expectedCarriers(template, {
    digitalLink: job.digital_link,
    gtin: job.gtin,
    serial: job.serial,
    epc: jobEpc(job),
  });
}

/** The carriers in one order (by their canonical JSON), so two lists compare regardless of order. */
const sorted = (carriers: readonly LabelCarrier[]): string[] => carriers.map((c) => canonicalJson(c)).sort();

/**
 * RENDERED: the manifest's carriers equal the job's (in any order). Required when the template has a
 * carrier beyond the QR code and the RFID tag; checked whenever the manifest lists carriers.
 */
export function renderedCarriersProblem(job: PrintJobTable, m: RenderManifest): CarrierProblem | undefined {
  const template = jobTemplate(job);
  if (m.carriers === undefined && !hasMoreCarriers(template)) return undefined;
  const expected = jobCarriers(job, template);
  const got = m.carriers ?? [];
  const a = sorted(expected);
  const b = sorted(got);
  if (a.length === b.length && a.every((c, i) => c === b[i])) return undefined;
  return {
    message: m.carriers
      ? 'The rendered carriers are not the ones the job names'
      : 'A label with carriers beyond the QR code lists every carrier it renders',
    field: 'evidence.render_manifest.carriers',
    expected,
    got: m.carriers ?? null,
  };
}

/**
 * SCAN_VERIFIED: every symbol of the template (QR, DataMatrix, GS1-128) read back with its content, and no
 * symbol the label does not carry. Required when the template has a DataMatrix or a GS1-128; checked
 * whenever the scan lists carriers.
 */
export function scannedCarriersProblem(job: PrintJobTable, s: ScanResult): CarrierProblem | undefined {
  const symbols = jobCarriers(job).filter((c) => (SYMBOL_CARRIERS as readonly string[]).includes(c.type));
  if (s.carriers === undefined && symbols.length === 1) return undefined; // the QR alone: decodedLink says it
  const got = s.carriers ?? [];
  const read = new Set(sorted(got));
  const missing = symbols.filter((c) => !read.has(canonicalJson(c)));
  const wanted = new Set(sorted(symbols));
  const foreign = got.filter((c) => !wanted.has(canonicalJson(c)));
  if (missing.length === 0 && foreign.length === 0) return undefined;
  return {
    message:
      missing.length > 0
        ? `The scan did not read back every symbol of the label with its content (${missing.map((c) => c.type).join(', ')})`
        : `The scan read a symbol the job does not name (${foreign.map((c) => c.type).join(', ')})`,
    field: 'evidence.scan_result.carriers',
    expected: symbols,
    got: s.carriers ?? null,
  };
}

/** PRINTED_ATTESTED: an NFC read-back, when given, is the Digital Link. */
export function nfcReadBackProblem(job: PrintJobTable, a: Attestation): CarrierProblem | undefined {
  if (a.nfcReadBack === undefined || a.nfcReadBack === job.digital_link) return undefined;
  return {
    message: 'The NFC tag read back does not carry the job Digital Link',
    field: 'evidence.attestation.nfcReadBack',
    expected: job.digital_link,
    got: a.nfcReadBack,
  };
}

/** Before SEALED: a label with an NFC tag had it read back with the Digital Link (the attempt's attestation). */
export function nfcSealProblem(job: PrintJobTable, a: Attestation | undefined): CarrierProblem | undefined {
  if (!jobTemplate(job).nfc || a?.nfcReadBack === job.digital_link) return undefined;
  return {
    message: 'Nobody read this label’s NFC tag back: its attestation has no NFC read-back',
    field: 'evidence.attestation.nfcReadBack',
    expected: job.digital_link,
    got: a?.nfcReadBack ?? null,
  };
}
