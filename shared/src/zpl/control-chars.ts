/** Control characters of the ZPL host-status frames (ZPL II Programming Guide, ~HS and ~HQ). */
export const STX = '\x02';
export const ETX = '\x03';
export const CR = '\r';
export const LF = '\n';
export const CRLF = '\r\n';
