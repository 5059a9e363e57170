// @ts-check
/*
 * The print-floor console page: plain JavaScript modules, typed by JSDoc and checked by TypeScript
 * (agent/tsconfig.ui.json), no framework, no build step, no inline code (the page runs under
 * `script-src 'self'`). Everything it shows comes from the agent's local console API: `/api/status` and
 * the server-sent events of `/api/events` (live.js), `/api/jobs/{ref}` for a job's evidence (job-view.js),
 * `/api/session` for the supervisor's sign-in (session.js).
 *
 * This module routes between the floor and a job, and decides what to redraw when something changed:
 * the other modules emit changes (model.js) and never import a view.
 */
import { refreshStatusSoon } from './api.js';
import { startActions } from './actions.js';
import { $, setText } from './dom.js';
import {
  renderConnections,
  renderFloor,
  renderFooter,
  renderPrinters,
  renderTray,
  renderWaiting,
} from './floor.js';
import { refreshJobSoon, renderJob } from './job-view.js';
import { connect } from './live.js';
import { on, state } from './model.js';
import { startSession } from './session.js';
import { desktopBridge, startTheme } from './theme.js';

function route() {
  const m = /^#\/jobs\/([A-Za-z0-9_-]{1,64})$/.exec(location.hash);
  state.route = m?.[1] ? { view: 'job', jobRef: m[1] } : { view: 'floor', jobRef: null };
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

/** The job view follows whatever changed, when it is the one shown. */
function jobViewFollows() {
  if (state.route.view === 'job') refreshJobSoon();
}

function redrawOnChange() {
  on('status', () => {
    renderFloor();
    jobViewFollows();
  });
  on('printer', () => {
    renderPrinters();
    renderTray();
  });
  on('connections', renderConnections);
  on('outbox', renderFooter);
  on('session', () => {
    if (!state.status) return;
    renderWaiting();
    jobViewFollows();
  });
  on('job', (jobRef) => {
    refreshStatusSoon();
    if (state.route.jobRef === jobRef) refreshJobSoon();
  });
}

function start() {
  redrawOnChange();
  startTheme();
  startSession();
  startActions();
  $('toast-close').addEventListener('click', () => ($('toast').hidden = true));
  window.addEventListener('hashchange', route);
  desktopBridge()
    ?.info?.()
    .then((i) => setText($('versions'), `Desktop app ${i.appVersion} · Electron ${i.electronVersion}`))
    .catch(() => undefined);
  route();
  connect();
}

start();
