/** What the console serves, implemented by the running agent (the console never reaches into it). */
import type { ManualScan, Supervisor } from '../jobs/index.js';

export type ConsoleEventListener = (event: string, data: unknown) => void;

export interface ConsoleBackend {
  status(): unknown;
  /** The line's figures as Prometheus text (`GET /metrics`). */
  metrics(): string;
  /** A job this device worked on (attempts, evidence, results), or null. */
  job(jobRef: string): unknown;
  preview(jobRef: string): Buffer | null;
  /** The attempt of the job in progress on this device, or null when none is. */
  currentAttempt(jobRef: string): string | null;
  attest(jobRef: string, supervisor: Supervisor, note?: string): void;
  fail(jobRef: string, reason: string, detail?: string): void;
  reprint(jobRef: string): void;
  scan(jobRef: string, input: ManualScan): void;
  /** Every state change, as SSE events; returns the unsubscribe. */
  subscribe(listener: ConsoleEventListener): () => void;
}
