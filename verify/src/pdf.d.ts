import { type RgbaImage } from './qr.js';
export interface PdfImage {
    width: number;
    height: number;
    bitsPerComponent: number;
    colorSpace: string;
    /** `/Decode [1 0]`: a gray image with inverted values. */
    inverted: boolean;
    filters: string[];
    predictor: {
        predictor: number;
        colors: number;
        bitsPerComponent: number;
        columns: number;
    } | undefined;
    data: Buffer;
}
/** The image XObjects of a PDF, with their raw (still encoded) stream data. */
export declare function pdfImages(pdf: Buffer): PdfImage[];
/** PNG (RFC 2083 §6) row filters, as PDF's `/Predictor` 10 to 15 use them. */
export declare function unpredictPng(data: Buffer, p: {
    colors: number;
    bitsPerComponent: number;
    columns: number;
}): Buffer;
/** The RGBA pixels of an 8-bit DeviceGray or DeviceRGB image, or null for anything else. */
export declare function imageToRgba(image: PdfImage): RgbaImage | null;
/** The text of the first QR found in one of the PDF's images, or null. */
export declare function decodeQrPdfImages(pdf: Buffer): string | null;
