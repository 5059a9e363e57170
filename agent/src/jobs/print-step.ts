/**
 * The print: the label sent through the send gate (once the printer is ready and the lease confirmed),
 * then attested by the device's own evidence of the print, or by a supervisor when the device has none or
 * the label may have come out unseen.
 */
import type { AidcEnvelopeClaims, Attestation, SpoolReceipt } from '@dpp/shared';
import { isAgentError, toAgentError } from '../errors.js';
import type { Completion } from '../printers/index.js';
import { sha256Hex, type RenderedLabel } from '../render/index.js';
import { deviceAttestation } from './attestation.js';
import { awaitPrinted, inDoubt, provablyNotOut, waitReady } from './printer-steps.js';
import type { Reported } from './resume.js';
import type { RunContext } from './run-context.js';
import { awaitSupervisor } from './supervisor-step.js';

/**
 * Sends the label when its turn in the printer's lane comes (print-lane.ts: at most one format queued behind
 * one printing), once `alsoWaitFor` has settled (the control plane has the manifest), the printer is ready
 * and the lease is confirmed (the check that keeps a stale attempt from printing). Queued behind a label
 * still printing, the format starts at most one label later, so the lease must also cover the longest
 * label. The receipt is journalled ahead of the first byte, so a restart after it knows the label may be out.
 */
export async function sendLabel(
  run: RunContext,
  rendered: RenderedLabel,
  reference: string,
  alsoWaitFor: Promise<unknown> | null = null,
): Promise<SpoolReceipt> {
  const d = run.deps;
  await alsoWaitFor;
  const perLabel = (rendered.rfid || !!rendered.nfc) && d.printer.twoWay;
  const { result } = await d.lane.send(
    run.attemptId,
    rendered.manifest.digitalLink,
    rendered.rfid ? rendered.epc : undefined,
    perLabel,
    run.signal,
    async (ahead) => {
      await waitReady(run);
      await run.lease.openSendGate(
        d.jobs.minLeaseForSendMs + (ahead > 0 ? d.printerConfig.longestLabelMs : 0),
      );
      run.checkAbort();
    },
    async (ticket) => {
      run.ticket = ticket;
      return write(run, rendered, reference);
    },
  );
  return result;
}

async function write(run: RunContext, rendered: RenderedLabel, reference: string): Promise<SpoolReceipt> {
  const d = run.deps;
  const intended: SpoolReceipt = {
    printer: d.printerConfig.name,
    transport: d.printer.transport.kind,
    bytes: rendered.payload.length,
    payloadSha256: sha256Hex(rendered.payload),
    reference: reference.slice(0, 500),
    submittedAt: new Date(d.now()).toISOString(),
  };
  d.journal.addEvidence(run.attemptId, 'sending' satisfies keyof Reported, intended);
  run.labelMayBeOut();
  try {
    const receipt = await run.timed('device', () =>
      d.printer.send(rendered.payload, reference, { behind: d.lane.inFlight > 1 }),
    );
    return { ...intended, bytes: receipt.bytes, reference: receipt.reference.slice(0, 500) };
  } catch (err) {
    // Some bytes may have reached the printer: only its buffer can tell whether a label can still come out.
    if (!inDoubt(err) || (await provablyNotOut(run, err))) throw err;
    run.log.warn({ err: toAgentError(err).toJSON() }, 'the send failed part-way; the label may be out');
    return intended;
  }
}

/**
 * The device's attestation when it has evidence of the print, else a supervisor's. Resumed with the label
 * sent before the restart (`sentBefore`): if the printer held it (`heldCleared` at start-up), it never came
 * out and is sent again; otherwise it may have come out while the agent was down, so only a person can say,
 * and nothing is sent unasked.
 */
export async function attestPrint(
  run: RunContext,
  rendered: RenderedLabel,
  claims: AidcEnvelopeClaims,
  resumed: { sentBefore: boolean; heldCleared: boolean },
): Promise<Attestation> {
  const d = run.deps;
  if (resumed.sentBefore && !resumed.heldCleared)
    return awaitSupervisor(run, rendered, 'the agent restarted after sending this label');
  if (resumed.sentBefore) {
    d.journal.addEvidence(run.attemptId, 'resent_after_restart', true);
    await sendLabel(run, rendered, `${run.jobRef}-resent`);
    run.setStep('printing', 'sent again: the printer held it when the agent stopped');
  }
  let completion: Completion | null = null;
  while (!completion) {
    try {
      completion = await awaitPrinted(run, rendered, claims);
    } catch (err) {
      if (isAgentError(err, 'FORMAT_CANCELLED')) {
        // Another attempt's cancel dropped this format before it started: it provably never came out.
        run.log.info(
          'the printer dropped the format unstarted (another attempt cancelled); sending it again',
        );
        d.journal.addEvidence(run.attemptId, 'resent_after_cancel', true);
        await sendLabel(run, rendered, `${run.jobRef}-resent`);
        run.setStep('printing', 'sent again: the printer dropped it unstarted');
        continue;
      }
      if (!inDoubt(err) || (await provablyNotOut(run, err))) throw err;
      const e = toAgentError(err);
      run.log.warn({ err: e.toJSON() }, 'the label may be out; a supervisor decides');
      return awaitSupervisor(
        run,
        rendered,
        `the printer link failed after the label was sent (${e.message})`,
      );
    }
  }
  return (
    deviceAttestation(d.deviceId, completion, d.printerConfig.attestation, new Date(d.now())) ??
    (await awaitSupervisor(run, rendered))
  );
}
