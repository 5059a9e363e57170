/*
 * The print-floor console page: plain JavaScript, no framework, no build step, no inline code (the
 * page runs under `script-src 'self'`). Everything it shows comes from the agent's local console API:
 * `/api/status` and the server-sent events of `/api/events` (live, reconnecting), `/api/jobs/{ref}` for
 * a job's evidence, `/api/session` for the supervisor's sign-in. The session token lives in this page's
 * memory only: a reload signs the supervisor out.
 */
/* global window, document, EventSource, matchMedia, CSS, location, Node */

/** The road of a job on the control plane, and where each step of the agent stands on it. */
const ROAD = ['Claimed', 'Rendered', 'Sent to printer', 'Printed & attested', 'Scan verified', 'Sealed'];
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
/** Evidence of the journal that proves each road step was reached. */
const EVIDENCE_OF_STEP = [
  null,
  'render_manifest',
  'spool_receipt',
  'attestation',
  'scan_result',
  'evidence_bundle',
];

/** Printer states: text and icon as well as colour, and what the person at the line can do. */
const PRINTER_STATES = {
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

const ICONS = {
  check: 'M4.5 12.5l5 5L19.5 7',
  play: 'M7 4.5v15l12-7.5z',
  warn: 'M12 3.5L2.5 20.5h19zM12 10v5M12 17.5v.5',
  pause: 'M8.5 5v14M15.5 5v14',
  cross: 'M6 6l12 12M18 6L6 18',
};

const THEME_KEY = 'dpp-console-theme';
const desktop = window.dppDesktop ?? null;

const state = {
  status: null,
  /** Job details by job ref (the waiting list needs serials and previews). */
  details: new Map(),
  /** `required` is null until the agent said whether supervisors are configured. */
  session: { required: null, token: null, supervisor: null, expiresAt: null },
  /** Job refs whose details are being fetched. */
  loading: new Set(),
  /** What to do once the supervisor has signed in. */
  pending: null,
  connected: false,
  route: { view: 'floor', jobRef: null },
  /** Last text rendered per region, so unchanged data leaves the DOM (and the focus) alone. */
  rendered: new Map(),
  printerStates: new Map(),
};

const $ = (id) => document.getElementById(id);

/** `h('p', { class: 'x', text: 'y' }, child...)`: DOM built from nodes, never from HTML text. */
function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = String(value);
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

function icon(name) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', ICONS[name] ?? ICONS.cross);
  path.setAttribute('fill', name === 'play' ? 'currentColor' : 'none');
  path.setAttribute('stroke', 'currentColor');
  path.setAttribute('stroke-width', '2.5');
  path.setAttribute('stroke-linecap', 'round');
  path.setAttribute('stroke-linejoin', 'round');
  svg.append(path);
  return svg;
}

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** Re-renders a region only when what it shows changed. */
function changed(region, value) {
  const key = JSON.stringify(value);
  if (state.rendered.get(region) === key) return false;
  state.rendered.set(region, key);
  return true;
}

function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString([], { hour12: false });
}

function dateTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString([], { hour12: false });
}

function stepInfo(step) {
  return STEPS[step] ?? [-1, step];
}

function announce(text) {
  const el = $('announcer');
  el.textContent = '';
  // A fresh text node after a tick: screen readers announce repeated messages too.
  setTimeout(() => (el.textContent = text), 50);
}

let toastTimer = null;
function toast(text, ok = false) {
  const el = $('toast');
  $('toast-text').textContent = text;
  el.className = ok ? 'toast toast-ok' : 'toast';
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (el.hidden = true), 6000);
}

// ---------------------------------------------------------------------------------------------------
// The API

async function api(method, path, body) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (state.session.token) headers.authorization = `Bearer ${state.session.token}`;
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    return { ok: false, status: 0, error: { code: 'NETWORK', message: 'the agent does not answer' } };
  }
  const json = res.status === 204 ? null : await res.json().catch(() => null);
  return {
    ok: res.ok,
    status: res.status,
    data: json?.data,
    error: json?.error ?? { code: String(res.status), message: res.statusText },
    retryAfter: Number(res.headers.get('retry-after') ?? 0),
  };
}

let statusTimer = null;
function refreshStatusSoon(delay = 120) {
  clearTimeout(statusTimer);
  statusTimer = setTimeout(async () => {
    const r = await api('GET', '/api/status');
    if (r.ok) {
      state.status = r.data;
      render();
    }
  }, delay);
}

async function loadDetail(jobRef) {
  const r = await api('GET', `/api/jobs/${encodeURIComponent(jobRef)}`);
  if (r.ok) state.details.set(jobRef, r.data);
  else if (r.status === 404) state.details.delete(jobRef);
  return r.ok ? r.data : null;
}

// ---------------------------------------------------------------------------------------------------
// Live updates

let source = null;
let retry = 1000;
function connect() {
  source?.close();
  source = new EventSource('/api/events');
  source.addEventListener('open', () => {
    retry = 1000;
    setConnected(true);
    // Sessions live in the agent's memory: after its restart the supervisor must sign in again.
    if (state.session.token) refreshSession();
  });
  source.addEventListener('error', () => {
    setConnected(false);
    if (source.readyState === EventSource.CLOSED) {
      // The browser gave up (the agent restarted and answered an error): try again, slower each time.
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 15_000);
    }
  });
  source.addEventListener('status', (e) => {
    state.status = JSON.parse(e.data);
    render();
  });
  source.addEventListener('printer', (e) => {
    const view = JSON.parse(e.data);
    if (!state.status) return;
    const list = state.status.printers;
    const i = list.findIndex((p) => p.name === view.name);
    if (i >= 0) list[i] = view;
    else list.push(view);
    renderPrinters();
    renderTray();
  });
  source.addEventListener('job', (e) => {
    const event = JSON.parse(e.data);
    if (event.step === 'awaiting_attestation')
      announce(`A print on ${event.printer} waits for your attestation`);
    if (event.step === 'sealed') announce(`Job ${event.jobRef} on ${event.printer} is sealed`);
    if (event.step === 'failed')
      announce(`Job ${event.jobRef} on ${event.printer} failed: ${event.detail ?? ''}`);
    state.details.delete(event.jobRef);
    state.loading.delete(event.jobRef);
    refreshStatusSoon();
    if (state.route.jobRef === event.jobRef) refreshJobSoon();
  });
  source.addEventListener('connection', (e) => {
    if (!state.status) return;
    const c = JSON.parse(e.data);
    state.status.connections.controlPlane.reachable = c.controlPlane === 'reachable';
    state.status.connections.mqtt.state = c.mqtt;
    renderConnections();
  });
  source.addEventListener('outbox', (e) => {
    if (!state.status) return;
    state.status.outbox = JSON.parse(e.data);
    renderFooter();
  });
}

function setConnected(on) {
  state.connected = on;
  document.body.classList.toggle('stale', !on);
  renderConnections();
}

// ---------------------------------------------------------------------------------------------------
// Rendering

function render() {
  if (!state.status) return;
  setText($('device-name'), state.status.device.name);
  renderConnections();
  renderPrinters();
  renderWaiting();
  renderRecent();
  renderFooter();
  renderTray();
  if (state.route.view === 'job') refreshJobSoon();
}

function renderConnections() {
  const live = $('connection');
  live.className = `chip ${state.connected ? 'chip-ok' : 'chip-warn'}`;
  setText($('connection-text'), state.connected ? 'Live' : 'Reconnecting…');
  const cp = $('control-plane');
  if (!state.status) return;
  const reachable = state.status.connections.controlPlane.reachable;
  cp.hidden = false;
  cp.className = `chip ${reachable ? 'chip-ok' : 'chip-bad'}`;
  setText($('control-plane-text'), reachable ? 'Control plane reachable' : 'Control plane unreachable');
}

function renderFooter() {
  if (!state.status) return;
  const pending = state.status.outbox.pending ?? 0;
  setText(
    $('outbox'),
    `Results waiting to be sent: ${pending} · Device ${state.status.device.id} · Agent ${state.status.agentVersion}`,
  );
}

function currentJobOf(printer) {
  return state.status.jobs.current.find((j) => j.printer === printer.name) ?? null;
}

/**
 * The road to SEALED: steps reached are done; the next one is in progress, or where the job failed.
 * `reached` (for a failed job) is the last step its evidence proves.
 */
function road(step, reached) {
  const [at] = stepInfo(step);
  const failed = at < 0;
  const last = failed ? reached : at;
  return h(
    'ol',
    { class: 'road', 'aria-label': 'Road to SEALED' },
    ROAD.map((name, i) => {
      const cls = i <= last ? 'done' : i === last + 1 ? (failed ? 'failed' : 'current') : '';
      return h(
        'li',
        { class: cls, 'aria-current': cls === 'current' ? 'step' : null },
        name,
        cls === 'done' ? h('span', { class: 'sr-only', text: ' (done)' }) : null,
        cls === 'current' ? h('span', { class: 'sr-only', text: ' (in progress)' }) : null,
        cls === 'failed' ? h('span', { class: 'sr-only', text: ' (failed here)' }) : null,
      );
    }),
  );
}

function printerCard(p) {
  const s = PRINTER_STATES[p.state] ?? { text: p.state, icon: 'cross', tone: 'bad' };
  const job = currentJobOf(p);
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
      h('dt', { text: 'Scanner' }),
      h('dd', { text: p.scanner ? 'fitted' : 'none (scan at the console)' }),
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

function renderPrinters() {
  if (!state.status) return;
  const list = $('printer-list');
  const printers = state.status.printers;
  $('printers-empty').hidden = printers.length > 0;
  for (const p of printers) {
    const before = state.printerStates.get(p.name);
    if (before !== undefined && before !== p.state)
      announce(`${p.name}: ${PRINTER_STATES[p.state]?.text ?? p.state}${p.detail ? `, ${p.detail}` : ''}`);
    state.printerStates.set(p.name, p.state);
  }
  const shown = printers.map((p) => ({ ...p, statusAt: null, status: null, job: currentJobOf(p) }));
  if (changed('printers', shown)) list.replaceChildren(...printers.map(printerCard));
  for (const p of printers) {
    const card = list.querySelector(`[data-printer="${CSS.escape(p.name)}"] [data-role="updated"]`);
    if (card) setText(card, p.statusAt ? `Status at ${time(p.statusAt)}` : 'No status yet');
  }
}

/** The tray of the desktop app (and the window title) show the worst printer state. */
function renderTray() {
  if (!state.status) return;
  const waiting = state.status.jobs.current.filter((j) => j.waitingFor === 'attestation').length;
  const title = waiting > 0 ? `(${waiting}) Print floor console` : 'Print floor console';
  if (document.title !== title) document.title = title;
}

function waitingJobs() {
  return state.status ? state.status.jobs.current.filter((j) => j.waitingFor) : [];
}

function jobSummary(job) {
  const detail = state.details.get(job.jobRef);
  const attempt = detail?.attempts?.[0];
  return { detail, attempt };
}

function actionButtons(job, attempt) {
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
        onclick: (e) => act(e.currentTarget, 'attest', job.jobRef, { attemptId: job.attemptId }),
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
        onclick: (e) => act(e.currentTarget, 'reprint', job.jobRef, { attemptId: job.attemptId }),
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

function scanForm(job) {
  const input = h('input', {
    id: `scan-${job.jobRef}`,
    name: 'scan',
    autocomplete: 'off',
    required: true,
    maxlength: 2000,
  });
  return h(
    'form',
    {
      class: 'scan-form',
      onsubmit: (e) => {
        e.preventDefault();
        const data = input.value.trim();
        if (data) act(e.submitter ?? null, 'scan', job.jobRef, { data, attemptId: job.attemptId });
      },
    },
    h('label', { for: input.id, text: 'Scan the label (or type its link)' }),
    input,
    h('button', { type: 'submit', class: 'primary' }, 'Submit scan'),
  );
}

function renderWaiting() {
  const jobs = waitingJobs();
  const count = $('waiting-count');
  setText(count, String(jobs.length));
  count.classList.toggle('has-items', jobs.length > 0);
  $('waiting-empty').hidden = jobs.length > 0;
  $('no-supervisors').hidden =
    state.session.required !== false || !jobs.some((j) => j.waitingFor === 'attestation');
  for (const j of jobs) {
    if (state.details.has(j.jobRef) || state.loading.has(j.jobRef)) continue;
    state.loading.add(j.jobRef);
    loadDetail(j.jobRef).then((found) => {
      if (found) state.loading.delete(j.jobRef); // a job unknown here is not asked for again
      renderWaiting();
    });
  }
  const shown = {
    jobs: jobs.map((j) => ({ ...j, attempt: jobSummary(j).attempt?.attemptId ?? null })),
    required: state.session.required,
  };
  if (!changed('waiting', shown)) return;
  const list = $('waiting-list');
  // The buttons pressed are about to go: keep the keyboard user in this list, not at the page top.
  const hadFocus = list.contains(document.activeElement);
  list.replaceChildren(
    ...jobs.map((job) => {
      const { attempt } = jobSummary(job);
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
            ? h(
                'p',
                { class: 'note' },
                `GTIN ${attempt.gtin} · `,
                h('span', { class: 'mono', text: job.jobRef }),
              )
            : null,
          h('p', {}, h('a', { href: `#/jobs/${job.jobRef}`, text: 'Details and evidence' })),
          job.waitingFor === 'attestation' ? actionButtons(job, attempt) : scanForm(job),
        ),
      );
    }),
  );
  if (hadFocus) (list.querySelector('button, input') ?? $('waiting-title')).focus();
}

function renderRecent() {
  const rows = state.status.jobs.recent.slice(0, 20);
  $('recent-empty').hidden = rows.length > 0;
  $('recent').hidden = rows.length === 0;
  if (!changed('recent', rows)) return;
  $('recent')
    .querySelector('tbody')
    .replaceChildren(
      ...rows.map((r) => {
        const [at, label] = stepInfo(r.step);
        const tone = r.step === 'sealed' ? 'ok' : at < 0 ? 'bad' : 'info';
        return h(
          'tr',
          { 'data-job': r.jobRef },
          h('td', { text: time(r.updatedAt) }),
          h('td', { text: r.printer }),
          h('td', { text: r.serial }),
          h('td', {}, h('span', { class: `state tone-${tone}`, text: label })),
          h('td', { text: r.error ?? '' }),
          h('td', {}, h('a', { href: `#/jobs/${r.jobRef}`, class: 'mono', text: r.jobRef })),
        );
      }),
    );
}

// ---------------------------------------------------------------------------------------------------
// The job view

let jobTimer = null;
function refreshJobSoon() {
  clearTimeout(jobTimer);
  jobTimer = setTimeout(() => renderJob(false), 150);
}

function facts(pairs) {
  const items = pairs.filter(([, v]) => v !== undefined && v !== null && v !== '');
  return h(
    'dl',
    { class: 'facts' },
    items.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', {}, v instanceof Node ? v : String(v))]),
  );
}

function mono(text) {
  return text ? h('span', { class: 'mono', text }) : null;
}

function actorText(a) {
  if (a.actor.type !== 'human')
    return `This device (${a.method === 'rfid_readback' ? 'RFID read-back' : 'printer status'})`;
  return a.actor.name ? `Supervisor ${a.actor.name} (${a.actor.id})` : `Supervisor ${a.actor.id}`;
}

function evidenceSection(title, content) {
  return h('section', { 'aria-label': title }, h('h3', { text: title }), content);
}

async function renderJob(focus) {
  const ref = state.route.jobRef;
  const body = $('job-body');
  const data = await loadDetail(ref);
  if (state.route.jobRef !== ref) return;
  setText($('job-title'), `Job ${ref}`);
  if (!data) {
    body.replaceChildren(h('p', { class: 'empty', text: 'This job is unknown to this device.' }));
    if (focus) $('job-title').focus();
    return;
  }
  const a = data.attempts[0];
  const ev = a.evidence ?? {};
  const reached = EVIDENCE_OF_STEP.reduce((n, kind, i) => (kind === null || ev[kind] ? i : n), 0);
  const current = state.status?.jobs.current.find((j) => j.jobRef === ref) ?? null;
  const attestation = ev.attestation;
  const scan = ev.scan_result;
  const spool = ev.spool_receipt;
  const manifest = ev.render_manifest;
  const failure = ev.failure;
  const [, stepLabel] = stepInfo(a.step);
  const tone = a.step === 'sealed' ? 'ok' : stepInfo(a.step)[0] < 0 ? 'bad' : 'info';
  const view = h(
    'div',
    {},
    h(
      'div',
      { class: 'job-head' },
      h(
        'div',
        { class: 'preview' },
        h('img', {
          src: `${data.previewUrl}?attempt=${encodeURIComponent(a.attemptId)}`,
          alt: `QR code of the label for serial ${a.serial}`,
          width: 240,
          height: 240,
          onerror: (e) => e.currentTarget.replaceWith(h('p', { class: 'empty', text: 'No label preview.' })),
        }),
      ),
      h(
        'div',
        {},
        h('p', {}, h('span', { class: `state tone-${tone}`, 'data-role': 'job-step', text: stepLabel })),
        facts([
          ['Serial', a.serial],
          ['GTIN', a.gtin],
          ['Printer', a.printer],
          ['Digital Link', mono(a.digitalLink)],
          ['Claimed', dateTime(a.claimedAt)],
          ['Finished', a.finishedAt ? dateTime(a.finishedAt) : null],
        ]),
        road(a.step, reached),
      ),
    ),
    current?.waitingFor === 'attestation' ? actionButtons(current, a) : null,
    current?.waitingFor === 'scan' ? scanForm(current) : null,
    h(
      'div',
      { class: 'evidence' },
      evidenceSection(
        'Rendered label',
        manifest
          ? facts([
              ['Language', String(manifest.language ?? '').toUpperCase()],
              ['QR proven', manifest.qrVerified ? 'yes, decoded back to the link' : 'no'],
              ['Bytes', manifest.payloadBytes],
              ['SHA-256', mono(manifest.payloadSha256)],
            ])
          : h('p', { class: 'empty', text: 'Not rendered yet.' }),
      ),
      evidenceSection(
        'Spool receipt',
        spool
          ? facts([
              ['Printer', spool.printer],
              ['Transport', spool.transport],
              ['Bytes', spool.bytes],
              ['SHA-256', mono(spool.payloadSha256)],
              ['Reference', mono(spool.reference)],
              ['Sent', dateTime(spool.submittedAt)],
              ['Re-prints', ev.reprints],
            ])
          : h('p', { class: 'empty', text: 'Not sent to the printer yet.' }),
      ),
      evidenceSection(
        'Attestation',
        attestation
          ? facts([
              ['Attested by', actorText(attestation)],
              ['Method', attestation.method],
              ['At', dateTime(attestation.attestedAt)],
              ['Note', attestation.note],
            ])
          : h('p', {
              class: 'empty',
              text: current?.waitingFor === 'attestation' ? 'Waiting for a supervisor.' : 'Not attested yet.',
            }),
      ),
      evidenceSection(
        'Scan result',
        scan
          ? facts([
              ['Scanner', scan.scanner],
              ['Decoded link', mono(scan.decodedLink)],
              ['Link matches', scan.linkMatches ? 'yes' : 'no'],
              ['At', dateTime(scan.scannedAt)],
            ])
          : h('p', { class: 'empty', text: 'Not scanned yet.' }),
      ),
      evidenceSection(
        'EPC (RFID)',
        a.sgtin96Epc
          ? facts([
              ['Written', mono(a.sgtin96Epc)],
              [
                'Printer read-back',
                attestation?.epcReadBack
                  ? mono(attestation.epcReadBack)
                  : attestation?.actor.type === 'human'
                    ? 'not kept (a supervisor attested)'
                    : 'not read back',
              ],
              [
                'Scanner read',
                scan?.epcRead
                  ? h('span', {}, mono(scan.epcRead), scan.epcMatches ? ' (matches)' : ' (differs)')
                  : 'no tag read',
              ],
            ])
          : h('p', { class: 'empty', text: 'No RFID on this label.' }),
      ),
      failure || a.error
        ? evidenceSection(
            'Failure',
            facts([
              ['Reason', failure?.reason ?? a.error?.reason],
              ['Detail', failure?.detail ?? a.error?.message],
            ]),
          )
        : null,
      evidenceSection(
        'Attempts on this device',
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            {},
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Attempt', 'Printer', 'Step', 'Claimed', 'Problem'].map((c) =>
                  h('th', { scope: 'col', text: c }),
                ),
              ),
            ),
            h(
              'tbody',
              {},
              data.attempts.map((t) =>
                h(
                  'tr',
                  {},
                  h('td', {}, mono(t.attemptId)),
                  h('td', { text: t.printer }),
                  h('td', { text: stepInfo(t.step)[1] }),
                  h('td', { text: time(t.claimedAt) }),
                  h('td', { text: t.error ? `${t.error.reason ?? t.error.code}: ${t.error.message}` : '' }),
                ),
              ),
            ),
          ),
        ),
      ),
      evidenceSection(
        'Results sent to the control plane',
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            {},
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['State', 'Delivery', 'Tries', 'Answer'].map((c) => h('th', { scope: 'col', text: c })),
              ),
            ),
            h(
              'tbody',
              {},
              data.results.map((r) =>
                h(
                  'tr',
                  {},
                  h('td', { text: r.status }),
                  h('td', { text: r.delivery }),
                  h('td', { text: r.tries }),
                  h('td', { text: r.error ? `${r.httpStatus ?? ''} ${r.error}` : (r.httpStatus ?? '') }),
                ),
              ),
            ),
          ),
        ),
      ),
    ),
  );
  if (changed(`job:${ref}`, { data, waiting: current?.waitingFor ?? null, required: state.session.required }))
    body.replaceChildren(view);
  if (focus) $('job-title').focus();
}

function route() {
  const m = /^#\/jobs\/([A-Za-z0-9_-]{1,64})$/.exec(location.hash);
  state.route = m ? { view: 'job', jobRef: m[1] } : { view: 'floor', jobRef: null };
  $('toast').hidden = true;
  $('floor-view').hidden = state.route.view !== 'floor';
  $('job-view').hidden = state.route.view !== 'job';
  if (state.route.view === 'job') {
    state.rendered.delete(`job:${state.route.jobRef}`);
    $('job-body').replaceChildren();
    renderJob(true);
  } else {
    document.title = 'Print floor console';
    renderTray();
  }
}

// ---------------------------------------------------------------------------------------------------
// Supervisor actions and the session

const VERBS = { attest: 'attest', reprint: 'ask for a re-print', fail: 'mark a print failed', scan: 'scan' };

async function act(button, kind, jobRef, body) {
  if (kind !== 'scan' && state.session.required && !state.session.token) {
    state.pending = () => act(null, kind, jobRef, body);
    openSignIn(`Sign in to ${VERBS[kind]}.`);
    return;
  }
  if (button) button.disabled = true;
  const r = await api('POST', `/api/jobs/${encodeURIComponent(jobRef)}/${kind}`, body);
  if (button) button.disabled = false;
  if (r.status === 401) {
    signedOut();
    state.pending = () => act(null, kind, jobRef, body);
    openSignIn(`Your session ended. Sign in again to ${VERBS[kind]}.`);
    return;
  }
  if (!r.ok) {
    toast(`Could not ${VERBS[kind]}: ${r.error.message}`);
    refreshStatusSoon(0);
    return;
  }
  const done = {
    attest: 'Attested. The label goes on to the scan.',
    reprint: 'The same label is being printed again.',
    fail: 'Marked failed. The job will be printed again if it has retries left.',
    scan: 'Scan sent.',
  }[kind];
  toast(done, true);
  announce(done);
  refreshStatusSoon(0);
  if (state.session.token) refreshSession();
}

let expiryTimer = null;
function renderSession() {
  const s = state.session;
  const who = $('who');
  const signedIn = Boolean(s.token && s.supervisor);
  who.hidden = !signedIn;
  setText(who, signedIn ? `Signed in: ${s.supervisor.name}` : '');
  $('sign-in').hidden = signedIn || s.required === false;
  $('sign-out').hidden = !signedIn;
  clearTimeout(expiryTimer);
  if (signedIn && s.expiresAt) {
    const ms = Math.max(1000, Date.parse(s.expiresAt) - Date.now() + 500);
    expiryTimer = setTimeout(refreshSession, Math.min(ms, 2 ** 31 - 1));
  }
  if (state.status) {
    renderWaiting();
    if (state.route.view === 'job') refreshJobSoon();
  }
}

function signedOut() {
  state.session.token = null;
  state.session.supervisor = null;
  state.session.expiresAt = null;
  renderSession();
}

async function refreshSession() {
  const r = await api('GET', '/api/session');
  if (!r.ok) return;
  const wasSignedIn = Boolean(state.session.token);
  state.session.required = r.data.required;
  if (state.session.token && !r.data.supervisor) {
    signedOut();
    if (wasSignedIn) announce('You were signed out after a while without activity.');
    return;
  }
  state.session.supervisor = r.data.supervisor;
  state.session.expiresAt = r.data.expiresAt;
  renderSession();
}

function openSignIn(reason) {
  const dialog = $('sign-in-dialog');
  setText($('sign-in-reason'), reason ?? 'Enter your PIN, or scan your badge.');
  setText($('sign-in-error'), '');
  $('pin').value = '';
  if (!dialog.open) dialog.showModal();
  $('pin').focus();
}

async function submitSignIn(e) {
  e.preventDefault();
  const pin = $('pin').value.trim();
  if (pin.length < 4) {
    setText($('sign-in-error'), 'A PIN has at least 4 digits.');
    $('pin').focus();
    return;
  }
  const submit = e.submitter;
  if (submit) submit.disabled = true;
  const r = await api('POST', '/api/session', { pin });
  if (submit) submit.disabled = false;
  $('pin').value = '';
  if (!r.ok) {
    const message =
      r.status === 429
        ? `Too many wrong PINs. Try again in ${r.retryAfter || 60} seconds.`
        : r.status === 401
          ? 'Wrong PIN. Try again.'
          : r.error.message;
    setText($('sign-in-error'), message);
    $('pin').focus();
    return;
  }
  state.session.token = r.data.token;
  state.session.supervisor = r.data.supervisor;
  state.session.expiresAt = r.data.expiresAt;
  $('sign-in-dialog').close();
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

let failRef = null;
let failAttempt = null;
function openFail(jobRef, attemptId, what) {
  if (state.session.required && !state.session.token) {
    state.pending = () => openFail(jobRef, attemptId, what);
    openSignIn(`Sign in to ${VERBS.fail}.`);
    return;
  }
  failRef = jobRef;
  failAttempt = attemptId;
  setText($('fail-job'), `The print of ${what}.`);
  $('fail-form').reset();
  $('fail-dialog').showModal();
  $('fail-form').querySelector('input[name="reason"]:checked')?.focus();
}

function submitFail(e) {
  e.preventDefault();
  const form = $('fail-form');
  const reason = form.querySelector('input[name="reason"]:checked')?.value ?? 'operator_other';
  const detail = $('fail-detail').value.trim();
  $('fail-dialog').close();
  act(null, 'fail', failRef, { reason, attemptId: failAttempt, ...(detail ? { detail } : {}) });
}

// ---------------------------------------------------------------------------------------------------
// Theme

/** Sets the effective theme on <html>: the supervisor's choice, else the system's (one palette in CSS). */
function applyTheme(theme) {
  const chosen = theme === 'light' || theme === 'dark' ? theme : null;
  const dark = chosen ? chosen === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  $('theme-toggle').setAttribute('aria-pressed', String(dark));
  desktop?.setTheme?.(chosen ?? 'system').catch(() => undefined);
}

function toggleTheme() {
  const dark = $('theme-toggle').getAttribute('aria-pressed') === 'true';
  const theme = dark ? 'light' : 'dark';
  try {
    localStorage.setItem(THEME_KEY, theme);
  } catch {
    // storage may be off; the toggle still works for this page
  }
  applyTheme(theme);
}

function storedTheme() {
  try {
    return localStorage.getItem(THEME_KEY);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------------
// Start

function start() {
  applyTheme(storedTheme());
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => applyTheme(storedTheme()));
  $('theme-toggle').addEventListener('click', toggleTheme);
  $('sign-in').addEventListener('click', () => openSignIn());
  $('sign-out').addEventListener('click', signOut);
  $('sign-in-form').addEventListener('submit', submitSignIn);
  $('sign-in-cancel').addEventListener('click', () => {
    state.pending = null;
    $('sign-in-dialog').close();
  });
  $('sign-in-dialog').addEventListener(
    'close',
    () => (state.pending = state.session.token ? state.pending : null),
  );
  for (const b of document.querySelectorAll('.pinpad button')) {
    b.addEventListener('click', () => {
      const pin = $('pin');
      if (b.dataset.digit) pin.value = (pin.value + b.dataset.digit).slice(0, 64);
      else if (b.dataset.pin === 'back') pin.value = pin.value.slice(0, -1);
      else pin.value = '';
      setText($('sign-in-error'), '');
    });
  }
  $('pin').addEventListener('input', () => setText($('sign-in-error'), ''));
  $('toast-close').addEventListener('click', () => ($('toast').hidden = true));
  $('fail-form').addEventListener('submit', submitFail);
  $('fail-cancel').addEventListener('click', () => $('fail-dialog').close());
  window.addEventListener('hashchange', route);
  if (desktop?.info) {
    desktop
      .info()
      .then((i) => setText($('versions'), `Desktop app ${i.appVersion} · Electron ${i.electronVersion}`))
      .catch(() => undefined);
  }
  refreshSession();
  route();
  connect();
}

start();
