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
