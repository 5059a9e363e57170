import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebhookSender } from './sender.js';

/** A receiver that reads each request and never answers it. */
async function silentReceiver(): Promise<{ url: URL; received: Promise<void>; close: () => Promise<void> }> {
  let arrived: () => void;
  const received = new Promise<void>((r) => (arrived = r));
  const server = http.createServer((req) => {
    arrived();
    req.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/hook`),
    received,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('WebhookSender', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives up on a receiver that does not answer at its timeout, and reports the attempt as long as the timeout', async () => {
    const rx = await silentReceiver();
    const sender = new WebhookSender({ maxSockets: 1 });
    try {
      // The clock moves only when the test moves it: the attempt's duration is the timeout's, exactly.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
      const sent = sender.send({ url: rx.url, body: '{}', headers: {}, timeoutMs: 400 });
      // vi.waitFor would move the fake clock while it waits.
      await rx.received;
      await vi.advanceTimersByTimeAsync(399);
      let settled = false;
      void sent.then(() => (settled = true));
      await Promise.resolve();
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await sent).toEqual({ statusCode: null, error: 'timeout after 400 ms', durationMs: 400 });
    } finally {
      vi.useRealTimers();
      sender.close();
      await rx.close();
    }
  });
});
