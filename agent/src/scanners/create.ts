import type { ScannerConfig } from '../config/index.js';
import { createLink } from '../transports/index.js';
import { LineScanner } from './line-scanner.js';
import type { Scanner } from './types.js';

export function createScanner(name: string, config: ScannerConfig): Scanner {
  return new LineScanner({ name, link: createLink(config.link) });
}
