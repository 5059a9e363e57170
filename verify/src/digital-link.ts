/**
 * GS1 Digital Link URIs (GS1 Digital Link Standard 1.2 §4): `https://host[/prefix]/01/{gtin}/21/{serial}`,
 * possibly with further key qualifiers, attributes or a query.
 */
import { VerifyError } from './errors.js';
import { gtinCheckDigit } from './sgtin.js';

export interface DigitalLink {
  /** The link as given. */
  url: string;
  origin: string;
  /** GTIN-14 (shorter GTINs padded with zeros, GS1 DL §4.5). */
  gtin: string;
  serial: string;
}

export function parseDigitalLink(text: string): DigitalLink {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new VerifyError('NOT_A_DIGITAL_LINK', `not a URL: ${text}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new VerifyError('NOT_A_DIGITAL_LINK', `not an http(s) Digital Link: ${text}`);
  }
  const segments = url.pathname.split('/').map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  const at = segments.indexOf('01');
  const gtinText = at >= 0 ? segments[at + 1] : undefined;
  const serialAt = segments.indexOf('21', at + 2);
  const serial = serialAt > at ? segments[serialAt + 1] : undefined;
  if (gtinText === undefined || !/^(\d{8}|\d{12,14})$/.test(gtinText) || !serial) {
    throw new VerifyError(
      'NOT_A_DIGITAL_LINK',
      `not a GS1 Digital Link with a GTIN (01) and a serial (21): ${text}`,
    );
  }
  const gtin = gtinText.padStart(14, '0');
  if (gtinCheckDigit(gtin.slice(0, 13)) !== gtin[13]) {
    throw new VerifyError('NOT_A_DIGITAL_LINK', `GTIN ${gtinText} of ${text} has a wrong check digit`);
  }
  return { url: url.href, origin: url.origin, gtin, serial };
}

/** Where the control plane serves a label's proof (label-proof.md, "Where to get it"). */
export function proofUrlOf(origin: string, gtin: string, serial: string): string {
  return `${origin}/api/v2/public/labels/${gtin}/${encodeURIComponent(serial)}/proof`;
}

/** Two URLs compared after WHATWG URL normalisation (case of scheme and host, default port, dot segments). */
export function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}

/** The origin of a URL, or null when it is not one. */
export function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}
