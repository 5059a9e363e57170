import { describe, expect, it } from 'vitest';
import { silentLogger } from '../log.js';
import type { PrinterDriver } from '../printers/index.js';
import { PrintLane, type LaneTicket } from './print-lane.js';

/** A lane on a printer that queues (per-label read-backs), with a clock the test moves. */
function laneOf(scansAtExit: boolean) {
  let now = 0;
  const lane = new PrintLane({} as PrinterDriver, true, silentLogger, scansAtExit, () => now);
  const signal = new AbortController().signal;
  const sent = new Map<string, LaneTicket>();
  /** Asks for `id`'s turn; the format is written (and the clock read) as soon as it comes. */
  const send = (id: string) =>
    lane
      .send(
        id,
        `https://id.example.com/01/09506000134352/21/${id}`,
        undefined,
        true,
        signal,
        async () => {},
        async (t) => t,
      )
      .then(({ ticket }) => void sent.set(id, ticket));
  return {
    lane,
    sent,
    send,
    at: (ms: number) => void (now = ms),
    /** Lets every pending turn that may go now go. */
    settle: () => new Promise((r) => setImmediate(r)),
  };
}

describe('PrintLane: the scanner window', () => {
  it('without a scanner over the exit, queues one format behind the one printing from the first label', async () => {
    const l = laneOf(false);
    await l.send('a');
    void l.send('b');
    void l.send('c');
    await l.settle();
    expect([...l.sent.keys()]).toEqual(['a', 'b']); // one printing, one behind it, never two
    expect(l.lane.queuesNow).toBe(true);
    l.lane.out(l.sent.get('a')!); // out: settled, and the third may go behind the second
    await l.settle();
    expect([...l.sent.keys()]).toEqual(['a', 'b', 'c']);
  });

  it('with a scanner, sends the second label only once the first is out and read, then queues while a scan fits in half a label', async () => {
    const l = laneOf(true);
    l.at(0);
    await l.send('a');
    void l.send('b');
    await l.settle();
    expect(l.sent.has('b')).toBe(false); // no label measured yet: the window is unknown
    l.at(125);
    l.lane.out(l.sent.get('a')!);
    expect(l.lane.inFlight).toBe(0);
    await l.settle();
    expect(l.sent.has('b')).toBe(false); // out, not read: the next label would come out over it
    l.at(145);
    l.lane.scannerRead('a');
    l.lane.scanned('a');
    await l.settle();
    expect(l.sent.get('b')!.heldForScan).toBe(true);
    expect(l.lane.window).toEqual({ labelMs: 125, scanMs: 20, queuesAhead: true });

    // Now the next format goes in behind the one printing, not held.
    await l.send('c');
    expect(l.sent.get('c')!.heldForScan).toBe(false);
    expect(l.lane.inFlight).toBe(2);
    l.at(270);
    l.lane.out(l.sent.get('b')!); // printed from 145 (sent then): 125 ms
    l.at(280);
    l.lane.scannerRead('b');
    // Scans of 20 and 10 ms: the slowest but one is judged.
    expect(l.lane.window).toEqual({ labelMs: 125, scanMs: 10, queuesAhead: true });
  });

  /** One label alone on the lane of `l`: sent at `t`, out 100 ms later, read `scanMs` after that. */
  async function alone(l: ReturnType<typeof laneOf>, clock: { t: number }, id: string, scanMs: number) {
    l.at(clock.t);
    await l.send(id);
    clock.t += 100;
    l.at(clock.t);
    l.lane.out(l.sent.get(id)!);
    clock.t += scanMs;
    l.at(clock.t);
    l.lane.scannerRead(id);
    l.lane.scanned(id);
  }

  it('forgives one scan slower than half a label among the last eight, not two', async () => {
    const l = laneOf(true);
    const clock = { t: 0 };
    await alone(l, clock, 'a', 20);
    expect(l.lane.queuesNow).toBe(true);
    await alone(l, clock, 'b', 60); // a pause of the process: the next label would have come out 40 ms later
    expect(l.lane.window).toEqual({ labelMs: 100, scanMs: 20, queuesAhead: true });
    await alone(l, clock, 'c', 60);
    expect(l.lane.window).toEqual({ labelMs: 100, scanMs: 60, queuesAhead: false });
    for (let i = 0; i < 6; i++) {
      await alone(l, clock, `d${i}`, 20);
      expect(l.lane.queuesNow).toBe(false);
    }
    await alone(l, clock, 'e', 20); // only one of the slow scans is among the last eight now
    expect(l.lane.window).toEqual({ labelMs: 100, scanMs: 20, queuesAhead: true });
  });

  it('a scan read after the next label came out over it holds the next eight labels until the one before is read', async () => {
    const l = laneOf(true);
    const clock = { t: 0 };
    await alone(l, clock, 'a', 20);
    l.at((clock.t += 10));
    await l.send('b');
    await l.send('c'); // queued behind b
    expect(l.sent.get('c')!.heldForScan).toBe(false);
    l.at((clock.t += 100));
    l.lane.out(l.sent.get('b')!);
    l.at((clock.t += 100));
    l.lane.out(l.sent.get('c')!); // c is out over b, whose scan has not answered yet
    l.at((clock.t += 5));
    l.lane.scannerRead('b');
    l.lane.scanned('b');
    expect(l.lane.queuesNow).toBe(false);
    l.at((clock.t += 20));
    l.lane.scannerRead('c');
    l.lane.scanned('c');
    for (let i = 0; i < 6; i++) {
      await alone(l, clock, `d${i}`, 20);
      expect(l.lane.queuesNow).toBe(false);
    }
    await alone(l, clock, 'e', 20); // eight scans since the miss
    expect(l.lane.queuesNow).toBe(true);
  });
});

describe("PrintLane: the printer's waits on the agent", () => {
  it('counts the time an emptied printer stood while the next label was claimed and not yet in it', async () => {
    const l = laneOf(false);
    l.at(0);
    l.lane.claimed('a');
    await l.send('a'); // the first label: no label before it came out
    l.at(50);
    l.lane.claimed('b');
    l.at(100);
    l.lane.out(l.sent.get('a')!); // empty, and b is the agent's
    l.lane.scanned('a'); // its run took the label's scan (a person's, or none)
    l.at(130);
    await l.send('b');
    expect(l.lane.waits).toEqual({ agent: { labels: 1, ms: 30 }, scan: { labels: 0, ms: 0 } });

    l.at(200);
    l.lane.out(l.sent.get('b')!);
    l.lane.scanned('b');
    l.at(220);
    l.lane.claimed('c'); // claimed after the printer emptied: only the time since counts
    l.at(235);
    await l.send('c');
    expect(l.lane.waits.agent).toEqual({ labels: 2, ms: 45 });

    l.at(240);
    l.lane.claimed('d');
    await l.send('d'); // queued behind c while it prints: the printer never stands
    l.at(300);
    l.lane.out(l.sent.get('c')!);
    l.lane.scanned('c');
    l.at(400);
    l.lane.out(l.sent.get('d')!);
    l.lane.scanned('d');
    l.at(450);
    await l.send('e'); // never claimed here (sent again, or resumed after a restart): not counted
    expect(l.lane.waits).toEqual({ agent: { labels: 2, ms: 45 }, scan: { labels: 0, ms: 0 } });
  });

  it("without a scanner, counts the wait for a person's scan of the label before as a scan, not the agent's", async () => {
    const l = laneOf(false);
    l.at(0);
    l.lane.claimed('a');
    await l.send('a');
    l.at(50);
    l.lane.claimed('b');
    l.at(100);
    l.lane.out(l.sent.get('a')!);
    l.at(110);
    void l.send('b'); // a is out and not scanned yet: b would come out over it
    await l.settle();
    expect(l.sent.has('b')).toBe(false);
    l.at(400);
    l.lane.scanned('a'); // scanned at the console
    await l.settle();
    expect(l.lane.waits).toEqual({ agent: { labels: 0, ms: 0 }, scan: { labels: 1, ms: 300 } });
  });

  it('counts a wait until the label before was read apart, as a scan', async () => {
    const l = laneOf(true);
    l.at(0);
    l.lane.claimed('a');
    l.lane.claimed('b');
    await l.send('a');
    void l.send('b'); // the window is not known yet: b waits for a out and read
    l.at(125);
    l.lane.out(l.sent.get('a')!);
    l.at(145);
    l.lane.scannerRead('a');
    l.lane.scanned('a');
    await l.settle();
    expect(l.sent.has('b')).toBe(true);
    expect(l.lane.waits).toEqual({ agent: { labels: 0, ms: 0 }, scan: { labels: 1, ms: 20 } });

    // c comes to the lane after b is out and before b is read: it waits for that read, from its claim.
    l.at(270);
    l.lane.out(l.sent.get('b')!);
    l.at(280);
    l.lane.claimed('c');
    void l.send('c');
    await l.settle();
    expect(l.sent.has('c')).toBe(false);
    l.at(300);
    l.lane.scannerRead('b');
    l.lane.scanned('b');
    await l.settle();
    expect(l.sent.get('c')!.heldForScan).toBe(false);
    expect(l.lane.waits).toEqual({ agent: { labels: 0, ms: 0 }, scan: { labels: 2, ms: 40 } });
  });
});

describe("PrintLane: the printer's waits on the agent, a format still arriving", () => {
  it('counts from the label ahead out to the last byte of a format that was still arriving then', async () => {
    let now = 0;
    const lane = new PrintLane({} as PrinterDriver, true, silentLogger, false, () => now);
    const signal = new AbortController().signal;
    const link = (id: string) => `https://id.example.com/01/09506000134352/21/${id}`;
    const sendWith = (id: string, write: () => Promise<void>) =>
      lane.send(id, link(id), undefined, true, signal, async () => {}, write).then((r) => r.ticket);
    lane.claimed('a');
    const a = await sendWith('a', async () => {});
    lane.claimed('b');
    now = 90;
    let bytesIn!: () => void;
    const b = sendWith('b', () => new Promise<void>((resolve) => (bytesIn = resolve))); // queued behind a
    await new Promise((r) => setImmediate(r));
    now = 100;
    lane.out(a); // a is out while b's bytes are still on the line: nothing whole to print
    now = 118;
    bytesIn();
    await b;
    expect(lane.waits.agent).toEqual({ labels: 1, ms: 18 });
  });
});
