/** The CLI asks a running agent through its local console. */
import type { AgentConfig } from '../config/index.js';
import type { AgentStatusView } from '../runtime/index.js';

export function consoleBase(config: AgentConfig): string {
  const host = config.console.host === '::1' ? '[::1]' : config.console.host;
  return `http://${host}:${config.console.port}`;
}

/** The running agent's status, or null when no agent answers on the console port. */
export async function fetchStatus(config: AgentConfig, timeoutMs = 2000): Promise<AgentStatusView | null> {
  if (!config.console.enabled || config.console.port === 0) return null;
  try {
    const res = await fetch(`${consoleBase(config)}/api/status`, { signal: AbortSignal.timeout(timeoutMs) });
    if (res.status !== 200) return null;
    return ((await res.json()) as { data: AgentStatusView }).data;
  } catch {
    return null;
  }
}
