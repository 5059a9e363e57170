/**
 * Reads the configuration once: the JSON file (optional), then environment overrides, then validation
 * that fails fast with one clear line naming the file, the field and the problem.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { AgentError } from '../errors.js';
import { AgentConfigSchema, type AgentConfig, type AgentConfigInput } from './schema.js';

/** The file looked for when neither `--config` nor DPP_AGENT_CONFIG names one. */
export const DEFAULT_CONFIG_FILE = 'dpp-agent.json';

/** Environment variables the agent reads (and only these). */
export const ENV = {
  config: 'DPP_AGENT_CONFIG',
  dataDir: 'DPP_AGENT_DATA_DIR',
  url: 'DPP_AGENT_URL',
  mqttUrl: 'DPP_AGENT_MQTT_URL',
  mqttEnabled: 'DPP_AGENT_MQTT',
  consolePort: 'DPP_AGENT_CONSOLE_PORT',
  logLevel: 'DPP_AGENT_LOG_LEVEL',
  pollIntervalMs: 'DPP_AGENT_POLL_INTERVAL_MS',
} as const;

export interface LoadedConfig {
  config: AgentConfig;
  /** The file read, or null when none existed (defaults and environment only). */
  file: string | null;
}

export interface LoadConfigOptions {
  /** An explicit file (from `--config`); it must exist. */
  file?: string | undefined;
  env?: Record<string, string | undefined>;
  cwd?: string;
}

/** `printers.0.transport.path: Invalid input` → `printers[0].transport.path: Invalid input`. */
export function formatIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`))
    .join('');
  return `${where || '(root)'}: ${issue.message}`;
}

/** Validates an in-memory configuration (library use, e.g. `startAgent`). Relative dataDir: from `baseDir`. */
export function parseAgentConfig(input: AgentConfigInput | unknown, baseDir = process.cwd()): AgentConfig {
  const parsed = AgentConfigSchema.safeParse(input);
  if (!parsed.success) {
    const first = parsed.error.issues[0]!;
    throw new AgentError('CONFIG_INVALID', `config: ${formatIssue(first)}`, {
      details: { issues: parsed.error.issues.map(formatIssue) },
    });
  }
  const config = parsed.data;
  return { ...config, dataDir: path.resolve(baseDir, config.dataDir) };
}

function int(env: Record<string, string | undefined>, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw new AgentError('CONFIG_INVALID', `${name}: must be a whole number, got "${v}"`);
  return Number(v);
}

/** File, then environment, then validation. */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const named = options.file ?? env[ENV.config];
  const file = path.resolve(cwd, named ?? DEFAULT_CONFIG_FILE);
  let raw: Record<string, unknown> = {};
  let found: string | null = null;
  if (existsSync(file)) {
    try {
      raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new AgentError('CONFIG_INVALID', `${file}: not valid JSON (${(err as Error).message})`, {
        cause: err,
      });
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw new AgentError('CONFIG_INVALID', `${file}: must hold a JSON object`);
    found = file;
  } else if (named !== undefined) {
    throw new AgentError('CONFIG_INVALID', `${file}: no such config file`);
  }

  const merged: Record<string, unknown> = { ...raw };
  const dataDir = env[ENV.dataDir];
  if (dataDir) merged.dataDir = path.resolve(cwd, dataDir);
  if (env[ENV.url]) merged.controlPlaneUrl = env[ENV.url];
  if (env[ENV.mqttUrl]) merged.mqttUrl = env[ENV.mqttUrl];
  if (env[ENV.mqttEnabled]) {
    const v = env[ENV.mqttEnabled];
    if (v !== 'on' && v !== 'off')
      throw new AgentError('CONFIG_INVALID', `${ENV.mqttEnabled}: must be on or off`);
    merged.mqttEnabled = v === 'on';
  }
  if (env[ENV.logLevel]) merged.logLevel = env[ENV.logLevel];
  const consolePort = int(env, ENV.consolePort);
  if (consolePort !== undefined)
    merged.console = { ...(raw.console as object | undefined), port: consolePort };
  const poll = int(env, ENV.pollIntervalMs);
  if (poll !== undefined) merged.poll = { ...(raw.poll as object | undefined), intervalMs: poll };

  const baseDir = found ? path.dirname(found) : cwd;
  try {
    return { config: parseAgentConfig(merged, baseDir), file: found };
  } catch (err) {
    if (err instanceof AgentError && found)
      throw new AgentError('CONFIG_INVALID', `${found}: ${err.message.replace(/^config: /, '')}`, {
        details: err.details,
      });
    throw err;
  }
}
