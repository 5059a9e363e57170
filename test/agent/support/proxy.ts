/**
 * A TCP proxy in front of the control plane, so a test can cut the agent off (refuse and drop every
 * connection) and let it back in, or hold the control plane's answers for a while (a control plane that
 * pauses), while the control plane itself keeps running.
 */
import net from 'node:net';

export interface CutProxy {
  url: string;
  port: number;
  /** Drops every connection and refuses new ones until `restore`. */
  cut(): void;
  restore(): void;
  /** Holds every answer of the control plane for `ms` (what it sends meanwhile arrives after that, in order). */
  stall(ms: number): void;
  readonly isCut: boolean;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<CutProxy> {
  const sockets = new Set<net.Socket>();
  let cut = false;
  let stalledUntil = 0;
  const server = net.createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = net.connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    // Answers go through a queue while a stall holds them, and out later in their order.
    const queue: Buffer[] = [];
    let release: NodeJS.Timeout | null = null;
    let ended = false;
    const drop = () => {
      if (release) clearTimeout(release);
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    const flush = () => {
      release = null;
      for (const chunk of queue.splice(0)) client.write(chunk);
      if (ended) client.end();
    };
    upstream.on('data', (chunk: Buffer) => {
      if (release === null && Date.now() >= stalledUntil) return void client.write(chunk);
      queue.push(chunk);
      release ??= setTimeout(flush, Math.max(0, stalledUntil - Date.now()));
    });
    upstream.on('end', () => {
      ended = true;
      if (release === null) client.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    cut: () => {
      cut = true;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    restore: () => {
      cut = false;
    },
    stall: (ms) => {
      stalledUntil = Date.now() + ms;
    },
    get isCut() {
      return cut;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
