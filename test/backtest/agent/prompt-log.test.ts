/** The prompt log keeps each distinct system prompt once, by the sha256 of its joined text, however it hashes it. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { createScriptedModel } from '@minara/agent/testing';
import { createPromptLog } from '../../../src/backtest/agent/prompt-log';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const call = (system: readonly string[]): LanguageModelV4CallOptions => ({
  prompt: [...system.map((content) => ({ role: 'system' as const, content })), { role: 'user', content: [{ type: 'text', text: 'go' }] }],
});

describe('createPromptLog', () => {
  it('names each decision by the sha256 of its system messages joined by a blank line, and writes each text once', async () => {
    const identity = `# Identity\n${'stable block — “quoted” '.repeat(300)}`;
    const log = createPromptLog(createScriptedModel(Array.from({ length: 8 }, () => ({ text: 'ok' }))));
    const prompts = [
      [identity, 'dynamic 1'],
      [[...identity].join(''), 'dynamic 2'], // the same lead block, another string
      [identity, 'dynamic 2'], // the same prompt again
      ['another lead', 'dynamic 3'], // the lead changes
      [identity], // back, alone
      [], // no system message
      ['\ud800 lone', '\udc00 lone'], // lone surrogates at the seams hash as the joined text does
    ];
    const seen: string[] = [];
    for (const system of prompts) {
      await log.model.doGenerate(call(system));
      const context = log.take();
      const joined = system.join('\n\n');
      expect(context).toEqual({ sha256: sha(joined), chars: joined.length });
      seen.push(joined);
    }
    expect(log.take()).toBeUndefined();
    const distinct = [...new Set(seen)];
    expect(log.file()).toBe(distinct.map((text) => `${JSON.stringify({ sha256: sha(text), text })}\n`).join(''));
  });
});
