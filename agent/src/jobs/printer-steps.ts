/**
 * The run's talk with its printer beyond sending: wait until it is ready, wait for the label to be printed
 * (and its tag read back), and, when the link failed after a send, ask it whether the label came out.
 */
import { envelopeEpc, type AidcEnvelopeClaims, type PrinterStatus } from '@dpp/shared';
import { AgentError, isAgentError, toAgentError } from '../errors.js';
import type { Completion } from '../printers/index.js';
import type { RenderedLabel } from '../render/index.js';
import { sleep } from '../util/time.js';
import type { RunContext } from './run-context.js';
import { readWhenOut } from './scan-step.js';

/**
 * Refuses to go on while the printer is out of paper, open, paused or silent; waits a while for it. The wait is
 * the printer's time, not the agent's (the job's `deviceMs`), like its status calls.
 */
export async function waitReady(run: RunContext): Promise<void> {
  const d = run.deps;
  const deadline = d.now() + d.printerConfig.readyTimeoutMs;
  for (;;) {
    let status: PrinterStatus | null;
    let offline = false;
    try {
      status = await run.timed('device', () => d.printer.status());
    } catch (err) {
      if (
        !isAgentError(err, 'PRINTER_NO_ANSWER') &&
        !isAgentError(err, 'TRANSPORT_ERROR') &&
        !isAgentError(err, 'TRANSPORT_CLOSED')
      )
        throw err;
      status = null;
      offline = true;
    }
    d.onPrinterStatus(status, run.jobRef, offline);
    if (!offline && (status === null || status.ready)) return;
    const why = offline ? 'printer does not answer' : status!.errors.join(', ');
    if (run.step() !== 'waiting_printer') run.setStep('waiting_printer', why);
    if (d.now() >= deadline)
      throw offline
        ? new AgentError('PRINTER_NO_ANSWER', `${d.printerConfig.name}: no answer`)
        : new AgentError('PRINTER_NOT_READY', `${d.printerConfig.name} is not ready: ${why}`, {
            details: { errors: status!.errors },
          });
    await run.timed('device', () => sleep(d.notReadyRetryMs, run.signal));
  }
}

/**
 * Waits for the printer's evidence that the label came out (and, on RFID, the tag it read back), once every
 * format sent before it is settled (the printer answers in order). A format another attempt's cancel may
 * have hit (`unknown`) is given one label's time to show it came out.
 */
export async function awaitPrinted(
  run: RunContext,
  rendered: RenderedLabel,
  claims: AidcEnvelopeClaims,
): Promise<Completion> {
  const d = run.deps;
  const ticket = run.ticket;
  try {
    return await run.timed('device', () =>
      ticket
        ? d.lane.inTurn(ticket, run.signal, (signal) => completion(run, rendered, claims, signal))
        : completion(run, rendered, claims, run.signal),
    );
  } catch (err) {
    // Whatever stays in the printer's buffer now belongs to a failed attempt: it must never print later.
    // (A lost line is the caller's: it asks the printer what it holds once it answers again; a format the
    // printer already dropped is gone.)
    if (!inDoubt(err) && !isAgentError(err, 'FORMAT_CANCELLED'))
      await d.lane
        .cancelHeld(ticket)
        .catch((e: unknown) => run.log.warn({ err: String(e) }, 'could not cancel held formats'));
    // The line dropped: the answers of the formats queued behind this one went with it.
    else if (isAgentError(err, 'TRANSPORT_CLOSED')) d.lane.cancelledBy(ticket, null);
    throw err;
  } finally {
    d.lane.settle(ticket);
  }
}

function completion(
  run: RunContext,
  rendered: RenderedLabel,
  claims: AidcEnvelopeClaims,
  signal: AbortSignal,
): Promise<Completion> {
  const d = run.deps;
  const timeoutMs =
    run.ticket?.cancelled === 'unknown'
      ? Math.min(d.printerConfig.printTimeoutMs, 2 * d.printerConfig.longestLabelMs)
      : d.printerConfig.printTimeoutMs;
  return d.printer.awaitCompletion({
    expectedEpc: rendered.rfid ? envelopeEpc(claims).hex : undefined,
    expectedNfcUri: rendered.nfc ? claims.digital_link : undefined,
    timeoutMs,
    signal,
    sentLater: (epc) => d.lane.epcSentLaterThan(run.ticket, epc),
    sentLaterLink: (uri) => d.lane.sentLaterThan(run.ticket, uri),
    onStatus: (s) => d.onPrinterStatus(s, run.jobRef),
    onOut: () => {
      d.lane.out(run.ticket);
      readWhenOut(run);
    },
    onVoidOut: () => d.lane.voidOut(),
  });
}

/**
 * After the label was sent and the printer link failed (`err`): asks the printer, for up to its ready
 * timeout, what it holds. When it provably never started the label (held, then cancelled) the answer is true:
 * the job may fail and be printed again. Nothing held, a label that came out meanwhile, or no answer: it may
 * be out (false).
 */
export async function provablyNotOut(run: RunContext, err: unknown): Promise<boolean> {
  const d = run.deps;
  if (!inDoubt(err) || !d.printer.twoWay) return false;
  const deadline = d.now() + d.printerConfig.readyTimeoutMs;
  run.setStep('waiting_printer', 'asking the printer whether the label came out');
  for (;;) {
    run.checkAbort();
    const held = await d.printer
      .cancelUnstarted(d.printerConfig.longestLabelMs, run.signal)
      .catch((e: unknown) => (inDoubt(e) ? undefined : Promise.reject(e)));
    // The cancel hit every format in the printer: the others in flight can no longer count on theirs.
    if (held !== undefined && held !== 0) d.lane.cancelledBy(run.ticket, null);
    if (held !== undefined) {
      // Formats sent after this one were the newest in the buffer: this label was held only if the printer
      // held more than those.
      const after = d.lane.sentAfter(run.ticket);
      if (held === null || held <= after) return false;
      run.log.info({ held }, 'the label was still held in the printer, never started; cancelled');
      return true;
    }
    if (d.now() >= deadline) return false;
    await sleep(d.notReadyRetryMs, run.signal);
  }
}

/** A failure of the printer link, or its silence: the label sent may or may not have come out. */
export function inDoubt(err: unknown): boolean {
  const e = toAgentError(err);
  return (
    e.code === 'TRANSPORT_CLOSED' ||
    e.code === 'TRANSPORT_ERROR' ||
    e.code === 'PRINTER_NO_ANSWER' ||
    e.code === 'PRINT_TIMEOUT'
  );
}
