/**
 * The README's first example without a model: one clear message (the `MODEL_NOT_CONFIGURED` error event with how
 * to set one), not that and the same failure again as an error log line on stderr (issue 42, item 4).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type AgentEvent, createApp, type Logger } from '@minara/agent';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('a turn without a model', () => {
  it('is one MODEL_NOT_CONFIGURED event and no error log line', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'minara-no-model-'));
    const logged: Array<{ level: string; message: string }> = [];
    const logger: Logger = {
      debug: (message) => void logged.push({ level: 'debug', message }),
      info: (message) => void logged.push({ level: 'info', message }),
      warn: (message) => void logged.push({ level: 'warn', message }),
      error: (message) => void logged.push({ level: 'error', message }),
    };
    const app = await createApp({ config: { dataDir: dir }, env: {}, envFileDir: false, logger });
    try {
      const errors: AgentEvent[] = [];
      for await (const event of app.runtime.run({ sessionId: 'chat-42', message: 'Buy $50 of ETH', userId: 'alice' })) if (event.type === 'error') errors.push(event);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ code: 'MODEL_NOT_CONFIGURED' });
      expect((errors[0] as { message: string }).message).toContain('MINARA_MODEL');
      expect(logged.filter((l) => l.level === 'error' || l.level === 'warn').map((l) => l.message)).not.toContain('turn failed');
      expect(logged.filter((l) => l.level === 'error')).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
