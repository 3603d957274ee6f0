import { createToolRegistry, defineTool, PermissionTier, silentLogger } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { expect, it } from 'vitest';
import { z } from 'zod';

// The chain tip cached by the SQLite audit storage moves only when the outermost transaction commits: a write batched
// with the audit row that fails rolls the batch back, the row is written again alone, and the chain stays whole.
it('a failed write batched with the audit row leaves the chain whole', async () => {
  const storage = createSqliteStorage({ path: ':memory:', logger: silentLogger });
  const getPrice = defineTool({ name: 'get_price', description: 'p', inputSchema: z.object({ symbol: z.string() }), toolSet: 'read', permissionTier: PermissionTier.READ_ONLY, execute: ({ symbol }) => ({ symbol }) });
  const registry = createToolRegistry({ storage, tools: [getPrice] });
  await registry.dispatchDetailed('get_price', { symbol: 'BTC' }, {});
  await registry.dispatchDetailed('get_price', { symbol: 'BTC' }, { withAuditRow: () => [() => storage.handle.write('journal', () => { throw new Error('disk full'); })] });
  await registry.dispatchDetailed('get_price', { symbol: 'BTC' }, {});
  const report = await storage.audit.verify();
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
});

// Appends in one transaction chain onto each other without reading the chain state again; a nested write that fails
// after an append (its savepoint rolled back) makes the next append read the tip again, so it links to the row that
// is still there, not to the one rolled back.
it('appends in one transaction, and a rolled-back nested append between them, leave the chain whole', async () => {
  const storage = createSqliteStorage({ path: ':memory:', logger: silentLogger });
  const row = (toolName: string) => ({ at: new Date().toISOString(), toolName, tier: 1, source: 'user' as const, decision: 'allowed' as const, durationMs: 0, argsJson: '{}' });
  const started: Array<Promise<unknown>> = [];
  storage.batchWrites!(() => {
    for (const name of ['a', 'b', 'c']) started.push(storage.audit.append(row(name)));
  });
  await Promise.all(started);
  storage.handle.write('outer', () => {
    started.push(storage.audit.append(row('d')));
    try {
      storage.handle.write('inner', () => {
        started.push(storage.audit.append(row('rolled-back')).catch(() => undefined));
        throw new Error('the inner write fails after its append');
      });
    } catch {
      // the outer write goes on
    }
    started.push(storage.audit.append(row('e')));
  });
  await Promise.all(started);
  expect((await storage.audit.query({ order: 'oldest', limit: 10 })).map((r) => r.toolName)).toEqual(['a', 'b', 'c', 'd', 'e']);
  const report = await storage.audit.verify();
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
  await storage.close();
});
