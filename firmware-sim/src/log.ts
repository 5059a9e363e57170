/**
 * Structured logging without a dependency: the library takes a {@link SimLogger} in its options and
 * stays silent by default; the CLI passes one that writes JSON lines to stderr.
 */

export type LogFields = Record<string, unknown>;

export interface SimLogger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  /** The same logger with `ns` added to every line. */
  child(ns: string): SimLogger;
}

export const silentLogger: SimLogger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  child: () => silentLogger,
};

/** A logger writing one JSON object per line to `write` (stderr in the CLI). */
export function jsonLineLogger(
  write: (line: string) => void,
  level: 'debug' | 'info' = 'info',
  ns = 'sim',
): SimLogger {
  const out =
    (lvl: 'debug' | 'info' | 'warn') =>
    (msg: string, fields: LogFields = {}): void => {
      if (lvl === 'debug' && level !== 'debug') return;
      write(JSON.stringify({ time: new Date().toISOString(), level: lvl, ns, msg, ...fields }) + '\n');
    };
  return {
    debug: out('debug'),
    info: out('info'),
    warn: out('warn'),
    child: (sub) => jsonLineLogger(write, level, `${ns}:${sub}`),
  };
}
