import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { startTestControlPlane } from '@dpp/testkit';
import { loadTest } from './lib/autocannon.js';
import type { BenchRow } from './lib/table.js';

/** Express 5 alone reaches about a fifth of bare node:http here; the chain must keep most of Express. */
const TARGET_RATIO = 0.06;
const TARGET_RATIO_EXPRESS = 0.3;

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/**
 * Requests per second of an authenticated, rate-limited GET through the whole middleware chain
 * (correlation id, metrics, auth with a store lookup, rate limit, validation, handler, JSON), next to
 * a bare node:http server answering the same bytes, measured in the same run.
 */
export async function run(): Promise<BenchRow[]> {
  const t = await startTestControlPlane({ env: { RATE_LIMITS: 'mid_market=1000000000/60' } });
  try {
    const list = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.a.admin });
    const id = list.body.data[0].id as string;
    const path = `/api/v2/api-keys/${id}`;
    const sample = await t.call('GET', path, { key: t.tenants.a.admin });
    if (sample.status !== 200) throw new Error(`sample request answered ${sample.status}`);
    const bytes = Buffer.from(sample.text);

    const bare = http.createServer((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': bytes.length,
      });
      res.end(bytes);
    });
    const barePort = await listen(bare);
    const app = express();
    app.set('etag', false);
    app.get(path, (_req, res) => {
      res.type('application/json').send(bytes);
    });
    const plainExpress = http.createServer(app);
    const expressPort = await listen(plainExpress);
    try {
      const peer = await loadTest(`http://127.0.0.1:${barePort}${path}`);
      const expressPeer = await loadTest(`http://127.0.0.1:${expressPort}${path}`);
      const ours = await loadTest(`${t.url}${path}`, {
        headers: { authorization: `Bearer ${t.tenants.a.admin}` },
      });
      if (ours.non2xx > 0 || ours.errors > 0)
        throw new Error(`chain answered ${ours.non2xx} non-2xx, ${ours.errors} errors`);
      const ratio = ours.requestsPerSecond / peer.requestsPerSecond;
      return [
        {
          work: 'authenticated rate-limited GET, whole chain (SQLite)',
          figure: ours.requestsPerSecond,
          unit: 'req/s',
          peer: { label: 'bare node:http, same bytes', figure: peer.requestsPerSecond },
          ratio,
          target: `>= ${TARGET_RATIO} of bare node:http`,
          met: ratio >= TARGET_RATIO,
        },
        {
          work: '  same GET vs plain Express 5 route',
          figure: ours.requestsPerSecond,
          unit: 'req/s',
          peer: { label: 'express 5, same bytes', figure: expressPeer.requestsPerSecond },
          ratio: ours.requestsPerSecond / expressPeer.requestsPerSecond,
          target: `>= ${TARGET_RATIO_EXPRESS} of plain Express`,
          met: ours.requestsPerSecond / expressPeer.requestsPerSecond >= TARGET_RATIO_EXPRESS,
        },
        {
          work: '  same GET, latency p99',
          figure: ours.latencyP99Ms,
          unit: 'ms',
          peer: { label: 'bare p99', figure: peer.latencyP99Ms },
          target: '<= 50 ms at 50 connections',
          met: ours.latencyP99Ms <= 50,
        },
      ];
    } finally {
      bare.close();
      plainExpress.close();
    }
  } finally {
    await t.close();
  }
}
