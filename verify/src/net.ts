/**
 * What the verifier asks the network: the resolver's linkset for a Digital Link (RFC 9264), the proof, the
 * signing keys, the latest tree head and consistency proofs. `fetch` is handed in.
 */
import { originOf, proofUrlOf, type DigitalLink } from './digital-link.js';
import { VerifyError } from './errors.js';
import { hashFromHex } from './merkle.js';
import { Broken, isObject } from './shape.js';

export type FetchFn = (url: string, init?: { headers?: Record<string, string> }) => Promise<Response>;

/** GS1 Web Vocabulary: the link type of a certification (here, the label's proof). */
const CERTIFICATION_INFO = ['https://gs1.org/voc/certificationInfo', 'gs1:certificationInfo'];

/** GETs JSON; throws an Error saying what went wrong (status, not JSON, network). */
export async function getJson(fetchFn: FetchFn, url: string, accept = 'application/json'): Promise<unknown> {
  const res = await fetchFn(url, { headers: { Accept: accept } });
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}`);
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`GET ${url} did not answer JSON`);
  }
}

/** The certificationInfo link of an RFC 9264 linkset, resolved against `base`, or undefined. */
export function certificationInfoOf(linkset: unknown, base: string): string | undefined {
  if (!isObject(linkset) || !Array.isArray(linkset.linkset)) return undefined;
  for (const context of linkset.linkset) {
    if (!isObject(context)) continue;
    for (const rel of CERTIFICATION_INFO) {
      const targets = context[rel];
      if (!Array.isArray(targets)) continue;
      for (const t of targets) {
        if (isObject(t) && typeof t.href === 'string') {
          try {
            return new URL(t.href, base).href;
          } catch {
            continue;
          }
        }
      }
    }
  }
  return undefined;
}

/**
 * Where the label's proof is: the resolver's certificationInfo link, or when it offers none (or cannot be
 * asked) the control plane's proof route on the Digital Link's origin.
 */
export async function findProofUrl(fetchFn: FetchFn, link: DigitalLink): Promise<string> {
  try {
    const linkset = await getJson(fetchFn, link.url, 'application/linkset+json');
    const found = certificationInfoOf(linkset, link.url);
    if (found !== undefined) return found;
  } catch {
    // A resolver without linksets: the proof route is the documented fallback.
  }
  return proofUrlOf(link.origin, link.gtin, link.serial);
}

/** Fetches the proof; a failure here is an input error (exit 2), not a broken link. */
export async function fetchProof(fetchFn: FetchFn, url: string): Promise<unknown> {
  try {
    return await getJson(fetchFn, url);
  } catch (e) {
    throw new VerifyError('FETCH_FAILED', `cannot fetch the proof: ${e instanceof Error ? e.message : e}`, {
      cause: e,
    });
  }
}

/** Throws Broken unless `url` is on the trust anchor's origin (the Digital Link's). */
export function assertAnchored(url: string, anchor: string, what: string): void {
  if (originOf(url) !== anchor) {
    throw new Broken(`the proof's ${what} link ${url} is not on the Digital Link's origin ${anchor}`);
  }
}

/** The consistency proof between two sizes: `{ first, second, proof: [hex] }`. */
export async function fetchConsistencyProof(
  fetchFn: FetchFn,
  baseUrl: string,
  first: number,
  second: number,
): Promise<Buffer[]> {
  const url = new URL(baseUrl);
  url.searchParams.set('first', String(first));
  url.searchParams.set('second', String(second));
  const body = await getJson(fetchFn, url.href);
  if (!isObject(body) || body.first !== first || body.second !== second || !Array.isArray(body.proof)) {
    throw new Error(`the log answered a consistency proof for other sizes`);
  }
  const proof = body.proof.map(hashFromHex);
  if (proof.some((p) => p === null)) throw new Error('the consistency proof is not a list of SHA-256 hashes');
  return proof as Buffer[];
}

/** The latest tree head's JWS: `{ treeHead: "<JWS>" }`. */
export async function fetchLatestTreeHead(fetchFn: FetchFn, url: string): Promise<unknown> {
  const body = await getJson(fetchFn, url);
  if (!isObject(body) || typeof body.treeHead !== 'string') throw new Error(`${url} answered no treeHead`);
  return body.treeHead;
}
