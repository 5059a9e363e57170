// @ts-check
/**
 * The floor view: the connections, every printer with its state and current job, the labels waiting for a
 * person, the recent jobs, and the footer. Each region is redrawn only when what it shows changed.
 */
import { loadDetail } from './api.js';
import { actionButtons, scanForm } from './actions.js';
import { $, announce, h, icon, setText, time } from './dom.js';
import { changed, printerLook, state, stepInfo, stepTone } from './model.js';
import { road } from './road.js';

/** @typedef {import('./model.js').PrinterView} PrinterView */
/** @typedef {import('./model.js').CurrentJob} CurrentJob */
/** @typedef {import('./model.js').AgentStatusView} AgentStatusView */

/** Everything on the floor view. */
export function renderFloor() {
  const status = state.status;
  if (!status) return;
  setText($('device-name'), status.device.name);
  renderConnections();
  renderPrinters();
  renderWaiting();
  renderRecent(status);
  renderFooter();
  renderTray();
}

export function renderConnections() {
  $('connection').className = `chip ${state.connected ? 'chip-ok' : 'chip-warn'}`;
  setText($('connection-text'), state.connected ? 'Live' : 'Reconnecting…');
  if (!state.status) return;
  const cp = $('control-plane');
  const reachable = state.status.connections.controlPlane.reachable;
  cp.hidden = false;
  cp.className = `chip ${reachable ? 'chip-ok' : 'chip-bad'}`;
  setText($('control-plane-text'), reachable ? 'Control plane reachable' : 'Control plane unreachable');
}

export function renderFooter() {
  const status = state.status;
  if (!status) return;
  const pending = status.outbox.pending ?? 0;
  setText(
    $('outbox'),
    `Results waiting to be sent: ${pending} · Device ${status.device.id} · Agent ${status.agentVersion}`,
  );
}

/** @param {AgentStatusView} status @param {PrinterView} printer */
function currentJobOf(status, printer) {
  return status.jobs.current.find((j) => j.printer === printer.name) ?? null;
}

/** @param {PrinterView} p @param {CurrentJob | null} job */
function printerCard(p, job) {
  const s = printerLook(p.state);
  const id = `printer-${p.name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return h(
    'li',
    {
      class: `printer tone-${s.tone}`,
      'aria-labelledby': `${id}-name`,
      'data-printer': p.name,
      'data-state': p.state,
    },
    h(
      'h3',
      {},
      h('span', { id: `${id}-name`, text: p.name }),
      h('span', { class: 'state', 'data-role': 'state' }, icon(s.icon), h('span', { text: s.text })),
    ),
    s.hint || (p.detail && p.state === 'error')
      ? h('p', { class: 'detail', 'data-role': 'hint', title: p.detail ?? null, text: s.hint ?? p.detail })
      : null,
    h(
      'dl',
      { class: 'facts' },
      h('dt', { text: 'Line' }),
      h(
        'dd',
        {},
        `${p.language.toUpperCase()} over ${p.transport} `,
        h('span', { class: 'mono', text: p.target }),
      ),
      h('dt', { text: 'RFID' }),
      h('dd', { text: p.rfid ? 'encoder fitted' : 'no' }),
      h('dt', { text: 'NFC' }),
      h('dd', { text: p.nfc ? 'encoder fitted' : 'no' }),
      h('dt', { text: 'Scanner' }),
      h('dd', { text: p.scanner ? 'fitted' : 'none (scan at the console)' }),
      ...(p.scanner && p.rfid && p.scanWindow
        ? [h('dt', { text: 'Scan window' }), scanWindow(p.scanWindow)]
        : []),
      ...(p.waits && p.waits.agent.labels + p.waits.scan.labels > 0
        ? [h('dt', { text: 'Printer waited' }), waited(p.waits)]
        : []),
      ...(p.printerWaitedAt
        ? [
            h('dt', { text: 'Next job' }),
            h('dd', {
              'data-role': 'claims-early',
              text: `claimed as soon as the label before is sent, since the printer waited for a label at ${time(p.printerWaitedAt)}`,
            }),
          ]
        : []),
    ),
    job
      ? h(
          'div',
          { class: 'current' },
          h(
            'p',
            {},
            'Current job ',
            h('a', { href: `#/jobs/${job.jobRef}`, text: job.jobRef }),
            `: ${stepInfo(job.step)[1]}`,
          ),
          road(job.step, -1),
        )
      : h('p', { class: 'current note', text: 'No job on this printer.' }),
    h('p', { class: 'updated', 'data-role': 'updated' }),
  );
}

/**
 * Whether the next format waits in the printer behind the label printing, or until the printer is empty: the
 * scanner over the exit must read each label before the next comes out over it.
 * @param {PrinterView['scanWindow']} w
 */
function scanWindow(w) {
  const figures =
    w.labelMs === null || w.scanMs === null
      ? 'measured on the first label'
      : `scan ${Math.round(w.scanMs)} ms of a ${Math.round(w.labelMs)} ms label`;
  return h('dd', {
    'data-role': 'scan-window',
    text: w.queuesAhead
      ? `next label queued behind the one printing (${figures})`
      : `each label sent once the one before is read (${figures})`,
  });
}

/**
 * How often the printer stood empty with its next label already claimed here (`GET /metrics` has the same counts):
 * on the agent, and until the label before was read.
 * @param {PrinterView['waits']} w
 */
function waited(w) {
  /**
   * @param {{ labels: number, ms: number }} x
   * @param {string} what
   */
  const part = (x, what) =>
    `${x.labels} ${x.labels === 1 ? 'label' : 'labels'} ${what} (${(x.ms / 1000).toFixed(1)} s)`;
  return h('dd', {
    'data-role': 'printer-waits',
    text: `${part(w.agent, 'on the agent')}, ${part(w.scan, 'on a scan')}`,
  });
}

/** The printer cards; a printer whose state changed is said aloud. */
export function renderPrinters() {
  const status = state.status;
  if (!status) return;
  const list = $('printer-list');
  const printers = status.printers;
  $('printers-empty').hidden = printers.length > 0;
  for (const p of printers) {
    const before = state.printerStates.get(p.name);
    if (before !== undefined && before !== p.state)
      announce(`${p.name}: ${printerLook(p.state).text}${p.detail ? `, ${p.detail}` : ''}`);
    state.printerStates.set(p.name, p.state);
  }
  // The status time changes on every poll: it is written in place, not by redrawing the cards.
  const shown = printers.map((p) => ({ ...p, statusAt: null, status: null, job: currentJobOf(status, p) }));
  if (changed('printers', shown))
    list.replaceChildren(...printers.map((p) => printerCard(p, currentJobOf(status, p))));
  for (const p of printers) {
    const card = list.querySelector(`[data-printer="${CSS.escape(p.name)}"] [data-role="updated"]`);
    if (card) setText(card, p.statusAt ? `Status at ${time(p.statusAt)}` : 'No status yet');
  }
}

/** The tray of the desktop app (and the window title) count the labels waiting for an attestation. */
export function renderTray() {
  if (!state.status) return;
  const waiting = state.status.jobs.current.filter((j) => j.waitingFor === 'attestation').length;
  const title = waiting > 0 ? `(${waiting}) Print floor console` : 'Print floor console';
  if (document.title !== title) document.title = title;
}

/** The newest attempt of a job, once its detail is loaded. @param {string} jobRef */
function attemptOf(jobRef) {
  return state.details.get(jobRef)?.attempts[0];
}

/** Loads the details of waiting jobs not asked for yet (a job unknown here is not asked for again). */
/** @param {CurrentJob[]} jobs */
function loadWaitingDetails(jobs) {
  for (const j of jobs) {
    if (state.details.has(j.jobRef) || state.loading.has(j.jobRef)) continue;
    state.loading.add(j.jobRef);
    loadDetail(j.jobRef).then((found) => {
      if (found) state.loading.delete(j.jobRef);
      renderWaiting();
    });
  }
}

/** The labels waiting for a person: to attest, or to scan at the console. */
export function renderWaiting() {
  const jobs = state.status ? state.status.jobs.current.filter((j) => j.waitingFor) : [];
  const count = $('waiting-count');
  setText(count, String(jobs.length));
  count.classList.toggle('has-items', jobs.length > 0);
  $('waiting-empty').hidden = jobs.length > 0;
  $('no-supervisors').hidden =
    state.session.required !== false || !jobs.some((j) => j.waitingFor === 'attestation');
  loadWaitingDetails(jobs);
  const shown = {
    jobs: jobs.map((j) => ({ ...j, attempt: attemptOf(j.jobRef)?.attemptId ?? null })),
    required: state.session.required,
  };
  if (!changed('waiting', shown)) return;
  const list = $('waiting-list');
  // The buttons pressed are about to go: keep the keyboard user in this list, not at the page top.
  const hadFocus = list.contains(document.activeElement);
  list.replaceChildren(...jobs.map(waitingItem));
  if (hadFocus)
    /** @type {HTMLElement} */ (list.querySelector('button, input') ?? $('waiting-title')).focus();
}

/** @param {CurrentJob} job */
function waitingItem(job) {
  const attempt = attemptOf(job.jobRef);
  const title = attempt
    ? `Serial ${attempt.serial} on ${job.printer}`
    : `Job ${job.jobRef} on ${job.printer}`;
  return h(
    'li',
    { class: 'waiting-item', 'data-job': job.jobRef, 'data-attempt': job.attemptId },
    h('img', {
      src: `/api/jobs/${encodeURIComponent(job.jobRef)}/preview.png?attempt=${encodeURIComponent(job.attemptId)}`,
      alt: `QR code of the label${attempt ? ` for serial ${attempt.serial}` : ''}`,
      width: 128,
      height: 128,
    }),
    h(
      'div',
      {},
      h('h3', { text: title }),
      h(
        'p',
        {},
        job.waitingFor !== 'attestation'
          ? 'This printer has no scanner: scan the label here.'
          : job.resumedAfterSend
            ? 'This label was sent before the agent restarted. Check whether it came out, then attest it, have it printed again, or mark it failed.'
            : 'Check the printed label, then attest it, have it printed again, or mark it failed.',
      ),
      attempt
        ? h('p', { class: 'note' }, `GTIN ${attempt.gtin} · `, h('span', { class: 'mono', text: job.jobRef }))
        : null,
      h('p', {}, h('a', { href: `#/jobs/${job.jobRef}`, text: 'Details and evidence' })),
      job.waitingFor === 'attestation' ? actionButtons(job, attempt) : scanForm(job),
    ),
  );
}

/** The last 20 jobs this device worked on. @param {AgentStatusView} status */
function renderRecent(status) {
  const rows = status.jobs.recent.slice(0, 20);
  const table = $('recent');
  $('recent-empty').hidden = rows.length > 0;
  table.hidden = rows.length === 0;
  if (!changed('recent', rows)) return;
  table
    .querySelector('tbody')
    ?.replaceChildren(
      ...rows.map((r) =>
        h(
          'tr',
          { 'data-job': r.jobRef },
          h('td', { text: time(r.updatedAt) }),
          h('td', { text: r.printer }),
          h('td', { text: r.serial }),
          h('td', {}, h('span', { class: `state tone-${stepTone(r.step)}`, text: stepInfo(r.step)[1] })),
          h('td', { text: r.error ?? '' }),
          h('td', {}, h('a', { href: `#/jobs/${r.jobRef}`, class: 'mono', text: r.jobRef })),
        ),
      ),
    );
}
