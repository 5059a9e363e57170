#!/usr/bin/env -S npx tsx
/** The `dpp-agent` command (see `cli/index.ts`). */
import { main } from './cli/index.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`dpp-agent: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
