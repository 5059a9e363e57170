import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import QRCode from 'qrcode';
import { renderPdfLabel } from '../../agent/src/render/pdf.js';
import { linkOf, notVerified, run, tempDir } from './test-support/run.js';
import { GTIN, SERIAL, World } from './test-support/world.js';

let server: Server;
let world: World;
let dir: string;

beforeAll(async () => {
  // A real HTTP server: the world's routes, on an origin the proof's links and signatures name.
  server = createServer((req, res) => {
    void world.respond(`${world.origin}${req.url}`).then(({ status, body }) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  world = await World.create(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await world.seal();
  dir = tempDir();
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const online = { fetch: (url: string, init?: { headers?: Record<string, string> }) => fetch(url, init) };

describe('dpp-verify', () => {
  it('checks a Digital Link online, prints one line per link and a summary, and saves what it fetched', async () => {
    const proof = join(dir, 'proof.json');
    const keys = join(dir, 'keys.json');
    const r = await run(
      [world.digitalLink, '--no-state', '--save-proof', proof, '--save-keys', keys],
      online,
    );
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe(`label ${world.digitalLink} (sealed)`);
    expect(lines[2]).toMatch(/^✔ keys +verified: 2 control-plane key\(s\)/);
    expect(lines[3]).toBe('seal 1 of 1: job pj_1');
    expect(lines.slice(4, 12).map((l) => l.trim().split(/ {2,}/)[0])).toEqual([
      '✔ device statement',
      '✔ evidence bundle',
      '✔ passport version',
      '✔ seal receipt',
      '✔ EPCIS event',
      '✔ log entry',
      '✔ tree head',
      '✔ log consistency',
    ]);
    expect(lines.at(-1)).toBe('✔ verified: all 9 links of 1 seal');
    expect(JSON.parse(readFileSync(proof, 'utf8'))).toEqual(world.proof);
    expect(JSON.parse(readFileSync(keys, 'utf8'))).toEqual(world.keysDoc());

    // The saved proof and keys check again with no network at all.
    const offline = await run([proof, '--offline', '--keys', keys, '--no-state'], {
      fetch: () => Promise.reject(new Error('offline means no network')),
    });
    expect(offline.stdout).toContain('✔ verified: all 9 links of 1 seal');
    expect(offline.code).toBe(0);
  });

  it('reads the Digital Link from the QR of a PNG, also a small one drawn without a quiet zone', async () => {
    const png = join(dir, 'label.png');
    writeFileSync(png, await QRCode.toBuffer(world.digitalLink, { type: 'png', margin: 0, scale: 2 }));
    const r = await run([png, '--no-state', '--json'], online);
    expect(r.code).toBe(0);
    expect(r.report!.digitalLink).toBe(world.digitalLink);
  });

  it("reads the Digital Link from the QR image embedded in the agent's PDF label", async () => {
    const pdf = join(dir, 'label.pdf');
    const claims = { digital_link: world.digitalLink, gtin: GTIN, serial: SERIAL };
    const template = {
      id: 'tpl_1',
      widthMm: 60,
      heightMm: 30,
      dpi: 300 as const,
      qrMagnification: 4,
      textLines: [GTIN, SERIAL],
      rfid: false,
    };
    const rendered = await renderPdfLabel(claims as never, template, new Date('2026-04-01T10:00:00Z'));
    writeFileSync(pdf, rendered.payload);
    const r = await run([pdf, '--no-state', '--json'], online);
    expect(r.code).toBe(0);
    expect(notVerified(r.report)).toEqual([]);
  });

  it('says what to do with a PDF whose QR is not an embedded image and nothing can rasterise it', async () => {
    const pdf = join(dir, 'vector.pdf');
    writeFileSync(pdf, '%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n%%EOF\n');
    const r = await run([pdf, '--no-state'], { ...online, rasterisePdf: async () => null });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the QR must be an embedded image, or rasterise the PDF first');
  });

  it('exits 1 when a link is broken, and --json says which', async () => {
    const proof = join(dir, 'broken.json');
    const keys = join(dir, 'keys-1.json');
    const tampered = structuredClone(world.proof) as { seals: { passportVersion: { id: string } }[] };
    tampered.seals[0]!.passportVersion.id = 'pv_2';
    writeFileSync(proof, JSON.stringify(tampered));
    writeFileSync(keys, JSON.stringify(world.keysDoc()));
    const r = await run([proof, '--offline', '--keys', keys, '--no-state', '--json'], online);
    expect(r.code).toBe(1);
    expect(r.report!.ok).toBe(false);
    expect(linkOf(r.report, 'passport version').status).toBe('broken');
    const human = await run([proof, '--offline', '--keys', keys, '--no-state'], online);
    expect(human.stdout).toMatch(/✘ passport version +broken: /);
    expect(human.stdout.trim().split('\n').at(-1)).toBe('✘ not verified: 1 broken of 9 links of 1 seal');
  });

  it('exits 2 on usage and input errors', async () => {
    const png = join(dir, 'blank.png');
    const { PNG } = await import('pngjs');
    const blank = new PNG({ width: 40, height: 40 });
    blank.data.fill(255);
    writeFileSync(png, PNG.sync.write(blank));
    const cases: [string[], RegExp][] = [
      [[], /usage: dpp-verify/],
      [[world.digitalLink, '--bogus'], /unknown option --bogus/],
      [[join(dir, 'proof.json'), '--offline'], /--offline needs --keys/],
      [[world.digitalLink, '--offline', '--keys', join(dir, 'keys.json')], /pass a saved proof/],
      [[join(dir, 'missing.json'), '--no-state'], /cannot read the input/],
      [[png, '--no-state'], /no QR found/],
      [['https://example.com/not/a/link', '--no-state'], /not a GS1 Digital Link/],
      [[join(dir, 'keys.json'), '--no-state'], /not a dpp label proof/],
    ];
    for (const [argv, message] of cases) {
      const r = await run(argv, online);
      expect({ argv, code: r.code }).toEqual({ argv, code: 2 });
      expect(r.stderr).toMatch(message);
    }
  });

  it('exits 2 when the proof cannot be fetched', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const r = await run([`http://127.0.0.1:${port}/01/${GTIN}/21/${SERIAL}`, '--no-state'], online);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot fetch the proof');
  });
});
