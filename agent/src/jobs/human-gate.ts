/**
 * Where a job waits for a person: a supervisor's attestation (or a request to send the label again), or a
 * scan typed or wedged in at the console when the printer has no scanner. The console resolves the waits;
 * the pipeline owns the timeouts and the abort signal.
 */
import { AgentError } from '../errors.js';
import { abortReason } from '../util/time.js';
import type { Supervisor } from './attestation.js';

export type AttestationAnswer =
  { kind: 'attest'; supervisor: Supervisor; note?: string } | { kind: 'reprint' };
export interface ManualScan {
  /** The QR code's data. */
  data: string;
  /** The label's other symbols with their AIM identifiers (GS1 data raw, GS separators). */
  symbols?: { aimId: string; data: string }[] | undefined;
  epc?: string | undefined;
}

type Waiting =
  | { kind: 'attestation'; resolve: (a: AttestationAnswer) => void }
  | { kind: 'scan'; resolve: (s: ManualScan) => void };

export class HumanGate {
  private readonly waiting = new Map<string, Waiting>();

  /** What the job waits for, if anything. */
  waitingFor(jobRef: string): 'attestation' | 'scan' | null {
    return this.waiting.get(jobRef)?.kind ?? null;
  }

  waitAttestation(jobRef: string, timeoutMs: number, signal: AbortSignal): Promise<AttestationAnswer> {
    return this.wait(jobRef, 'attestation', timeoutMs, signal);
  }

  waitScan(jobRef: string, timeoutMs: number, signal: AbortSignal): Promise<ManualScan> {
    return this.wait(jobRef, 'scan', timeoutMs, signal);
  }

  attest(jobRef: string, supervisor: Supervisor, note?: string): void {
    this.take(jobRef, 'attestation').resolve({ kind: 'attest', supervisor, ...(note ? { note } : {}) });
  }

  reprint(jobRef: string): void {
    this.take(jobRef, 'attestation').resolve({ kind: 'reprint' });
  }

  scan(jobRef: string, input: ManualScan): void {
    this.take(jobRef, 'scan').resolve(input);
  }

  private take<K extends Waiting['kind']>(jobRef: string, kind: K): Extract<Waiting, { kind: K }> {
    const w = this.waiting.get(jobRef);
    if (!w || w.kind !== kind)
      throw new AgentError(
        'NOT_WAITING',
        `job ${jobRef} is not waiting for ${kind === 'attestation' ? 'an attestation' : 'a scan'}`,
        {
          details: { waitingFor: w?.kind ?? null },
        },
      );
    this.waiting.delete(jobRef);
    return w as Extract<Waiting, { kind: K }>;
  }

  private wait<T>(jobRef: string, kind: Waiting['kind'], timeoutMs: number, signal: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (signal.aborted) return reject(abortReason(signal));
      const cleanup = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (this.waiting.get(jobRef) === entry) this.waiting.delete(jobRef);
      };
      const onAbort = () => {
        cleanup();
        reject(abortReason(signal));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new AgentError('JOB_ABORTED', `nobody answered within ${timeoutMs} ms`, {
            details: { waitingFor: kind },
          }),
        );
      }, timeoutMs);
      const entry = {
        kind,
        resolve: (v: unknown) => {
          cleanup();
          resolve(v as T);
        },
      } as Waiting;
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(jobRef, entry);
    });
  }
}
