export declare function rasteriseWithPdftoppm(pdf: Buffer): Promise<Buffer | null>;
