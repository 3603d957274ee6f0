import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chatBody, type Harness, postJson, sseChunks, startGateway } from './helpers';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const send = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method, headers: { 'x-minara-roles': 'operator', 'x-minara-scopes': 'approvals:decide', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('/v1/memory', () => {
  it('create, list, edit, soft delete and restore user_manual memories', async () => {
    h = await startGateway();
    const created = await send('POST', `${h.url}/v1/memory`, { category: 'preference', content: 'Prefers limit orders on BTC.' });
    expect(created.status).toBe(201);
    const { memory } = (await created.json()) as Json;
    expect(memory).toMatchObject({ category: 'preference', content: 'Prefers limit orders on BTC.', source: 'user_manual', status: 'active' });
    const id = memory.id as number;

    const list = (await (await send('GET', `${h.url}/v1/memory?category=preference&limit=10`)).json()) as Json;
    expect(list.memories.map((m: Json) => m.id)).toEqual([id]);

    const patched = await send('PATCH', `${h.url}/v1/memory/${id}`, { content: 'Prefers limit orders on BTC and ETH.' });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as Json).memory).toMatchObject({ id, content: 'Prefers limit orders on BTC and ETH.', source: 'user_manual' });

    const deleted = await send('DELETE', `${h.url}/v1/memory/${id}`);
    expect(await deleted.json()).toEqual({ id, deleted: true });
    expect(((await (await send('GET', `${h.url}/v1/memory`)).json()) as Json).memories).toEqual([]);
    expect(await h.memoryFor('default').get(id, { includeDeleted: true })).toMatchObject({ id }); // soft: still there

    const restored = await send('POST', `${h.url}/v1/memory/${id}/restore`);
    expect(restored.status).toBe(200);
    expect(((await restored.json()) as Json).memory).toMatchObject({ id, status: 'active' });
    expect(((await (await send('GET', `${h.url}/v1/memory`)).json()) as Json).memories).toHaveLength(1);
  });

  it('rows the agent wrote are read-only over HTTP (403), and another tenant gets 404', async () => {
    h = await startGateway();
    const { id: agentRow } = await h.memoryFor('default').write({ category: 'observation', content: 'User asked about ETH staking.', source: 'agent_recorded' });
    for (const [method, p, body] of [['PATCH', `/v1/memory/${agentRow}`, { content: 'x' }], ['DELETE', `/v1/memory/${agentRow}`, undefined], ['POST', `/v1/memory/${agentRow}/restore`, undefined]] as const) {
      const res = await send(method, `${h.url}${p}`, body);
      expect(res.status, `${method} ${p}`).toBe(403);
      expect(((await res.json()) as Json).error).toMatchObject({ code: 'HTTP_FORBIDDEN' });
    }
    expect((await h.memoryFor('default').get(agentRow))!.content).toBe('User asked about ETH staking.');

    const alice = { 'x-minara-user': 'alice' };
    const bob = { 'x-minara-user': 'bob' };
    const { memory } = (await (await send('POST', `${h.url}/v1/memory`, { category: 'preference', content: 'alice secret' }, alice)).json()) as Json;
    expect(((await (await send('GET', `${h.url}/v1/memory`, undefined, bob)).json()) as Json).memories).toEqual([]);
    expect(((await (await send('GET', `${h.url}/v1/memory`, undefined, alice)).json()) as Json).memories).toHaveLength(1);
    for (const [method, p, body] of [['PATCH', `/v1/memory/${memory.id}`, { content: 'bob was here' }], ['DELETE', `/v1/memory/${memory.id}`, undefined], ['POST', `/v1/memory/${memory.id}/restore`, undefined]] as const) {
      const res = await send(method, `${h.url}${p}`, body, bob);
      expect(res.status, `${method} ${p}`).toBe(404);
    }
    expect((await h.memoryFor('alice').get(memory.id))!.content).toBe('alice secret');
    const fact = await send('POST', `${h.url}/v1/memory`, { category: 'fact', content: 'x' });
    expect(fact.status).toBe(400);
  });
});

describe('/v1/memory/profile', () => {
  it("the person lists, sets and deletes profile keys; the person's value wins over the agent's; tenants are apart; bad keys name the field", async () => {
    h = await startGateway();
    const alice = { 'x-minara-user': 'alice' };
    const bob = { 'x-minara-user': 'bob' };
    await h.memoryFor('alice').profile.set('risk_tolerance', 'aggressive', { setBy: 'agent' });
    const listed = (await (await send('GET', `${h.url}/v1/memory/profile`, undefined, alice)).json()) as Json;
    expect(listed.profile).toEqual([{ key: 'risk_tolerance', value: 'aggressive', updatedAt: expect.any(String), setBy: 'agent' }]);
    const put = await send('PUT', `${h.url}/v1/memory/profile/risk_tolerance`, { value: 'conservative' }, alice);
    expect(put.status).toBe(200);
    expect(((await put.json()) as Json).entry).toMatchObject({ key: 'risk_tolerance', value: 'conservative', setBy: 'user' });
    // The agent's later write does not replace the person's.
    await h.memoryFor('alice').profile.set('risk_tolerance', 'degen', { setBy: 'agent' });
    expect(await h.memoryFor('alice').profile.get('risk_tolerance')).toBe('conservative');
    // Another tenant sees nothing and deletes nothing.
    expect(((await (await send('GET', `${h.url}/v1/memory/profile`, undefined, bob)).json()) as Json).profile).toEqual([]);
    expect((await send('DELETE', `${h.url}/v1/memory/profile/risk_tolerance`, undefined, bob)).status).toBe(404);
    expect(await h.memoryFor('alice').profile.get('risk_tolerance')).toBe('conservative');
    const bad = await send('PUT', `${h.url}/v1/memory/profile/${encodeURIComponent('bad key!')}`, { value: 'x' }, alice);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).error.message).toMatch(/^key: expected a profile key/);
    expect((await send('PUT', `${h.url}/v1/memory/profile/base_currency`, { value: '' }, alice)).status).toBe(400);
    expect((await send('PUT', `${h.url}/v1/memory/profile/base_currency`, { value: 'EUR', extra: 1 }, alice)).status).toBe(400);
    expect(await (await send('DELETE', `${h.url}/v1/memory/profile/risk_tolerance`, undefined, alice)).json()).toEqual({ key: 'risk_tolerance', deleted: true });
    expect(await h.memoryFor('alice').profile.list()).toEqual([]);
  });
});

describe('/v1/memory and what was learned from chat', () => {
  it('lists by source; a chat_extracted memory can be deleted and restored but not edited', async () => {
    h = await startGateway();
    const { id } = await h.memoryFor('default').recordFact('The user lives in Lisbon.', { source: 'chat_extracted', metadata: { turnId: 't1' } });
    await h.memoryFor('default').consolidatePending();
    await h.memoryFor('default').write({ category: 'preference', content: 'Prefers limit orders.', source: 'user_manual' });
    const learned = (await (await send('GET', `${h.url}/v1/memory?source=chat_extracted`)).json()) as Json;
    expect(learned.memories.map((m: Json) => [m.id, m.source])).toEqual([[id, 'chat_extracted']]);
    expect((await send('GET', `${h.url}/v1/memory?source=Bad-Source`)).status).toBe(400);
    expect((await send('PATCH', `${h.url}/v1/memory/${id}`, { content: 'The user lives in Porto.' })).status).toBe(403);
    expect(await (await send('DELETE', `${h.url}/v1/memory/${id}`)).json()).toEqual({ id, deleted: true });
    expect(((await (await send('GET', `${h.url}/v1/memory?source=chat_extracted`)).json()) as Json).memories).toEqual([]);
    expect((await send('POST', `${h.url}/v1/memory/${id}/restore`)).status).toBe(200);
  });
});

describe('/v1/workspace/files', () => {
  it('lists, reads and writes with sha256 optimistic concurrency (409 with the current hash)', async () => {
    h = await startGateway();
    const list = (await (await send('GET', `${h.url}/v1/workspace/files`)).json()) as Json;
    expect(list.files.map((f: Json) => f.name)).toContain('MEMORY.md');
    expect(list.files.find((f: Json) => f.name === 'MEMORY.md')).toMatchObject({ exists: false, sha256: null });

    const empty = (await (await send('GET', `${h.url}/v1/workspace/files/MEMORY.md`)).json()) as Json;
    expect(empty).toEqual({ name: 'MEMORY.md', exists: false, content: '', sha256: null });

    const first = await send('PUT', `${h.url}/v1/workspace/files/MEMORY.md`, { content: '# Memory\n- likes BTC\n', expectedSha256: null });
    expect(first.status).toBe(200);
    const { sha256 } = (await first.json()) as Json;
    expect(sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(path.join(h.workspaceDir, 'MEMORY.md'), 'utf8')).toBe('# Memory\n- likes BTC\n');

    // A second editor that still thinks the file is absent loses, and learns the current hash.
    const stale = await send('PUT', `${h.url}/v1/workspace/files/MEMORY.md`, { content: 'overwrite', expectedSha256: null });
    expect(stale.status).toBe(409);
    expect(await stale.json()).toMatchObject({ error: { code: 'WORKSPACE_CONFLICT' }, currentSha256: sha256 });

    const second = await send('PUT', `${h.url}/v1/workspace/files/MEMORY.md`, { content: '# Memory\n- likes BTC and ETH\n', expectedSha256: sha256 });
    expect(second.status).toBe(200);
    const next = ((await second.json()) as Json).sha256;
    const old = await send('PUT', `${h.url}/v1/workspace/files/MEMORY.md`, { content: 'lost update', expectedSha256: sha256 });
    expect(old.status).toBe(409);
    expect(((await old.json()) as Json).currentSha256).toBe(next);
    expect(readFileSync(path.join(h.workspaceDir, 'MEMORY.md'), 'utf8')).toBe('# Memory\n- likes BTC and ETH\n');

    const read = (await (await send('GET', `${h.url}/v1/workspace/files/MEMORY.md`)).json()) as Json;
    expect(read).toEqual({ name: 'MEMORY.md', exists: true, content: '# Memory\n- likes BTC and ETH\n', sha256: next });
    const bad = await send('PUT', `${h.url}/v1/workspace/files/MEMORY.md`, { content: 'x', expectedSha256: 'abc' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).error.message).toMatch(/^expectedSha256:/);
    const missing = await send('PUT', `${h.url}/v1/workspace/files/MEMORY.md`, { content: 'x' });
    expect(missing.status).toBe(400);
  });
});

describe('POST /v1/chat: bad bodies name the field', () => {
  it('an empty messages array is reported as empty, not as "an array"', async () => {
    h = await startGateway();
    const empty = await send('POST', `${h.url}/v1/chat`, { id: 'c1', messages: [] });
    expect(empty.status).toBe(400);
    const { error } = (await empty.json()) as Json;
    expect(error.message).toBe('messages: expected at least one UI message (the new user message, or the assistant message with approval responses), got an empty array.');
    const notArray = await send('POST', `${h.url}/v1/chat`, { id: 'c1', messages: 'hi' });
    expect(((await notArray.json()) as Json).error.message).toMatch(/^messages: expected a non-empty array of UI messages, got string/);
  });
});

describe('/v1/approvals', () => {
  const swap = { toolName: 'swap_tokens', input: { from: 'USDC', to: 'ETH', amountUsd: 50, confirm: true } };

  it('lists pending approvals of the tenant and decides one, resuming the turn server-side', async () => {
    h = await startGateway([{ toolCalls: [swap] }, { text: 'Swapped 50 USDC to ETH.' }]);
    await (await postJson(`${h.url}/v1/chat`, chatBody('trade-9', 'swap 50 USDC to ETH'))).text();
    const list = (await (await send('GET', `${h.url}/v1/approvals?status=pending`)).json()) as Json;
    expect(list.approvals).toHaveLength(1);
    const a = list.approvals[0];
    expect(a).toMatchObject({ toolName: 'swap_tokens', sessionId: 'trade-9', status: 'pending', input: swap.input, tier: 2 });
    expect(Date.parse(a.expiresAt)).toBeGreaterThan(Date.now());
    expect(a).not.toHaveProperty('signature');
    expect(((await (await send('GET', `${h.url}/v1/approvals`, undefined, { 'x-minara-user': 'mallory' })).json()) as Json).approvals).toEqual([]);
    expect((await send('POST', `${h.url}/v1/approvals/${a.id}`, { approved: true }, { 'x-minara-user': 'mallory' })).status).toBe(404);
    expect(h.ledger).toEqual([]);

    expect((await send('POST', `${h.url}/v1/approvals/${a.id}`, { approved: 'yes' })).status).toBe(400);
    const decided = await send('POST', `${h.url}/v1/approvals/${a.id}`, { approved: true, reason: 'go' });
    expect(decided.status).toBe(200);
    const out = (await decided.json()) as Json;
    expect(out.approval).toMatchObject({ id: a.id, status: 'executed' });
    expect(out.turn).toMatchObject({ text: 'Swapped 50 USDC to ETH.', stopReason: 'finished' });
    expect(h.ledger).toEqual(['swap:USDC->ETH:50']);
    expect(((await (await send('GET', `${h.url}/v1/approvals`)).json()) as Json).approvals).toEqual([]);
    expect(((await (await send('GET', `${h.url}/v1/approvals?status=executed`)).json()) as Json).approvals).toHaveLength(1);

    const again = await send('POST', `${h.url}/v1/approvals/${a.id}`, { approved: true });
    expect(again.status).toBe(409);
    expect((await send('POST', `${h.url}/v1/approvals/apr_missing`, { approved: true })).status).toBe(404);
    // The stored transcript has the outcome in place of the approval request.
    const stored = await h.storage.conversations.listMessages('trade-9');
    expect(stored.map((m) => m.json).join('\n')).toContain('"filled":true');
  });

  it('two deciders at once: exactly one resumes the turn (200), the other gets 409 and the model is asked once', async () => {
    h = await startGateway([{ toolCalls: [swap] }, { text: 'Swapped.' }, { text: 'never asked' }]);
    const first = sseChunks(await (await postJson(`${h.url}/v1/chat`, chatBody('trade-race', 'swap'))).text());
    const { approvalId } = first.find((c) => c.type === 'tool-approval-request') as { approvalId: string };
    // Both requests read the approval while it is still pending (a slow read), then race to decide.
    const approvals = h.tools.approvals;
    const get = approvals.get.bind(approvals);
    (approvals as { get: typeof get }).get = async (id) => {
      const r = await get(id);
      await new Promise((resolve) => setTimeout(resolve, 30));
      return r;
    };
    const [a, b] = await Promise.all([send('POST', `${h.url}/v1/approvals/${approvalId}`, { approved: true }), send('POST', `${h.url}/v1/approvals/${approvalId}`, { approved: true })]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expect(h.ledger).toEqual(['swap:USDC->ETH:50']);
    expect(h.model.calls).toHaveLength(2);
  });

  it('a denial over /v1/approvals runs nothing and the model is told', async () => {
    h = await startGateway([{ toolCalls: [swap] }, { text: 'Understood, no swap.' }]);
    const first = sseChunks(await (await postJson(`${h.url}/v1/chat`, chatBody('trade-d', 'swap'))).text());
    const { approvalId } = first.find((c) => c.type === 'tool-approval-request') as { approvalId: string };
    const res = (await (await send('POST', `${h.url}/v1/approvals/${approvalId}`, { approved: false, reason: 'too risky' })).json()) as Json;
    expect(res.approval).toMatchObject({ status: 'denied', decisionReason: 'too risky' });
    expect(res.turn).toMatchObject({ text: 'Understood, no swap.', stopReason: 'finished' });
    expect(h.ledger).toEqual([]);
    expect(JSON.stringify(h.model.calls[1]!.prompt)).toContain('APPROVAL_DENIED');
  });
});
