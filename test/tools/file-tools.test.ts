import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileTools, createToolCallContext, createToolRegistry } from '@minara/agent';
import { parse } from './helpers';

function setup(opts: { maxReadBytes?: number; maxWriteBytes?: number } = {}) {
  const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'minara-files-')));
  const root = path.join(base, 'sandbox');
  mkdirSync(path.join(base, 'outside'));
  writeFileSync(path.join(base, 'outside', 'secret.txt'), 'TOP SECRET');
  const registry = createToolRegistry({ tools: createFileTools({ root, ...opts }) });
  const ctx = createToolCallContext({ sessionId: 'files' });
  return { base, root, registry, ctx };
}

describe('file tools', () => {
  it('write_file asks once per session, then writes atomically; read_file and list_files read back', async () => {
    const { root, registry, ctx } = setup();
    const first = parse(await registry.dispatch('write_file', { path: 'notes/btc.md', content: '# BTC' }, { context: ctx }));
    expect(first.code).toBe('APPROVAL_REQUIRED');
    await registry.approvals.decide(first.approval!.approvalId, { approved: true });
    const w = parse(await registry.dispatch('write_file', { path: 'notes/btc.md', content: '# BTC' }, { context: ctx, approvalId: first.approval!.approvalId }));
    expect(w).toEqual({ ok: true, data: { path: 'notes/btc.md', bytes: 5 } });
    expect(readFileSync(path.join(root, 'notes', 'btc.md'), 'utf8')).toBe('# BTC');
    expect(parse(await registry.dispatch('write_file', { path: 'notes/btc.md', content: '\nmore', mode: 'append' }, { context: ctx })).ok).toBe(true);
    const r = parse(await registry.dispatch('read_file', { path: 'notes/btc.md' }, { context: ctx }));
    expect(r.data).toMatchObject({ content: '# BTC\nmore' });
    const l = parse(await registry.dispatch('list_files', {}, { context: ctx }));
    expect(l.data).toEqual({ path: '.', entries: [{ name: 'notes', type: 'directory' }], truncated: false });
    const l2 = parse(await registry.dispatch('list_files', { path: 'notes' }, { context: ctx }));
    expect((l2.data as { entries: unknown[] }).entries).toEqual([{ name: 'btc.md', type: 'file', size: 10 }]);
    expect(parse(await registry.dispatch('write_file', { path: 'notes/btc.md', content: 'x', mode: 'create' }, { context: ctx })).ok).toBe(false);
  });

  it('refuses escapes through every file tool', async () => {
    const { base, root, registry, ctx } = setup();
    mkdirSync(root, { recursive: true });
    symlinkSync(path.join(base, 'outside'), path.join(root, 'out'));
    for (const [name, args] of [
      ['read_file', { path: '../outside/secret.txt' }],
      ['read_file', { path: 'out/secret.txt' }],
      ['read_file', { path: '/etc/passwd' }],
      ['list_files', { path: 'out' }],
      ['list_files', { path: '..' }],
    ] as const) {
      const r = parse(await registry.dispatch(name, args, { context: ctx }));
      expect(r.code, `${name} ${JSON.stringify(args)}`).toBe('SANDBOX_ESCAPE');
    }
    await registry.grants.list();
    const wr = parse(await registry.dispatch('write_file', { path: 'out/pwned.txt', content: 'x' }, { context: createToolCallContext({ sessionId: 'w', source: 'user' }) }));
    expect(wr.code).toBe('APPROVAL_REQUIRED'); // the gate comes first; the approved call still cannot escape:
    await registry.approvals.decide(wr.approval!.approvalId, { approved: true });
    const after = parse(await registry.dispatch('write_file', { path: 'out/pwned.txt', content: 'x' }, { context: createToolCallContext({ sessionId: 'w' }), approvalId: wr.approval!.approvalId }));
    expect(after.code).toBe('SANDBOX_ESCAPE');
    expect(existsSync(path.join(base, 'outside', 'pwned.txt'))).toBe(false);
  });

  it('enforces size limits', async () => {
    const { root, registry } = setup({ maxReadBytes: 10, maxWriteBytes: 8 });
    mkdirSync(root, { recursive: true });
    writeFileSync(path.join(root, 'big.txt'), 'x'.repeat(11));
    const ctx = createToolCallContext({ sessionId: 'sz' });
    expect(parse(await registry.dispatch('read_file', { path: 'big.txt' }, { context: ctx })).code).toBe('FILE_TOO_LARGE');
    const req = parse(await registry.dispatch('write_file', { path: 'w.txt', content: 'x'.repeat(9) }, { context: ctx }));
    await registry.approvals.decide(req.approval!.approvalId, { approved: true });
    expect(parse(await registry.dispatch('write_file', { path: 'w.txt', content: 'x'.repeat(9) }, { context: ctx, approvalId: req.approval!.approvalId })).code).toBe('FILE_TOO_LARGE');
    expect(parse(await registry.dispatch('read_file', { path: 'missing.txt' }, { context: ctx })).code).toBe('NOT_FOUND');
  });
});
