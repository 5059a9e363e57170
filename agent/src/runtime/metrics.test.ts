import { describe, expect, it } from 'vitest';
import type { JobStepEvent, PrinterView } from '../jobs/index.js';
import { AgentMetrics } from './metrics.js';

function view(name: string, waits: PrinterView['waits'], queuesAhead: boolean): PrinterView {
  return {
    name,
    language: 'zpl',
    transport: 'serial',
    target: '/dev/ttyUSB0',
    rfid: true,
    nfc: false,
    scanner: '/dev/ttyACM0',
    state: 'printing',
    detail: null,
    status: null,
    currentJob: null,
    statusAt: null,
    printerWaitedAt: null,
    scanWindow: { labelMs: 473, scanMs: 21, queuesAhead },
    waits,
  };
}

const step = (printer: string, s: JobStepEvent['step'], timings?: JobStepEvent['timings']): JobStepEvent => ({
  jobRef: 'job_1',
  attemptId: 'att_1',
  printer,
  step: s,
  at: '2026-11-28T16:00:00.000Z',
  ...(timings ? { timings } : {}),
});

describe('AgentMetrics', () => {
  it("renders each printer's finished jobs, the agent's time per sealed label, the waits and the window", () => {
    const m = new AgentMetrics();
    m.observe(step('zebra-1', 'printing')); // not a final step
    m.observe(step('zebra-1', 'sealed', { totalMs: 900, deviceMs: 870, humanMs: 0 })); // 30 ms
    m.observe(step('zebra-1', 'sealed', { totalMs: 5000, deviceMs: 860, humanMs: 4000 })); // 140 ms
    m.observe(step('zebra-1', 'failed'));
    const text = m.render(
      [
        view('zebra-1', { agent: { labels: 2, ms: 45 }, scan: { labels: 1, ms: 20 } }, true),
        view('zebra-2', { agent: { labels: 0, ms: 0 }, scan: { labels: 0, ms: 0 } }, false),
      ],
      { pending: 1, delivered: 7 },
    );
    const lines = text.split('\n');
    expect(text.endsWith('\n')).toBe(true);
    expect(lines).toEqual(
      expect.arrayContaining([
        '# TYPE dpp_agent_jobs_finished_total counter',
        'dpp_agent_jobs_finished_total{printer="zebra-1",step="sealed"} 2',
        'dpp_agent_jobs_finished_total{printer="zebra-1",step="failed"} 1',
        'dpp_agent_jobs_finished_total{printer="zebra-2",step="sealed"} 0',
        'dpp_agent_label_agent_seconds_bucket{printer="zebra-1",le="0.025"} 0',
        'dpp_agent_label_agent_seconds_bucket{printer="zebra-1",le="0.05"} 1',
        'dpp_agent_label_agent_seconds_bucket{printer="zebra-1",le="0.1"} 1',
        'dpp_agent_label_agent_seconds_bucket{printer="zebra-1",le="0.25"} 2',
        'dpp_agent_label_agent_seconds_bucket{printer="zebra-1",le="+Inf"} 2',
        'dpp_agent_label_agent_seconds_count{printer="zebra-1"} 2',
        'dpp_agent_printer_waits_total{printer="zebra-1",reason="agent"} 2',
        'dpp_agent_printer_waits_total{printer="zebra-1",reason="scan"} 1',
        'dpp_agent_printer_wait_seconds_total{printer="zebra-1",reason="agent"} 0.045',
        'dpp_agent_scan_window_queues_ahead{printer="zebra-1"} 1',
        'dpp_agent_scan_window_queues_ahead{printer="zebra-2"} 0',
        'dpp_agent_outbox_results{state="pending"} 1',
      ]),
    );
    // Cumulative buckets above: 30 ms falls in le=0.05, 140 ms in le=0.25.
    expect(lines.find((l) => l.startsWith('dpp_agent_label_agent_seconds_sum{printer="zebra-1"}'))).toMatch(
      / 0\.17\d*$/,
    );
    // Every sample line belongs to a family declared before it.
    const declared = new Set(lines.filter((l) => l.startsWith('# TYPE ')).map((l) => l.split(' ')[2]));
    for (const l of lines.filter((x) => x && !x.startsWith('#')))
      expect(declared.has(l.replace(/(_bucket|_sum|_count)?\{.*$/, ''))).toBe(true);
  });

  it('escapes label values as the exposition format asks', () => {
    const m = new AgentMetrics();
    m.observe(step('a"b\\c\nd', 'abandoned'));
    expect(m.render([], {})).toContain(
      'dpp_agent_jobs_finished_total{printer="a\\"b\\\\c\\nd",step="abandoned"} 1',
    );
  });
});
