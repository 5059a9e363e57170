/**
 * The agent's figures for a line's monitoring, as Prometheus text (`GET /metrics` on the console's loopback
 * port): per printer, the jobs it finished by final step, the agent's time per sealed label (claim to SEALED
 * less the printer's, the scanner's and people's), the printer's waits on the agent (print-lane.ts) and
 * whether the scanner's window lets the next format queue; the results the outbox holds, by state. What the
 * benchmark measures from the simulator's side (docs/benchmarks.md, the agent's rows), a floor can watch here.
 */
import type { JobStepEvent, PrinterView } from '../jobs/index.js';
import { FINAL_STEPS } from '../jobs/index.js';

/** Upper bounds (seconds) of the agent-time histogram: from a few milliseconds to a label's length. */
const AGENT_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface PrinterFigures {
  finished: Map<string, number>;
  /** Sealed labels per bucket of agent time (the last slot: above the largest bound). */
  buckets: number[];
  agentSeconds: number;
  sealed: number;
}

export class AgentMetrics {
  private readonly printers = new Map<string, PrinterFigures>();

  /** Takes a job's step (the agent's `job` event); only final steps count. */
  observe(e: JobStepEvent): void {
    if (!FINAL_STEPS.includes(e.step)) return;
    const p = this.of(e.printer);
    p.finished.set(e.step, (p.finished.get(e.step) ?? 0) + 1);
    if (e.step !== 'sealed' || !e.timings) return;
    const { totalMs, deviceMs, humanMs } = e.timings;
    const seconds = Math.max(0, totalMs - deviceMs - humanMs) / 1000;
    const i = AGENT_SECONDS_BUCKETS.findIndex((le) => seconds <= le);
    p.buckets[i < 0 ? AGENT_SECONDS_BUCKETS.length : i]! += 1;
    p.agentSeconds += seconds;
    p.sealed += 1;
  }

  /** The exposition: the figures observed, the printers' views as they are now and the outbox's counts. */
  render(views: readonly PrinterView[], outbox: Readonly<Record<string, number>>): string {
    const out: string[] = [];
    const family = (name: string, type: string, help: string) =>
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    const names = [...new Set([...views.map((v) => v.name), ...this.printers.keys()])];

    family(
      'dpp_agent_jobs_finished_total',
      'counter',
      'Jobs this agent finished, by printer and final step.',
    );
    for (const name of names)
      for (const step of FINAL_STEPS)
        out.push(
          `dpp_agent_jobs_finished_total${labels({ printer: name, step })} ${this.of(name).finished.get(step) ?? 0}`,
        );

    family(
      'dpp_agent_label_agent_seconds',
      'histogram',
      "The agent's time per sealed label: claim to SEALED less the printer's, the scanner's and people's.",
    );
    for (const name of names) {
      const p = this.of(name);
      let cumulative = 0;
      AGENT_SECONDS_BUCKETS.forEach((le, i) => {
        cumulative += p.buckets[i]!;
        out.push(
          `dpp_agent_label_agent_seconds_bucket${labels({ printer: name, le: String(le) })} ${cumulative}`,
        );
      });
      out.push(
        `dpp_agent_label_agent_seconds_bucket${labels({ printer: name, le: '+Inf' })} ${p.sealed}`,
        `dpp_agent_label_agent_seconds_sum${labels({ printer: name })} ${p.agentSeconds}`,
        `dpp_agent_label_agent_seconds_count${labels({ printer: name })} ${p.sealed}`,
      );
    }

    family(
      'dpp_agent_printer_waits_total',
      'counter',
      'Labels before which the printer stood empty, the label ahead out, while the next was already claimed by ' +
        'this agent; reason scan: held until the label before was scanned.',
    );
    for (const v of views)
      for (const [reason, w] of Object.entries(v.waits))
        out.push(`dpp_agent_printer_waits_total${labels({ printer: v.name, reason })} ${w.labels}`);
    family('dpp_agent_printer_wait_seconds_total', 'counter', 'How long those waits lasted, in all.');
    for (const v of views)
      for (const [reason, w] of Object.entries(v.waits))
        out.push(`dpp_agent_printer_wait_seconds_total${labels({ printer: v.name, reason })} ${w.ms / 1000}`);

    family(
      'dpp_agent_scan_window_queues_ahead',
      'gauge',
      "1 while the scanner's window lets the next format queue behind the one printing, else 0.",
    );
    for (const v of views)
      out.push(
        `dpp_agent_scan_window_queues_ahead${labels({ printer: v.name })} ${v.scanWindow.queuesAhead ? 1 : 0}`,
      );

    family('dpp_agent_outbox_results', 'gauge', 'Results in the outbox, by state.');
    for (const [state, n] of Object.entries(outbox))
      out.push(`dpp_agent_outbox_results${labels({ state })} ${n}`);
    return `${out.join('\n')}\n`;
  }

  private of(printer: string): PrinterFigures {
    let p = this.printers.get(printer);
    if (!p) {
      p = {
        finished: new Map(),
        buckets: new Array<number>(AGENT_SECONDS_BUCKETS.length + 1).fill(0),
        agentSeconds: 0,
        sealed: 0,
      };
      this.printers.set(printer, p);
    }
    return p;
  }
}

/** `{a="x",b="y"}` with the exposition format's escapes (backslash, quote, newline). */
function labels(pairs: Record<string, string>): string {
  const escaped = Object.entries(pairs).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return `{${escaped.join(',')}}`;
}
