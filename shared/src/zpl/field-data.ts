/** What may travel in a ZPL `^FD` field as it is (without `^FH` escapes). */
import { DeviceProtocolError } from './errors.js';

/**
 * Checks field data: printable ASCII only, and never `^` or `~`, which would start a new command
 * in the middle of the field. Returns the data; throws `INVALID_FIELD_DATA` otherwise.
 *
 * @example
 * assertZplFieldData('Lot 7, shift B'); // 'Lot 7, shift B'
 * assertZplFieldData('50% ^off');       // throws DeviceProtocolError INVALID_FIELD_DATA
 */
export function assertZplFieldData(data: string, what = 'field data'): string {
  if (data.length === 0) throw new DeviceProtocolError('INVALID_FIELD_DATA', `${what} is empty`);
  for (const ch of data) {
    const code = ch.charCodeAt(0);
    if (code < 0x20 || code > 0x7e || ch === '^' || ch === '~') {
      throw new DeviceProtocolError(
        'INVALID_FIELD_DATA',
        `${what} contains ${JSON.stringify(ch)}: only printable ASCII without ^ and ~ can travel in ^FD`,
        { details: { char: ch } },
      );
    }
  }
  return data;
}
