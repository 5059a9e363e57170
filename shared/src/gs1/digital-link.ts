/**
 * GS1 Digital Link URIs for a serialised trade item: primary key AI (01) GTIN with key qualifier
 * AI (21) serial, `<base>/01/<gtin14>/21/<serial>`.
 *
 * GS1 Digital Link: URI Syntax 1.x: the path is `/01/{gtin}/21/{serial}` after any custom domain and path
 * prefix; the GTIN is written with 14 digits in URIs we build, but GTIN-8/12/13 in a received path are
 * accepted and padded; AI values are percent-encoded (see percent-encoding.ts); the query string carries
 * data attributes and is passed through untouched.
 */
import { CodecError } from '../errors/codec-error.js';
import { normalizeGtin } from './gtin.js';
import { decodeDigitalLinkValue, encodeDigitalLinkValue } from './percent-encoding.js';
import { assertGs1Serial } from './serial.js';

/** GTIN and serial carried by a Digital Link path. */
export interface DigitalLinkKey {
  /** 14 digits, check digit verified. */
  gtin: string;
  /** AI (21) serial, percent-decoded. */
  serial: string;
}

/** A parsed Digital Link URI. */
export interface ParsedDigitalLink extends DigitalLinkKey {
  /** Scheme, authority and any path prefix before `/01/`, without a trailing slash. */
  baseUrl: string;
  /** The query string without its `?`, untouched (`''` when there is none). */
  query: string;
}

/**
 * Validates and normalises a base URL: http(s) only, no query or fragment, no trailing slash.
 * A path prefix (`https://example.com/dl`) is allowed, as the standard allows.
 */
function normalizeBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch (cause) {
    throw new CodecError('INVALID_DIGITAL_LINK', `invalid base URL ${JSON.stringify(baseUrl)}`, { cause });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CodecError(
      'INVALID_DIGITAL_LINK',
      `a Digital Link base URL is http or https, got ${url.protocol}`,
    );
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new CodecError(
      'INVALID_DIGITAL_LINK',
      'a Digital Link base URL has no query, fragment or credentials',
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * A path segment of only dots is removed or collapsed by every URI resolver (RFC 3986 §5.2.4, and the
 * WHATWG URL parser also treats `%2E` as a dot), so serials `.` and `..` can never reach a resolver.
 */
function assertLinkableSerial(serial: string): void {
  if (serial === '.' || serial === '..') {
    throw new CodecError(
      'INVALID_SERIAL',
      `serial ${JSON.stringify(serial)} cannot be carried in a URI path segment`,
    );
  }
}

/**
 * The Digital Link path for a GTIN and serial: `/01/<gtin14>/21/<percent-encoded serial>`.
 *
 * @example
 * digitalLinkPath('95010939', '1'); // '/01/00000095010939/21/1'
 */
export function digitalLinkPath(gtin: string, serial: string): string {
  const gtin14 = normalizeGtin(gtin);
  assertGs1Serial(serial);
  assertLinkableSerial(serial);
  return `/01/${gtin14}/21/${encodeDigitalLinkValue(serial)}`;
}

/**
 * Builds the GS1 Digital Link URI of a serialised item on a base URL.
 * Throws `CodecError` (`INVALID_GTIN`, `INVALID_SERIAL`, `INVALID_DIGITAL_LINK` for a bad base URL).
 *
 * @example
 * buildDigitalLink('https://id.example.com', '70614141123451', '32a/b');
 * // 'https://id.example.com/01/70614141123451/21/32a%2Fb'
 */
export function buildDigitalLink(baseUrl: string, gtin: string, serial: string): string {
  return `${normalizeBaseUrl(baseUrl)}${digitalLinkPath(gtin, serial)}`;
}

/** Splits a path into its prefix segments and the GTIN/serial key; the path must end with the key. */
function parsePathSegments(path: string): { prefix: string; key: DigitalLinkKey } {
  if (!path.startsWith('/')) {
    throw new CodecError(
      'INVALID_DIGITAL_LINK',
      `a Digital Link path starts with '/', got ${JSON.stringify(path)}`,
    );
  }
  if (path.includes('?') || path.includes('#')) {
    throw new CodecError('INVALID_DIGITAL_LINK', 'pass the path only, without query or fragment');
  }
  const segments = path.slice(1).split('/');
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop(); // one trailing slash
  const tail = segments.slice(-4);
  const [ai01, gtin, ai21, serialSegment] = tail;
  if (
    segments.some((s) => s === '') ||
    tail.length !== 4 ||
    ai01 !== '01' ||
    ai21 !== '21' ||
    gtin === undefined ||
    serialSegment === undefined
  ) {
    throw new CodecError(
      'INVALID_DIGITAL_LINK',
      `expected a path ending in /01/{gtin}/21/{serial}, got ${JSON.stringify(path)}`,
      { details: { path } },
    );
  }
  const serial = decodeDigitalLinkValue(serialSegment);
  assertLinkableSerial(serial);
  const key = { gtin: normalizeGtin(gtin), serial: assertGs1Serial(serial) };
  const prefixSegments = segments.slice(0, -4);
  return { prefix: prefixSegments.length === 0 ? '' : `/${prefixSegments.join('/')}`, key };
}

/**
 * Parses the path of a Digital Link request (what a resolver route sees): exactly
 * `/01/{gtin}/21/{serial}`, one trailing slash tolerated. GTIN-8/12/13 are padded to 14 digits.
 * Throws `CodecError` `INVALID_DIGITAL_LINK`, `INVALID_GTIN` or `INVALID_SERIAL`.
 *
 * @example
 * parseDigitalLinkPath('/01/95010939/21/32a%2Fb/'); // { gtin: '00000095010939', serial: '32a/b' }
 */
export function parseDigitalLinkPath(path: string): DigitalLinkKey {
  const { prefix, key } = parsePathSegments(path);
  if (prefix !== '') {
    throw new CodecError(
      'INVALID_DIGITAL_LINK',
      `unexpected path prefix ${JSON.stringify(prefix)} before /01/`,
    );
  }
  return key;
}

const URI = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]+)([^?#]*)(?:\?([^#]*))?(?:#.*)?$/;

/**
 * Parses a full Digital Link URI for AI (01) + AI (21). The base URL is everything before `/01/` (a path
 * prefix is allowed); when `options.baseUrl` is given the URI must be on that base. The query string is
 * kept as is, the fragment is ignored (it never reaches a server). GTIN-8/12/13 are padded to 14 digits;
 * one trailing slash is tolerated. Throws `CodecError` `INVALID_DIGITAL_LINK`, `INVALID_GTIN` or
 * `INVALID_SERIAL`.
 *
 * @example
 * parseDigitalLink('https://id.example.com/01/09506000134352/21/ABC%2F1?linkType=all');
 * // { baseUrl: 'https://id.example.com', gtin: '09506000134352', serial: 'ABC/1', query: 'linkType=all' }
 */
export function parseDigitalLink(uri: string, options: { baseUrl?: string } = {}): ParsedDigitalLink {
  const match = typeof uri === 'string' ? URI.exec(uri) : null;
  if (match === null) {
    throw new CodecError('INVALID_DIGITAL_LINK', `not an absolute URI: ${JSON.stringify(uri)}`);
  }
  const [, scheme = '', authority = '', path = '', query = ''] = match;
  const { prefix, key } = parsePathSegments(path);
  const baseUrl = normalizeBaseUrl(`${scheme}://${authority}${prefix}`);
  if (options.baseUrl !== undefined && normalizeBaseUrl(options.baseUrl) !== baseUrl) {
    throw new CodecError('INVALID_DIGITAL_LINK', `URI is not on base ${options.baseUrl}`, {
      details: { uri, baseUrl: options.baseUrl },
    });
  }
  return { baseUrl, ...key, query };
}
