import { performance } from 'node:perf_hooks';
import { startTestControlPlane } from '@dpp/testkit';
import type { JobStepEvent, PrinterWaits } from '@dpp/agent';
import { printableProduct } from '@dpp/control-plane';
import {
  FAST_RFID_PRINTER_MECHANICS,
  RFID_PRINTER_MECHANICS,
  labelMs,
  mechanicalLimit,
  type PrinterMechanics,
} from '@dpp/firmware-sim';
import { startCpuProfile } from './lib/cpu-profile.js';
import { benchFloor, queueJobs, type BenchFloor } from './lib/print-floor.js';
import type { BenchRow } from './lib/table.js';

type ControlPlane = Awaited<ReturnType<typeof startTestControlPlane>>;

const LABELS = 60;
const WARM_UP = 5;
const BAUD = 115_200;
/** The printer never waits for the agent: at least 0.9 of what its mechanics allow (issue 19). */
const TARGET_LIMIT_FRACTION = 0.9;
/** The agent's share of the critical path: the printer's idle time before a label, waiting for its format. */
const TARGET_OVERHEAD_P50_MS = 5;
const TARGET_OVERHEAD_P99_MS = 250;
/**
 * The agent's own figures since the agent first ran (issue 9), kept beside the ones above: its overhead per
 * label from the claim request to SEALED minus the time spent on the printer and the scanner, and labels per
 * second against the serial line's byte rate.
 */
const TARGET_PER_LABEL_P50_MS = 100;
const TARGET_PER_LABEL_P99_MS = 250;
const TARGET_LINE_FRACTION = 0.1;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
const p50 = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

/**
 * The device agent on one simulated RFID label printer with the mechanical model of a ZT411 RFID class
 * printer at a production setting (firmware-sim's `RFID_PRINTER_MECHANICS`: 6 ips, 2-inch labels, 100 ms
 * encode and 40 ms read-back, one label at a time) and its scanner, both on ptys paced at 115200 baud,
 * against a real control plane (SQLite, embedded broker), all in this process.
 *
 * - Throughput: labels sealed per second, from the first measured claim request to the last SEALED, beside
 *   the mechanical limit 1 / (label length / speed + encode + read-back). Every measured label is checked:
 *   rendered and its QR proven (a render manifest), encoded and read back (attested on `rfid_readback`
 *   with the EPC), scanned (link and EPC match) and sealed; the printer put out one physical label per job,
 *   none VOID, none twice, in the order the formats arrived.
 * - Agent overhead on the critical path: for each label after the first, the time the printer stood idle
 *   between the label before it coming out and this label's format being complete in its buffer (zero when
 *   the format was already queued): the time the printer waited for the agent. Everything else the agent
 *   does per label (claim, envelope, render, proof, outbox, heartbeats, results, scan, seal) happens while
 *   some label prints and is summarised in the profile printed before the table.
 * - Beside the table: the same on a printer at eight labels a second (firmware-sim's
 *   `FAST_RFID_PRINTER_MECHANICS`), with the simulator in this process and in a process of its own.
 */
export async function run(): Promise<BenchRow[]> {
  const t = await startTestControlPlane({ mqtt: true });
  const key = t.tenants.a.admin;
  try {
    const mechanics = RFID_PRINTER_MECHANICS;
    const m = await measure(t, key, mechanics, { forTable: true });
    printProfile(m.profile!, LABELS, m.elapsedS, m.steps, m.measured);
    printPrinter('printer', m, mechanics);
    printEarlierAccounting(m);
    // The fastest RFID printers (eight labels a second): the agent's scanner window and pipeline at that pace,
    // printed beside the table (the targets above are the default printer's).
    // Once with the simulator in this process, as every figure above, and once in a process of its own (a
    // printer renders its labels on its own processor, not on the agent's thread).
    const f = FAST_RFID_PRINTER_MECHANICS;
    for (const ownProcess of [false, true]) {
      const fast = await measure(t, key, f, { forTable: false, ownProcess });
      console.log(
        `\nagent bench, a fast RFID printer (${f.printSpeedIps} ips, ${f.labelLengthIn}-inch labels, ` +
          `${f.rfidEncodeMs + f.rfidReadBackMs} ms encode + read-back; ${LABELS} labels; the simulator in ` +
          `${ownProcess ? 'a process of its own' : 'this process'}): ` +
          `${fast.perSecond.toFixed(2)} labels/s, ${(fast.perSecond / fast.limit).toFixed(3)} of its mechanical limit ` +
          `(${fast.limit.toFixed(2)}), ${(fast.perSecond / fast.lineLimit).toFixed(3)} of the line limit ` +
          `(${fast.lineLimit.toFixed(2)}); agent time per label p50 ${percentile(fast.perLabel, 50).toFixed(0)} ms, ` +
          `p99 ${percentile(fast.perLabel, 99).toFixed(0)} ms; labels scanned at the console (the next one out ` +
          `over them first): ${fast.atConsole}`,
      );
      printPrinter('fast printer', fast, f);
    }

    const perSecond = m.perSecond;
    const limit = m.limit;
    const sortedIdle = [...m.idle].sort((a, b) => a - b);
    const idleP50 = percentile(sortedIdle, 50);
    const idleP99 = percentile(sortedIdle, 99);
    const perLabel = m.perLabel;
    const deviceP50 = m.deviceP50;
    const bytes = m.bytes;
    const lineLimit = m.lineLimit;
    return [
      {
        work: `labels sealed per second, one simulated RFID printer (6 ips, 2-inch labels, 140 ms encode + read-back; ${LABELS} labels)`,
        figure: perSecond,
        unit: 'labels/s',
        peer: { label: 'mechanical limit 1 / (length / speed + encode + read-back)', figure: limit },
        ratio: perSecond / limit,
        target: `>= ${TARGET_LIMIT_FRACTION} of the mechanical limit`,
        met: perSecond / limit >= TARGET_LIMIT_FRACTION,
      },
      {
        work: 'agent overhead on the critical path p50: printer idle between labels, waiting for the next format',
        figure: idleP50,
        unit: 'ms',
        peer: { label: 'one label under the mechanics', figure: labelMs(mechanics) },
        ratio: idleP50 / labelMs(mechanics),
        target: `<= ${TARGET_OVERHEAD_P50_MS} ms`,
        met: idleP50 <= TARGET_OVERHEAD_P50_MS,
      },
      {
        work: 'agent overhead on the critical path p99',
        figure: idleP99,
        unit: 'ms',
        target: `<= ${TARGET_OVERHEAD_P99_MS} ms`,
        met: idleP99 <= TARGET_OVERHEAD_P99_MS,
      },
      {
        work: `agent time per label, claim to SEALED minus printer/scanner, its turn behind the label printing included (p50)`,
        figure: percentile(perLabel, 50),
        unit: 'ms',
        peer: { label: 'printer + scanner time p50', figure: deviceP50 },
        ratio: percentile(perLabel, 50) / deviceP50,
        target: `<= ${TARGET_PER_LABEL_P50_MS} ms`,
        met: percentile(perLabel, 50) <= TARGET_PER_LABEL_P50_MS,
      },
      {
        work: 'agent time per label (p99)',
        figure: percentile(perLabel, 99),
        unit: 'ms',
        target: `<= ${TARGET_PER_LABEL_P99_MS} ms`,
        met: percentile(perLabel, 99) <= TARGET_PER_LABEL_P99_MS,
      },
      {
        work: `labels sealed per second against the ${BAUD}-baud serial line`,
        figure: perSecond,
        unit: 'labels/s',
        peer: {
          label: `line limit (${BAUD / 10} B/s / ${Math.round(bytes)} B per label)`,
          figure: lineLimit,
        },
        ratio: perSecond / lineLimit,
        target: `>= ${TARGET_LINE_FRACTION} of the line limit`,
        met: perSecond / lineLimit >= TARGET_LINE_FRACTION,
      },
    ];
  } finally {
    await t.close();
  }
}

interface Measured {
  perSecond: number;
  limit: number;
  elapsedS: number;
  /** Per label after the first: printer idle before its format was complete, and how long before it was. */
  idle: number[];
  ahead: number[];
  period: number[];
  /** Agent time per label (claim to SEALED minus printer, scanner and people), sorted. */
  perLabel: number[];
  deviceP50: number;
  bytes: number;
  lineLimit: number;
  /** Labels the scanner missed (the next one out over them), scanned at the console by this benchmark. */
  atConsole: number;
  /** The agent's own count of the same waits (its `GET /metrics`), over the labels after the first. */
  agentWaits: PrinterWaits;
  steps: Map<string, Map<string, number>>;
  measured: JobStepEvent[];
  profile: { totalMs: number; rows: Array<{ who: string; ms: number }> } | null;
}

/**
 * One floor (an enrolled agent, the simulated printer with `mechanics` and its scanner) printing WARM_UP
 * labels, then LABELS measured ones queued while the printer is paused. For the table (`forTable`: profiled
 * too), a label the scanner missed fails the run, as it did before the fast printer's runs: the table's figures
 * never include a person's scan. Beside the table, such a label is scanned at the console, as a person would,
 * and counted.
 */
async function measure(
  t: ControlPlane,
  key: string,
  mechanics: PrinterMechanics,
  o: { forTable: boolean; ownProcess?: boolean },
): Promise<Measured> {
  const floor = await benchFloor(t, key, BAUD, mechanics, o.ownProcess ?? false);
  try {
    const product = await printableProduct(t.call, key, WARM_UP + LABELS);
    const sealed: JobStepEvent[] = [];
    const steps = new Map<string, Map<string, number>>();
    let atConsole = 0;
    const waitsNow = () => floor.agent.status().printers[0]!.waits;
    let measuring = false;
    let waitsBefore: PrinterWaits | null = null;
    floor.agent.events.on('job', (e) => {
      // From the first measured label's send on, as the printer's side counts from the label after it.
      if (measuring && waitsBefore === null && e.step === 'printing') waitsBefore = waitsNow();
      const at = steps.get(e.jobRef) ?? new Map<string, number>();
      if (!at.has(e.step)) at.set(e.step, Date.parse(e.at));
      steps.set(e.jobRef, at);
      if (e.step === 'sealed') sealed.push(e);
      else if (e.step === 'failed' || e.step === 'abandoned')
        throw new Error(`job ${e.jobRef} ${e.step}: ${e.detail}`);
      else if (e.step === 'awaiting_scan') {
        if (o.forTable)
          throw new Error(`job ${e.jobRef}: its label moved on unread and waits for the console`);
        atConsole++;
        const serial = floor.agent.journal
          .attempts(e.jobRef)
          .find((a) => a.attemptId === e.attemptId)!.serial;
        const label = floor.printer.labels.find((l) => !l.void && l.content?.endsWith(`/21/${serial}`))!;
        floor.agent.scan(e.jobRef, { data: label.content!, epc: label.epc ?? undefined });
      }
    });
    const received = new Map<number, number>();
    const out: Array<{ formatIndex: number; at: number; void: boolean; epc: string | null }> = [];
    floor.printer.onFormatReceived((formatIndex) => received.set(formatIndex, performance.now()));
    floor.printer.onLabelPrinted((l) =>
      out.push({
        formatIndex: l.formatIndex,
        at: performance.now(),
        void: l.void,
        epc: l.epc,
      }),
    );
    const waitFor = async (n: number) => {
      const deadline = Date.now() + 300_000;
      while (sealed.length < n) {
        if (Date.now() > deadline) throw new Error(`only ${sealed.length} of ${n} labels sealed`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await queueJobs(t, key, product.gtin, product.serials.slice(0, WARM_UP));
    await waitFor(WARM_UP);
    // Every measured job is queued before the first is claimed (the printer paused meanwhile), so the run
    // measures the agent and the printer, not how fast this process can queue jobs over HTTP.
    floor.printer.pause(true);
    await queueJobs(t, key, product.gtin, product.serials.slice(WARM_UP));
    const stopProfile = o.forTable ? await startCpuProfile() : null;
    atConsole = 0;
    measuring = true;
    floor.printer.pause(false);
    await waitFor(WARM_UP + LABELS);
    const profile = stopProfile ? await stopProfile() : null;

    const measured = sealed.slice(WARM_UP);
    const firstClaim = Math.min(...measured.map((e) => Date.parse(e.at) - e.timings!.totalMs));
    const elapsedS = (Math.max(...measured.map((e) => Date.parse(e.at))) - firstClaim) / 1000;
    const labels = out.slice(WARM_UP);
    checkEveryLabel(floor, measured, labels);
    // Issue 9's figures. With the pipeline, a label's wait for its turn behind the one printing is counted
    // in them (it is neither printer nor scanner time for that label).
    const bytes =
      measured.reduce((sum, e) => {
        const attempt = floor.agent.journal.attempts(e.jobRef).find((a) => a.attemptId === e.attemptId)!;
        return sum + (attempt.evidence.render_manifest as { payloadBytes: number }).payloadBytes;
      }, 0) / measured.length;
    return {
      perSecond: LABELS / elapsedS,
      limit: mechanicalLimit(mechanics),
      elapsedS,
      idle: labels.slice(1).map((l, i) => Math.max(0, received.get(l.formatIndex)! - labels[i]!.at)),
      ahead: labels.slice(1).map((l, i) => labels[i]!.at - received.get(l.formatIndex)!),
      period: labels.slice(1).map((l, i) => l.at - labels[i]!.at),
      perLabel: measured
        .map((e) => e.timings!.totalMs - e.timings!.deviceMs - e.timings!.humanMs)
        .sort((a, b) => a - b),
      deviceP50: p50(measured.map((e) => e.timings!.deviceMs)),
      bytes,
      lineLimit: BAUD / 10 / bytes,
      atConsole,
      agentWaits: since(waitsBefore!, waitsNow()),
      steps,
      measured,
      profile,
    };
  } finally {
    await floor.close();
  }
}

/**
 * The table's agent time per label counts a job's wait for a printer that is not ready (paused, out of paper) as
 * the printer's, since 874aec5 (round 14); the target was set when that wait was the agent's. Printed here under
 * the earlier accounting, so every run reports the figure both ways: each label's time from its step
 * `waiting_printer` to `printing` added back (the status calls and the send inside it were the printer's then too,
 * so this is at most the earlier figure).
 */
function printEarlierAccounting(m: Measured): void {
  const earlier = m.measured
    .map((e) => {
      const at = m.steps.get(e.jobRef);
      const waited = at?.get('waiting_printer');
      const printing = at?.get('printing');
      const gate =
        waited !== undefined && printing !== undefined && printing >= waited ? printing - waited : 0;
      return e.timings!.totalMs - e.timings!.deviceMs - e.timings!.humanMs + gate;
    })
    .sort((a, b) => a - b);
  const waitedLabels = m.measured.filter((e) => m.steps.get(e.jobRef)?.has('waiting_printer')).length;
  console.log(
    `  agent time per label with a wait for a printer not ready counted as the agent's (the accounting before ` +
      `874aec5): p50 up to ${percentile(earlier, 50).toFixed(0)} ms, p99 up to ${percentile(earlier, 99).toFixed(0)} ms ` +
      `(target <= ${TARGET_PER_LABEL_P50_MS} / <= ${TARGET_PER_LABEL_P99_MS} ms, unchanged); ${waitedLabels} of ` +
      `${m.measured.length} labels waited for the printer (the benchmark pauses it while it queues the measured jobs)`,
  );
}

/** The waits counted between two readings of a printer's `waits`. */
function since(before: PrinterWaits, after: PrinterWaits): PrinterWaits {
  const d = (k: keyof PrinterWaits) => ({
    labels: after[k].labels - before[k].labels,
    ms: after[k].ms - before[k].ms,
  });
  return { agent: d('agent'), scan: d('scan') };
}

/** The printer's side of a run: its period per label, and how often and how long it waited for the agent. */
function printPrinter(what: string, m: Measured, mechanics: PrinterMechanics): void {
  console.log(
    `  ${what}: label every ${p50(m.period).toFixed(0)} ms (p50; mechanics ${labelMs(mechanics).toFixed(0)} ms), ` +
      `idle waiting for the agent before ${m.idle.filter((x) => x > 0).length} of ${m.idle.length} labels, ` +
      `${m.idle.reduce((a, b) => a + b, 0).toFixed(0)} ms in all; the next format was in its buffer ` +
      `${p50(m.ahead).toFixed(0)} ms (p50) before the label ahead came out; the agent's own count ` +
      `(GET /metrics): the printer stood empty with the next label claimed before ${m.agentWaits.agent.labels} ` +
      `labels (${m.agentWaits.agent.ms.toFixed(0)} ms), and before ${m.agentWaits.scan.labels} more until ` +
      `the label ahead was read (${m.agentWaits.scan.ms.toFixed(0)} ms)`,
  );
}

/** Each measured job has its whole proof, and the printer put out exactly its labels, in order, once. */
function checkEveryLabel(
  floor: BenchFloor,
  measured: JobStepEvent[],
  labels: Array<{ formatIndex: number; void: boolean; epc: string | null }>,
): void {
  const fail = (why: string) => {
    throw new Error(`agent bench: ${why}`);
  };
  if (labels.length !== measured.length) fail(`${labels.length} labels printed for ${measured.length} jobs`);
  if (labels.some((l) => l.void)) fail('a VOID label was printed');
  if (new Set(labels.map((l) => l.epc)).size !== labels.length) fail('an EPC was printed twice');
  labels.forEach(
    (l, i) => i > 0 && l.formatIndex <= labels[i - 1]!.formatIndex && fail('labels out of order'),
  );
  const printed = new Set(labels.map((l) => l.epc));
  for (const e of measured) {
    const attempt = floor.agent.journal.attempts(e.jobRef).find((a) => a.attemptId === e.attemptId);
    const ev = (attempt?.evidence ?? {}) as Record<string, Record<string, unknown> | undefined>;
    const epc = attempt?.claims.sgtin96_epc;
    if (!ev.render_manifest) fail(`${e.jobRef}: no render manifest`);
    if (!ev.spool_receipt) fail(`${e.jobRef}: no spool receipt`);
    if (ev.attestation?.method !== 'rfid_readback') fail(`${e.jobRef}: not attested on the RFID read-back`);
    if (ev.scan_result?.linkMatches !== true || ev.scan_result?.epcMatches !== true)
      fail(`${e.jobRef}: the scan did not match`);
    if (!ev.evidence_bundle) fail(`${e.jobRef}: no evidence bundle`);
    if (!epc || !printed.has(epc)) fail(`${e.jobRef}: its EPC is not on a printed label`);
  }
}

/** Where the time per label goes: CPU by owner, and the wall time of each stage of a job. */
function printProfile(
  profile: { totalMs: number; rows: Array<{ who: string; ms: number }> },
  labels: number,
  elapsedS: number,
  steps: Map<string, Map<string, number>>,
  measured: JobStepEvent[],
): void {
  const busy = profile.rows.filter((r) => r.who !== '(idle)');
  const busyMs = busy.reduce((a, r) => a + r.ms, 0);
  console.log(
    `\nagent bench profile: ${labels} labels in ${elapsedS.toFixed(1)} s; this process busy ${(busyMs / labels).toFixed(1)} ms of CPU per label (${((100 * busyMs) / profile.totalMs).toFixed(0)}% of one core)`,
  );
  const agentMs = busy.filter((r) => r.who.startsWith('agent/')).reduce((a, r) => a + r.ms, 0);
  console.log(
    `  the agent's own code: ${(agentMs / labels).toFixed(1)} ms of CPU per label, all of it while a label prints`,
  );
  console.log('  CPU per label by owner (self time under our nearest frame; library in which):');
  for (const r of busy.slice(0, 14))
    console.log(`    ${(r.ms / labels).toFixed(2).padStart(7)} ms  ${r.who}`);
  const stageOf = (e: JobStepEvent, from: string, to: string): number | undefined => {
    const at = steps.get(e.jobRef);
    const a = from === 'claim' ? Date.parse(e.at) - e.timings!.totalMs : at?.get(from);
    const b = at?.get(to);
    return a !== undefined && b !== undefined ? b - a : undefined;
  };
  const stage = (from: string, to: string) => p50(measured.flatMap((e) => stageOf(e, from, to) ?? []));
  const stages = [
    ['claim request -> claimed (HTTP claim, JWS verify)', 'claim', 'claimed'],
    ['claimed -> rendered (render, QR proof, outbox row)', 'claimed', 'rendered'],
    ['rendered -> sent (RENDERED delivered, turn, ~HS, send gate heartbeat, bytes)', 'rendered', 'printing'],
    ['sent -> attested (printing, read-back)', 'printing', 'attested'],
    ['attested -> scanned (scan trigger to read)', 'attested', 'scanned'],
    ['scanned -> sealed (bundle signed, SEALED delivered)', 'scanned', 'sealed'],
  ] as const;
  console.log(
    '  wall time per job, p50 (overlapping other labels): ' +
      stages.map(([what, a, b]) => `\n    ${stage(a, b).toFixed(0).padStart(5)} ms  ${what}`).join(''),
  );
  // The label with the most agent time (what a p99 of 60 labels is): where its time went, stage by stage.
  const agentTimeOf = (e: JobStepEvent) => e.timings!.totalMs - e.timings!.deviceMs - e.timings!.humanMs;
  const slowest = measured.reduce((a, b) => (agentTimeOf(b) > agentTimeOf(a) ? b : a));
  console.log(
    `  the label with the most agent time (${agentTimeOf(slowest).toFixed(0)} ms; #${measured.indexOf(slowest) + 1} of ` +
      `${measured.length}), wall time: ` +
      stages.map(([, a, b]) => `${a} -> ${b} ${(stageOf(slowest, a, b) ?? NaN).toFixed(0)} ms`).join(', '),
  );
}
