/**
 * CRC-16 of EPC Gen2 (ISO/IEC 13239: polynomial 0x1021, preset 0xFFFF, result inverted), the
 * StoredCRC a tag keeps in EPC memory word 0 (EPC UHF Gen2 Air Interface Protocol §6.3.2.1.2).
 * Check value of "123456789": 0xD64E.
 */
export function crc16Gen2(bytes: Uint8Array): number {
  let crc = 0xffff;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return ~crc & 0xffff;
}
