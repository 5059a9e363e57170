/**
 * A TCP proxy in front of the control plane, so a test can cut the agent off (refuse and drop every
 * connection) and let it back in, while the control plane itself keeps running.
 */
import net from 'node:net';

export interface CutProxy {
  url: string;
  port: number;
  /** Drops every connection and refuses new ones until `restore`. */
  cut(): void;
  restore(): void;
  readonly isCut: boolean;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<CutProxy> {
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = net.connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
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
    get isCut() {
      return cut;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
