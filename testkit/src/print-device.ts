import { createHash } from 'node:crypto';
import { CompactSign, calculateJwkThumbprint } from 'jose';
import {
  type Attestation,
  EVIDENCE_BUNDLE_TYPE,
  EVIDENCE_KIND,
  HAPPY_PATH,
  type LabelEpc,
  type LabelTemplate,
  SYMBOL_CARRIERS,
  canonicalJson,
  expectedCarriers,
  publicAttestation,
  uuidv7,
} from '@dpp/shared';
import type { EnrolledTestDevice } from './device.js';
import type { ApiCaller, CallResult } from '@dpp/control-plane';

export interface ClaimedJob {
  jobRef: string;
  attemptId: string;
  envelope: string;
  job: {
    digitalLink: string;
    sgtin96Epc: string | null;
    epc: LabelEpc;
    serial: string;
    gtin: string;
    labelTemplate: LabelTemplate;
  };
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const now = () => new Date().toISOString();

/**
 * A device that drives print jobs through the HTTP API as the agent would, with evidence made up from
 * the claim (no printer): for tests of the state machine and for load benchmarks.
 */
export class HttpPrintDevice {
  token = '';

  constructor(
    readonly call: ApiCaller,
    readonly device: EnrolledTestDevice,
  ) {}

  async init(): Promise<this> {
    this.token = await this.device.accessToken();
    return this;
  }

  async claim(printer = 'zebra-1', rfid = true, nfc?: boolean): Promise<ClaimedJob | null> {
    const r = await this.call('POST', '/api/v2/aidc/jobs/claim', {
      key: this.token,
      body: { printer: { name: printer, rfid, ...(nfc === undefined ? {} : { nfc }) } },
    });
    if (r.status === 204) return null;
    if (r.status !== 200) throw new Error(`claim: ${r.status} ${r.text}`);
    const d = r.body.data;
    return { jobRef: d.job.jobRef, attemptId: d.attempt_id, envelope: d.envelope, job: d.job };
  }

  /**
   * One batch claim (`POST /aidc/jobs/claims`): up to `count` jobs for each printer. Answers the claims,
   * printer by printer, each with the printer it was claimed for.
   */
  async claimMany(
    printers: { name: string; rfid?: boolean; nfc?: boolean; count?: number }[],
  ): Promise<(ClaimedJob & { printer: string })[]> {
    const r = await this.call('POST', '/api/v2/aidc/jobs/claims', {
      key: this.token,
      body: {
        printers: printers.map((p) => ({
          name: p.name,
          rfid: p.rfid ?? true,
          ...(p.nfc === undefined ? {} : { nfc: p.nfc }),
          count: p.count ?? 1,
        })),
      },
    });
    if (r.status !== 200) throw new Error(`claims: ${r.status} ${r.text}`);
    type Claim = { job: ClaimedJob['job'] & { jobRef: string }; attempt_id: string; envelope: string };
    return (r.body.data as (Claim & { printer: string })[]).map((d) => ({
      jobRef: d.job.jobRef,
      attemptId: d.attempt_id,
      envelope: d.envelope,
      job: d.job,
      printer: d.printer,
    }));
  }

  /** One batch of results (`POST /aidc/jobs/results`), each with its own Idempotency-Key. */
  results(
    items: { c: ClaimedJob; status: string; evidence: Record<string, unknown>; key?: string }[],
  ): Promise<CallResult> {
    return this.call('POST', '/api/v2/aidc/jobs/results', {
      key: this.token,
      body: {
        results: items.map((i) => ({
          jobRef: i.c.jobRef,
          status: i.status,
          evidence: i.evidence,
          attempt_id: i.c.attemptId,
          idempotencyKey: i.key ?? uuidv7(),
        })),
      },
    });
  }

  /** Every step of every claimed job to SEALED, in one batch of results; throws unless each answered 200. */
  async sealMany(claims: ClaimedJob[]): Promise<void> {
    if (claims.length === 0) return;
    const items = (await Promise.all(claims.map((c) => this.steps(c)))).flatMap((steps, i) =>
      steps.map(([status, evidence]) => ({ c: claims[i]!, status, evidence })),
    );
    const r = await this.results(items);
    if (r.status !== 200) throw new Error(`results: ${r.status} ${r.text}`);
    const refused = (r.body.data as { status: number }[]).find((o) => o.status !== 200);
    if (refused) throw new Error(`results: ${JSON.stringify(refused)}`);
  }

  /** The happy path's results of a claimed job, each with its evidence, the bundle signed. */
  async steps(
    c: ClaimedJob,
    e: ReturnType<HttpPrintDevice['evidence']> = this.evidence(c),
  ): Promise<[string, Record<string, unknown>][]> {
    const artifacts: Record<string, unknown> = { ...e, evidence_bundle: { jws: await this.bundle(c, e) } };
    return HAPPY_PATH.map((s): [string, Record<string, unknown>] => [
      s,
      { [EVIDENCE_KIND[s]]: artifacts[EVIDENCE_KIND[s]] },
    ]);
  }

  result(
    c: ClaimedJob,
    status: string,
    evidence: Record<string, unknown>,
    key = uuidv7(),
  ): Promise<CallResult> {
    return this.call('POST', `/api/v2/aidc/jobs/${c.jobRef}/result`, {
      key: this.token,
      headers: { 'Idempotency-Key': key },
      body: { status, evidence, attempt_id: c.attemptId },
    });
  }

  /**
   * Evidence of a label printed as the job says. A template with carriers beyond the QR code and the RFID tag
   * gets every carrier in the manifest and every symbol in the scan; one with NFC its read-back.
   */
  evidence(c: ClaimedJob) {
    const payload = `^XA^FDMA,${c.job.digitalLink}^FS^XZ`;
    const t = c.job.labelTemplate;
    const more = Boolean(t.dataMatrix) || Boolean(t.gs1128) || Boolean(t.nfc);
    const carriers = more ? expectedCarriers(t, c.job) : undefined;
    const symbols = carriers?.filter((x) => (SYMBOL_CARRIERS as readonly string[]).includes(x.type));
    return {
      render_manifest: {
        language: 'zpl',
        template: 'default-50x30',
        payloadSha256: sha(payload),
        payloadBytes: payload.length,
        digitalLink: c.job.digitalLink,
        qrVerified: true,
        ...(c.job.sgtin96Epc ? { sgtin96Epc: c.job.sgtin96Epc } : {}),
        ...(carriers || c.job.epc.scheme !== 'sgtin-96'
          ? { carriers: carriers ?? expectedCarriers(t, c.job) }
          : {}),
        renderedAt: now(),
      },
      spool_receipt: {
        printer: 'zebra-1',
        transport: 'serial',
        bytes: payload.length,
        payloadSha256: sha(payload),
        submittedAt: now(),
      },
      attestation: {
        actor: { type: 'device', id: this.device.id },
        method: 'rfid_readback',
        epcReadBack: c.job.epc.hex,
        ...(t.nfc ? { nfcReadBack: c.job.digitalLink } : {}),
        attestedAt: now(),
      },
      scan_result: {
        scanner: 'scanner-1',
        decodedLink: c.job.digitalLink,
        linkMatches: true,
        epcRead: c.job.epc.hex,
        epcMatches: true,
        ...(symbols ? { carriers: symbols } : {}),
        scannedAt: now(),
      },
    };
  }

  /**
   * The evidence bundle: a JWS signed by the device key over everything the attempt reported. `over` replaces
   * members of the payload; `forge` changes its protected header or how the payload is written (tamper tests).
   */
  async bundle(
    c: ClaimedJob,
    e: ReturnType<HttpPrintDevice['evidence']>,
    over: Record<string, unknown> = {},
    forge: { header?: Record<string, unknown>; encode?: (payload: unknown) => string } = {},
  ): Promise<string> {
    const claims = JSON.parse(Buffer.from(c.envelope.split('.')[1]!, 'base64url').toString()) as {
      jti: string;
      passport_version: unknown;
    };
    const payload = {
      jobRef: c.jobRef,
      attemptId: c.attemptId,
      deviceId: this.device.id,
      envelopeJti: claims.jti,
      passportVersion: claims.passport_version,
      renderManifest: e.render_manifest,
      spoolReceipt: e.spool_receipt,
      attestation: publicAttestation(e.attestation as Attestation),
      scanResult: e.scan_result,
      sealedAt: now(),
      ...over,
    };
    return new CompactSign(new TextEncoder().encode((forge.encode ?? canonicalJson)(payload)))
      .setProtectedHeader({
        alg: 'EdDSA',
        typ: EVIDENCE_BUNDLE_TYPE,
        kid: await calculateJwkThumbprint(this.device.key.publicJwk),
        ...forge.header,
      })
      .sign(this.device.key.privateKey);
  }

  /**
   * Drives a claimed job through every step to SEALED (or to `until`), or on from the step `from` with the
   * evidence `e` already reported; throws on any unexpected answer.
   */
  async seal(
    c: ClaimedJob,
    options: { from?: string; until?: string; e?: ReturnType<HttpPrintDevice['evidence']> } = {},
  ): Promise<void> {
    const all = await this.steps(c, options.e);
    const last = options.until ? all.findIndex(([s]) => s === options.until) + 1 : all.length;
    const steps = all.slice(options.from ? all.findIndex(([s]) => s === options.from) : 0, last);
    for (const [status, evidence] of steps) {
      const r = await this.result(c, status, evidence);
      if (r.status !== 200 || r.body.data.state !== status)
        throw new Error(`${status}: ${r.status} ${r.text}`);
    }
  }
}
