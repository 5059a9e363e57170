/**
 * The ZPL driver against the simulated printer on a real pty (socat) and on raw TCP: status and the
 * refusal conditions, the `^HV` read-back, VOID tags under `^RS` error handling E, paper out while a label
 * waits, and a dropped line.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PrinterStatus } from '@dpp/shared';
import { startPrinter, type PrinterHandle, type StartPrinterOptions } from '@dpp/firmware-sim';
import { isAgentError } from '../errors.js';
import { renderLabel } from '../render/index.js';
import { claimsFor } from '@dpp/testkit/agent';
import { LineTransport, SerialLink, TcpLink } from '../transports/index.js';
import { notReadyReason, printerStateOf } from './state.js';
import { ZplPrinter } from './zpl-printer.js';

const zebra = { language: 'zpl' as const, dpi: 203 as const, rfid: true, template: {} };

async function label(serial: string, rfid = true) {
  const claims = claimsFor(serial);
  const r = await renderLabel(claims, { ...zebra, rfid });
  return { claims, payload: r.payload };
}

describe.each(['pty', 'tcp'] as const)('ZplPrinter over %s', (kind) => {
  let sim: PrinterHandle;
  let driver: ZplPrinter;

  async function start(extra: Partial<StartPrinterOptions> = {}) {
    sim = await startPrinter({ transport: kind, port: 0, ...extra });
    const link =
      kind === 'pty'
        ? new SerialLink({ path: sim.path!, baudRate: 115200 })
        : new TcpLink({ host: '127.0.0.1', port: sim.port! });
    driver = new ZplPrinter({
      name: 'zebra-1',
      transport: new LineTransport(kind === 'pty' ? 'serial' : 'tcp', link),
      statusTimeoutMs: 700,
    });
  }

  beforeEach(() => start());
  afterEach(async () => {
    await driver?.close();
    await sim?.close();
  });

  it('reports ready, then each condition that must stop a print', async () => {
    const ready = await driver.status();
    expect(ready).toMatchObject({ source: 'HS', ready: true, formatsInBuffer: 0 });
    expect(notReadyReason(ready)).toBeNull();
    const cases: Array<[Parameters<typeof sim.faults.set>[0], keyof PrinterStatus, string]> = [
      ['paperOut', 'paperOut', 'paper_out'],
      ['headOpen', 'headOpen', 'head_open'],
      ['paused', 'paused', 'paused'],
      ['ribbonOut', 'ribbonOut', 'ribbon_out'],
    ];
    for (const [fault, field, state] of cases) {
      sim.faults.set(fault, true);
      const s = await driver.status();
      expect(s[field]).toBe(true);
      expect(s.ready).toBe(false);
      expect(printerStateOf(s)).toBe(state);
      expect(notReadyReason(s)).toContain(field === 'headOpen' ? 'headOpen' : field);
      sim.faults.set(fault, false);
    }
    expect((await driver.status()).ready).toBe(true);
  });

  it('reads the EPC back from the printed label', async () => {
    const { claims, payload } = await label('7001');
    const receipt = await driver.send(payload);
    expect(receipt.bytes).toBe(payload.length);
    let out = 0;
    const done = await driver.awaitCompletion({
      expectedEpc: claims.sgtin96_epc!,
      timeoutMs: 15_000,
      onOut: () => out++,
    });
    expect(done).toMatchObject({ evidence: 'printer', epcReadBack: claims.sgtin96_epc!, voidLabels: 0 });
    expect(out).toBe(1); // said before the status asked after it
    expect(sim.labels).toHaveLength(1);
    expect(sim.labels[0]!.epc).toBe(claims.sgtin96_epc!);
  });

  it('sees a VOID tag on every try, then drops the held format so it never prints later', async () => {
    const { claims, payload } = await label('7002');
    sim.faults.scriptNext('voidTag');
    const dropped: number[] = [];
    sim.events.on('formatDropped', (e) => dropped.push(e.formatIndex));
    const rfidErrors: string[] = [];
    sim.events.on('rfidError', (e) => rfidErrors.push(e.onError));
    await driver.send(payload);
    let out = 0;
    let voidOut = 0;
    const err = await driver
      .awaitCompletion({
        expectedEpc: claims.sgtin96_epc!,
        timeoutMs: 15_000,
        onOut: () => out++,
        onVoidOut: () => voidOut++,
      })
      .catch((e: unknown) => e);
    expect(isAgentError(err, 'RFID_READBACK_MISMATCH')).toBe(true);
    expect((err as { details: { voidLabels: number; readBack: string } }).details).toMatchObject({
      voidLabels: 3,
      readBack: '0'.repeat(24),
    });
    expect({ out, voidOut }).toEqual({ out: 0, voidOut: 3 }); // each VOID label came out over the one before
    // Our ^RS stops the printer instead of the silent default; error mode holds the format.
    await expect.poll(() => rfidErrors).toEqual(['E']);
    expect((await driver.status()).ready).toBe(false);
    await driver.cancelHeld();
    await expect.poll(() => dropped).toEqual([1]);
    sim.resume(); // the operator clears the error
    expect((await driver.status()).ready).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(sim.labels.map((l) => l.void)).toEqual([true, true, true]);
  });

  it('knows a label without RFID is out when the buffer is empty and nothing stops the printer', async () => {
    const { payload } = await label('7003', false);
    await driver.send(payload);
    const done = await driver.awaitCompletion({ timeoutMs: 15_000 });
    expect(done).toMatchObject({ evidence: 'printer', statusAfter: { formatsInBuffer: 0, ready: true } });
    expect(sim.labels).toHaveLength(1);
  });

  it('waits through paper out and completes once paper is back', async () => {
    const { claims, payload } = await label('7004');
    sim.faults.set('paperOut', true);
    const seen: PrinterStatus[] = [];
    await driver.send(payload);
    const waiting = driver.awaitCompletion({
      expectedEpc: claims.sgtin96_epc!,
      timeoutMs: 20_000,
      onStatus: (s) => seen.push(s),
    });
    await expect
      .poll(() => seen.some((s) => s.paperOut && s.formatsInBuffer === 1), { timeout: 5000 })
      .toBe(true);
    expect(sim.labels).toHaveLength(0);
    sim.faults.set('paperOut', false);
    await expect(waiting).resolves.toMatchObject({ epcReadBack: claims.sgtin96_epc! });
  });

  it('times out while paper stays out, and cancelling keeps the held label from printing later', async () => {
    const { payload } = await label('7005', false);
    sim.faults.set('paperOut', true);
    await driver.send(payload);
    await expect(driver.awaitCompletion({ timeoutMs: 800 })).rejects.toSatisfy((e) =>
      isAgentError(e, 'PRINT_TIMEOUT'),
    );
    await driver.cancelHeld();
    await expect.poll(async () => (await driver.status()).formatsInBuffer).toBe(0);
    sim.faults.set('paperOut', false);
    await new Promise((r) => setTimeout(r, 300));
    expect(sim.labels).toHaveLength(0);
  });

  it('falls back to ~HQES when the printer keeps quiet on ~HS', async () => {
    await driver.close();
    await sim.close();
    await start({ hostStatusWhenFaulted: 'silent' });
    sim.faults.set('paperOut', true);
    const s = await driver.status();
    expect(s).toMatchObject({ source: 'HQES', paperOut: true, ready: false });
    sim.faults.set('paperOut', false);
    expect((await driver.status()).source).toBe('HS');
  });

  it('reports a dropped line and works again once the line is back', async () => {
    const { claims, payload } = await label('7006');
    sim.faults.scriptNext('disconnect');
    await driver.send(payload).catch(() => undefined);
    await expect(
      driver.awaitCompletion({ expectedEpc: claims.sgtin96_epc!, timeoutMs: 3000 }),
    ).rejects.toSatisfy((e) => isAgentError(e, 'TRANSPORT_CLOSED') || isAgentError(e, 'PRINT_TIMEOUT'));
    await expect
      .poll(async () => (await driver.status().catch(() => null))?.ready ?? false, {
        timeout: 10_000,
        interval: 200,
      })
      .toBe(true);
    expect(sim.labels).toHaveLength(0);
  });
});

/**
 * What the agent may conclude after it lost track of a label (a restart, a dropped line): a format the printer
 * held and never started can be cancelled and printed again; a label already under the head cannot be
 * stopped and comes out, although `~HS` still counts its format.
 */
describe('ZplPrinter.cancelUnstarted', () => {
  let sim: PrinterHandle;
  let driver: ZplPrinter;

  async function start(headMs: number) {
    sim = await startPrinter({ transport: 'tcp', port: 0, headMs });
    driver = new ZplPrinter({
      name: 'zebra-1',
      transport: new LineTransport('tcp', new TcpLink({ host: '127.0.0.1', port: sim.port! })),
      statusTimeoutMs: 700,
      pollMs: 50,
    });
  }
  async function underTheHead(serial: string) {
    const { payload } = await label(serial, false);
    const started = new Promise((r) => sim.events.on('formatReceived', r));
    await driver.send(payload);
    await started;
    await new Promise((r) => setTimeout(r, 50));
    expect((await driver.status()).formatsInBuffer).toBe(1);
  }

  afterEach(async () => {
    await driver?.close();
    await sim?.close();
  });

  it('does not count a label under the head as held: it comes out, and the answer is not "never started"', async () => {
    await start(800);
    await underTheHead('7101');
    const held = await driver.cancelUnstarted(400);
    expect(held === null || held === 0).toBe(true);
    await sim.waitForLabels(1, 5000);
    expect((await driver.status()).paused).toBe(false); // resumed: it was not paused before
  });

  it('counts and cancels a format the printer held, and never prints it later', async () => {
    await start(0);
    sim.faults.set('paused', true); // the operator paused it: the format waits in the buffer
    const { payload } = await label('7102', false);
    await driver.send(payload);
    await expect.poll(async () => (await driver.status()).formatsInBuffer).toBe(1);
    await expect(driver.cancelUnstarted(300)).resolves.toBe(1);
    expect((await driver.status()).paused).toBe(true); // paused before: left paused for the operator
    sim.resume();
    await new Promise((r) => setTimeout(r, 300));
    expect(sim.labels).toHaveLength(0);
  });

  it('cannot tell when a label takes longer than it was told one may: the format is still there after ~JA', async () => {
    await start(1500);
    await underTheHead('7103');
    await expect(driver.cancelUnstarted(200)).resolves.toBeNull();
    await sim.waitForLabels(1, 5000);
  });

  it('answers 0 at once when the printer holds nothing', async () => {
    await start(0);
    await expect(driver.cancelUnstarted(5000)).resolves.toBe(0);
  });
});
