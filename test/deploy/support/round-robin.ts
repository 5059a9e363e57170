/**
 * The reverse proxy of the compose file, natively: every HTTP request goes to the next replica in turn (as
 * nginx's default upstream does), with X-Forwarded-For. Remembers which replica served which path.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobin {
  url: string;
  /** Per upstream URL, the paths it served. */
  served: Map<string, string[]>;
  close(): Promise<void>;
}

export async function roundRobin(upstreams: string[]): Promise<RoundRobin> {
  const served = new Map(upstreams.map((u) => [u, [] as string[]]));
  let next = 0;
  const server = http.createServer((req, res) => {
    const target = new URL(req.url ?? '/', upstreams[next++ % upstreams.length]);
    served.get(target.origin)?.push(`${req.method} ${target.pathname}`);
    const forwarded = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
    const out = http.request(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host, 'x-forwarded-for': forwarded } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
