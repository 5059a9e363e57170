/**
 * What the verifier was handed, turned into a proof: a Digital Link (typed, or read from the QR of a PNG or
 * a PDF) whose proof is fetched, or a saved proof file.
 */
import { readFile } from 'node:fs/promises';
import { parseDigitalLink, type DigitalLink } from './digital-link.js';
import { VerifyError } from './errors.js';
import { fetchProof, findProofUrl, type FetchFn } from './net.js';
import { decodeQrPdfImages } from './pdf.js';
import { decodeQrPng } from './qr.js';

export interface Obtained {
  proofDoc: unknown;
  proofUrl: string | undefined;
  /** The Digital Link the verifier was handed or decoded; absent for a proof file. */
  link: DigitalLink | undefined;
}

export interface InputIo {
  fetch: FetchFn;
  rasterisePdf(pdf: Buffer): Promise<Buffer | null>;
}

export async function readInputFile(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (e) {
    throw new VerifyError('INPUT_UNREADABLE', `cannot read ${what} ${path}: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

export function parseJsonFile(bytes: Buffer, path: string): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new VerifyError('INPUT_UNREADABLE', `${path} is not JSON`, { cause: e });
  }
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

async function qrOfPdf(pdf: Buffer, path: string, io: InputIo): Promise<string> {
  const embedded = decodeQrPdfImages(pdf);
  if (embedded) return embedded;
  const page = await io.rasterisePdf(pdf);
  if (page === null) {
    throw new VerifyError(
      'NO_QR',
      `no QR in the images embedded in ${path}, and pdftoppm (poppler) is not on PATH to rasterise the page: ` +
        'the QR must be an embedded image, or rasterise the PDF first (pdftoppm -png -r 300 label.pdf label) ' +
        'and check the PNG',
    );
  }
  const text = decodeQrPng(page);
  if (!text) throw new VerifyError('NO_QR', `no QR found on page 1 of ${path}`);
  return text;
}

async function linkOfFile(bytes: Buffer, path: string, io: InputIo): Promise<string | undefined> {
  if (bytes.subarray(0, 8).equals(PNG_SIGNATURE)) {
    let text: string | null;
    try {
      text = decodeQrPng(bytes);
    } catch (e) {
      throw new VerifyError('INPUT_UNREADABLE', `${path} is not a readable PNG`, { cause: e });
    }
    if (!text) throw new VerifyError('NO_QR', `no QR found in ${path}`);
    return text;
  }
  if (bytes.subarray(0, 5).toString('latin1') === '%PDF-') return qrOfPdf(bytes, path, io);
  return undefined;
}

export async function obtainProof(input: string, offline: boolean, io: InputIo): Promise<Obtained> {
  let linkText: string | undefined;
  if (/^https?:\/\//i.test(input)) linkText = input;
  else {
    const bytes = await readInputFile(input, 'the input');
    linkText = await linkOfFile(bytes, input, io);
    if (linkText === undefined)
      return { proofDoc: parseJsonFile(bytes, input), proofUrl: undefined, link: undefined };
  }
  const link = parseDigitalLink(linkText);
  if (offline) {
    throw new VerifyError(
      'USAGE',
      `--offline cannot fetch the proof of ${link.url}: pass a saved proof (made with --save-proof)`,
    );
  }
  const proofUrl = await findProofUrl(io.fetch, link);
  return { proofDoc: await fetchProof(io.fetch, proofUrl), proofUrl, link };
}
