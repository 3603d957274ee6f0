import { describe, expect, it } from 'vitest';
import { main } from './index';

describe('examples/mcp', () => {
  it('reads through server-filesystem and stops a write for approval', async () => {
    const logged: string[] = [];
    const { stopReason, events, tools } = await main({ log: (s) => logged.push(s) });
    expect(tools).toContain('mcp__files__read_text_file');
    expect(events.find((e) => e.type === 'tool-result')).toMatchObject({ toolName: 'mcp__files__read_text_file', output: { ok: true, data: { text: expect.stringContaining('staking yield') } } });
    expect(events.find((e) => e.type === 'approval-request')).toMatchObject({ toolName: 'mcp__files__write_file' });
    expect(events.at(-1)).toMatchObject({ type: 'turn-end', stopReason: 'approval-required' });
    expect(logged.join('')).toContain('[approval needed] mcp__files__write_file');
    expect(stopReason).toBe('approval-required');
  }, 30_000);
});
