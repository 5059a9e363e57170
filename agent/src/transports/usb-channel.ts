/** One open path to a USB printer (a usblp node or a claimed libusb interface), as the USB link uses it. */
export interface UsbChannel {
  /** What it reached: `/dev/usb/lp1`, or `libusb bus 1-2 address 5`. */
  readonly device: string;
  /** Writes every byte, in order with other writes; rejects (and drops the channel) when the device is gone. */
  write(data: Buffer): Promise<void>;
  close(): Promise<void>;
}

export interface UsbChannelHandlers {
  /** Bytes the printer answered (bulk IN). */
  onData(chunk: Buffer): void;
  /** The device went away (unplugged, reset): the channel has closed itself and is not used again. */
  onDrop(reason: Error): void;
}

/** Longest a write may wait for the printer to take a byte before the channel gives up. */
export const USB_WRITE_STALL_MS = 30_000;
