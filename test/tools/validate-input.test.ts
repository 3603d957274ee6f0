/**
 * Input keys that name Object.prototype members (found by the fuzz test with `{"valueOf": null}`) are ordinary
 * unknown keys: validation answers with an envelope, never a TypeError.
 */
import { z } from 'zod';
import { createToolRegistry, defineTool, parseEnvelope, PermissionTier } from '@minara/agent';
import { describe, expect, it } from 'vitest';

describe('tool input validation', () => {
  it('keys like valueOf, constructor and toString with null values are handled as unknown fields', async () => {
    const tools = createToolRegistry({
      tools: [defineTool({ name: 'get_price', toolSet: 'read', description: 'p', permissionTier: PermissionTier.READ_ONLY, inputSchema: z.object({ symbol: z.string(), venue: z.string().optional() }), execute: ({ symbol }) => symbol })],
    });
    for (const key of ['valueOf', 'constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const out = parseEnvelope(await tools.dispatch('get_price', JSON.parse(`{"${key}": null}`)));
      expect(out.ok, key).toBe(false);
      expect((out as { code?: string }).code).toBe('TOOL_INPUT_INVALID');
    }
    // Nulls of optional fields are still dropped for models that send them.
    expect(parseEnvelope(await tools.dispatch('get_price', { symbol: 'BTC', venue: null, valueOf: null }))).toMatchObject({ ok: true, data: 'BTC' });
  });
});
