// @ts-check
/** The road to SEALED, drawn as an ordered list: steps done, the one in progress, or where a job failed. */
import { h } from './dom.js';
import { ROAD, stepInfo } from './model.js';

/**
 * `reached` (for a failed job) is the last step its evidence proves.
 * @param {string} step the agent's step
 * @param {number} reached
 */
export function road(step, reached) {
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
