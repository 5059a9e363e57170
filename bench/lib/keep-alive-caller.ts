/**
 * How the load's simulated devices call the control plane: `httpCaller` over node:http on kept-alive
 * connections, instead of over fetch. In a CPU profile of the devices' thread on the flat-out floor, fetch
 * (undici: its streams, abort signals, request objects) was 44 % of the thread's busy time, on the two cores
 * the control plane and PostgreSQL use too; a device on a floor runs on its own machine. The calls and their
 * answers are the same (docs/benchmarks.md, round 13).
 */
import http from 'node:http';
import { type ApiCaller, type HttpTransport, httpCaller } from '@dpp/control-plane';

/** `call` for a control plane at `baseUrl`, over connections kept alive between calls. */
export function keepAliveCaller(baseUrl: string): ApiCaller {
  const agent = new http.Agent({ keepAlive: true });
  const transport: HttpTransport = (method, url, headers, body) =>
    new Promise((resolve, reject) => {
      const sent =
        body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
      const req = http.request(url, { method, headers: sent, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('error', reject);
        res.once('end', () => {
          const answered = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value])
              answered.append(name, v);
          }
          resolve({
            status: res.statusCode!,
            headers: answered,
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
      });
      req.once('error', reject);
      req.end(body);
    });
  return httpCaller(baseUrl, transport);
}
