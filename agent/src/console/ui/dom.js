// @ts-check
/** DOM helpers: elements built from nodes (never from HTML text), icons, times, and what the page says aloud. */

const ICONS = {
  check: 'M4.5 12.5l5 5L19.5 7',
  play: 'M7 4.5v15l12-7.5z',
  warn: 'M12 3.5L2.5 20.5h19zM12 10v5M12 17.5v.5',
  pause: 'M8.5 5v14M15.5 5v14',
  cross: 'M6 6l12 12M18 6L6 18',
};
/** @typedef {keyof typeof ICONS} IconName */

/** The page's element with this id (the page is fixed: a missing one is a bug, and fails loudly). */
/** @template {HTMLElement} [E=HTMLElement] @param {string} id @returns {E} */
export function $(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return /** @type {E} */ (el);
}

/** @typedef {Node | string | number | null | undefined | false} Child */
/** @typedef {Record<string, unknown>} Props */

/**
 * `h('p', { class: 'x', text: 'y' }, child...)`: DOM built from nodes, never from HTML text. `on<event>`
 * props are listeners; `null`, `undefined` and `false` props and children are left out.
 * @template {keyof HTMLElementTagNameMap} T
 * @param {T} tag
 * @param {Props} [props]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[T]}
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = String(value);
    else if (key === 'text') el.textContent = String(value);
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** @param {IconName} name */
export function icon(name) {
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

/** @param {Element} el @param {string} text */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** @param {string | null | undefined} iso */
export function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString([], { hour12: false });
}

/** @param {string | null | undefined} iso */
export function dateTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString([], { hour12: false });
}

/** Says a text to screen readers (the page's live region). @param {string} text */
export function announce(text) {
  const el = $('announcer');
  el.textContent = '';
  // A fresh text node after a tick: screen readers announce repeated messages too.
  setTimeout(() => (el.textContent = text), 50);
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let toastTimer;
/** Shows a message for six seconds: a problem, or (`ok`) a success. @param {string} text */
export function toast(text, ok = false) {
  const el = $('toast');
  $('toast-text').textContent = text;
  el.className = ok ? 'toast toast-ok' : 'toast';
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (el.hidden = true), 6000);
}

/** A definition list of the pairs whose value is there. @param {Array<[string, Node | string | number | null | undefined]>} pairs */
export function facts(pairs) {
  const items = pairs.filter(([, v]) => v !== undefined && v !== null && v !== '');
  return h(
    'dl',
    { class: 'facts' },
    items.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', {}, v instanceof Node ? v : String(v))]),
  );
}

/** @param {string | null | undefined} text */
export function mono(text) {
  return text ? h('span', { class: 'mono', text }) : null;
}
