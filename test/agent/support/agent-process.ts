/** The agent in its own process (`dpp-agent run`), to be killed for real by the drills. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** `dpp-agent run` in its own process; `AGENT_TEST_LOG=debug` shows its log. */
export function agentProcess(configFile: string): ChildProcess {
  const log = process.env.AGENT_TEST_LOG;
  return spawn(
    process.execPath,
    ['--import', 'tsx', path.join(repo, 'agent/src/cli.ts'), 'run', '--config', configFile],
    {
      cwd: repo,
      env: { ...process.env, DPP_AGENT_LOG_LEVEL: log ?? 'silent' },
      stdio: ['ignore', 'ignore', log ? 'inherit' : 'ignore'],
    },
  );
}

/** SIGKILL, and wait until it is gone. */
export async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}
