/**
 * Waiting for a supervisor at the console: an attestation of the label that came out, or a re-print of the
 * same bytes (they saw none, or voided it).
 */
import type { Attestation } from '@dpp/shared';
import { toAgentError } from '../errors.js';
import type { RenderedLabel } from '../render/index.js';
import { humanAttestation } from './attestation.js';
import type { AttestationAnswer } from './human-gate.js';
import { isLeaseLost } from './lease.js';
import { waitReady } from './printer-steps.js';
import type { RunContext } from './run-context.js';

/**
 * The label may be out, so nothing here ends the attempt on the system's say: an unanswered wait is asked
 * again, and a re-print the printer cannot take yet waits for the supervisor again. Only the supervisor's
 * own fail (the console) or the agent stopping ends it.
 */
export async function awaitSupervisor(
  run: RunContext,
  rendered: RenderedLabel,
  why?: string,
): Promise<Attestation> {
  const d = run.deps;
  let reprints = 0;
  for (;;) {
    run.setStep('awaiting_attestation', why);
    let answer: AttestationAnswer;
    try {
      answer = await run.timed('human', () =>
        d.humans.waitAttestation(run.jobRef, d.jobs.humanTimeoutMs, run.signal),
      );
    } catch (err) {
      if (run.signal.aborted) throw err;
      run.log.warn({ err: toAgentError(err).message }, 'still waiting for a supervisor');
      continue;
    }
    if (answer.kind === 'attest')
      return humanAttestation(
        answer.supervisor,
        new Date(d.now()),
        [why, reprints > 0 ? `${reprints} reprint(s) of the same label` : answer.note]
          .filter(Boolean)
          .join('; ') || undefined,
      );
    // The supervisor saw no usable label: the same bytes again, under the same checks as the first time.
    try {
      await waitReady(run);
      await run.lease.confirm(d.jobs.minLeaseForSendMs);
      await run.timed('device', () =>
        d.printer.send(rendered.payload, `${run.jobRef}-reprint-${++reprints}`),
      );
    } catch (err) {
      if (run.signal.aborted || isLeaseLost(err)) throw err;
      run.log.warn({ err: toAgentError(err).message }, 'could not re-print; back to the supervisor');
      why = `the re-print did not reach the printer (${toAgentError(err).message})`;
      continue;
    }
    d.journal.addEvidence(run.attemptId, 'reprints', reprints);
    run.setStep('printing', `reprint ${reprints}`);
  }
}
