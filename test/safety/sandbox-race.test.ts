import { spawn } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileTools, createToolRegistry, parseEnvelope } from '@minara/agent';

// The attack: between the sandbox check and open(), a directory on the path is swapped for a symlink to
// a directory outside the sandbox (20k outside reads in 18 s before the fix). Bounded in count and time.

function setup() {
  const base = mkdtempSync(path.join(tmpdir(), 'minara-race-'));
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  mkdirSync(path.join(root, 'a'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(path.join(root, 'a', 'secret.txt'), 'INSIDE');
  writeFileSync(path.join(outside, 'secret.txt'), 'OUTSIDE');
  const registry = createToolRegistry({ tools: createFileTools({ root }) });
  return { base, root, outside, registry };
}

const SWAPPER = `
const fs = require('node:fs');
const [a, parked, outside, ms] = process.argv.slice(1);
const end = Date.now() + Number(ms);
let n = 0;
while (Date.now() < end) {
  try { fs.renameSync(a, parked); fs.symlinkSync(outside, a); fs.unlinkSync(a); fs.renameSync(parked, a); n++; } catch {}
}
process.stdout.write(String(n));
`;

describe('sandbox open is race-free', () => {
  it('a directory swapped for a symlink while reads run never yields an outside read', async () => {
    const { root, outside, registry } = setup();
    const child = spawn(process.execPath, ['-e', SWAPPER, path.join(root, 'a'), path.join(root, 'a-parked'), outside, '2500'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let swaps = '';
    child.stdout.on('data', (d) => (swaps += String(d)));
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    let running = true;
    void exited.then(() => (running = false));
    const seen = { inside: 0, outside: 0, refused: 0 };
    for (let i = 0; i < 20_000 && running; i++) {
      const env = parseEnvelope(await registry.dispatch('read_file', { path: 'a/secret.txt' })) as { ok: boolean; data?: { content: string } };
      if (env.ok && env.data!.content === 'OUTSIDE') seen.outside++;
      else if (env.ok) seen.inside++;
      else seen.refused++;
    }
    await exited;
    expect(Number(swaps)).toBeGreaterThan(0);
    expect(seen.inside + seen.refused).toBeGreaterThan(0);
    expect(seen.outside).toBe(0);
  });

  it('a write racing the same swap never lands outside', async () => {
    const { root, outside, registry } = setup();
    const { createToolCallContext } = await import('@minara/agent');
    const ctx = createToolCallContext({ sessionId: 'writer', source: 'user' });
    const ask = parseEnvelope(await registry.dispatch('write_file', { path: 'a/first.txt', content: 'x' }, { context: ctx, toolCallId: 'w0' })) as { approval?: { approvalId: string } };
    await registry.approvals.decide(ask.approval!.approvalId, { approved: true });
    await registry.dispatch('write_file', { path: 'a/first.txt', content: 'x' }, { context: ctx, toolCallId: 'w0', approvalId: ask.approval!.approvalId });
    const child = spawn(process.execPath, ['-e', SWAPPER, path.join(root, 'a'), path.join(root, 'a-parked'), outside, '1500'], { stdio: 'ignore' });
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    let running = true;
    void exited.then(() => (running = false));
    let written = 0;
    for (let i = 0; i < 5_000 && running; i++) {
      const env = parseEnvelope(await registry.dispatch('write_file', { path: 'a/secret.txt', content: 'pwned', mode: i % 2 ? 'append' : 'overwrite' }, { context: ctx })) as { ok: boolean };
      if (env.ok) written++;
    }
    await exited;
    expect(written).toBeGreaterThan(0); // the session grant let the writes run: the race was real
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE');
  });

  it('a file hard-linked into the root from outside is neither read nor appended to', async () => {
    const { base, root, registry } = setup();
    const secret = path.join(base, 'outside', 'key.txt');
    writeFileSync(secret, 'TOP SECRET');
    linkSync(secret, path.join(root, 'linked.txt'));
    const read = parseEnvelope(await registry.dispatch('read_file', { path: 'linked.txt' })) as { ok: boolean; code?: string };
    expect(read).toMatchObject({ ok: false, code: 'SANDBOX_ESCAPE' });
    const { createToolCallContext } = await import('@minara/agent');
    const ctx = createToolCallContext({ sessionId: 's', source: 'user' });
    const ask = parseEnvelope(await registry.dispatch('write_file', { path: 'linked.txt', content: 'x', mode: 'append' }, { context: ctx, toolCallId: 'w1' })) as { approval?: { approvalId: string } };
    await registry.approvals.decide(ask.approval!.approvalId, { approved: true });
    const app = parseEnvelope(await registry.dispatch('write_file', { path: 'linked.txt', content: 'x', mode: 'append' }, { context: ctx, toolCallId: 'w1', approvalId: ask.approval!.approvalId })) as { ok: boolean; code?: string };
    expect(app).toMatchObject({ ok: false, code: 'SANDBOX_ESCAPE' });
    expect(readFileSync(secret, 'utf8')).toBe('TOP SECRET');
  });
});
