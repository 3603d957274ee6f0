/**
 * The learning loop's surfaces: the REPL's /learning and /preferences, the gateway's /v1/learning/* and
 * /v1/preferences routes (operator-only methodology decisions, tenant scoping, bad input), and the audit rows
 * every decision a person makes leaves.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApp, type MinaraApp, silentLogger } from '@minara/agent';
import { createGateway } from '@minara/agent/gateway';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';
import { learningCommand, preferencesCommand } from '../../cli/learning-command';
import { runSlashCommand, type ReplContext } from '../../cli/slash-commands';

const dirs: string[] = [];
const apps: MinaraApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function open(options: Parameters<typeof createApp>[0] = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-learning-surfaces-'));
  dirs.push(dir);
  const app = await createApp({ storage: createInMemoryStorage(), model: createScriptedModel([]), envFileDir: false, env: { MINARA_DATA_DIR: dir }, workspace: false, mcp: false, web: false, logger: silentLogger, ...options });
  apps.push(app);
  return { app, dir };
}

function repl(app: MinaraApp) {
  const out: string[] = [];
  const ctx: ReplContext = {
    app, sessionId: 's1', newSession: () => 's2', print: (t) => out.push(t), confirm: async () => false, resume: async () => {}, exit: () => {},
  };
  return { out, run: async (line: string) => {
    out.length = 0;
    await runSlashCommand(ctx, line);
    return out.join('\n');
  } };
}

/** Score a methodology as a person would not: straight through storage, so the tests need no trades. */
async function proposed(app: MinaraApp, userId = 'default') {
  const learning = app.learningFor(userId)!;
  const { methodology } = await learning.createMethodology({ asset: 'BTC', text: `Buy BTC breakouts (${userId})` });
  return { learning, methodology };
}

describe('REPL /learning and /preferences', () => {
  it('lists, seeds, refuses an unproposed graduation, forces one with a reason, quarantines and reinstates; audit rows name each decision', async () => {
    const { app, dir } = await open();
    const r = repl(app);
    expect(await r.run('/learning')).toContain('none yet: seed some');
    const seed = path.join(dir, 'seed.md');
    writeFileSync(seed, '## crypto_major\n- Buy BTC breakouts above the prior day high.\n- Sell ETH into funding spikes.\n');
    expect(await r.run(`/learning seed ${seed}`)).toBe(`Seeded 2 methodologies (0 already known) from ${seed}.`);
    const listing = await r.run('/learning');
    expect(listing).toMatch(/#1\s+candidate\s+0\.000\s+0\/0\s+crypto_major\s+Buy BTC breakouts/);
    expect(listing).toContain('Trade cases pending reflection: 0');
    expect(await r.run('/learning graduate 1')).toMatch(/\/learning failed: Methodology #1 is not proposed for graduation/);
    expect(await r.run('/learning graduate 1 --force --reason backtested by the desk')).toContain('Methodology #1 is now graduated.');
    expect((await app.learning!.getMethodology(1))!.stateReason).toBe('backtested by the desk');
    expect(await r.run('/learning quarantine 2 --reason too risky')).toContain('Methodology #2 is now quarantined.');
    expect(await r.run('/learning list quarantined')).toMatch(/#2\s+quarantined/);
    expect(await r.run('/learning reinstate 2')).toContain('Methodology #2 is now candidate.');
    // A methodology proposed for review (what the synthesis pass writes): listed as waiting, accepted by the operator.
    const { methodology: review } = await app.learning!.createMethodology({ asset: 'ETH', text: 'Add to ETH on a retest of the breakout.', state: 'proposed' });
    const waiting = await r.run('/learning');
    expect(waiting).toMatch(new RegExp(`#${review.id}\\s+proposed\\s+0\\.000`));
    expect(waiting).toContain(`Proposed from outcomes, waiting for your review: #${review.id} (accept <id> puts it on trial; quarantine <id> turns it down).`);
    expect(await r.run(`/learning list proposed`)).toMatch(new RegExp(`#${review.id}\\s+proposed`));
    expect(await r.run(`/learning graduate ${review.id} --force`)).toMatch(/accept it first/);
    expect(await r.run(`/learning accept ${review.id} --reason reviewed`)).toContain(`Methodology #${review.id} is now candidate.`);
    expect(await r.run(`/learning accept ${review.id}`)).toMatch(/is not proposed/);
    expect(await r.run('/learning accept --force 1')).toMatch(/--force only applies to graduate/);
    expect(await r.run('/learning graduate x')).toBe('Usage: /learning graduate <id> [--force] [--reason text]');
    expect(await r.run('/learning nonsense')).toMatch(/^Usage: \/learning \[list/);
    expect(await r.run('/learning page EUR/USD')).toContain('# EURUSD (forex)');
    expect(await r.run('/learning cases')).toBe('No pending trade cases.');
    const audit = await app.storage.audit.query({ limit: 20 });
    expect(audit.map((a) => a.toolName).filter((n) => n.startsWith('learning.')).sort()).toEqual(['learning.acceptMethodology', 'learning.graduateMethodology', 'learning.quarantineMethodology', 'learning.reinstateMethodology']);
    expect(JSON.parse(audit.find((a) => a.toolName === 'learning.graduateMethodology')!.argsJson)).toMatchObject({ id: 1, force: true, reason: 'backtested by the desk', userId: 'default' });
  });

  it('/preferences approves a hard constraint only on the explicit call, rejects, and explains usage', async () => {
    const { app } = await open();
    const r = repl(app);
    expect(await r.run('/preferences')).toMatch(/^No preferences yet/);
    const { preference } = await app.learning!.proposePreference({ dimension: 'leverage', kind: 'hard_constraint', text: 'Never above 3x leverage', value: '{"maxLeverage":3}' });
    await app.learning!.graduatePreferences();
    expect((await app.learning!.listPreferences())[0]!.state).toBe('proposed');
    expect(await r.run('/preferences')).toMatch(/#1\s+proposed\s+hard\s+leverage/);
    expect(await r.run(`/preferences approve ${preference.id}`)).toContain('is now active. Its finance limits apply from the next call.');
    expect(await r.run(`/preferences reject ${preference.id}`)).toContain('is now rejected.');
    expect(await r.run('/preferences approve')).toBe('Usage: /preferences approve <id>');
    expect((await preferencesCommand(app, ['list', 'sometimes'])).ok).toBe(false);
    expect((await app.storage.audit.query({ limit: 10 })).map((a) => a.toolName).filter((n) => n.startsWith('learning.')).sort()).toEqual(['learning.approvePreference', 'learning.rejectPreference']);
  });

  it('reflect without a configured model explains what to configure; learning: false says so', async () => {
    const { app } = await open({ model: undefined, env: { MINARA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'minara-learning-nomodel-')) } });
    expect((await learningCommand(app, ['reflect'])).text).toMatch(/needs a model/);
    const off = await open({ learning: false });
    expect((await learningCommand(off.app, [])).text).toMatch(/learning loop is off/);
  });
});

describe('gateway /v1/learning and /v1/preferences', () => {
  async function gatewayOver(app: MinaraApp) {
    const gateway = createGateway({ runtime: app.runtime, storage: app.storage, tools: app.tools, memoryFor: app.memoryFor, learningFor: (u) => app.learningFor(u), trustUserHeader: true, logger: silentLogger });
    return (method: string, url: string, init: { user?: string; roles?: string; body?: unknown; decide?: boolean } = {}) =>
      gateway.fetch(new Request(`http://127.0.0.1${url}`, {
        method,
        headers: { ...(init.user ? { 'x-minara-user': init.user } : {}), ...(init.roles ? { 'x-minara-roles': init.roles } : {}), ...(init.decide === false ? {} : { 'x-minara-scopes': 'approvals:decide' }), ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
      }));
  }

  it('lists a tenant\'s methodologies and preferences, never another tenant\'s; the operator decides methodologies, the tenant its preferences', async () => {
    const { app } = await open();
    const call = await gatewayOver(app);
    const alice = await proposed(app, 'alice');
    await proposed(app, 'bob');
    const list = await (await call('GET', '/v1/learning/methodologies', { user: 'alice' })).json() as { methodologies: Array<{ id: number; text: string }>; policy: { graduationMinUses: number } };
    expect(list.methodologies.map((m) => m.text)).toEqual(['Buy BTC breakouts (alice)']);
    expect(list.policy.graduationMinUses).toBe(10);
    expect((await call('GET', `/v1/learning/methodologies/${alice.methodology.id}`, { user: 'bob' })).status).toBe(404);

    // Not an operator → 403, nothing changes.
    const denied = await call('POST', `/v1/learning/methodologies/${alice.methodology.id}/graduate`, { user: 'alice', body: { force: true } });
    expect(denied.status).toBe(403);
    expect((await alice.learning.getMethodology(alice.methodology.id))!.state).toBe('candidate');
    // An operator's credential that may not decide (an automated caller's) graduates nothing either.
    expect((await call('POST', `/v1/learning/methodologies/${alice.methodology.id}/graduate`, { user: 'alice', roles: 'operator', decide: false, body: { force: true } })).status).toBe(403);
    expect((await alice.learning.getMethodology(alice.methodology.id))!.state).toBe('candidate');
    // The operator: not proposed → 409 with the reason; forced → 200.
    const refused = await call('POST', `/v1/learning/methodologies/${alice.methodology.id}/graduate`, { user: 'alice', roles: 'operator' });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: { code: 'LEARNING_TRANSITION_REFUSED' } });
    const ok = await call('POST', `/v1/learning/methodologies/${alice.methodology.id}/graduate`, { user: 'alice', roles: 'operator', body: { force: true, reason: 'desk review' } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ methodology: { state: 'graduated', stateReason: 'desk review' } });
    // Another tenant's id through the operator of bob's scope: 404, not a graduation of alice's row.
    expect((await call('POST', `/v1/learning/methodologies/${alice.methodology.id}/quarantine`, { user: 'bob', roles: 'operator' })).status).toBe(404);
    // A proposal (the synthesis pass's): listed by state; accepted only by an operator who may decide.
    const { methodology: review } = await alice.learning.createMethodology({ asset: 'ETH', text: 'Add to ETH on a retest (alice)', state: 'proposed' });
    expect(await (await call('GET', '/v1/learning/methodologies?state=proposed', { user: 'alice' })).json()).toMatchObject({ methodologies: [{ id: review.id, state: 'proposed' }] });
    expect((await call('POST', `/v1/learning/methodologies/${review.id}/accept`, { user: 'alice' })).status).toBe(403);
    expect((await call('POST', `/v1/learning/methodologies/${review.id}/accept`, { user: 'alice', roles: 'operator', decide: false })).status).toBe(403);
    expect((await call('POST', `/v1/learning/methodologies/${review.id}/accept`, { user: 'bob', roles: 'operator' })).status).toBe(404);
    expect((await alice.learning.getMethodology(review.id))!.state).toBe('proposed');
    const accepted = await call('POST', `/v1/learning/methodologies/${review.id}/accept`, { user: 'alice', roles: 'operator', body: { reason: 'desk review' } });
    expect(await accepted.json()).toMatchObject({ methodology: { id: review.id, state: 'candidate', stateReason: 'desk review' } });
    expect((await call('POST', `/v1/learning/methodologies/${review.id}/accept`, { user: 'alice', roles: 'operator' })).status).toBe(409);

    const { preference } = await alice.learning.proposePreference({ dimension: 'slippage', text: 'Caps slippage at 0.5%' });
    expect((await call('POST', `/v1/preferences/${preference.id}/approve`, { user: 'bob' })).status).toBe(404);
    expect((await call('POST', `/v1/preferences/${preference.id}/approve`, { user: 'alice', decide: false })).status).toBe(403);
    // Methodologies proposed from outcomes, on demand: the operator's (without a reflected winning pattern, no model call).
    expect((await call('POST', '/v1/learning/synthesize', { user: 'alice' })).status).toBe(403);
    const synthesis = await call('POST', '/v1/learning/synthesize', { user: 'alice', roles: 'operator' });
    expect(synthesis.status).toBe(200);
    expect(await synthesis.json()).toMatchObject({ synthesis: { patterns: [], proposed: 0 } });
    const approved = await call('POST', `/v1/preferences/${preference.id}/approve`, { user: 'alice' });
    expect(await approved.json()).toMatchObject({ preference: { id: preference.id, state: 'active' } });
    expect(await (await call('GET', '/v1/preferences?state=active', { user: 'alice' })).json()).toMatchObject({ preferences: [{ id: preference.id }] });
    expect(await (await call('GET', '/v1/preferences', { user: 'bob' })).json()).toEqual({ preferences: [] });

    const page = await call('GET', '/v1/learning/pages/EUR%2FUSD', { user: 'alice' });
    expect(page.headers.get('content-type')).toContain('text/markdown');
    expect(await page.text()).toMatch(/^# EURUSD \(forex\)/);
    expect(await (await call('GET', '/v1/learning/cases', { user: 'alice' })).json()).toEqual({ cases: [] });
    expect(await (await call('GET', '/v1/learning/trades?asset=BTC', { user: 'alice' })).json()).toEqual({ trades: [] });
  });

  it('bad input names the field and changes nothing', async () => {
    const { app } = await open();
    const call = await gatewayOver(app);
    const { methodology } = await proposed(app);
    const bad = async (method: string, url: string, body?: unknown) => {
      const res = await call(method, url, { roles: 'operator', ...(body !== undefined ? { body } : {}) });
      return { status: res.status, message: ((await res.json()) as { error: { message: string } }).error.message };
    };
    expect(await bad('GET', '/v1/learning/methodologies?state=great')).toMatchObject({ status: 400, message: expect.stringMatching(/^state: expected one of proposed, candidate, graduated, quarantined/) });
    expect(await bad('GET', '/v1/learning/methodologies?limit=0')).toMatchObject({ status: 400, message: expect.stringMatching(/^limit:/) });
    expect(await bad('GET', '/v1/learning/cases?status=open')).toMatchObject({ status: 400, message: expect.stringMatching(/^status:/) });
    expect(await bad('POST', '/v1/learning/methodologies/abc/graduate')).toMatchObject({ status: 400, message: expect.stringMatching(/^id: expected a positive integer methodology id/) });
    expect(await bad('POST', `/v1/learning/methodologies/${methodology.id}/graduate`, { force: 'yes' })).toMatchObject({ status: 400, message: expect.stringMatching(/^force: expected true or false/) });
    expect(await bad('POST', `/v1/learning/methodologies/${methodology.id}/quarantine`, { force: true })).toMatchObject({ status: 400, message: expect.stringMatching(/^force: unknown field/) });
    expect(await bad('POST', `/v1/learning/methodologies/${methodology.id}/graduate`, '{"force":')).toMatchObject({ status: 400, message: expect.stringMatching(/^body: invalid JSON/) });
    expect(await bad('POST', '/v1/learning/methodologies/999/graduate', { force: true })).toMatchObject({ status: 404 });
    expect((await app.learning!.getMethodology(methodology.id))!.state).toBe('candidate');
  });

  it('without learningFor the routes do not exist, and /v1/info says so', async () => {
    const { app } = await open();
    const gateway = createGateway({ runtime: app.runtime, storage: app.storage, tools: app.tools, logger: silentLogger });
    expect((await gateway.fetch(new Request('http://127.0.0.1/v1/learning/methodologies'))).status).toBe(404);
    expect(await (await gateway.fetch(new Request('http://127.0.0.1/v1/info'))).json()).toMatchObject({ features: { learning: false } });
  });
});
