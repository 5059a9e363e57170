// @ts-check
/**
 * Live updates: the server-sent events of `/api/events` (the whole status on connect, then printers, job
 * steps, connections and the outbox as they change), reconnecting slower each time the agent is gone.
 */
import { announce } from './dom.js';
import { emit, state } from './model.js';
import { refreshSession } from './session.js';

/** @typedef {import('./model.js').PrinterView} PrinterView */
/** @typedef {import('./model.js').JobStepEvent} JobStepEvent */

/** @type {EventSource | null} */
let source = null;
let retry = 1000;

/** @param {boolean} on */
function setConnected(on) {
  state.connected = on;
  document.body.classList.toggle('stale', !on);
  emit('connections');
}

/** @param {JobStepEvent} event */
function sayStep(event) {
  if (event.step === 'awaiting_attestation')
    announce(`A print on ${event.printer} waits for your attestation`);
  if (event.step === 'sealed') announce(`Job ${event.jobRef} on ${event.printer} is sealed`);
  if (event.step === 'failed')
    announce(`Job ${event.jobRef} on ${event.printer} failed: ${event.detail ?? ''}`);
}

/**
 * Listens to one event, its data parsed.
 * @template T
 * @param {EventSource} es
 * @param {string} name
 * @param {(data: T) => void} fn
 */
function listen(es, name, fn) {
  es.addEventListener(name, (e) => fn(JSON.parse(/** @type {MessageEvent<string>} */ (e).data)));
}

export function connect() {
  source?.close();
  const es = new EventSource('/api/events');
  source = es;
  es.addEventListener('open', () => {
    retry = 1000;
    setConnected(true);
    // Sessions live in the agent's memory: after its restart the supervisor must sign in again.
    if (state.session.token) refreshSession();
  });
  es.addEventListener('error', () => {
    setConnected(false);
    if (es.readyState === EventSource.CLOSED) {
      // The browser gave up (the agent restarted and answered an error): try again, slower each time.
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 15_000);
    }
  });
  listen(es, 'status', (/** @type {import('./model.js').AgentStatusView} */ status) => {
    state.status = status;
    emit('status');
  });
  listen(es, 'printer', (/** @type {PrinterView} */ view) => {
    if (!state.status) return;
    const list = state.status.printers;
    const i = list.findIndex((p) => p.name === view.name);
    if (i >= 0) list[i] = view;
    else list.push(view);
    emit('printer');
  });
  listen(es, 'job', (/** @type {JobStepEvent} */ event) => {
    sayStep(event);
    state.details.delete(event.jobRef);
    state.loading.delete(event.jobRef);
    emit('job', event.jobRef);
  });
  listen(es, 'connection', (/** @type {{ controlPlane: string, mqtt: any }} */ c) => {
    if (!state.status) return;
    state.status.connections.controlPlane.reachable = c.controlPlane === 'reachable';
    state.status.connections.mqtt.state = c.mqtt;
    emit('connections');
  });
  listen(es, 'outbox', (/** @type {Record<string, number>} */ counts) => {
    if (!state.status) return;
    state.status.outbox = counts;
    emit('outbox');
  });
}
