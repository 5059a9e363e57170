/**
 * Where the symbols of a label go, in any unit (dots for ZPL, points for PDF): the QR code top left, the
 * DataMatrix to its right (its human-readable line under it), the GS1-128 along the bottom edge with its
 * human-readable line under the bars, and the text lines in the space left, right of the symbols or under
 * them. A label too small for its symbols is refused with TEMPLATE_TOO_SMALL, never printed cut off.
 */
import { AgentError } from '../errors.js';

export interface LayoutInput {
  width: number;
  height: number;
  margin: number;
  /** Side of the QR code. */
  qr: number;
  /** Height the QR takes below its origin when it is more than its side (ZPL `^BQ` starts lower). */
  qrHeight?: number;
  /** Side of the DataMatrix, and the size of its human-readable line when it has one. */
  dataMatrix: { side: number; hri: { width: number; height: number } | null } | null;
  /** The GS1-128: its bars (quiet zones included) and its human-readable line. */
  gs1128: { width: number; height: number; hri: { width: number; height: number } } | null;
  /** The least width worth putting text lines in beside the symbols. */
  minTextWidth: number;
  /** What the refusal names the label by (`50 x 30 mm at 203 dpi`). */
  describe: string;
}

export interface Point {
  x: number;
  y: number;
}

export interface LabelLayout {
  qr: Point;
  dataMatrix: { at: Point; hri: Point | null } | null;
  /** Where the bars start (the left quiet zone is in front of it) and the human-readable line. */
  gs1128: { at: Point; hri: Point } | null;
  /** The area for text lines. */
  text: { x: number; y: number; right: number; bottom: number };
}

export function layoutLabel(i: LayoutInput): LabelLayout {
  const m = i.margin;
  const tooSmall = (what: string): never => {
    throw new AgentError('TEMPLATE_TOO_SMALL', `${what} does not fit a ${i.describe} label`, {
      details: { width: i.width, height: i.height, qr: i.qr },
    });
  };
  const qrHeight = i.qrHeight ?? i.qr;
  if (qrHeight + 2 * m > i.height || i.qr + 2 * m > i.width) tooSmall(`a ${Math.round(i.qr)} QR`);
  let right = m + i.qr; // the right edge of the symbols at the top
  let bottom = m + qrHeight; // their lower edge
  let dataMatrix: LabelLayout['dataMatrix'] = null;
  if (i.dataMatrix) {
    const { side, hri } = i.dataMatrix;
    const at = { x: right + m, y: m };
    if (at.x + side > i.width - m || m + side > i.height - m) tooSmall('the DataMatrix beside the QR');
    right = at.x + side;
    bottom = Math.max(bottom, m + side);
    let hriAt: Point | null = null;
    if (hri) {
      // Under the DataMatrix; moved left (and under the QR too) when the line is wider than the room there.
      const x = Math.min(at.x, i.width - m - hri.width);
      if (x < m) tooSmall('the human-readable line of the DataMatrix');
      hriAt = { x, y: (x < m + i.qr ? bottom : m + side) + m / 2 };
      bottom = Math.max(bottom, hriAt.y + hri.height);
      if (x + hri.width > right) right = Math.max(right, x + hri.width);
    }
    dataMatrix = { at, hri: hriAt };
  }
  let floor = i.height - m; // the lowest edge text may reach
  let gs1128: LabelLayout['gs1128'] = null;
  if (i.gs1128) {
    const g = i.gs1128;
    const hri = { x: m, y: i.height - m - g.hri.height };
    const at = { x: m, y: hri.y - m / 2 - g.height };
    if (m + Math.max(g.width, g.hri.width) > i.width - m || at.y < bottom + m)
      tooSmall('the GS1-128 under the symbols');
    gs1128 = { at, hri };
    floor = at.y - m / 2;
  }
  const beside = i.width - m - (right + m) >= i.minTextWidth;
  const text = beside
    ? { x: right + m, y: m, right: i.width - m, bottom: floor }
    : { x: m, y: bottom + m, right: i.width - m, bottom: floor };
  return { qr: { x: m, y: m }, dataMatrix, gs1128, text };
}
