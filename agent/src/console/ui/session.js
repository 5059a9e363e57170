// @ts-check
/**
 * The supervisor's session: sign in by PIN (or badge), sign out, and the session ending by itself. The
 * token lives in this page's memory only. Emits `session` whenever who is signed in (or whether anyone
 * must be) changes.
 */
import { api } from './api.js';
import { $, announce, setText } from './dom.js';
import { emit, state } from './model.js';

/** @typedef {import('./model.js').SessionView & { required: boolean }} SessionAnswer */
/** @typedef {import('./model.js').SessionView & { token: string }} SignedIn */

/** @type {ReturnType<typeof setTimeout> | undefined} */
let expiryTimer;
function renderSession() {
  const s = state.session;
  const who = $('who');
  const name = s.token ? s.supervisor?.name : undefined;
  who.hidden = name === undefined;
  setText(who, name !== undefined ? `Signed in: ${name}` : '');
  $('sign-in').hidden = name !== undefined || s.required === false;
  $('sign-out').hidden = name === undefined;
  clearTimeout(expiryTimer);
  if (name !== undefined && s.expiresAt) {
    // Ask again just after it would end: the agent says whether use has kept it alive.
    const ms = Math.max(1000, Date.parse(s.expiresAt) - Date.now() + 500);
    expiryTimer = setTimeout(refreshSession, Math.min(ms, 2 ** 31 - 1));
  }
  emit('session');
}

export function signedOut() {
  state.session.token = null;
  state.session.supervisor = null;
  state.session.expiresAt = null;
  renderSession();
}

/** Asks the agent whether supervisors sign in here, and whether this page's session still holds. */
export async function refreshSession() {
  /** @type {import('./api.js').Answer<SessionAnswer>} */
  const r = await api('GET', '/api/session');
  if (!r.ok || !r.data) return;
  state.session.required = r.data.required;
  if (state.session.token && !r.data.supervisor) {
    signedOut();
    announce('You were signed out after a while without activity.');
    return;
  }
  state.session.supervisor = r.data.supervisor;
  state.session.expiresAt = r.data.expiresAt;
  renderSession();
}

/** Whether an action must wait for a sign-in first. */
export function mustSignIn() {
  return Boolean(state.session.required && !state.session.token);
}

/** Opens the sign-in dialog; `then` runs once the supervisor has signed in. */
/** @param {string} [reason] @param {() => void} [then] */
export function openSignIn(reason, then) {
  state.pending = then ?? null;
  const dialog = /** @type {HTMLDialogElement} */ ($('sign-in-dialog'));
  setText($('sign-in-reason'), reason ?? 'Enter your PIN, or scan your badge.');
  setText($('sign-in-error'), '');
  pin().value = '';
  if (!dialog.open) dialog.showModal();
  pin().focus();
}

/** @returns {HTMLInputElement} */
function pin() {
  return $('pin');
}

/** @param {SubmitEvent} e */
async function submitSignIn(e) {
  e.preventDefault();
  const entered = pin().value.trim();
  if (entered.length < 4) {
    setText($('sign-in-error'), 'A PIN has at least 4 digits.');
    pin().focus();
    return;
  }
  const submit = /** @type {HTMLButtonElement | null} */ (e.submitter);
  if (submit) submit.disabled = true;
  /** @type {import('./api.js').Answer<SignedIn>} */
  const r = await api('POST', '/api/session', { pin: entered });
  if (submit) submit.disabled = false;
  pin().value = '';
  if (!r.ok || !r.data) {
    const message =
      r.status === 429
        ? `Too many wrong PINs. Try again in ${r.retryAfter || 60} seconds.`
        : r.status === 401
          ? 'Wrong PIN. Try again.'
          : r.error.message;
    setText($('sign-in-error'), message);
    pin().focus();
    return;
  }
  state.session.token = r.data.token;
  state.session.supervisor = r.data.supervisor;
  state.session.expiresAt = r.data.expiresAt;
  /** @type {HTMLDialogElement} */ ($('sign-in-dialog')).close();
  renderSession();
  announce(`Signed in as ${r.data.supervisor.name}`);
  const next = state.pending;
  state.pending = null;
  if (next) next();
}

async function signOut() {
  await api('DELETE', '/api/session');
  signedOut();
  announce('Signed out');
  $('sign-in').focus();
}

/** Wires the sign-in and sign-out buttons, the dialog and its PIN pad. */
export function startSession() {
  const dialog = /** @type {HTMLDialogElement} */ ($('sign-in-dialog'));
  $('sign-in').addEventListener('click', () => openSignIn());
  $('sign-out').addEventListener('click', signOut);
  $('sign-in-form').addEventListener('submit', (e) => submitSignIn(/** @type {SubmitEvent} */ (e)));
  $('sign-in-cancel').addEventListener('click', () => {
    state.pending = null;
    dialog.close();
  });
  dialog.addEventListener('close', () => (state.pending = state.session.token ? state.pending : null));
  for (const b of document.querySelectorAll('.pinpad button')) {
    if (!(b instanceof HTMLButtonElement)) continue;
    b.addEventListener('click', () => {
      const input = pin();
      if (b.dataset.digit) input.value = (input.value + b.dataset.digit).slice(0, 64);
      else if (b.dataset.pin === 'back') input.value = input.value.slice(0, -1);
      else input.value = '';
      setText($('sign-in-error'), '');
    });
  }
  pin().addEventListener('input', () => setText($('sign-in-error'), ''));
  refreshSession();
}
