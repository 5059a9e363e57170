import { createHash } from 'node:crypto';
import type { ExpressionBuilder } from 'kysely';
import { z } from 'zod';
import {
  type Attestation,
  type EpcScheme,
  EVIDENCE_BUNDLE_TYPE,
  EVIDENCE_KIND,
  EvidenceBundlePayloadSchema,
  type JobState,
  LABEL_MAY_BE_OUT,
  type PrintResult,
  RESULT_EVIDENCE,
  type RenderManifest,
  type ScanResult,
  type SpoolReceipt,
  SEAL_RECEIPT_TYPE,
  type SealReceiptPayload,
  canonicalJson,
  canonicalJsonBytes,
  isCanonicalJsonText,
  publicAttestation,
  resultSources,
  sameCanonicalJson,
} from '@dpp/shared';
import { type AuditEntry, recordAudit } from '../audit/index.js';
import type {
  Database,
  Db,
  DeviceTable,
  OperationKey,
  PassportVersionTable,
  PrintAttemptTable,
  PrintEvidenceTable,
  PrintJobTable,
  SealReceiptTable,
} from '../store/index.js';
import { uuidv7 } from '../store/index.js';
import {
  type ClaimCondition,
  type RefusalReads,
  explainRefusal,
  labelMayBeOut,
  refusalReads,
} from './claim.js';
import {
  type CarrierProblem,
  nfcReadBackProblem,
  nfcSealProblem,
  renderedCarriersProblem,
  scannedCarriersProblem,
} from './carrier-checks.js';
import { type JobView, jobEpc, jobView } from './model.js';
import { publicKeyOfJwk, verifyEdDsaCompact } from '../signing/compact-jws.js';
import type { Keyring } from '../signing/index.js';
import type { CommissioningRef, PrintLoopPort, PrintOutcome } from './port.js';
import { EvidenceInvalid, PrintJobRefused } from './refusal.js';

export type ResultInput = PrintResult;

export interface ResultDeps {
  db: Db;
  port: PrintLoopPort;
  /** Countersigns the seal receipt of a SEALED job (its key is published at /.well-known/jwks.json). */
  keyring: Pick<Keyring, 'signCompact'>;
  issuer: string;
  /** How long a result's Idempotency-Key is kept (the routes build the key with it). */
  idempotencyTtlHours: number;
  now: () => number;
  /** A label was sealed (after the commit): the transparency log's sequencer may take its receipt now. */
  onSealed?: () => void;
}

/** Who reports a result: a device, or a person at a console through an API key. */
export interface Reporter {
  type: 'device' | 'api_key';
  id: string;
  tenantId: string;
  /** A device's public key as read when its call was authenticated (a batch checks bundles with it first). */
  publicJwk?: string | undefined;
  /**
   * For a device remembered from an earlier call, not read for this one (http `Unconfirmed`): true while it
   * is still what a read would find. A results batch reads it with its rows and goes no further when it is
   * false (`PrincipalMoved`).
   */
  stillCurrent?: ClaimCondition | undefined;
}

/** What an EVIDENCE_REJECTED names, every time: the field, what the job (or the record) expected, and what came. */
interface Rejection {
  field: string;
  expected: unknown;
  got: unknown;
}

function rejected(message: string, details: Rejection): PrintJobRefused {
  return new PrintJobRefused('evidence_rejected', message, { ...details });
}

function rejectedFor({ message, ...details }: CarrierProblem): PrintJobRefused {
  return rejected(message, details);
}

const schemeName = (scheme: EpcScheme): string => (scheme === 'sgtin-96' ? 'SGTIN-96' : 'SGTIN-198');

/** A value as a refusal shows it: a short JSON text, or a hash of a long one. */
function shown(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value !== 'object' || value === null) return value;
  const text = canonicalJson(value);
  return text.length <= 200 ? value : `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** How to explain a refused result to its reporter: a device learns nothing of other devices' attempts. */
function refusalFor(principal: Reporter, input: ResultInput): { to: string; deviceId?: string } {
  return principal.type === 'device' ? { to: input.status, deviceId: principal.id } : { to: input.status };
}

/** Who may report what: the system never attests; only the holding device reports machine evidence. */
function checkActor(principal: Reporter, job: PrintJobTable, input: ResultInput): void {
  if (principal.type === 'device') {
    if (principal.id !== job.device_id) {
      throw new PrintJobRefused(
        'not_permitted',
        'Only the device holding this attempt may report its results',
        {
          jobRef: job.job_ref,
        },
      );
    }
    if (input.status === 'PRINTED_ATTESTED') {
      const actor = (input.evidence.attestation as { actor: { type: string; id: string } }).actor;
      if (actor.type === 'device' && actor.id !== principal.id) {
        throw rejected('A device attestation must name the reporting device', {
          field: 'evidence.attestation.actor.id',
          expected: principal.id,
          got: actor.id,
        });
      }
    }
    return;
  }
  // An API key is a person at a console: it may attest as a human or fail a job, nothing machine-observable.
  const human =
    input.status === 'FAILED' ||
    (input.status === 'PRINTED_ATTESTED' &&
      (input.evidence.attestation as { actor: { type: string } }).actor.type === 'human');
  if (!human) {
    throw new PrintJobRefused(
      'not_permitted',
      `${input.status} is reported by the device; a person may only attest or fail`,
      { status: input.status },
    );
  }
}

/**
 * What the checks of a result read besides the refusal's reads. For one result, the database
 * ({@link databaseReads}); for a batch, the rows it read at once, with the results it accepted before applied.
 */
export interface ResultReads extends RefusalReads {
  /** The evidence this attempt recorded: each kind's payload as stored (JSON). */
  evidence(attemptId: string): Promise<ReadonlyMap<string, string>>;
  attempt(
    attemptId: string,
  ): Promise<Pick<PrintAttemptTable, 'envelope_jti' | 'passport_version_id'> | undefined>;
  device(id: string): Promise<Pick<DeviceTable, 'public_jwk' | 'key_thumbprint'> | undefined>;
  passportVersion(
    id: string,
  ): Promise<Pick<PassportVersionTable, 'id' | 'content_hash' | 'merkle_root'> | undefined>;
}

export function databaseReads(db: Db): ResultReads {
  return {
    ...refusalReads(db),
    evidence: async (attemptId) => {
      const rows = await db
        .selectFrom('print_evidence')
        .select(['kind', 'payload'])
        .where('attempt_id', '=', attemptId)
        .execute();
      return new Map(rows.map((r) => [r.kind, r.payload]));
    },
    attempt: (attemptId) =>
      db
        .selectFrom('print_attempts')
        .select(['envelope_jti', 'passport_version_id'])
        .where('attempt_id', '=', attemptId)
        .executeTakeFirst(),
    device: (id) =>
      db
        .selectFrom('devices')
        .select(['public_jwk', 'key_thumbprint'])
        .where('id', '=', id)
        .executeTakeFirst(),
    passportVersion: (id) =>
      db
        .selectFrom('passport_versions')
        .select(['id', 'content_hash', 'merkle_root'])
        .where('id', '=', id)
        .executeTakeFirst(),
  };
}

async function checkEvidence(
  reads: ResultReads,
  job: PrintJobTable,
  input: ResultInput,
  checked?: BundleSignature,
): Promise<void> {
  const e = input.evidence;
  // The EPC of the job's tag, SGTIN-96 or SGTIN-198: every EPC in the evidence is compared with its hex.
  const epc = jobEpc(job);
  if (input.status === 'RENDERED') {
    const m = e.render_manifest as RenderManifest;
    if (m.digitalLink !== job.digital_link) {
      throw rejected('The rendered QR does not carry the job Digital Link', {
        field: 'evidence.render_manifest.digitalLink',
        expected: job.digital_link,
        got: m.digitalLink,
      });
    }
    // An SGTIN-198 has no place in sgtin96Epc: the manifest names it among its carriers.
    const renderedRfid = m.carriers?.find((c) => c.type === 'rfid');
    if (job.requires_rfid && m.sgtin96Epc === undefined && renderedRfid === undefined) {
      throw rejected('An RFID job renders its tag: the manifest must name the EPC it encodes', {
        field:
          epc.scheme === 'sgtin-96'
            ? 'evidence.render_manifest.sgtin96Epc'
            : 'evidence.render_manifest.carriers',
        expected: epc.hex,
        got: null,
      });
    }
    if (m.sgtin96Epc && m.sgtin96Epc !== epc.hex) {
      throw rejected(`The rendered EPC is not the job ${schemeName(epc.scheme)}`, {
        field: 'evidence.render_manifest.sgtin96Epc',
        expected: epc.hex,
        got: m.sgtin96Epc,
      });
    }
    const problem = renderedCarriersProblem(job, m);
    if (problem) throw rejectedFor(problem);
  }
  if (input.status === 'SPOOL_SUBMITTED') {
    // The bytes that left for the printer are the ones rendered (and proven) at RENDERED.
    const receipt = e.spool_receipt as SpoolReceipt;
    const manifest = await recordedEvidence<RenderManifest>(reads, input.attempt_id, 'render_manifest');
    if (manifest && receipt.payloadSha256 !== manifest.payloadSha256) {
      throw rejected('The bytes sent are not the rendered payload', {
        field: 'evidence.spool_receipt.payloadSha256',
        expected: manifest.payloadSha256,
        got: receipt.payloadSha256,
      });
    }
    if (manifest && receipt.bytes !== manifest.payloadBytes) {
      throw rejected('The number of bytes sent is not the rendered payload size', {
        field: 'evidence.spool_receipt.bytes',
        expected: manifest.payloadBytes,
        got: receipt.bytes,
      });
    }
  }
  if (input.status === 'PRINTED_ATTESTED') {
    const a = e.attestation as Attestation;
    if (a.method === 'rfid_readback' && a.epcReadBack === undefined) {
      throw rejected('An rfid_readback attestation carries the EPC it read back', {
        field: 'evidence.attestation.epcReadBack',
        expected: epc.hex,
        got: null,
      });
    }
    if (a.epcReadBack && a.epcReadBack !== epc.hex) {
      throw rejected(`The EPC read back is not the job ${schemeName(epc.scheme)}`, {
        field: 'evidence.attestation.epcReadBack',
        expected: epc.hex,
        got: a.epcReadBack,
      });
    }
    const problem = nfcReadBackProblem(job, a);
    if (problem) throw rejectedFor(problem);
  }
  if (input.status === 'SCAN_VERIFIED') {
    const s = e.scan_result as ScanResult;
    if (s.decodedLink !== job.digital_link) {
      throw rejected('The scanned label does not carry the job Digital Link', {
        field: 'evidence.scan_result.decodedLink',
        expected: job.digital_link,
        got: s.decodedLink,
      });
    }
    const problem = scannedCarriersProblem(job, s);
    if (problem) throw rejectedFor(problem);
    if (s.epcMatches !== undefined && s.epcRead === undefined) {
      throw rejected('A scan that compared the tag carries the EPC it read', {
        field: 'evidence.scan_result.epcRead',
        expected: epc.hex,
        got: null,
      });
    }
    if (s.epcRead !== undefined && s.epcRead !== epc.hex) {
      throw rejected(`The scanned tag does not carry the job ${schemeName(epc.scheme)}`, {
        field: 'evidence.scan_result.epcRead',
        expected: epc.hex,
        got: s.epcRead,
      });
    }
    if (s.epcMatches === false) {
      throw rejected('A scan whose tag does not match verifies nothing', {
        field: 'evidence.scan_result.epcMatches',
        expected: true,
        got: false,
      });
    }
    if (job.requires_rfid && s.epcRead === undefined) {
      // Every sealed RFID label had its tag read back and matched: by the encoder after the print, or here.
      const a = await recordedEvidence<Attestation>(reads, input.attempt_id, 'attestation');
      if (a?.epcReadBack !== epc.hex) {
        throw rejected(
          'Nobody read this RFID label’s tag back: neither the attestation nor the scan has its EPC',
          {
            field: 'evidence.scan_result.epcRead',
            expected: epc.hex,
            got: null,
          },
        );
      }
    }
  }
  if (input.status === 'SEALED') {
    const problem = nfcSealProblem(
      job,
      await recordedEvidence<Attestation>(reads, input.attempt_id, 'attestation'),
    );
    if (problem) throw rejectedFor(problem);
    await checkBundle(reads, job, input, checked);
  }
}

/** The artifact of `kind` this attempt reported earlier, as recorded; undefined when there is none. */
async function recordedEvidence<T>(
  reads: ResultReads,
  attemptId: string,
  kind: string,
): Promise<T | undefined> {
  const payload = (await reads.evidence(attemptId)).get(kind);
  return payload === undefined ? undefined : (JSON.parse(payload) as T);
}

/** A bundle's signature checked with one device key: what it signed, or why it does not verify. */
export interface BundleSignature {
  /** The device key (its JWK as stored) the signature was checked with. */
  publicJwk: string;
  jws: string;
  outcome: { signedText: string; kid: string | undefined } | { error: Error };
}

/**
 * Checks a bundle's signature with a device key: pure cryptography, no database, synchronous (it never
 * yields to the event loop, inside a transaction or out; signing/compact-jws.ts).
 */
export function verifyBundleSignature(publicJwk: string, jws: string): BundleSignature {
  try {
    const verified = verifyEdDsaCompact(jws, publicKeyOfJwk(publicJwk));
    if (verified.header.typ !== EVIDENCE_BUNDLE_TYPE) throw new Error(`typ must be ${EVIDENCE_BUNDLE_TYPE}`);
    const kid = verified.header.kid;
    if (kid !== undefined && typeof kid !== 'string') throw new Error('kid must be a string');
    return { publicJwk, jws, outcome: { signedText: verified.payload.toString('utf8'), kid } };
  } catch (err) {
    return { publicJwk, jws, outcome: { error: err as Error } };
  }
}

/**
 * The evidence bundle is a JWS signed by the device key over everything the attempt reported; it must
 * verify, name this job, attempt and envelope, and match the evidence already recorded. `checked` is its
 * signature checked earlier; it counts only if it was checked with the key the device has now.
 */
async function checkBundle(
  reads: ResultReads,
  job: PrintJobTable,
  input: ResultInput,
  checked?: BundleSignature,
): Promise<void> {
  const device = await reads.device(job.device_id!);
  const attempt = await reads.attempt(input.attempt_id);
  if (!attempt) throw new Error(`attempt ${input.attempt_id} of job ${job.job_ref} has no row`);
  const jws = (input.evidence.evidence_bundle as { jws: string }).jws;
  const signature =
    checked && checked.publicJwk === device!.public_jwk && checked.jws === jws
      ? checked
      : verifyBundleSignature(device!.public_jwk, jws);
  let payload: unknown;
  let signedText = '';
  let kid: string | undefined;
  try {
    if ('error' in signature.outcome) throw signature.outcome.error;
    ({ signedText, kid } = signature.outcome);
    payload = JSON.parse(signedText);
  } catch (err) {
    throw rejected(`The evidence bundle does not verify with the device key: ${(err as Error).message}`, {
      field: 'evidence.evidence_bundle.jws',
      expected: `a compact JWS (EdDSA, typ ${EVIDENCE_BUNDLE_TYPE}) signed by the device's enrolled key`,
      got: (err as Error).message,
    });
  }
  // The key that signed is named (RFC 7638 thumbprint), so a verifier years later picks it without trying keys.
  if (kid !== device!.key_thumbprint) {
    throw rejected('The evidence bundle must name the device key that signed it', {
      field: 'evidence.evidence_bundle.jws.header.kid',
      expected: device!.key_thumbprint,
      got: kid ?? null,
    });
  }
  // The signed bytes are the canonical form (RFC 8785), so anyone can recompute the bundle's hash.
  if (!isCanonicalJsonText(signedText, payload)) {
    throw rejected('The evidence bundle payload is not in canonical JSON (RFC 8785)', {
      field: 'evidence.evidence_bundle.jws.payload',
      expected: 'RFC 8785 (JCS) canonical JSON',
      got: `${signedText.length} bytes that canonicalize differently`,
    });
  }
  // Every member is one the device signed for a reason: an unknown one is refused, not ignored.
  const parsed = EvidenceBundlePayloadSchema.safeParse(payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
    const at = path.reduce<unknown>(
      (v, k) => (typeof v === 'object' && v !== null ? (v as Record<PropertyKey, unknown>)[k] : undefined),
      payload,
    );
    throw rejected(`The evidence bundle payload is not valid: ${issue.message}`, {
      field: ['evidence.evidence_bundle.payload', ...path.map(String)].join('.'),
      expected: issue.code === 'unrecognized_keys' ? 'no such member' : issue.message,
      got: issue.code === 'unrecognized_keys' ? 'present' : shown(at),
    });
  }
  const bundle = parsed.data;
  const names: [keyof typeof bundle, unknown][] = [
    ['jobRef', job.job_ref],
    ['attemptId', input.attempt_id],
    ['deviceId', job.device_id],
    ['envelopeJti', attempt.envelope_jti],
  ];
  const mismatch = names.find(([name, expected]) => bundle[name] !== expected);
  if (mismatch) {
    const [name, expected] = mismatch;
    throw rejected(`The evidence bundle names another ${name}`, {
      field: `evidence.evidence_bundle.payload.${name}`,
      expected,
      got: bundle[name],
    });
  }
  // The passport version the label carries, exactly as the claim's envelope named it.
  const version = attempt.passport_version_id
    ? await reads.passportVersion(attempt.passport_version_id)
    : undefined;
  const printed = version
    ? { id: version.id, contentHash: version.content_hash, merkleRoot: version.merkle_root }
    : null;
  if (!sameCanonicalJson(bundle.passportVersion, printed)) {
    throw rejected('The evidence bundle names another passport version than the one printed', {
      field: 'evidence.evidence_bundle.payload.passportVersion',
      expected: printed,
      got: bundle.passportVersion,
    });
  }
  const recorded = await reads.evidence(input.attempt_id);
  const byKind = new Map(
    [...recorded].map(([kind, text]) => [kind, JSON.parse(text) as Record<string, unknown>]),
  );
  // The bundle is published with the label's proof: a person appears in it by id alone, and no note does.
  const signedAttestation = (payload as { attestation: Attestation }).attestation;
  const personal =
    signedAttestation.actor.name !== undefined
      ? 'actor.name'
      : signedAttestation.note !== undefined
        ? 'note'
        : null;
  if (personal) {
    throw rejected(
      'The evidence bundle is public: its attestation names a person by id only and carries no note',
      {
        field: `evidence.evidence_bundle.payload.attestation.${personal}`,
        expected: null,
        got: personal === 'note' ? signedAttestation.note : signedAttestation.actor.name,
      },
    );
  }
  const reportedAttestation = byKind.get('attestation');
  if (reportedAttestation) {
    byKind.set(
      'attestation',
      publicAttestation(reportedAttestation as unknown as Attestation) as unknown as Record<string, unknown>,
    );
  }
  // Every artifact in the bundle must be exactly (RFC 8785) what this attempt reported.
  // Compared as signed, not as parsed: parsing drops unknown members of the nested artifacts.
  const signed = payload as Record<string, unknown>;
  const pairs: [string, unknown][] = [
    ['render_manifest', signed.renderManifest],
    ['spool_receipt', signed.spoolReceipt],
    ['attestation', signed.attestation],
    ['scan_result', signed.scanResult],
  ];
  const differs = pairs.find(([kind, inBundle]) => {
    const reported = byKind.get(kind);
    return reported === undefined || !sameCanonicalJson(reported, inBundle);
  });
  if (differs) {
    const [kind, inBundle] = differs;
    throw rejected(`The evidence bundle's ${kind} is not the one reported for this attempt`, {
      field: `evidence.evidence_bundle.${kind}`,
      expected: shown(byKind.get(kind)),
      got: shown(inBundle),
    });
  }
}

/**
 * The seal receipt: the control plane's signature (under its published keys) that it verified this bundle
 * and recorded this commissioning event at this time. Committed with the SEALED transition.
 */
export async function sealReceipt(
  deps: Pick<ResultDeps, 'issuer' | 'keyring'>,
  job: PrintJobTable,
  input: ResultInput,
  passportVersionId: string | null,
  event: CommissioningRef | null,
  sealedAt: string,
): Promise<Omit<SealReceiptTable, 'leaf_index'>> {
  const jws = (input.evidence.evidence_bundle as { jws: string }).jws;
  const payload: SealReceiptPayload = {
    iss: deps.issuer,
    jobRef: job.job_ref,
    attemptId: input.attempt_id,
    deviceId: job.device_id!,
    gtin: job.gtin,
    serial: job.serial,
    digitalLink: job.digital_link,
    passportVersionId,
    bundleSha256: createHash('sha256').update(jws, 'ascii').digest('hex'),
    epcisEvent: event,
    sealedAt,
  };
  const receipt = await deps.keyring.signCompact(canonicalJsonBytes(payload), SEAL_RECEIPT_TYPE);
  return {
    job_ref: job.job_ref,
    tenant_id: job.tenant_id,
    gtin: job.gtin,
    serial: job.serial,
    receipt,
    bundle_sha256: payload.bundleSha256,
    epcis_event_id: event?.eventId ?? null,
    sealed_at: sealedAt,
  };
}

/** The job after a result; `replayed` when it is the kept answer of an earlier request with the same key. */
export interface ResultOutcome {
  job: JobView;
  replayed: boolean;
}

/**
 * Reads the job and checks everything a result needs before it may move it: the attempt is current and
 * live, the reporter holds it, the job is in a source state, the evidence has its status's shape and
 * proves what it claims. Throws {@link PrintJobRefused} or {@link EvidenceInvalid}; `reads` are the
 * database's for a single result, the batch's own for a batch (a batch's earlier items are visible).
 */
export async function checkResult(
  reads: ResultReads,
  principal: Reporter,
  jobRef: string,
  input: ResultInput,
  iso: string,
  checked?: BundleSignature,
): Promise<PrintJobTable> {
  const tenantId = principal.tenantId;
  const job = await reads.job(tenantId, jobRef);
  if (!job) throw new PrintJobRefused('job_not_found', 'Print job not found');
  const sources = resultSources(input.status);
  const live =
    job.attempt_id === input.attempt_id &&
    ((job.lease_expires_at !== null && job.lease_expires_at > iso) ||
      job.sending_at !== null ||
      LABEL_MAY_BE_OUT.includes(job.state as JobState));
  // A device that does not hold the attempt is told no more than its own part (see explainRefusal).
  const notHolder = principal.type === 'device' && job.device_id !== principal.id;
  if (!live || notHolder || !sources.includes(job.state as never)) {
    throw await explainRefusal(reads, tenantId, jobRef, input.attempt_id, iso, refusalFor(principal, input));
  }
  const parsed = resultEvidenceSchema(input.status).safeParse({ evidence: input.evidence });
  if (!parsed.success) throw new EvidenceInvalid(parsed.error.issues);
  input.evidence = parsed.data.evidence;
  checkActor(principal, job, input);
  await checkEvidence(reads, job, input, checked);
  return job;
}

/**
 * The schema of a result's `{ evidence }` for its status, built once per status: zod compiles a schema on
 * its first parse, and building one per result compiled it again for every result.
 */
const evidenceSchemas = new Map<ResultInput['status'], z.ZodType<{ evidence: Record<string, unknown> }>>();
function resultEvidenceSchema(
  status: ResultInput['status'],
): z.ZodType<{ evidence: Record<string, unknown> }> {
  let schema = evidenceSchemas.get(status);
  if (!schema) {
    schema = z.object({ evidence: RESULT_EVIDENCE[status] as z.ZodType<Record<string, unknown>> });
    evidenceSchemas.set(status, schema);
  }
  return schema;
}

/** What a result changes on its job and its attempt (the job's `updated_at` aside). */
export function transitionOf(
  input: ResultInput,
  iso: string,
): { job: Partial<PrintJobTable>; attempt: Partial<PrintAttemptTable> } {
  const terminal = input.status === 'SEALED';
  const failure = failureOf(input);
  return {
    job: {
      state: input.status,
      ...(terminal ? { terminal_at: iso, lease_expires_at: null } : {}),
      ...(failure ? { last_error: failure.reason, lease_expires_at: null } : {}),
    },
    attempt: {
      state: input.status,
      ...(terminal || failure ? { ended_at: iso } : {}),
      ...(failure ? { failure_reason: failure.reason } : {}),
    },
  };
}

function failureOf(input: ResultInput): { reason: string; detail?: string } | null {
  return input.status === 'FAILED' ? (input.evidence.failure as { reason: string; detail?: string }) : null;
}

/** The evidence row a result records. */
export function evidenceRow(
  principal: Reporter,
  job: PrintJobTable,
  input: ResultInput,
  iso: string,
): PrintEvidenceTable {
  return {
    id: uuidv7(),
    job_ref: job.job_ref,
    attempt_id: input.attempt_id,
    tenant_id: principal.tenantId,
    state: input.status,
    kind: EVIDENCE_KIND[input.status],
    payload: JSON.stringify(input.evidence[EVIDENCE_KIND[input.status]]),
    actor_type: principal.type,
    actor_id: principal.id,
    recorded_at: iso,
  };
}

/** The audit entry of a result that moved `job` (as it was before). */
export function resultAudit(
  principal: Reporter,
  job: PrintJobTable,
  input: ResultInput,
  correlationId: string,
): AuditEntry {
  const failure = failureOf(input);
  return {
    tenantId: principal.tenantId,
    actor: { type: principal.type, id: principal.id },
    action: `print_job.${input.status.toLowerCase()}`,
    resource: { type: 'print_job', id: job.job_ref },
    correlationId,
    details: {
      attemptId: input.attempt_id,
      from: job.state,
      ...(failure ? { reason: failure.reason } : {}),
    },
  };
}

/** The liveness of a guarded transition: the lease, or a label that may already be out. */
export const liveAt = (iso: string) => (eb: ExpressionBuilder<Database, 'print_jobs'>) =>
  eb.or([eb('lease_expires_at', '>', iso), labelMayBeOut(eb)]);

/**
 * The transition itself, inside the caller's transaction: one guarded UPDATE (tenant, job, current
 * attempt, allowed source state, live lease), the evidence, the attempt, SEALED's side effects, the audit
 * entry and the Idempotency-Key.
 */
async function moveJob(
  trx: Db,
  deps: ResultDeps,
  principal: Reporter,
  job: PrintJobTable,
  input: ResultInput,
  idempotency: OperationKey<JobView> | null,
  correlationId: string,
  iso: string,
): Promise<JobView> {
  const tenantId = principal.tenantId;
  const jobRef = job.job_ref;
  const change = transitionOf(input, iso);
  const updated = await trx
    .updateTable('print_jobs')
    .set({ ...change.job, updated_at: iso })
    .where('tenant_id', '=', tenantId)
    .where('job_ref', '=', jobRef)
    .where('attempt_id', '=', input.attempt_id)
    .where('state', 'in', resultSources(input.status))
    .where(liveAt(iso))
    .returningAll()
    .executeTakeFirst();
  if (!updated) {
    const refusal = refusalFor(principal, input);
    throw await explainRefusal(refusalReads(trx), tenantId, jobRef, input.attempt_id, iso, refusal);
  }
  await trx
    .insertInto('print_evidence')
    .values(evidenceRow(principal, job, input, iso))
    .execute();
  await trx
    .updateTable('print_attempts')
    .set(change.attempt)
    .where('attempt_id', '=', input.attempt_id)
    .execute();
  if (input.status === 'SEALED') {
    const [event = null] = await deps.port.confirmPrinted(trx, [sealOutcome(job, iso, correlationId)]);
    const attempt = await trx
      .selectFrom('print_attempts')
      .select('passport_version_id')
      .where('attempt_id', '=', input.attempt_id)
      .executeTakeFirstOrThrow();
    const receipt = await sealReceipt(deps, job, input, attempt.passport_version_id, event, iso);
    await trx.insertInto('seal_receipts').values(receipt).execute();
  }
  await recordAudit(trx, resultAudit(principal, job, input, correlationId));
  const view = jobView(updated);
  await idempotency?.keep(trx, view);
  return view;
}

/** What a SEALED job tells the print loop (metadata.print, the EPCIS event, print.confirmed). */
export function sealOutcome(job: PrintJobTable, iso: string, correlationId: string): PrintOutcome {
  return {
    tenantId: job.tenant_id,
    gtin: job.gtin,
    serial: job.serial,
    jobRef: job.job_ref,
    deviceId: job.device_id,
    at: iso,
    correlationId,
  };
}

/**
 * Moves a job by one result, as the spec's table says: the checks ({@link checkResult}) outside the
 * transaction, so a refusal never holds the writer, then the transition ({@link moveJob}) in one
 * transaction with SEALED's side effects and the Idempotency-Key. A refusal is thrown as
 * {@link PrintJobRefused}, evidence of the wrong shape as {@link EvidenceInvalid}.
 */
export async function reportResult(
  deps: ResultDeps,
  principal: Reporter,
  jobRef: string,
  input: ResultInput,
  idempotency: OperationKey<JobView> | null,
  correlationId: string,
): Promise<ResultOutcome> {
  const earlier = await idempotency?.earlier(deps.db);
  if (earlier) return { job: earlier, replayed: true };
  const iso = new Date(deps.now()).toISOString();
  const job = await checkResult(databaseReads(deps.db), principal, jobRef, input, iso);
  try {
    const view = await deps.db
      .transaction()
      .execute((trx) => moveJob(trx, deps, principal, job, input, idempotency, correlationId, iso));
    if (input.status === 'SEALED') deps.onSealed?.();
    return { job: view, replayed: false };
  } catch (err) {
    // A twin with the same Idempotency-Key committed first (our insert of the key conflicted, or the guarded
    // update found the state already moved): its answer is ours.
    const twin = await idempotency?.earlier(deps.db);
    if (twin) return { job: twin, replayed: true };
    throw err;
  }
}

/**
 * Applies one result of a batch inside the batch's transaction, exactly as {@link reportResult} would (its
 * own checks, guarded transition, evidence, audit entry and Idempotency-Key); the caller wraps it in a
 * savepoint, so a refused result writes nothing.
 */
export async function applyResult(
  trx: Db,
  deps: ResultDeps,
  principal: Reporter,
  jobRef: string,
  input: ResultInput,
  idempotency: OperationKey<JobView>,
  correlationId: string,
  iso: string,
  checked?: BundleSignature,
): Promise<ResultOutcome> {
  const earlier = await idempotency.earlier(trx);
  if (earlier) return { job: earlier, replayed: true };
  const job = await checkResult(databaseReads(trx), principal, jobRef, input, iso, checked);
  const view = await moveJob(trx, deps, principal, job, input, idempotency, correlationId, iso);
  return { job: view, replayed: false };
}
