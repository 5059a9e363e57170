import { describe, expect, it } from 'vitest';
import {
  ACTIVE_STATES,
  HAPPY_PATH,
  JOB_STATES,
  TERMINAL_STATES,
  TRANSITIONS,
  isTerminal,
  nextResultStates,
  resultSources,
} from './states.js';

describe('print job state machine', () => {
  it('follows the happy path of the spec to SEALED', () => {
    expect(nextResultStates('CLAIMED')).toEqual(['RENDERED', 'FAILED']);
    expect(nextResultStates('RENDERED')).toEqual(['SPOOL_SUBMITTED', 'FAILED']);
    expect(nextResultStates('SPOOL_SUBMITTED')).toEqual(['PRINTED_ATTESTED', 'FAILED']);
    expect(nextResultStates('PRINTED_ATTESTED')).toEqual(['SCAN_VERIFIED', 'FAILED']);
    expect(nextResultStates('SCAN_VERIFIED')).toEqual(['SEALED', 'FAILED']);
  });

  it('never lets the system attest a print', () => {
    const attest = TRANSITIONS.filter((t) => t.to === 'PRINTED_ATTESTED');
    expect(attest).toHaveLength(1);
    expect(attest[0]!.actors).not.toContain('system');
  });

  it('has no way out of a terminal state', () => {
    for (const s of JOB_STATES.filter(isTerminal))
      expect(TRANSITIONS.filter((t) => t.from === s)).toEqual([]);
  });

  it('admits FAILED from every state that holds an attempt, and nothing from QUEUED by result', () => {
    expect(resultSources('FAILED').sort()).toEqual([
      'CLAIMED',
      'PRINTED_ATTESTED',
      'RENDERED',
      'SCAN_VERIFIED',
      'SPOOL_SUBMITTED',
    ]);
    expect(nextResultStates('QUEUED')).toEqual([]);
    expect(resultSources('SEALED')).toEqual(['SCAN_VERIFIED']);
  });
});

describe('state groups', () => {
  it('splits the states into active and terminal, and the happy path ends SEALED', () => {
    expect([...ACTIVE_STATES, ...TERMINAL_STATES].sort()).toEqual([...JOB_STATES].sort());
    expect(ACTIVE_STATES).toContain('FAILED');
    expect(HAPPY_PATH).toEqual([
      'RENDERED',
      'SPOOL_SUBMITTED',
      'PRINTED_ATTESTED',
      'SCAN_VERIFIED',
      'SEALED',
    ]);
  });
});
