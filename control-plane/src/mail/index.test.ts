import { describe, expect, it } from 'vitest';
import { createLogger } from '../logging/logger.js';
import { logMailer } from './index.js';

describe('logMailer', () => {
  it('writes each message as one structured log line shaped like the email', async () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'info', destination: { write: (line: string) => lines.push(line) } });
    await logMailer(log).send({ to: 'owner@example.com', subject: 'Hello', text: 'Line one\n\nLine two' });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 30,
      module: 'mail',
      msg: 'mail',
      mail: { to: 'owner@example.com', subject: 'Hello', text: 'Line one\n\nLine two' },
    });
  });
});
