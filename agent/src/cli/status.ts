/** `dpp-agent status [--json]`: asks the running agent's console. */
import type { LoadedConfig } from '../config/index.js';
import { consoleBase, fetchStatus } from './console-client.js';
import { table, type Output } from './output.js';

export async function statusCommand(loaded: LoadedConfig, json: boolean, out: Output): Promise<number> {
  const s = await fetchStatus(loaded.config);
  if (!s) {
    out.error(
      `no agent answers at ${consoleBase(loaded.config)} (is dpp-agent run going? is the console on?)`,
    );
    return 1;
  }
  if (json) {
    out.line(JSON.stringify(s, null, 2));
    return 0;
  }
  out.line(`device    ${s.device.name} (${s.device.id}), tenant ${s.device.tenantId}`);
  out.line(
    `control   ${s.connections.controlPlane.url} ${s.connections.controlPlane.reachable ? 'reachable' : 'UNREACHABLE'}`,
  );
  out.line(`mqtt      ${s.connections.mqtt.state}`);
  out.line(
    `outbox    ${s.outbox.pending ?? 0} pending, ${s.outbox.delivered ?? 0} delivered, ${s.outbox.rejected ?? 0} refused, ${s.outbox.skipped ?? 0} skipped`,
  );
  out.line();
  for (const l of table([
    // WAITED: labels before which the printer stood empty with its next label claimed here, on the agent / on a
    // scan of the label ahead (agent/README.md, "The line's figures").
    ['PRINTER', 'STATE', 'JOB', 'STEP', 'WAITED', 'DETAIL'],
    ...s.printers.map((p) => [
      p.name,
      p.state,
      p.currentJob?.jobRef ?? '-',
      p.currentJob?.step ?? '-',
      `${p.waits.agent.labels} agent, ${p.waits.scan.labels} scan`,
      p.detail ?? '',
    ]),
  ]))
    out.line(l);
  if (s.jobs.recent.length > 0) {
    out.line();
    for (const l of table([
      ['RECENT JOB', 'SERIAL', 'PRINTER', 'STEP', 'ERROR'],
      ...s.jobs.recent.slice(0, 10).map((j) => [j.jobRef, j.serial, j.printer, j.step, j.error ?? '']),
    ]))
      out.line(l);
  }
  return 0;
}
