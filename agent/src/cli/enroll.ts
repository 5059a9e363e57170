/** `dpp-agent enroll --url <control plane> --token <enrollment token> [--name <device name>] [--force]` */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AgentError } from '../errors.js';
import { enroll } from '../identity/index.js';
import type { LoadedConfig } from '../config/index.js';
import { DEFAULT_CONFIG_FILE } from '../config/index.js';
import type { Output } from './output.js';

export interface EnrollArgs {
  url?: string | undefined;
  token?: string | undefined;
  name?: string | undefined;
  force?: boolean | undefined;
}

export async function enrollCommand(
  loaded: LoadedConfig,
  args: EnrollArgs,
  out: Output,
  cwd = process.cwd(),
): Promise<number> {
  const url = args.url ?? loaded.config.controlPlaneUrl;
  if (!url)
    throw new AgentError(
      'CONFIG_INVALID',
      'enroll: --url is required (the control plane, e.g. https://dpp.example.com)',
    );
  if (!args.token)
    throw new AgentError('CONFIG_INVALID', 'enroll: --token is required (a one-time enrollment token)');
  const identity = await enroll({
    url,
    token: args.token,
    name: args.name,
    dataDir: loaded.config.dataDir,
    printers: loaded.config.printers.map((p) => p.name),
    force: args.force,
    timeoutMs: loaded.config.http.timeoutMs,
  });
  out.line(`enrolled as ${identity.name} (device ${identity.deviceId}, tenant ${identity.tenantId})`);
  out.line(`key and identity in ${loaded.config.dataDir}`);
  out.line(`broker: ${identity.mqtt.url ?? 'none (the agent will poll)'}`);
  if (!loaded.file) {
    const file = path.join(cwd, DEFAULT_CONFIG_FILE);
    if (!existsSync(file)) {
      const starter = {
        dataDir: path.relative(cwd, loaded.config.dataDir) || '.',
        controlPlaneUrl: url,
        printers: [],
      };
      writeFileSync(file, JSON.stringify(starter, null, 2) + '\n');
      out.line(`wrote ${file}: add your printers there (see the agent README), then run: dpp-agent run`);
    }
  }
  return 0;
}
