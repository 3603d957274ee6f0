/**
 * Attack 8 (issue 33): one `createWorkspace` object passed to the runtime and a gateway with per-user identities put
 * alice's session id and approval id in bob's system prompt. A runtime refuses that wiring unless the host says
 * `sharedWorkspace: true`, and then each user gets their own view; a gateway with per-user identities refuses it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createAgentRuntime, createToolRegistry, createWorkspace, defineTool, MinaraError, PermissionTier, silentLogger } from '@minara/agent';
import { createGateway, createJwtAuthenticator } from '@minara/agent/gateway';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';

function fixture(script: Parameters<typeof createScriptedModel>[0]) {
  const storage = createInMemoryStorage();
  const tools = createToolRegistry({
    storage,
    tools: [
      defineTool({
        name: 'open_position', toolSet: 'trade', description: 'Open a leveraged position', permissionTier: PermissionTier.ALWAYS_CONFIRM,
        inputSchema: z.object({ symbol: z.string(), leverage: z.number() }),
        execute: () => ({ opened: true }),
      }),
    ],
  });
  const workspace = createWorkspace({ dir: mkdtempSync(path.join(tmpdir(), 'minara-shared-ws-')), heartbeat: true, dailyLog: { enabled: true, interval: 1 } });
  const model = createScriptedModel(script);
  return { storage, tools, workspace, model };
}

const promptText = (call: { prompt: unknown }) => JSON.stringify(call.prompt);

describe('attack 8: one workspace object shared by users', () => {
  it('a runtime refuses a turn for another user over one workspace object; with sharedWorkspace each user gets a view and nothing of alice reaches bob', async () => {
    const script = [{ toolCalls: [{ toolName: 'open_position', input: { symbol: 'BTC', leverage: 5 } }] }, { text: 'Waiting for your approval.' }, { text: 'Hello bob.' }];
    const refused = fixture(script);
    await refused.workspace.seed();
    const unsafe = createAgentRuntime({ model: refused.model, tools: refused.tools, storage: refused.storage, workspace: refused.workspace, logger: silentLogger });
    const error = await unsafe.generate({ sessionId: 'alice-chat-7f3a', userId: 'alice', message: 'open 5x BTC' }).then(() => undefined, (e: unknown) => e);
    expect(MinaraError.isInstance(error) && error.code === 'CONFIG_INVALID').toBe(true);
    expect(String((error as Error).message)).toMatch(/sharedWorkspace/);
    expect(refused.model.calls).toHaveLength(0);

    const { storage, tools, workspace, model } = fixture(script);
    await workspace.seed();
    const runtime = createAgentRuntime({ model, tools, storage, workspace, sharedWorkspace: true, logger: silentLogger });
    const alice = await runtime.generate({ sessionId: 'alice-chat-7f3a', userId: 'alice', message: 'open 5x BTC' });
    const approvalId = alice.pendingApprovals[0]!.approvalId;
    expect(approvalId).toBeTruthy();
    await runtime.generate({ sessionId: 'bob-chat-1', userId: 'bob', message: 'hi' });
    const bobPrompt = promptText(model.calls.at(-1)!);
    expect(bobPrompt).toContain('hi');
    expect(bobPrompt).not.toContain('alice-chat-7f3a');
    expect(bobPrompt).not.toContain(approvalId);
    // Alice's own view keeps her open loop for her next turn (the isolation is per user, not a loss of state).
    const aliceView = await (runtime.options.workspace as ReturnType<typeof createWorkspace>).loadPromptBlocks({ sessionId: 'x' });
    expect(JSON.stringify(aliceView)).not.toContain('bob-chat-1');
  });

  it('a gateway with per-user identities refuses a runtime over one workspace object, unless the runtime shares it safely', () => {
    const { storage, tools, workspace, model } = fixture([]);
    const authenticate = createJwtAuthenticator({ secret: 'hs256-shared-secret-for-tests-0123456789', audience: 'minara' });
    const unsafe = createAgentRuntime({ model, tools, storage, workspace, logger: silentLogger });
    expect(() => createGateway({ runtime: unsafe, storage, tools, workspace, authenticate, logger: silentLogger })).toThrow(/sharedWorkspace/);
    expect(() => createGateway({ runtime: unsafe, storage, tools, workspace, trustUserHeader: true, logger: silentLogger })).toThrow(/sharedWorkspace/);
    // Single-user (one token or none) is the workspace owner's own gateway: fine.
    expect(() => createGateway({ runtime: unsafe, storage, tools, workspace, logger: silentLogger })).not.toThrow();
    const shared = createAgentRuntime({ model, tools, storage, workspace, sharedWorkspace: true, logger: silentLogger });
    expect(() => createGateway({ runtime: shared, storage, tools, workspace, authenticate, logger: silentLogger })).not.toThrow();
    const perUser = createAgentRuntime({ model, tools, storage, workspace: () => workspace, logger: silentLogger });
    expect(() => createGateway({ runtime: perUser, storage, tools, workspace, authenticate, logger: silentLogger })).not.toThrow();
  });
});
