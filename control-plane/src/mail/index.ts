import type { Logger } from '../logging/logger.js';

/** One plain-text email. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/**
 * Where the control plane sends email. There is no mail system yet: the default writes each message
 * as a log line, and tests hand in one that keeps what was sent. A real one (SMTP, an API) implements
 * this and is passed in through the start options.
 */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** The default mailer: one structured `mail` log line per message, shaped like the email would be. */
export function logMailer(log: Logger): Mailer {
  const mailLog = log.child({ module: 'mail' });
  return {
    send: async ({ to, subject, text }) => {
      mailLog.info({ mail: { to, subject, text } }, 'mail');
    },
  };
}
