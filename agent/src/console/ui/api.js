// @ts-check
/**
 * The agent's local console API: every call the page makes, with the supervisor's session token when there
 * is one. Answers are `{ ok, status, data, error }`; a network failure is status 0, never a throw.
 */
import { emit, state } from './model.js';

/**
 * @template T
 * @typedef {object} Answer
 * @property {boolean} ok
 * @property {number} status 0 when the agent did not answer
 * @property {T | undefined} data
 * @property {{ code: string, message: string }} error
 * @property {number} retryAfter seconds, from Retry-After (0 when none)
 */

/**
 * @template [T=unknown]
 * @param {'GET' | 'POST' | 'DELETE'} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<Answer<T>>}
 */
export async function api(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (state.session.token) headers.authorization = `Bearer ${state.session.token}`;
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    return {
      ok: false,
      status: 0,
      data: undefined,
      error: { code: 'NETWORK', message: 'the agent does not answer' },
      retryAfter: 0,
    };
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

/** @type {ReturnType<typeof setTimeout> | undefined} */
let statusTimer;
/** Asks for the whole status again after `delay` ms (calls close together make one request). */
export function refreshStatusSoon(delay = 120) {
  clearTimeout(statusTimer);
  statusTimer = setTimeout(async () => {
    /** @type {Answer<import('./model.js').AgentStatusView>} */
    const r = await api('GET', '/api/status');
    if (r.ok && r.data) {
      state.status = r.data;
      emit('status');
    }
  }, delay);
}

/** A job this device worked on, kept in `state.details`; null when the agent does not know it. */
/** @param {string} jobRef */
export async function loadDetail(jobRef) {
  /** @type {Answer<import('./model.js').AgentJobView>} */
  const r = await api('GET', `/api/jobs/${encodeURIComponent(jobRef)}`);
  if (r.ok && r.data) state.details.set(jobRef, r.data);
  else if (r.status === 404) state.details.delete(jobRef);
  return r.ok ? (r.data ?? null) : null;
}
