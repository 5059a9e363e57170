/** The verifier's answer: one line per link, a summary, the exit code; or the same as JSON. */
import { LINKS, type LinkResult } from './result.js';

export interface SealReport {
  jobRef: string;
  links: LinkResult[];
}

export interface Report {
  /** What was checked: the Digital Link, the proof URL or file. */
  input: string;
  digitalLink: string | undefined;
  proofUrl: string | undefined;
  label: { gtin: string; serial: string; digitalLink: string; status: string; voidedAt: string | null };
  keys: LinkResult;
  seals: SealReport[];
  ok: boolean;
  /** 0: every link of every seal verified; 1: a link is broken or pending. */
  exitCode: 0 | 1;
}

export function buildReport(r: Omit<Report, 'ok' | 'exitCode'>): Report {
  const all = [r.keys, ...r.seals.flatMap((s) => s.links)];
  const ok = all.every((l) => l.status === 'verified');
  return { ...r, ok, exitCode: ok ? 0 : 1 };
}

const MARK = { verified: '✔', broken: '✘', pending: '…' } as const;
const WIDTH = Math.max(...LINKS.map((l) => l.length));

function line(l: LinkResult, indent: string): string {
  return `${indent}${MARK[l.status]} ${l.link.padEnd(WIDTH)}  ${l.status}: ${l.detail}`;
}

export function formatReport(r: Report): string {
  const out: string[] = [];
  const voided = r.label.voidedAt ? ` at ${r.label.voidedAt}` : '';
  out.push(`label ${r.label.digitalLink} (${r.label.status}${voided})`);
  if (r.proofUrl) out.push(`proof ${r.proofUrl}`);
  out.push(line(r.keys, ''));
  r.seals.forEach((s, i) => {
    out.push(`seal ${i + 1} of ${r.seals.length}: job ${s.jobRef}`);
    for (const l of s.links) out.push(line(l, '  '));
  });
  const links = 1 + r.seals.reduce((n, s) => n + s.links.length, 0);
  const all = [r.keys, ...r.seals.flatMap((s) => s.links)];
  const count = (status: string): number => all.filter((l) => l.status === status).length;
  const seals = `${r.seals.length} seal${r.seals.length === 1 ? '' : 's'}`;
  if (r.ok) out.push(`✔ verified: all ${links} links of ${seals}`);
  else {
    const parts = [`${count('broken')} broken`, `${count('pending')} pending`].filter(
      (p) => !p.startsWith('0 '),
    );
    out.push(`✘ not verified: ${parts.join(', ')} of ${links} links of ${seals}`);
  }
  return `${out.join('\n')}\n`;
}
