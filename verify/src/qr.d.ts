export interface RgbaImage {
    data: Uint8ClampedArray;
    width: number;
    height: number;
}
/** Black and white at the midpoint of the image's luminance range, scaled up and framed in white. */
export declare function binarised(image: RgbaImage): RgbaImage;
/** The text of the first QR found in an RGBA image, or null. */
export declare function decodeQrImage(image: RgbaImage): string | null;
/** The text of the first QR found in a PNG, or null. */
export declare function decodeQrPng(png: Buffer): string | null;
