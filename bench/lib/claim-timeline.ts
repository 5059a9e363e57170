import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** A claim call as the control plane's server saw it: read (its `request` event) and answered (`finish`). */
interface Served {
  read: number;
  answered: number;
}

/**
 * What the control plane's server did with the first claims of a floor, in ms since the go: when the devices'
 * connections were accepted, and how the first claim on each was served.
 */
export interface StartBurst {
  /** When the last of the first `devices` connections was accepted. */
  acceptedBy: number;
  /** The first claim call on each of those connections (each device's first), in the order they were read. */
  claims: number;
  firstRead: number;
  lastAnswered: number;
  /** Each claim's time from read to answer: p50 and the longest. */
  serviceP50: number;
  serviceMax: number;
  /** Claims (after the first) read only once the claim before them was answered: served one after another. */
  readAfterTheOneBefore: number;
}

/**
 * Records, on the control plane's own server, each accepted connection and each claim call (`path`, POST) with
 * when it was read and when its answer went out, from `start()` on: the floor's start burst as the server saw it,
 * beside the devices' own latencies (which also count the devices' thread).
 */
export class ClaimTimeline {
  private since = 0;
  /** Connections in the order accepted, each with its first claim once answered. */
  private readonly connections = new Map<Socket, { accepted: number; first?: Served; claimed?: true }>();
  private readonly onConnection = (socket: Socket) =>
    this.connections.set(socket, { accepted: performance.now() - this.since });
  private readonly onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const connection = this.connections.get(req.socket);
    if (!connection || connection.claimed || req.method !== 'POST' || req.url !== this.path) return;
    connection.claimed = true;
    const read = performance.now() - this.since;
    res.once('finish', () => (connection.first = { read, answered: performance.now() - this.since }));
  };

  constructor(
    private readonly server: Server,
    private readonly path = '/api/v2/aidc/jobs/claims',
  ) {}

  /** From now on (the floor's go). */
  start(): void {
    this.since = performance.now();
    this.server.on('connection', this.onConnection);
    this.server.on('request', this.onRequest);
  }

  /** Stops recording; the first `devices` connections and their first claims, or undefined when there were fewer. */
  stop(devices: number): StartBurst | undefined {
    this.server.off('connection', this.onConnection);
    this.server.off('request', this.onRequest);
    const opened = [...this.connections.values()].slice(0, devices);
    const claims = opened.flatMap((c) => (c.first ? [c.first] : [])).sort((a, b) => a.read - b.read);
    if (claims.length < devices) return undefined;
    const service = claims.map((c) => c.answered - c.read).sort((a, b) => a - b);
    let after = 0;
    for (let i = 1; i < claims.length; i++) if (claims[i]!.read >= claims[i - 1]!.answered) after += 1;
    return {
      acceptedBy: Math.max(...opened.map((c) => c.accepted)),
      claims: claims.length,
      firstRead: claims[0]!.read,
      lastAnswered: Math.max(...claims.map((c) => c.answered)),
      serviceP50: service[Math.ceil(service.length / 2) - 1]!,
      serviceMax: service[service.length - 1]!,
      readAfterTheOneBefore: after,
    };
  }
}
