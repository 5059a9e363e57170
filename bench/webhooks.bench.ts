import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { signWebhook } from '@dpp/shared';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import type { BenchRow } from './lib/table.js';

const BACKLOG = 10_000;
const FLOW_EVENTS = 1_000;
const FLOW_ENDPOINTS = 8;
/** The worker's defaults: 8 attempts in flight per endpoint, 64 overall. */
const PER_ENDPOINT = 8;
const OVERALL = 64;
const TARGET_DRAIN_SECONDS = 20;
/** Each delivery is a claim share, an endpoint read, a signature, a POST and a recorded transaction. */
const TARGET_RATIO = 0.1;

interface Receiver {
  url: string;
  count: number;
  /** Resolves when `n` requests have been answered in total. */
  until(n: number): Promise<void>;
  close(): void;
}

/** A bare receiver on 127.0.0.1 that answers 204 at once, so the figures are the sender's. */
async function startReceiver(): Promise<Receiver> {
  const waiters: { n: number; resolve: () => void }[] = [];
  const r: Receiver = {
    url: '',
    count: 0,
    until: (n) => new Promise((resolve) => (r.count >= n ? resolve() : waiters.push({ n, resolve }))),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(204).end();
      r.count += 1;
      for (const w of waiters.filter((x) => x.n <= r.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return r;
}

/**
 * Queues events exactly as `recordEvent` writes them (an `events` row and an `event` outbox row per
 * event, in the emitter's transaction), 500 per transaction. The control plane's package door does not
 * export `recordEvent`, so its two inserts are repeated here.
 */
async function queueEvents(t: TestControlPlane, tenantId: string, count: number): Promise<void> {
  const db = t.cp.store.db;
  for (let done = 0; done < count; done += 500) {
    const n = Math.min(500, count - done);
    await db.transaction().execute(async (trx) => {
      const at = new Date().toISOString();
      const events = Array.from({ length: n }, (_, i) => ({
        id: randomUUID(),
        data: { id: `p-${done + i}`, gtin: '09506000134352', category: 'electronics' },
      }));
      await trx
        .insertInto('events')
        .values(
          events.map((e) => ({
            id: e.id,
            tenant_id: tenantId,
            type: 'product.created',
            resource_type: 'product',
            resource_id: e.data.id,
            data: JSON.stringify(e.data),
            correlation_id: null,
            occurred_at: at,
          })),
        )
        .execute();
      await trx
        .insertInto('outbox')
        .values(
          events.map((e) => ({
            id: randomUUID(),
            tenant_id: tenantId,
            topic: 'event',
            payload: JSON.stringify({ eventId: e.id, type: 'product.created', occurredAt: at, data: e.data }),
            created_at: at,
            available_at: at,
            attempts: 0,
            locked_until: null,
            last_error: null,
            processed_at: null,
          })),
        )
        .execute();
    });
  }
}

async function subscribe(t: TestControlPlane, url: string): Promise<string> {
  const r = await t.call('POST', '/api/v2/webhooks', {
    key: t.tenants.a.admin,
    body: { url, events: ['product.created'] },
  });
  if (r.status !== 201) throw new Error(`subscribe answered ${r.status}: ${r.text}`);
  return r.body.data.secret as string;
}

/** Queues `events` for `endpoints` endpoints with the workers off, then times the drain once they start. */
async function drain(endpoints: number, events: number): Promise<{ seconds: number; secret: string }> {
  const rx = await startReceiver();
  const t = await startTestControlPlane({ outbox: { start: false }, webhooks: { deliver: false } });
  try {
    let secret = '';
    for (let i = 0; i < endpoints; i++) secret = await subscribe(t, `${rx.url}/e${i}`);
    await queueEvents(t, t.tenants.a.id, events);
    const started = performance.now();
    t.cp.dispatcher.start();
    t.cp.webhooks.start();
    await rx.until(endpoints * events);
    const seconds = (performance.now() - started) / 1000;
    if (rx.count !== endpoints * events)
      throw new Error(`receiver got ${rx.count}, expected ${endpoints * events}`);
    return { seconds, secret };
  } finally {
    await t.close();
    rx.close();
  }
}

/** The same signed POSTs from a bare keep-alive client at the worker's per-endpoint concurrency. */
async function bareClient(url: string, secret: string, total: number, concurrency: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const body = JSON.stringify({
    id: randomUUID(),
    type: 'product.created',
    timestamp: new Date().toISOString(),
    apiVersion: '2026-11-01',
    data: { id: 'p-1', gtin: '09506000134352', category: 'electronics' },
  });
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const headers = signWebhook({
        id: randomUUID(),
        timestamp: Math.floor(Date.now() / 1000),
        body,
        secret,
      });
      const req = http.request(url, {
        method: 'POST',
        agent,
        headers: {
          ...headers,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
        },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  let sent = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < total) {
        sent += 1;
        await post();
      }
    }),
  );
  agent.destroy();
  return total / ((performance.now() - started) / 1000);
}

/**
 * Webhook delivery throughput through the whole pipeline (outbox fan-out, claim, sign, POST over
 * keep-alive, attempt recorded with its result), on SQLite, to a receiver on 127.0.0.1 that answers at
 * once; next to a bare client POSTing the same signed bytes at the same concurrency in the same run.
 */
export async function run(): Promise<BenchRow[]> {
  const backlog = await drain(1, BACKLOG);
  const flow = await drain(FLOW_ENDPOINTS, FLOW_EVENTS);
  const rx = await startReceiver();
  let peer: number;
  let peerOverall: number;
  try {
    peer = await bareClient(`${rx.url}/bare`, backlog.secret, 20_000, PER_ENDPOINT);
    peerOverall = await bareClient(`${rx.url}/bare`, backlog.secret, 20_000, OVERALL);
  } finally {
    rx.close();
  }
  const backlogRate = BACKLOG / backlog.seconds;
  const flowRate = (FLOW_ENDPOINTS * FLOW_EVENTS) / flow.seconds;
  return [
    {
      work: `webhooks: drain a backlog of ${BACKLOG.toLocaleString('en-US')} queued events, one endpoint`,
      figure: backlog.seconds,
      unit: 's',
      target: `<= ${TARGET_DRAIN_SECONDS} s`,
      met: backlog.seconds <= TARGET_DRAIN_SECONDS,
    },
    {
      work: '  same drain, deliveries per second',
      figure: backlogRate,
      unit: 'deliveries/s',
      peer: { label: `bare keep-alive client, ${PER_ENDPOINT} in flight`, figure: peer },
      ratio: backlogRate / peer,
      target: `>= ${TARGET_RATIO} of a bare client`,
      met: backlogRate / peer >= TARGET_RATIO,
    },
    {
      work: `webhooks: ${FLOW_EVENTS.toLocaleString('en-US')} events to ${FLOW_ENDPOINTS} endpoints, deliveries per second`,
      figure: flowRate,
      unit: 'deliveries/s',
      peer: { label: `bare keep-alive client, ${OVERALL} in flight`, figure: peerOverall },
      ratio: flowRate / peerOverall,
      target: `>= ${TARGET_RATIO} of a bare client`,
      met: flowRate / peerOverall >= TARGET_RATIO,
    },
  ];
}
