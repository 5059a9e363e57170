/**
 * One logger for the agent (pino, JSON lines on stderr so that CLI output on stdout stays clean), with a
 * child per module (`ns`). Fields name the job (`jobRef`, `attemptId`), the printer and the device; keys,
 * tokens, assertions and envelopes are never logged (and redacted should one slip into a field).
 */
import { pino, type Logger as PinoLogger, type LevelWithSilent } from 'pino';

export type Logger = PinoLogger;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const REDACT = [
  'token',
  'accessToken',
  'access_token',
  'password',
  'privateKey',
  'privateJwk',
  'assertion',
  'client_assertion',
  'proof',
  'authorization',
  '*.token',
  '*.accessToken',
  '*.access_token',
  '*.password',
  '*.privateKey',
  '*.d',
  '*.authorization',
];

export interface LoggerOptions {
  level?: LevelWithSilent;
  /** Where lines go; stderr by default. */
  destination?: NodeJS.WritableStream | number;
  base?: Record<string, unknown>;
}

/** The root logger; modules take `log.child({ ns: 'outbox' })`. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const dest = options.destination ?? 2;
  return pino(
    {
      level: options.level ?? 'info',
      base: { app: 'dpp-agent', ...options.base },
      redact: { paths: REDACT, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    typeof dest === 'number' ? pino.destination({ dest, sync: true }) : dest,
  );
}

/** A logger that writes nothing (tests, library use without logs). */
export const silentLogger: Logger = pino({ level: 'silent' });
