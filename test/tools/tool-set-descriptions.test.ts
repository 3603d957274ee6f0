/**
 * Every tool set the Grants page lists has a description a person understands (issue 42, item 13): no set is
 * described by its own name again ("Tools of set …") or in developer words (meta-tools, tool_invoke).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_SETS, createApp, createToolRegistry, defineTool, PermissionTier } from '@minara/agent';

const DEVELOPER_WORDS = /tool_invoke|meta-tools?|Tools of set|\bset "/i;

describe('tool set descriptions', () => {
  it('every built-in set, and every set a default app has, is described in words', async () => {
    for (const s of BUILTIN_TOOL_SETS) {
      expect(s.description, s.name).not.toMatch(DEVELOPER_WORDS);
      expect(s.description.length, s.name).toBeGreaterThan(20);
    }
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-sets-'));
    const app = await createApp({ config: { dataDir: dir }, env: {}, envFileDir: false });
    try {
      const used = new Set(app.tools.list().map((t) => t.toolSet));
      const sets = app.tools.toolSets().filter((s) => used.has(s.name));
      expect(sets.map((s) => s.name)).toEqual(expect.arrayContaining(['read', 'trade', 'skills', 'agents']));
      for (const s of sets) expect(s.description, s.name).not.toMatch(DEVELOPER_WORDS);
      expect(sets.find((s) => s.name === 'agents')!.description).toBe('Hand part of a task to a helper agent with fewer permissions');
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a set nobody described says where its tools come from, not its own name', () => {
    const registry = createToolRegistry({
      tools: [defineTool({ name: 'crm_lookup', toolSet: 'crm', description: 'Find a customer', inputSchema: z.object({}), permissionTier: PermissionTier.READ_ONLY, execute: () => ({}) })],
    });
    expect(registry.toolSets().find((s) => s.name === 'crm')!.description).toBe('Tools this app added, such as crm lookup');
  });
});
