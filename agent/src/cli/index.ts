/** `dpp-agent <command>`: argument parsing and dispatch; each command in its own file. */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/index.js';
import { toAgentError } from '../errors.js';
import { doctorCommand } from './doctor.js';
import { enrollCommand } from './enroll.js';
import { consoleOutput, type Output } from './output.js';
import { printersCommand } from './printers.js';
import { runCommand } from './run.js';
import { statusCommand } from './status.js';
import { readSecretLine, supervisorCommand } from './supervisor.js';

export const USAGE = `usage: dpp-agent <command> [--config FILE]

  enroll --url URL --token TOKEN [--name NAME] [--force]   enroll this device (once)
  run                                                      run the agent
  status [--json]                                          what the running agent is doing
  printers                                                 configured printers and their status
  doctor                                                   check everything the agent needs
  supervisor add --id ID --name NAME                       let a supervisor sign in at the console (PIN on stdin)

Config: --config FILE, else $DPP_AGENT_CONFIG, else ./dpp-agent.json (see the agent README).`;

export async function main(argv: string[], out: Output = consoleOutput): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        config: { type: 'string', short: 'c' },
        url: { type: 'string' },
        token: { type: 'string' },
        name: { type: 'string' },
        id: { type: 'string' },
        force: { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    out.error(`dpp-agent: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const [command] = parsed.positionals;
  const v = parsed.values;
  if (v.help || !command) {
    out.line(USAGE);
    return command || v.help ? 0 : 2;
  }
  try {
    const loaded = loadConfig({ file: v.config });
    switch (command) {
      case 'enroll':
        return await enrollCommand(loaded, { url: v.url, token: v.token, name: v.name, force: v.force }, out);
      case 'run':
        return await runCommand(loaded, out);
      case 'status':
        return await statusCommand(loaded, v.json ?? false, out);
      case 'printers':
        return await printersCommand(loaded, out);
      case 'doctor':
        return await doctorCommand(loaded, out);
      case 'supervisor':
        return await supervisorCommand(
          loaded,
          { action: parsed.positionals[1], id: v.id, name: v.name },
          (prompt) => readSecretLine(prompt),
          out,
        );
      default:
        out.error(`dpp-agent: unknown command "${command}"\n${USAGE}`);
        return 2;
    }
  } catch (err) {
    out.error(`dpp-agent ${command}: ${toAgentError(err).message}`);
    return 1;
  }
}
