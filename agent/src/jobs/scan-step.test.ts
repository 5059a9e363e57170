import type { AidcEnvelopeClaims } from '@dpp/shared';
import { describe, expect, it } from 'vitest';
import { checkScan } from './scan-step.js';

const claims = {
  digital_link: 'https://id.example.com/01/09506000134352/21/A1',
  sgtin96_epc: '3034257BF7194E4000000001',
} as AidcEnvelopeClaims;
const at = new Date('2026-11-25T10:00:00Z');
const base = { scanner: 'scanner-1', claims, at, config: undefined };

describe('checkScan', () => {
  it('passes the job Digital Link, and on RFID the job EPC (in any case)', () => {
    expect(checkScan({ symbol: claims.digital_link, epc: undefined }, { ...base, rfid: false })).toEqual({
      scanner: 'scanner-1',
      decodedLink: claims.digital_link,
      linkMatches: true,
      scannedAt: '2026-11-25T10:00:00.000Z',
    });
    expect(
      checkScan(
        { symbol: claims.digital_link, epc: claims.sgtin96_epc!.toLowerCase() },
        { ...base, rfid: true },
      ),
    ).toMatchObject({ epcRead: claims.sgtin96_epc, epcMatches: true });
  });

  it('compares the EPC of either scheme: an SGTIN-198 claim names it in epc', () => {
    const hex = '36364433400D1EE0B760C18ADF00000000000000000000000000';
    const c198 = { ...claims, sgtin96_epc: null, epc: { scheme: 'sgtin-198', hex } } as AidcEnvelopeClaims;
    expect(
      checkScan({ symbol: claims.digital_link, epc: hex }, { ...base, claims: c198, rfid: true }),
    ).toMatchObject({ epcRead: hex, epcMatches: true });
    expect(() =>
      checkScan(
        { symbol: claims.digital_link, epc: `${hex.slice(0, 50)}01` },
        { ...base, claims: c198, rfid: true },
      ),
    ).toThrow(/the tag reads/);
  });

  it('fails a label with no code, another link, another EPC, or no tag where the scanner reads RFID', () => {
    const reason = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return (err as { details?: { reason?: string } }).details?.reason;
      }
      return 'passed';
    };
    expect(reason(() => checkScan({ symbol: null, epc: undefined }, { ...base, rfid: false }))).toBe(
      'scan_noread',
    );
    expect(
      reason(() => checkScan({ symbol: 'https://evil.example/', epc: undefined }, { ...base, rfid: false })),
    ).toBe('scan_mismatch');
    expect(
      reason(() =>
        checkScan({ symbol: claims.digital_link, epc: '3034257BF7194E4000000002' }, { ...base, rfid: true }),
      ),
    ).toBe('scan_epc_mismatch');
    const readsRfid = { ...base, rfid: true, config: { readsRfid: true } as never };
    expect(reason(() => checkScan({ symbol: claims.digital_link, epc: null }, readsRfid))).toBe('scan_notag');
    // A scanner that does not read RFID proves the link only.
    expect(reason(() => checkScan({ symbol: claims.digital_link, epc: null }, { ...base, rfid: true }))).toBe(
      'passed',
    );
  });
});
