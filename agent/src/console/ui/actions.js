// @ts-check
/**
 * What a supervisor does to a label waiting at the line: attest it, have it printed again, mark it failed
 * (with a reason, in a dialog), or submit its scan. The buttons and the scan form are built here for both
 * the floor's waiting list and the job view.
 */
import { api, refreshStatusSoon } from './api.js';
import { $, announce, h, icon, setText, toast } from './dom.js';
import { state } from './model.js';
import { mustSignIn, openSignIn, refreshSession, signedOut } from './session.js';

/** @typedef {import('./model.js').ActionKind} ActionKind */
/** @typedef {import('./model.js').CurrentJob} CurrentJob */

/** @type {Record<ActionKind, string>} */
const VERBS = { attest: 'attest', reprint: 'ask for a re-print', fail: 'mark a print failed', scan: 'scan' };

/** @type {Record<ActionKind, string>} */
const DONE = {
  attest: 'Attested. The label goes on to the scan.',
  reprint: 'The same label is being printed again.',
  fail: 'Marked failed. The job will be printed again if it has retries left.',
  scan: 'Scan sent.',
};

/**
 * Sends an action to the agent; asks for a sign-in first (or again, when the session ended) where one is
 * needed. `button` is disabled while the call runs.
 * @param {HTMLButtonElement | null} button
 * @param {ActionKind} kind
 * @param {string} jobRef
 * @param {Record<string, unknown>} body
 */
export async function act(button, kind, jobRef, body) {
  const again = () => act(null, kind, jobRef, body);
  if (kind !== 'scan' && mustSignIn()) {
    openSignIn(`Sign in to ${VERBS[kind]}.`, again);
    return;
  }
  if (button) button.disabled = true;
  const r = await api('POST', `/api/jobs/${encodeURIComponent(jobRef)}/${kind}`, body);
  if (button) button.disabled = false;
  if (r.status === 401) {
    signedOut();
    openSignIn(`Your session ended. Sign in again to ${VERBS[kind]}.`, again);
    return;
  }
  if (!r.ok) {
    toast(`Could not ${VERBS[kind]}: ${r.error.message}`);
    refreshStatusSoon(0);
    return;
  }
  toast(DONE[kind], true);
  announce(DONE[kind]);
  refreshStatusSoon(0);
  if (state.session.token) refreshSession();
}

/** The job and attempt the fail dialog is open for. @type {{ jobRef: string, attemptId: string } | null} */
let failing = null;

/** @param {string} jobRef @param {string} attemptId @param {string} what the print, in words */
function openFail(jobRef, attemptId, what) {
  if (mustSignIn()) {
    openSignIn(`Sign in to ${VERBS.fail}.`, () => openFail(jobRef, attemptId, what));
    return;
  }
  failing = { jobRef, attemptId };
  const form = /** @type {HTMLFormElement} */ ($('fail-form'));
  setText($('fail-job'), `The print of ${what}.`);
  form.reset();
  /** @type {HTMLDialogElement} */ ($('fail-dialog')).showModal();
  /** @type {HTMLInputElement | null} */ (form.querySelector('input[name="reason"]:checked'))?.focus();
}

/** @param {SubmitEvent} e */
function submitFail(e) {
  e.preventDefault();
  const form = /** @type {HTMLFormElement} */ ($('fail-form'));
  const checked = /** @type {HTMLInputElement | null} */ (form.querySelector('input[name="reason"]:checked'));
  const reason = checked?.value ?? 'operator_other';
  const detail = /** @type {HTMLTextAreaElement} */ ($('fail-detail')).value.trim();
  /** @type {HTMLDialogElement} */ ($('fail-dialog')).close();
  if (!failing) return;
  act(null, 'fail', failing.jobRef, { reason, attemptId: failing.attemptId, ...(detail ? { detail } : {}) });
}

/** Wires the fail dialog. */
export function startActions() {
  $('fail-form').addEventListener('submit', (e) => submitFail(/** @type {SubmitEvent} */ (e)));
  $('fail-cancel').addEventListener('click', () =>
    /** @type {HTMLDialogElement} */ ($('fail-dialog')).close(),
  );
}

/** @param {MouseEvent} e */
function buttonOf(e) {
  return /** @type {HTMLButtonElement} */ (e.currentTarget);
}

/**
 * Attest, re-print and mark failed, for a label waiting for its attestation.
 * @param {CurrentJob} job
 * @param {{ serial: string } | undefined} attempt
 */
export function actionButtons(job, attempt) {
  const what = attempt ? `serial ${attempt.serial} on ${job.printer}` : `job ${job.jobRef}`;
  const canAttest = state.session.required !== false;
  return h(
    'div',
    { class: 'actions' },
    h(
      'button',
      {
        type: 'button',
        class: 'primary big',
        disabled: !canAttest,
        onclick: (/** @type {MouseEvent} */ e) =>
          act(buttonOf(e), 'attest', job.jobRef, { attemptId: job.attemptId }),
      },
      icon('check'),
      'Attest',
      h('span', { class: 'sr-only', text: ` ${what}` }),
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'big',
        onclick: (/** @type {MouseEvent} */ e) =>
          act(buttonOf(e), 'reprint', job.jobRef, { attemptId: job.attemptId }),
      },
      'Re-print',
      h('span', { class: 'sr-only', text: ` ${what}` }),
    ),
    h(
      'button',
      { type: 'button', class: 'danger big', onclick: () => openFail(job.jobRef, job.attemptId, what) },
      icon('cross'),
      'Mark failed',
      h('span', { class: 'sr-only', text: ` ${what}` }),
    ),
  );
}

/** The scan form, for a label on a printer without a scanner. @param {CurrentJob} job */
export function scanForm(job) {
  const input = h('input', {
    id: `scan-${job.jobRef}`,
    name: 'scan',
    autocomplete: 'off',
    required: true,
    maxlength: 2000,
  });
  const others = h('textarea', {
    id: `scan-others-${job.jobRef}`,
    name: 'symbols',
    autocomplete: 'off',
    rows: 2,
    maxlength: 8000,
    placeholder: ']d2(01)09506000134352(21)4711',
  });
  return h(
    'form',
    {
      class: 'scan-form',
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        const data = input.value.trim();
        const button = /** @type {HTMLButtonElement | null} */ (e.submitter);
        const symbols = otherSymbols(others.value);
        if (data)
          act(button, 'scan', job.jobRef, {
            data,
            ...(symbols ? { symbols } : {}),
            attemptId: job.attemptId,
          });
      },
    },
    h('label', { for: input.id, text: 'Scan the label (or type its link)' }),
    input,
    h('label', {
      for: others.id,
      text: 'Its other symbols, one per line with their AIM identifier (DataMatrix ]d1 or ]d2, GS1-128 ]C1)',
    }),
    others,
    h('button', { type: 'submit', class: 'primary' }, 'Submit scan'),
  );
}

/**
 * The lines of the other-symbols box as the console's scan route takes them: `]d2(01)…` becomes
 * `{ aimId: ']d2', data: '(01)…' }`; a line without an AIM identifier is sent as is, for the route to refuse.
 * @param {string} text
 */
function otherSymbols(text) {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length === 0) return undefined;
  return lines.map((l) => ({ aimId: l.slice(0, 3), data: l.slice(3) }));
}
