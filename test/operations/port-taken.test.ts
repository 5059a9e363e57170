import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort, loadConfig, startControlPlane, type ControlPlane } from '@dpp/control-plane';

/** How many of each kind of handle the process holds (timers, sockets, workers, ...). */
function handles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/** The kinds of handle the process holds more of now than in `before`, with how many more. */
function grownSince(before: Record<string, number>): Record<string, number> {
  const grown: Record<string, number> = {};
  for (const [kind, n] of Object.entries(handles()))
    if (n > (before[kind] ?? 0)) grown[kind] = n - (before[kind] ?? 0);
  return grown;
}

/** Lets closed handles leave the list (a socket's close and a worker's exit land a turn or two later). */
const settle = () => new Promise((r) => setTimeout(r, 200));

/**
 * A port that is already taken stops the start with EADDRINUSE, and what the start had begun (the store and its
 * checkpointer, the workers and their timers, the embedded broker) stops with it: a supervisor or a test that
 * starts again on another port does not leave a second set of workers running on the same store.
 */
describe('a control plane whose port is taken', () => {
  let dir: string;
  let blocker: net.Server;
  let taken: number;
  let started: ControlPlane | undefined;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dpp-port-'));
    blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    taken = (blocker.address() as net.AddressInfo).port;
  });
  afterEach(async () => {
    await started?.close();
    started = undefined;
    await new Promise((r) => blocker.close(r));
    await fs.rm(dir, { recursive: true, force: true });
  });

  const configWith = (port: number, mqttPort: number) =>
    loadConfig({
      DPP_ENV: 'test',
      PORT: String(port),
      HOST: '127.0.0.1',
      MQTT_PORT: String(mqttPort),
      DATA_DIR: dir,
      LOG_LEVEL: 'silent',
    });

  it.each([
    ['HTTP', () => configWith(taken, 0)],
    ['embedded MQTT', async () => configWith(await freePort(), taken)],
  ])('fails on a taken %s port with EADDRINUSE and leaves nothing running', async (_, config) => {
    const before = handles();
    await expect(startControlPlane(await config())).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await settle();
    expect(grownSince(before)).toEqual({});

    // The same data directory starts on free ports afterwards and answers.
    started = await startControlPlane(configWith(await freePort(), await freePort()));
    const res = await fetch(`${started.url}/healthz`);
    expect(res.status).toBe(200);
  });
});
