/**
 * `^HV` host verification answer (ZPL II Programming Guide, ^HV `^HV#,n,h,t,a`): after a label is
 * processed the printer sends the data of field `#` (at most `n` characters), preceded by header `h`
 * and followed by terminator `t`, with no framing of its own. With `a` = `L` one answer goes out per
 * label printed, VOID labels included; with `F` one per label format.
 *
 * The writer's defaults (`^HV1,24,EPC:,_0D_0A,L`) make the answer `EPC:<24 hex digits>\r\n`. For a
 * label whose tag could not be encoded, the data is what the tag holds: the simulator's blank tags
 * read as all zeros.
 */
import { DeviceProtocolError } from './errors.js';
import { ZPL_DEFAULT_READ_BACK, ZPL_NFC_READ_BACK } from './writer.js';

/** Header and terminator framing an answer. */
export interface HostVerificationFraming {
  header: string;
  terminator: string;
}

/** The default framing, the same the writer asks for. */
export const DEFAULT_HOST_VERIFICATION_FRAMING: HostVerificationFraming = {
  header: ZPL_DEFAULT_READ_BACK.header,
  terminator: ZPL_DEFAULT_READ_BACK.terminator,
};

/** The framing of the NFC tag's read-back the writer asks for (`NFC:` ... CR LF). */
export const NFC_HOST_VERIFICATION_FRAMING: HostVerificationFraming = {
  header: ZPL_NFC_READ_BACK.header,
  terminator: ZPL_NFC_READ_BACK.terminator,
};

/**
 * The bytes the printer sends for one `^HV` answer.
 *
 * @example
 * formatHostVerification('30764433400D1EC000000002', { header: 'EPC:', terminator: '\r\n' }, 24);
 * // 'EPC:30764433400D1EC000000002\r\n'
 */
export function formatHostVerification(
  data: string,
  framing: HostVerificationFraming = DEFAULT_HOST_VERIFICATION_FRAMING,
  maxBytes = 64,
): string {
  return framing.header + data.slice(0, maxBytes) + framing.terminator;
}

/**
 * The data of one `^HV` answer. Leading CR/LF (left over from an earlier frame) is ignored.
 *
 * @example
 * parseHostVerification('EPC:30764433400D1EC000000002\r\n'); // '30764433400D1EC000000002'
 */
export function parseHostVerification(
  text: string,
  framing: HostVerificationFraming = DEFAULT_HOST_VERIFICATION_FRAMING,
): string {
  const body = text.replace(/^[\r\n]+/, '');
  const end = framing.terminator === '' ? body.length : body.lastIndexOf(framing.terminator);
  if (!body.startsWith(framing.header) || end < framing.header.length) {
    throw new DeviceProtocolError(
      'MALFORMED_HOST_VERIFICATION',
      '^HV answer does not have the expected framing',
      {
        details: { text, framing },
      },
    );
  }
  return body.slice(framing.header.length, end);
}
