// @ts-check
/**
 * What the page knows and shows: the shapes the agent's console API answers (the agent's own types), the
 * road of a job, the printer states, and the one state object every module reads. Modules tell each other
 * what changed through `emit`/`on` below; only app.js decides what to redraw, so no module imports a view.
 */

/** @typedef {import('../../runtime/views.js').AgentStatusView} AgentStatusView */
/** @typedef {import('../../runtime/views.js').AgentJobView} AgentJobView */
/** @typedef {AgentJobView['attempts'][number]} AttemptView */
/** @typedef {AgentStatusView['jobs']['current'][number]} CurrentJob */
/** @typedef {import('../../jobs/printer-worker.js').PrinterView} PrinterView */
/** @typedef {import('../../jobs/pipeline.js').JobStepEvent} JobStepEvent */
/** @typedef {import('../sessions.js').SessionView} SessionView */
/** @typedef {'attest' | 'reprint' | 'fail' | 'scan'} ActionKind */

/** The road of a job on the control plane. */
export const ROAD = [
  'Claimed',
  'Rendered',
  'Sent to printer',
  'Printed & attested',
  'Scan verified',
  'Sealed',
];

/** Where each step of the agent stands on the road (-1: off it), and its words. */
/** @type {Record<string, [number, string]>} */
const STEPS = {
  claimed: [0, 'Claimed'],
  rendered: [1, 'Rendered'],
  waiting_printer: [1, 'Waiting for the printer'],
  submitted: [2, 'Sent to the printer'],
  printing: [2, 'Printing'],
  awaiting_attestation: [2, 'Waiting for a supervisor'],
  attested: [3, 'Attested'],
  scanning: [3, 'Scanning'],
  awaiting_scan: [3, 'Waiting for a scan'],
  scanned: [4, 'Scan verified'],
  sealing: [4, 'Sealing'],
  sealed: [5, 'Sealed'],
  failed: [-1, 'Failed'],
  abandoned: [-1, 'Abandoned'],
};

/**
 * Evidence of the journal that proves each road step was reached.
 * @type {ReadonlyArray<keyof AttemptView['evidence'] | null>}
 */
export const EVIDENCE_OF_STEP = [
  null,
  'render_manifest',
  'spool_receipt',
  'attestation',
  'scan_result',
  'evidence_bundle',
];

/**
 * @typedef {object} PrinterLook
 * @property {string} text
 * @property {import('./dom.js').IconName} icon
 * @property {'ok' | 'info' | 'warn' | 'bad' | 'off'} tone
 * @property {string} [hint] what the person at the line can do
 */

/** Printer states: text and icon as well as colour, and what the person at the line can do. */
/** @type {Record<string, PrinterLook>} */
export const PRINTER_STATES = {
  ready: { text: 'Ready', icon: 'check', tone: 'ok' },
  printing: { text: 'Printing', icon: 'play', tone: 'info' },
  paper_out: {
    text: 'Paper out',
    icon: 'warn',
    tone: 'bad',
    hint: 'Load labels; printing goes on by itself.',
  },
  ribbon_out: { text: 'Ribbon out', icon: 'warn', tone: 'bad', hint: 'Load a ribbon.' },
  head_open: { text: 'Head open', icon: 'warn', tone: 'bad', hint: 'Close the print head.' },
  paused: { text: 'Paused', icon: 'pause', tone: 'warn', hint: 'Press PAUSE on the printer to resume.' },
  offline: { text: 'Offline', icon: 'cross', tone: 'off', hint: 'No answer: check the cable and the power.' },
  error: { text: 'Error', icon: 'cross', tone: 'bad' },
};

/** @param {string} state @returns {PrinterLook} */
export function printerLook(state) {
  return PRINTER_STATES[state] ?? { text: state, icon: 'cross', tone: 'bad' };
}

/** The road position (-1: failed or abandoned) and the words of an agent step. */
/** @param {string} step @returns {[number, string]} */
export function stepInfo(step) {
  return STEPS[step] ?? [-1, step];
}

/** @param {string} step */
export function stepTone(step) {
  return step === 'sealed' ? 'ok' : stepInfo(step)[0] < 0 ? 'bad' : 'info';
}

/**
 * @typedef {object} Session
 * @property {boolean | null} required null until the agent said whether supervisors are configured
 * @property {string | null} token lives in this page's memory only: a reload signs the supervisor out
 * @property {SessionView['supervisor'] | null} supervisor
 * @property {string | null} expiresAt
 */

export const state = {
  /** @type {AgentStatusView | null} */
  status: null,
  /** Job details by job ref (the waiting list needs serials and previews). @type {Map<string, AgentJobView>} */
  details: new Map(),
  /** @type {Session} */
  session: { required: null, token: null, supervisor: null, expiresAt: null },
  /** Job refs whose details are being fetched. @type {Set<string>} */
  loading: new Set(),
  /** What to do once the supervisor has signed in. @type {(() => void) | null} */
  pending: null,
  connected: false,
  /** @type {{ view: 'floor' | 'job', jobRef: string | null }} */
  route: { view: 'floor', jobRef: null },
  /** Last data rendered per region, so unchanged data leaves the DOM (and the focus) alone. @type {Map<string, string>} */
  rendered: new Map(),
  /** @type {Map<string, string>} */
  printerStates: new Map(),
};

/** Re-renders a region only when what it shows changed. @param {string} region @param {unknown} value */
export function changed(region, value) {
  const key = JSON.stringify(value);
  if (state.rendered.get(region) === key) return false;
  state.rendered.set(region, key);
  return true;
}

/**
 * What changed, for app.js to redraw: the whole status, one printer, the connections, the outbox, the
 * session, or a job (its ref).
 * @typedef {{ status: void, printer: void, connections: void, outbox: void, session: void, job: string }} Changes
 */

/** @type {{ [K in keyof Changes]?: Array<(value: Changes[K]) => void> }} */
const listeners = {};

/** @template {keyof Changes} K @param {K} what @param {(value: Changes[K]) => void} fn */
export function on(what, fn) {
  (listeners[what] ??= /** @type {any} */ ([])).push(fn);
}

/** @template {keyof Changes} K @param {K} what @param {Changes[K]} [value] */
export function emit(what, value) {
  for (const fn of listeners[what] ?? []) fn(/** @type {Changes[K]} */ (value));
}
