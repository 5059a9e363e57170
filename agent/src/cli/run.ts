/** `dpp-agent run`: runs until SIGINT/SIGTERM, then stops gracefully. */
import type { LoadedConfig } from '../config/index.js';
import { startAgent } from '../runtime/index.js';
import type { Output } from './output.js';

export async function runCommand(loaded: LoadedConfig, out: Output): Promise<number> {
  const agent = await startAgent(loaded.config);
  out.error(`dpp-agent running${agent.consoleUrl ? `; console ${agent.consoleUrl}` : ''} (Ctrl-C to stop)`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await agent.stop();
  return 0;
}
