// @ts-check
/**
 * The job view (`#/jobs/{ref}`): the label, where the job stands on the road, every piece of evidence this
 * device gathered, its attempts here, and the results it sent to the control plane.
 */
import { loadDetail } from './api.js';
import { actionButtons, scanForm } from './actions.js';
import { $, dateTime, facts, h, mono, setText, time } from './dom.js';
import { EVIDENCE_OF_STEP, changed, state, stepInfo, stepTone } from './model.js';
import { road } from './road.js';

/** @typedef {import('./model.js').AgentJobView} AgentJobView */
/** @typedef {import('./model.js').AttemptView} AttemptView */
/** @typedef {import('./model.js').CurrentJob} CurrentJob */
/** @typedef {AttemptView['evidence']} Evidence */

/** @type {ReturnType<typeof setTimeout> | undefined} */
let jobTimer;
/** Redraws the job view soon (changes close together make one redraw). */
export function refreshJobSoon() {
  clearTimeout(jobTimer);
  jobTimer = setTimeout(() => renderJob(false), 150);
}

/** Draws the routed job; `focus` moves the keyboard to its title (on arrival, not on a redraw). */
/** @param {boolean} focus */
export async function renderJob(focus) {
  const ref = state.route.jobRef;
  if (ref === null) return;
  const body = $('job-body');
  const title = $('job-title');
  const data = await loadDetail(ref);
  if (state.route.jobRef !== ref) return;
  setText(title, `Job ${ref}`);
  if (!data) {
    body.replaceChildren(h('p', { class: 'empty', text: 'This job is unknown to this device.' }));
    if (focus) title.focus();
    return;
  }
  const current = state.status?.jobs.current.find((j) => j.jobRef === ref) ?? null;
  if (changed(`job:${ref}`, { data, waiting: current?.waitingFor ?? null, required: state.session.required }))
    body.replaceChildren(jobView(data, current));
  if (focus) title.focus();
}

/** @param {AgentJobView} data @param {CurrentJob | null} current */
function jobView(data, current) {
  const a = /** @type {AttemptView} */ (data.attempts[0]);
  return h(
    'div',
    {},
    jobHead(data, a),
    current?.waitingFor === 'attestation' ? actionButtons(current, a) : null,
    current?.waitingFor === 'scan' ? scanForm(current) : null,
    h(
      'div',
      { class: 'evidence' },
      evidence(a, current),
      a.evidence.failure || a.error
        ? section(
            'Failure',
            facts([
              ['Reason', a.evidence.failure?.reason ?? a.error?.reason],
              ['Detail', a.evidence.failure?.detail ?? a.error?.message],
            ]),
          )
        : null,
      section('Attempts on this device', attemptsTable(data)),
      section('Results sent to the control plane', resultsTable(data)),
    ),
  );
}

/** The label preview, the job's facts and its road. @param {AgentJobView} data @param {AttemptView} a */
function jobHead(data, a) {
  const reached = EVIDENCE_OF_STEP.reduce((n, kind, i) => (kind === null || a.evidence[kind] ? i : n), 0);
  return h(
    'div',
    { class: 'job-head' },
    h(
      'div',
      { class: 'preview' },
      h('img', {
        src: `${data.previewUrl}?attempt=${encodeURIComponent(a.attemptId)}`,
        alt: `QR code of the label for serial ${a.serial}`,
        width: 240,
        height: 240,
        onerror: (/** @type {Event} */ e) =>
          /** @type {Element} */ (e.currentTarget).replaceWith(
            h('p', { class: 'empty', text: 'No label preview.' }),
          ),
      }),
    ),
    h(
      'div',
      {},
      h(
        'p',
        {},
        h('span', {
          class: `state tone-${stepTone(a.step)}`,
          'data-role': 'job-step',
          text: stepInfo(a.step)[1],
        }),
      ),
      facts([
        ['Serial', a.serial],
        ['GTIN', a.gtin],
        ['Printer', a.printer],
        ['Digital Link', mono(a.digitalLink)],
        ['Claimed', dateTime(a.claimedAt)],
        ['Finished', a.finishedAt ? dateTime(a.finishedAt) : null],
      ]),
      road(a.step, reached),
    ),
  );
}

/** @param {string} title @param {Node} content */
function section(title, content) {
  return h('section', { 'aria-label': title }, h('h3', { text: title }), content);
}

/** @param {string} text */
function none(text) {
  return h('p', { class: 'empty', text });
}

/** @param {NonNullable<Evidence['attestation']>} a */
function actorText(a) {
  if (a.actor.type !== 'human')
    return `This device (${a.method === 'rfid_readback' ? 'RFID read-back' : 'printer status'})`;
  return a.actor.name ? `Supervisor ${a.actor.name} (${a.actor.id})` : `Supervisor ${a.actor.id}`;
}

/** One section per piece of evidence, in the order of the road. */
/** @param {AttemptView} a @param {CurrentJob | null} current */
function evidence(a, current) {
  const { render_manifest: manifest, spool_receipt: spool, attestation, scan_result: scan } = a.evidence;
  return [
    section(
      'Rendered label',
      manifest
        ? facts([
            ['Language', String(manifest.language ?? '').toUpperCase()],
            ['QR proven', manifest.qrVerified ? 'yes, decoded back to the link' : 'no'],
            ['Bytes', manifest.payloadBytes],
            ['SHA-256', mono(manifest.payloadSha256)],
          ])
        : none('Not rendered yet.'),
    ),
    section(
      'Spool receipt',
      spool
        ? facts([
            ['Printer', spool.printer],
            ['Transport', spool.transport],
            ['Bytes', spool.bytes],
            ['SHA-256', mono(spool.payloadSha256)],
            ['Reference', mono(spool.reference)],
            ['Sent', dateTime(spool.submittedAt)],
            ['Re-prints', a.evidence.reprints],
          ])
        : none('Not sent to the printer yet.'),
    ),
    section(
      'Attestation',
      attestation
        ? facts([
            ['Attested by', actorText(attestation)],
            ['Method', attestation.method],
            ['At', dateTime(attestation.attestedAt)],
            ['Note', attestation.note],
          ])
        : none(current?.waitingFor === 'attestation' ? 'Waiting for a supervisor.' : 'Not attested yet.'),
    ),
    section(
      'Scan result',
      scan
        ? facts([
            ['Scanner', scan.scanner],
            ['Decoded link', mono(scan.decodedLink)],
            ['Link matches', scan.linkMatches ? 'yes' : 'no'],
            ['At', dateTime(scan.scannedAt)],
          ])
        : none('Not scanned yet.'),
    ),
    section(
      'EPC (RFID)',
      a.sgtin96Epc
        ? facts([
            ['Written', mono(a.sgtin96Epc)],
            [
              'Printer read-back',
              attestation?.epcReadBack
                ? mono(attestation.epcReadBack)
                : attestation?.actor.type === 'human'
                  ? 'not kept (a supervisor attested)'
                  : 'not read back',
            ],
            [
              'Scanner read',
              scan?.epcRead
                ? h('span', {}, mono(scan.epcRead), scan.epcMatches ? ' (matches)' : ' (differs)')
                : 'no tag read',
            ],
          ])
        : none('No RFID on this label.'),
    ),
  ];
}

/** @param {string[]} columns @param {Node[]} rows */
function table(columns, rows) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((c) => h('th', { scope: 'col', text: c })),
        ),
      ),
      h('tbody', {}, rows),
    ),
  );
}

/** @param {AgentJobView} data */
function attemptsTable(data) {
  return table(
    ['Attempt', 'Printer', 'Step', 'Claimed', 'Problem'],
    data.attempts.map((t) =>
      h(
        'tr',
        {},
        h('td', {}, mono(t.attemptId)),
        h('td', { text: t.printer }),
        h('td', { text: stepInfo(t.step)[1] }),
        h('td', { text: time(t.claimedAt) }),
        h('td', { text: t.error ? `${t.error.reason ?? t.error.code}: ${t.error.message}` : '' }),
      ),
    ),
  );
}

/** @param {AgentJobView} data */
function resultsTable(data) {
  return table(
    ['State', 'Delivery', 'Tries', 'Answer'],
    data.results.map((r) =>
      h(
        'tr',
        {},
        h('td', { text: r.status }),
        h('td', { text: r.delivery }),
        h('td', { text: r.tries }),
        h('td', { text: r.error ? `${r.httpStatus ?? ''} ${r.error}` : (r.httpStatus ?? '') }),
      ),
    ),
  );
}
