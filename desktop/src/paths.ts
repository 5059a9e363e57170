/** Where the desktop app finds the agent's configuration and the console page. */
import path from 'node:path';

export const CONFIG_FILE_NAME = 'dpp-agent.json';

/**
 * The agent configuration the desktop app runs with: `--config FILE` (or `--config=FILE`) on the command
 * line, else `DPP_AGENT_CONFIG`, else `dpp-agent.json` in the app's user-data folder
 * (`~/.config/DPP Print Floor` on Linux, `%APPDATA%\DPP Print Floor` on Windows).
 */
export function desktopConfigFile(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  userDataDir: string,
  cwd = process.cwd(),
): string {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--config' && argv[i + 1]) return path.resolve(cwd, argv[i + 1]!);
    if (a.startsWith('--config=') && a.length > '--config='.length)
      return path.resolve(cwd, a.slice('--config='.length));
  }
  if (env.DPP_AGENT_CONFIG) return path.resolve(cwd, env.DPP_AGENT_CONFIG);
  return path.join(userDataDir, CONFIG_FILE_NAME);
}

/**
 * The console page's folder: an extra resource of the installed app (`resources/console-ui`), or the
 * copy the build puts beside `main.cjs` (`dist/console-ui`) when run from the repository.
 */
export function consoleUiDir(o: { isPackaged: boolean; resourcesPath: string; mainDir: string }): string {
  return o.isPackaged ? path.join(o.resourcesPath, 'console-ui') : path.join(o.mainDir, 'console-ui');
}
