import pino from 'pino';

export type Logger = pino.Logger;

/**
 * The one logger: JSON lines, a `module` field per namespace, secrets redacted.
 * Child loggers carry tenant, job_ref, attempt_id, device and correlation id as fields.
 */
export function createLogger(options: { level: string; destination?: pino.DestinationStream }): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'control-plane' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["x-api-key"]',
          'req.headers.cookie',
          '*.secret',
          '*.password',
          '*.token',
        ],
        censor: '[redacted]',
      },
    },
    options.destination,
  );
}
