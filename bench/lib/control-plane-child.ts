import { startTestControlPlane } from '@dpp/testkit';

/**
 * A control plane in its own process, so a benchmark can read the server's memory alone. Started with
 * `fork` and an IPC channel: it answers `ready` with its URL and an admin key, samples its RSS every
 * 10 ms, and on request resets or reports the peak since the last reset. Both collect garbage first
 * and report the heap still in use, which is what a leak would grow.
 *
 * Messages in: { type: 'reset' } | { type: 'peak' } | { type: 'stop' }.
 * Messages out: { type: 'ready', url, key } | { type: 'reset', rss, heapUsed } |
 * { type: 'peak', peak, heapUsed, maxRss }.
 */
type Message = { type: 'reset' } | { type: 'peak' } | { type: 'stop' };

const t = await startTestControlPlane({ env: { RATE_LIMITS: 'mid_market=1000000000/60' } });
const rss = () => process.memoryUsage().rss;
let peak = rss();
const sampler = setInterval(() => {
  peak = Math.max(peak, rss());
}, 10);
const send = (m: Record<string, unknown>) => process.send?.(m);
/** A full collection (the process runs with --expose-gc), so heapUsed is what is really retained. */
const gc = () => (globalThis as { gc?: () => void }).gc?.();

process.on('message', (m: Message) => {
  if (m.type === 'reset') {
    gc();
    peak = rss();
    send({ type: 'reset', rss: peak, heapUsed: process.memoryUsage().heapUsed });
  } else if (m.type === 'peak') {
    peak = Math.max(peak, rss());
    const at = peak;
    gc();
    send({
      type: 'peak',
      peak: at,
      heapUsed: process.memoryUsage().heapUsed,
      maxRss: process.resourceUsage().maxRSS * 1024,
    });
  } else if (m.type === 'stop') {
    clearInterval(sampler);
    void t.close().then(() => process.exit(0));
  }
});
send({ type: 'ready', url: t.url, key: t.tenants.a.admin });
