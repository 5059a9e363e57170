/**
 * The print job state machine of api-v2.md ("Print job lifecycle"), defined once. The control plane
 * enforces it with one guarded statement per transition; the agent uses it to know what to report next.
 *
 * Where the spec says "not shown" we decided:
 * - a job whose lease expires before its label was sent (CLAIMED, RENDERED) moves to FAILED (reason
 *   `lease_expired`), so it is re-claimable while retries remain and goes to DEAD_LETTER after that, like
 *   any other failure;
 * - a job whose lease expires once its label may have left the printer (SPOOL_SUBMITTED and after, see
 *   {@link LABEL_MAY_BE_OUT}) keeps its state and its attempt: nothing re-prints it on the system's say.
 *   Its device may renew the lease and go on (after a crash, a lost line or an outage of the control
 *   plane), or a person decides: attest it, or fail it (void) so that it is printed again;
 * - FAILED may be reported from every non-terminal state that holds an attempt (CLAIMED .. SCAN_VERIFIED).
 *
 * @example
 * nextResultStates('RENDERED') // ['SPOOL_SUBMITTED', 'FAILED']
 */
export const JOB_STATES = [
  'QUEUED',
  'CLAIMED',
  'RENDERED',
  'SPOOL_SUBMITTED',
  'PRINTED_ATTESTED',
  'SCAN_VERIFIED',
  'SEALED',
  'FAILED',
  'DEAD_LETTER',
  'CANCELLED',
] as const;
export type JobState = (typeof JOB_STATES)[number];

export const TERMINAL_STATES: readonly JobState[] = ['SEALED', 'DEAD_LETTER', 'CANCELLED'];

/** States a device reports through `POST /aidc/jobs/{ref}/result`. */
export const RESULT_STATES = [
  'RENDERED',
  'SPOOL_SUBMITTED',
  'PRINTED_ATTESTED',
  'SCAN_VERIFIED',
  'SEALED',
  'FAILED',
] as const;
export type ResultState = (typeof RESULT_STATES)[number];

/** The results of a print that goes well, in the order they are reported (every result but FAILED). */
export const HAPPY_PATH: readonly ResultState[] = RESULT_STATES.filter((s) => s !== 'FAILED');

export interface Transition {
  from: JobState;
  to: JobState;
  trigger: 'create' | 'claim' | 'cancel' | 'result' | 'reaper';
  /** Who may cause it. `system` never attests a print. */
  actors: readonly ('issuer' | 'device' | 'human' | 'system')[];
  note: string;
}

/**
 * States in which the label may have left the printer: the spool submission was reported. An attempt in
 * one of them is never returned to the claim pool by the reaper; only its device or a person ends it.
 */
export const LABEL_MAY_BE_OUT: readonly JobState[] = ['SPOOL_SUBMITTED', 'PRINTED_ATTESTED', 'SCAN_VERIFIED'];

/** States that hold a live attempt (a claim happened, no final result yet). */
export const ATTEMPT_STATES: readonly JobState[] = ['CLAIMED', 'RENDERED', ...LABEL_MAY_BE_OUT];

/** States a job is still at work in, or may be again (FAILED with retries left): every non-terminal one. */
export const ACTIVE_STATES: readonly JobState[] = JOB_STATES.filter((s) => !TERMINAL_STATES.includes(s));

/** The whole table; the code and the documentation are both generated from it. */
export const TRANSITIONS: readonly Transition[] = [
  {
    from: 'QUEUED',
    to: 'CLAIMED',
    trigger: 'claim',
    actors: ['device'],
    note: 'fresh attempt_id persisted; lease granted',
  },
  {
    from: 'QUEUED',
    to: 'CANCELLED',
    trigger: 'cancel',
    actors: ['issuer'],
    note: 'terminal; no print outcome',
  },
  {
    from: 'CLAIMED',
    to: 'RENDERED',
    trigger: 'result',
    actors: ['device'],
    note: 'evidence render_manifest',
  },
  {
    from: 'RENDERED',
    to: 'SPOOL_SUBMITTED',
    trigger: 'result',
    actors: ['device'],
    note: 'evidence spool_receipt; machine-observable only',
  },
  {
    from: 'SPOOL_SUBMITTED',
    to: 'PRINTED_ATTESTED',
    trigger: 'result',
    actors: ['device', 'human'],
    note: 'asserted by a device or a human only, never the system; a spool submission never implies it',
  },
  {
    from: 'PRINTED_ATTESTED',
    to: 'SCAN_VERIFIED',
    trigger: 'result',
    actors: ['device'],
    note: 'evidence scan_result',
  },
  {
    from: 'SCAN_VERIFIED',
    to: 'SEALED',
    trigger: 'result',
    actors: ['device'],
    note: 'evidence evidence_bundle; terminal; metadata.print = printed, EPCIS commissioning and print.confirmed in one transaction',
  },
  ...ATTEMPT_STATES.map((from): Transition => ({
    from,
    to: 'FAILED',
    trigger: 'result',
    actors: ['device', 'human', 'system'],
    note: 'retryable up to max_attempts; re-enters the claim pool',
  })),
  ...ATTEMPT_STATES.filter((from) => !LABEL_MAY_BE_OUT.includes(from)).map((from): Transition => ({
    from,
    to: 'FAILED',
    trigger: 'reaper',
    actors: ['system'],
    note: 'lease expired before the label was sent',
  })),
  {
    from: 'FAILED',
    to: 'CLAIMED',
    trigger: 'claim',
    actors: ['device'],
    note: 'retries remain; new attempt_id',
  },
  {
    from: 'FAILED',
    to: 'DEAD_LETTER',
    trigger: 'reaper',
    actors: ['system'],
    note: 'retry budget exhausted; terminal; metadata.print = failed; the serial appears in the re-print file',
  },
];

export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.includes(state);
}

/** The states a result may move a job in `from` to. */
export function nextResultStates(from: JobState): ResultState[] {
  return TRANSITIONS.filter((t) => t.from === from && t.trigger === 'result').map((t) => t.to as ResultState);
}

/** The one state a result to `to` must come from (FAILED: any attempt state). */
export function resultSources(to: ResultState): JobState[] {
  return TRANSITIONS.filter((t) => t.to === to && t.trigger === 'result').map((t) => t.from);
}
